"""The benchmark suite (python -m benchmarks run): its reduced 'smoke' set end to end, and
the measurement helpers. Numbers are checked against closed forms computed here."""

from __future__ import annotations

import functools
import json
import os
import sys

import numpy as np
import pytest
from scipy.stats import norm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

pytest.importorskip("dp_accounting")
pytest.importorskip("riskcal")
pytest.importorskip("gdpnum")
pytest.importorskip("prv_accountant")

from benchmarks import suite  # noqa: E402
from benchmarks.__main__ import main  # noqa: E402


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    # The smoke run's times mean nothing (suite.run), and repeated calls of the anchors cost the
    # most (prv-accountant at 10,000 steps: ~1 s a call, four calls with the same arguments):
    # one warm call per row instead of two, and prv-accountant's answers (deterministic, a
    # tuple) computed once per configuration
    # The configurations are the smoke mode's on kernel shapes that the rest of the suite
    # compiles too (each distinct shape is an XLA compilation, the most of this run's time);
    # every workload and series is still run, checked and reported:
    # - the DP-SGD reference at grid 1e-4 (finer than smoke's 2e-4: Kulynych et al. 2024's DP-SGD at
    #   the grid of test_readme.py's quick start and test_oracles.py), against which the
    #   grid-1e-3 rows are checked;
    # - the num_steps series at one point, T = 10,000 at grid 1e-3 (the DP-SGD rows' curve);
    # - the grid-step series at 1e-3 (the finest: the reference) and 5e-3;
    # - the batch-size series at one batch of 3 (more than batch_anchor_max, so the anchor's
    #   time is extrapolated as for the larger batches)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(suite.MODES["smoke"], "repeat", 1)
        mp.setitem(suite.MODES["smoke"], "dpsgd_ref_grid", 1e-4)
        mp.setitem(suite.MODES["smoke"], "steps_series", [10_000])
        mp.setitem(suite.MODES["smoke"], "steps_grid", 1e-3)
        mp.setitem(suite.MODES["smoke"], "grid_series", [1e-3, 5e-3])
        mp.setitem(suite.MODES["smoke"], "batch_series", [3])
        mp.setattr(suite, "_prv_epsilon", functools.lru_cache(maxsize=None)(suite._prv_epsilon))
        rc = main(["run", "--smoke", "--out", str(out)])
    with open(out / "suite-smoke.json") as fh:
        result = json.load(fh)
    return rc, result, (out / "suite-smoke.md").read_text()


def test_smoke_run_writes_json_and_markdown(smoke):
    rc, result, md = smoke
    assert rc == 0
    assert result["summary"]["dpax_violations"] == 0
    engines = {r["engine"] for r in result["rows"]}
    assert {"dpax", "dp-accounting + riskcal", "dp-accounting", "prv-accountant (upper)", "gdpnum"} <= engines
    if "Opacus RDP" in engines:  # optional anchor
        assert all(r["violations"] == 0 for r in result["rows"] if r["engine"] == "Opacus RDP")
    for r in result["rows"]:
        assert r["cold_s"] > 0 and r["peak_rss_mib"] > 0
        if r["engine"] != "dpax":
            assert r["ratio_cold"] > 0
    series = {pt["series"].split(" (")[0] for pt in result["series"]}
    assert series == {"num_steps", "grid step", "batch size"}
    assert result["meta"]["device"]["platform"] in ("cpu", "gpu", "cuda", "rocm", "tpu")
    assert "| workload | engine |" in md and "Pessimism violations by dpax: 0" in md
    for name in ("num_steps", "grid step", "batch size"):
        assert f"## Scaling: {name}" in md


def test_gaussian_rows_against_the_closed_form(smoke):
    _, result, _ = smoke
    sigma, steps, _ = suite.MODES["smoke"]["gauss"]
    mu = np.sqrt(steps) / sigma
    exact = norm.cdf(norm.isf(suite.ALPHAS) - mu)
    row = next(r for r in result["rows"]
               if r["engine"] == "dpax" and r["workload"].startswith("Gaussian") and "beta" in r["workload"])
    beta = np.array(row["value"])
    assert np.all(beta <= exact + 1e-12)  # pessimistic
    assert np.max(exact - beta) < 1e-4  # and tight at grid 1e-3
    assert row["error"] == pytest.approx(np.max(np.abs(beta - exact)), rel=1e-9)
    eps_row = next(r for r in result["rows"]
                   if r["engine"] == "dpax" and r["workload"].startswith("Gaussian") and "epsilon" in r["workload"])
    # exact epsilon of mu-GDP at delta = 1e-5 (Dong et al. Cor. 2.13), by bisection here
    lo, hi = 0.0, 50.0
    for _ in range(200):
        e = 0.5 * (lo + hi)
        d = norm.cdf(-e / mu + mu / 2) - np.exp(e) * norm.cdf(-e / mu - mu / 2)
        lo, hi = (e, hi) if d > 1e-5 else (lo, e)
    assert eps_row["value"] >= lo - 1e-9
    assert eps_row["value"] - lo < 1e-3
    assert eps_row["violations"] == 0


def test_gdp_row_agrees_with_gdpnum(smoke):
    _, result, _ = smoke
    rows = {r["engine"]: r for r in result["rows"] if r["workload"].startswith("mu and regret")}
    assert rows["dpax"]["value"][0] == pytest.approx(rows["gdpnum"]["value"][0], abs=2e-3)
    assert rows["dpax"]["value"][1] == pytest.approx(rows["gdpnum"]["value"][1], abs=5e-4)


def test_peak_memory_sees_large_allocations():
    with suite.PeakMemory() as mem:
        a = np.ones(40_000_000)  # 305 MiB
        a[::4096] = 2.0
        del a
    assert mem.delta_mib > 200
    assert mem.peak_mib >= mem.delta_mib


def test_measure_reports_cold_and_warm():
    calls = []
    cold, warm, value, peak, _ = suite.measure(lambda: calls.append(1) or len(calls), repeat=3)
    assert value == 4 and len(calls) == 4 and cold >= 0 and warm >= 0 and peak > 0
    cold, warm, value, _, _ = suite.measure(lambda: 7, warm=False)
    assert warm is None and value == 7


def test_cli_rejects_two_modes(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--quick", "--full"])


def test_device_script_records_the_card_and_each_workload(tmp_path, monkeypatch, capsys):
    """benchmarks/bench_device.py: a card line, then one line per workload (an answer, or the
    error that stopped it while the others still run), appended as each is measured."""
    from benchmarks import bench_device

    def build(name):
        if name == "mu":
            def fails():
                raise RuntimeError("no kernel")
            return fails
        return lambda: [1.0, 2.0]

    monkeypatch.setattr(bench_device, "build", build)
    out = tmp_path / "device.jsonl"
    assert bench_device.main(["--workloads", "beta4096", "mu", "--repeat", "2", "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["kind"] for r in lines] == ["card", "workload", "workload"]
    assert lines[0]["backend"] in ("cpu", "gpu", "tpu") and lines[0]["jax"]
    assert lines[1]["answer"] == [1.0, 2.0] and len(lines[1]["times"]) == 2 and lines[1]["warm_s"] >= 0
    assert lines[2]["error"] == "RuntimeError: no kernel"
    table = capsys.readouterr().out
    assert "| beta4096 |" in table and "| mu | RuntimeError: no kernel |" in table
