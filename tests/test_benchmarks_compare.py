"""The speed-regression tooling of benchmarks/ (compare, batch-curve, goals.toml), without a
clock: the goals file parses and names known workloads, the ok / FAIL evaluation on synthetic
numbers, the comparison's table and answer check on synthetic runs, and one tiny workload run
in a child process the way ``python -m benchmarks compare`` runs it."""

from __future__ import annotations

import functools
import json
import math
import os
import stat
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import batch_curve, compare, goals, workloads  # noqa: E402
from benchmarks.__main__ import main  # noqa: E402


def test_goals_file_parses_and_names_known_workloads():
    gs = goals.load()
    assert {g["section"] for g in gs} == set(goals.SECTIONS)
    ids = [g["id"] for g in gs]
    assert len(ids) == len(set(ids))
    for g in gs:
        assert g["workload"] == goals.ALL or g["workload"] in workloads.WORKLOADS, g
        assert g["metric"] in goals.METRICS
        assert ("min" in g) != ("max" in g)
    # the suite's rows and the cold-start rows the workloads point to exist
    from benchmarks import bench_cold_start

    for w in workloads.WORKLOADS.values():
        assert w.cold_row is None or w.cold_row in bench_cold_start.ROWS


@pytest.mark.parametrize("text, error", [
    ('[[goal]]\nid="a"\nsection="warm"\nworkload="nope"\nmetric="warm_seconds"\nmax=1\n', "unknown workload"),
    ('[[goal]]\nid="a"\nsection="warm"\nworkload="beta"\nmetric="speed"\nmax=1\n', "unknown metric"),
    ('[[goal]]\nid="a"\nsection="warm"\nworkload="beta"\nmetric="warm_seconds"\nmax=1\nmin=0\n', "exactly one"),
    ('[[goal]]\nid="a"\nsection="warm"\nworkload="beta"\nmetric="anchor_speedup_warm"\nmin=2\n', "needs an 'anchor'"),
])
def test_goals_file_errors_are_named(tmp_path, text, error):
    path = tmp_path / "goals.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=error):
        goals.load(str(path))


def _goal(**kw):
    return dict(dict(id="g", section="warm", workload="beta", metric="anchor_speedup_warm", anchor="x", tolerance=1.0),
                **kw)


def test_a_ratio_short_of_its_goal_fails():
    assert goals.passes(_goal(min=20), 20.0) and goals.passes(_goal(min=20), 25.0)
    assert not goals.passes(_goal(min=20), 19.9)
    assert goals.passes(_goal(metric="warm_seconds", max=1.5), 1.5)
    assert not goals.passes(_goal(metric="warm_seconds", max=1.5), 1.6)
    assert not goals.passes(_goal(min=1), math.nan) and not goals.passes(_goal(min=1), None)
    # a tolerance lets a min goal pass a little short of its bound, a max goal a little over it
    assert goals.passes(_goal(min=1.0, tolerance=0.9), 0.91)
    assert not goals.passes(_goal(min=1.0, tolerance=0.9), 0.89)
    assert goals.passes(_goal(max=1.0, tolerance=0.9), 1.1)


def test_verdict_lines_start_with_ok_fail_or_not_measured():
    gs = [_goal(id="fast", min=20), _goal(id="slow", min=20), _goal(id="absent", min=20)]
    values = {"fast": [("suite", 25.0)], "slow": [("suite", 7.9)], "absent": []}
    verdicts = goals.evaluate(gs, lambda g: values[g["id"]])
    by_id = {v["id"]: v for v in verdicts}
    assert by_id["fast"]["status"] == "ok" and by_id["fast"]["line"].startswith("ok ")
    assert by_id["slow"]["status"] == "FAIL" and by_id["slow"]["line"].startswith("FAIL ")
    assert "7.9x" in by_id["slow"]["line"]
    assert by_id["absent"]["status"] == "not measured" and by_id["absent"]["value"] is None
    assert by_id["absent"]["line"].startswith("not measured ")
    md = goals.markdown(verdicts)
    assert "1 ok, 1 FAIL, 1 not measured" in md
    assert goals.summary(verdicts) == {"ok": 1, "FAIL": 1, "not measured": 1}


