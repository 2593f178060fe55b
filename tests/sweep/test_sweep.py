"""dpax.sweep / `dpax sweep`: parsing (CSV, JSON, JSON lines, YAML) with line numbers,
analysed rows equal to dpax's own functions, calibrated rows equal to calibrate_dpsgd, and a
500-row sweep interrupted by SIGINT after some batches, resumed, equal to an uninterrupted run."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import dpax
from dpax import sweep

STEP = 1e-2


def _write(path, text):
    path.write_text(text)
    return str(path)


def test_parse_formats_and_line_numbers(tmp_path):
    rows_csv = sweep.read_config(_write(tmp_path / "c.csv", (
        "noise_multiplier,sample_rate,num_steps,alpha\n"
        "1.0,0.01,100,0.1\n"
        "\n"
        "x,0.01,100,0.1\n"
        "1.0,1.5,100,\n"
        "1.0,0.01,2.5,\n"
        "1.0,0.01\n"
        ",0.01,100,0.1\n")))
    assert [(r.row, r.line) for r in rows_csv] == [(1, 2), (2, 4), (3, 5), (4, 6), (5, 7), (6, 8)]
    assert rows_csv[0].error == "" and rows_csv[0].params["num_steps"] == 100
    assert rows_csv[0].params["grid_step"] == 1e-4  # the default
    assert "noise_multiplier must be a number" in rows_csv[1].error
    assert "sample_rate" in rows_csv[2].error and "(0, 1]" in rows_csv[2].error
    assert "num_steps" in rows_csv[3].error
    assert "fields" in rows_csv[4].error
    assert "needs a target" in rows_csv[5].error  # no noise and no target

    yaml_text = ("defaults:\n  sample_rate: 0.01\n  grid_step: 0.01\nrows:\n"
                 "  - {noise_multiplier: 1.0, num_steps: 10}\n"
                 "  - num_steps: 10\n    advantage: 0.2\n"
                 "  - !!python/object/apply:os.system ['echo unsafe']\n")
    with pytest.raises(sweep.SweepConfigError):  # the safe loader refuses Python tags: nothing is evaluated
        sweep.read_config(_write(tmp_path / "c.yaml", yaml_text))
    rows_yaml = sweep.read_config(_write(tmp_path / "d.yaml", yaml_text.rsplit("  - !!", 1)[0]))
    assert [(r.line, r.mode, r.params["grid_step"]) for r in rows_yaml] == [(5, "analyse", 0.01),
                                                                            (6, "calibrate", 0.01)]

    bom = tmp_path / "bom.csv"  # Excel writes a byte-order mark before the header
    bom.write_bytes("\ufeffnoise_multiplier,sample_rate,num_steps\n1,0.1,5\n".encode())
    assert sweep.read_config(str(bom))[0].mode == "analyse"

    rows_json = sweep.read_config(_write(tmp_path / "c.json", json.dumps(
        [{"noise_multiplier": 1.0, "sample_rate": 0.01, "num_steps": 10}, [1, 2]], indent=1)))
    assert rows_json[0].error == "" and "mapping" in rows_json[1].error and rows_json[1].line > rows_json[0].line
    rows_jsonl = sweep.read_config(_write(tmp_path / "c.jsonl", '{"noise_multiplier": 1, "sample_rate": 0.1, '
                                          '"num_steps": 5}\n{bad json\n'))
    assert rows_jsonl[0].error == "" and rows_jsonl[1].line == 2 and "JSON" in rows_jsonl[1].error


def _read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow  # 13 s; the sweep runner is also tested by the resume tests
def test_analysed_and_calibrated_rows_match_dpax(tmp_path):
    cfg = _write(tmp_path / "cfg.csv", (
        "name,noise_multiplier,sample_rate,num_steps,alpha,beta,advantage,delta\n"
        "a,1.0,0.01,100,0.1,,,\n"
        "b,1.5,0.02,50,,,0.2,1e-6\n"
        "c,,0.01,100,,,0.1,\n"
        "d,oops,0.01,100,,,,\n"))
    out = str(tmp_path / "res.csv")
    log = io.StringIO()
    summary = sweep.run_sweep(cfg, out, grid_step=STEP, progress=False, log=log)
    assert summary["rows"] == 4 and summary["invalid"] == 1 and summary["written"] == 4
    assert "line 5 (row 4)" in log.getvalue()
    res = {int(r["row"]): r for r in _read_csv(out)}
    assert res[4]["status"] == "invalid" and "noise_multiplier" in res[4]["reason"]
    assert res[1]["name"] == "a" and res[1]["mode"] == "analyse"

    pl = dpax.dpsgd([1.0, 1.5], [0.01, 0.02], [100, 50], grid_step=STEP)
    assert float(res[1]["out_beta"]) == pl[0].beta(0.1)
    assert float(res[1]["out_advantage"]) == pytest.approx(pl[0].advantage(), rel=1e-12)
    assert float(res[2]["out_epsilon"]) == pytest.approx(pl[1].epsilon(1e-6), rel=1e-12)
    assert float(res[1]["out_epsilon"]) == pytest.approx(pl[0].epsilon(1e-5), rel=1e-12)
    mu, regret = dpax.gdp.mu_and_regret(pl)
    assert float(res[2]["out_mu"]) == pytest.approx(mu[1], rel=1e-12)
    assert res[1]["out_beta"] and res[2]["out_beta"] == ""  # no alpha, no beta
    assert res[2]["out_meets_target"] == "true"  # advantage 0.043 <= 0.2

    cal = dpax.calibrate_dpsgd(sample_rate=0.01, num_steps=100, target=dpax.targets.Advantage(0.1), grid_step=STEP,
                               compare_standard=False)
    assert res[3]["status"] == "calibrated"
    assert float(res[3]["out_noise_multiplier"]) == pytest.approx(cal.noise_multiplier, rel=1e-4)
    assert float(res[3]["out_advantage"]) <= 0.1

    # an existing file is not overwritten by accident; reject mode refuses malformed files
    with pytest.raises(ValueError, match="exists"):
        sweep.run_sweep(cfg, out, grid_step=STEP, progress=False, log=io.StringIO())
    with pytest.raises(sweep.SweepConfigError, match="line 5"):
        sweep.run_sweep(cfg, str(tmp_path / "other.csv"), on_error="reject", progress=False)
    assert not os.path.exists(tmp_path / "other.csv")


def _config_500(path):
    rng = np.random.default_rng(6)
    lines = ["noise_multiplier,sample_rate,num_steps,alpha,delta"]
    for _ in range(500):
        lines.append(f"{rng.uniform(1.0, 2.0):.4f},{rng.choice([0.01, 0.02]):g},{rng.integers(5, 20)},"
                     f"{rng.choice([0.01, 0.1]):g},1e-5")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _cli(args, env, **kw):
    return subprocess.Popen([sys.executable, "-m", "dpax", "sweep", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


# slow suite (35 s); the default run keeps the resume test on a torn JSON-lines file
@pytest.mark.slow
def test_500_rows_interrupted_and_resumed_equal_uninterrupted(tmp_path):
    cfg = _config_500(tmp_path / "cfg.csv")
    env = {**os.environ, "DPAX_CACHE_DIR": str(tmp_path / "cache")}
    common = ["--grid-step", str(STEP), "--batch-size", "10", "--no-progress"]
    full = str(tmp_path / "full.csv")
    p = _cli([cfg, "-o", full, *common], env)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err

    part = str(tmp_path / "part.csv")
    p = _cli([cfg, "-o", part, *common], env)
    while True:  # SIGINT once some batches are on disk
        time.sleep(0.02)
        if os.path.exists(part) and len(open(part).read().splitlines()) >= 1 + 30:
            break
        assert p.poll() is None, p.communicate()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 130, err
    assert "--resume" in err
    rows = _read_csv(part)
    assert 30 <= len(rows) < 500 and len(rows) % 10 == 0  # whole batches only
    assert open(part).read().endswith("\n")

    p = _cli([cfg, "-o", part, *common, "--resume", "--json"], env)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    summary = json.loads(out)
    assert summary["already_done"] == len(rows) and summary["written"] == 500 - len(rows)

    key = lambda r: int(r["row"])
    a, b = sorted(_read_csv(full), key=key), sorted(_read_csv(part), key=key)
    assert [key(r) for r in b] == list(range(1, 501))
    assert a == b  # every cell, as written (exact float reprs)


def test_yaml_to_json_lines_resume_after_a_torn_line(tmp_path):
    """Resume from a JSON-lines file whose last line was cut short (a crash mid-write): the
    torn line is dropped and its rows recomputed; the result equals a clean run."""
    # 8 rows in batches of one, torn after 4: every row has the kernel shapes of DP-SGD (4.0,
    # 0.001, 200) at grid 1e-2 (construction, beta, advantage, epsilon and the 256-point mu
    # kernel, which tests/test_input_errors.py, tests/test_fuzz.py and other files compile), so
    # this test compiles nothing of its own (the test is about resuming, not about many
    # configurations; batches of 4 rows compiled 9 kernels, ~6 s, for this test alone). The
    # noises differ by little enough that every row keeps the same kernel shapes.
    noises = [f"{4.0 + 0.004 * i:.3f}" for i in range(8)]
    cfg = _write(tmp_path / "cfg.yaml", "defaults: {sample_rate: 0.001, num_steps: 200, grid_step: 0.01, alpha: 0.1}\n"
                 "rows:\n" + "".join(f"  - {{noise_multiplier: {s}, tag: r{i}}}\n" for i, s in enumerate(noises)))
    full, part = str(tmp_path / "full.jsonl"), str(tmp_path / "part.jsonl")
    sweep.run_sweep(cfg, full, batch_size=1, progress=False, log=io.StringIO())
    lines = open(full).read().splitlines(keepends=True)
    assert len(lines) == 8 and json.loads(lines[0])["tag"] == "r0" and json.loads(lines[0])["line"] == 3
    open(part, "w").write("".join(lines[:4]) + lines[4][:25])  # 4 whole rows and a torn one
    s = sweep.run_sweep(cfg, part, batch_size=1, resume=True, progress=False, log=io.StringIO())
    assert s["already_done"] == 4 and s["written"] == 4
    assert sorted(sweep.read_results(part), key=lambda r: r["row"]) == sorted(sweep.read_results(full),
                                                                             key=lambda r: r["row"])