def test_suite_lookup_uses_the_shared_rows_and_says_not_measured_for_the_rest():
    w = workloads.WORKLOADS["beta"]
    result = dict(rows=[
        dict(workload=w.suite_row, engine="dpax", grid_step=1e-4, cold_s=2.0, warm_s=0.01),
        dict(workload=w.suite_row, engine="dp-accounting + riskcal", grid_step=1e-4, cold_s=0.2, warm_s=0.1),
        dict(workload=workloads.WORKLOADS["calibrate"].suite_row, engine="dpax", grid_step=1e-3, cold_s=7.0,
             warm_s=0.1),
        dict(workload=workloads.WORKLOADS["calibrate"].suite_row, engine="riskcal", grid_step=1e-3, cold_s=15.0,
             warm_s=None),
    ], cold_start={"dpax, empty cache": [3.0, 2.5], "dpax, warm cache": [0.7], "anchor, fresh process": [1.0]})
    verdicts = {v["id"]: v for v in goals.evaluate(goals.load(), goals.suite_lookup(result))}
    assert verdicts["warm.beta"]["value"] == pytest.approx(10.0) and verdicts["warm.beta"]["status"] == "FAIL"
    # riskcal runs once (nothing to compile): its one call against dpax's warm time
    assert verdicts["warm.calibrate"]["value"] == pytest.approx(150.0)
    assert (verdicts["cold.beta.second"]["value"] == pytest.approx(0.7)
            and verdicts["cold.beta.second"]["status"] == "ok")
    assert (verdicts["cold.beta.empty"]["value"] == pytest.approx(2.5)
            and verdicts["cold.beta.empty"]["status"] == "FAIL")
    for gid in ("warm.mu", "warm.table64", "warm.batch11", "cold.mu.empty", "batch.per_row", "compare.warm"):
        assert verdicts[gid]["status"] == "not measured", gid


def _rec(mode, seconds, answer):
    key = "median" if mode == "warm" else "seconds"
    return {"mode": mode, key: seconds, "answer": answer}


def test_compare_table_ratios_answers_and_goals():
    runs = {
        "beta": {"warm": {"REF": [_rec("warm", 0.02, [0.5, 0.1]), _rec("warm", 0.03, [0.5, 0.1])],
                          "HEAD": [_rec("warm", 0.01, [0.5, 0.1]), _rec("warm", 0.01, [0.5, 0.1])]},
                 "cold empty": {"REF": [_rec("cold", 4.0, [0.5, 0.1])], "HEAD": [{"error": "boom"}]}},
        "batch11": {"warm": {"REF": [_rec("warm", 1.0, [1.0, None])], "HEAD": [_rec("warm", 2.0, [1.001, None])]}},
    }
    rows = {(r["workload"], r["path"]): r for r in compare.summarise(runs)}
    beta = rows["beta", "warm"]
    assert beta["ref_s"] == pytest.approx(0.025) and beta["head_s"] == pytest.approx(0.01)
    assert beta["ratio"] == pytest.approx(2.5) and beta["answer_max_rel_diff"] == 0
    assert rows["beta", "cold empty"]["ratio"] is None and rows["beta", "cold empty"]["errors"] == {"HEAD": ["boom"]}
    assert rows["batch11", "warm"]["answer_max_rel_diff"] == pytest.approx(1e-3, rel=1e-2)
    verdicts = goals.evaluate(goals.load(), compare.lookup_for(list(rows.values())))
    cmp = {v["label"]: v for v in verdicts if v["id"] == "compare.warm"}
    assert cmp["beta"]["status"] == "ok" and cmp["batch11"]["status"] == "FAIL"  # 0.5x: HEAD slower
    b11 = next(v for v in verdicts if v["id"] == "warm.batch11")
    assert b11["value"] == 2.0 and b11["status"] == "FAIL"
    assert next(v for v in verdicts if v["id"] == "warm.beta")["status"] == "not measured"
    assert compare.answer_diff([1.0], [1.0, 2.0]) == math.inf
    assert compare.answer_diff([None], [1.0]) == math.inf


def test_batch_curve_lookup_applies_min_rows():
    result = {"points": [dict(kind="unlike", n=n, ratio=r) for n, r in [(1, 1.0), (16, 0.4), (64, 0.6)]]}
    verdicts = goals.evaluate(goals.load(), batch_curve.lookup_for(result))
    per_row = [v for v in verdicts if v["id"] == "batch.per_row"]
    assert [(v["label"], v["status"]) for v in per_row] == [("unlike N=16", "ok"), ("unlike N=64", "FAIL")]


def test_batch_curve_writes_every_size_as_it_goes(tmp_path, monkeypatch):
    """The curve's JSON is rewritten after every size: an interrupted run keeps the sizes it
    measured (meta.complete false), a finished one says complete. Each size's baseline is
    its own first rows called one at a time, between its timed batch calls (calls and clock
    faked: the batch of n rows takes n / 2 s, one row alone 1 s)."""
    import argparse
    import types

    import numpy as np

    calls = []
    clock = {"now": 0.0}

    def fake_call(p, t, a, b, grid):
        n = int(np.size(p))
        calls.append(n if np.ndim(p) else "row")
        if n == 4 and stop["at_4"]:
            raise KeyboardInterrupt
        clock["now"] += n / 2 if np.ndim(p) else 1.0
        return types.SimpleNamespace(status=np.array(["calibrated"] * n), evaluations=n)

    monkeypatch.setattr(batch_curve, "_call", fake_call)
    monkeypatch.setattr(batch_curve, "_now", lambda: clock["now"])
    out = tmp_path / "curve.json"
    args = argparse.Namespace(sizes="1,2,4", kind="unlike", repeat=2, out=str(out), strict=False)
    stop = {"at_4": True}
    monkeypatch.setattr(batch_curve, "curve", functools.partial(batch_curve.curve, loop_rows=2))
    assert batch_curve.main(args) == 130
    partial = json.loads(out.read_text())
    assert [pt["n"] for pt in partial["points"]] == [1, 2] and partial["meta"]["complete"] is False
    assert partial["goals_summary"]
    stop["at_4"] = False
    calls.clear()
    assert batch_curve.main(args) == 0
    whole = json.loads(out.read_text())
    assert [pt["n"] for pt in whole["points"]] == [1, 2, 4] and whole["meta"]["complete"] is True
    assert not os.path.exists(str(out) + ".tmp")
    # N = 4: three untimed batch calls, then the batch and its two rows alone, alternately,
    # twice, each after an untimed call (the rows, warmed at N = 1 and 2, once each)
    assert calls[-14:] == [4, 4, 4, 4, "row", "row", "row", "row", 4, 4, "row", "row", "row", "row"]
    for pt in whole["points"]:
        assert pt["alone_rows"] == min(pt["n"], 2) and pt["single_s"] == 1.0
        assert pt["per_row_s"] == 0.5 and pt["ratio"] == 0.5
    assert "| one row alone (s) | rows alone |" in batch_curve.markdown(whole)


def test_unlike_rows_need_noise_and_are_nested():
    p, t, a, tpr = workloads.unlike_rows(40)
    assert len(p) == 40
    assert ((p >= 3e-4) & (p <= 0.05)).all() and ((t >= 100) & (t <= 5000)).all()
    assert ((1 - p) ** t * (1 - a) < 1 - tpr).all()
    assert (workloads.unlike_rows(10)[0] == p[:10]).all()
    rp, rt, _, _ = workloads.rows11()
    assert len(rp) == 11 and ((rp >= 3e-4) & (rp <= 0.05)).all() and ((rt >= 100) & (rt <= 5000)).all()


def test_cli_parses_compare_and_batch_curve(monkeypatch):
    seen = {}
    monkeypatch.setattr(compare, "main", lambda args: seen.setdefault("compare", args) and 0)
    monkeypatch.setattr(batch_curve, "main", lambda args: seen.setdefault("curve", args) and 0)
    main(["compare", "21d2c6a", "--workloads", "beta,mu", "--rounds", "1", "--repeat", "3", "--no-cold"])
    main(["batch-curve", "--sizes", "1,16", "--kind", "unlike"])
    c = seen["compare"]
    assert (c.ref, c.workloads, c.rounds, c.repeat, c.cold) == ("21d2c6a", "beta,mu", 1, 3, False)
    assert (seen["curve"].sizes, seen["curve"].kind) == ("1,16", "unlike")
    assert compare.out_path("origin/main").endswith(os.path.join("results", "compare-origin_main.json"))


def test_workload_child_prints_one_json_line_against_a_tree(tmp_path):
    """One tiny workload in a fresh process against this checkout's src/ (as compare runs each
    side): one JSON line with the answer, from the tree's dpax, with a private cache dir."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = compare.child_env(ROOT, str(cache))
    assert env["PYTHONPATH"].split(os.pathsep)[0] == os.path.join(ROOT, "src")
    rec = compare.run_child(ROOT, "epsilon", cache_dir=str(cache), cold=True, smoke=True, timeout=300)
    assert "error" not in rec, rec.get("error")
    assert rec["workload"] == "epsilon" and rec["mode"] == "cold" and rec["smoke"] is True
    assert rec["dpax_file"].startswith(os.path.join(ROOT, "src") + os.sep)
    assert rec["cache_dir"] == str(cache)
    assert len(rec["answer"]) == 1 and 0 < rec["answer"][0] < 10
    assert rec["seconds"] >= rec["import_s"] >= 0
    json.dumps(rec)
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
