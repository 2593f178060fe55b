"""dpax.sweep.run: running a sweep. A 500-row sweep interrupted by SIGINT after some batches,
resumed, equals an uninterrupted run; the log of many malformed rows is bounded; progress is a
bar on a terminal and plain lines in a log; compare_standard must be a flag. A two-process
``dpax sweep --distributed`` (local CPU processes, gloo collectives, coordinator on 127.0.0.1)
with one process killed mid-sweep names it within a bounded wait and, resumed, gives the
one-process file byte for byte."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from subprocess_helpers import free_port, pair, start
from sweep_helpers import read_csv_rows, write_file

import dpax
from dpax import sweep
from dpax._engine import progress
from dpax.cli import main
from dpax.sweep import parts

STEP = 1e-2
HEARTBEAT = 4  # seconds: how soon a dead process is noticed in the two-process sweep


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
    rows = read_csv_rows(part)
    assert 30 <= len(rows) < 500 and len(rows) % 10 == 0  # whole batches only
    assert open(part).read().endswith("\n")

    p = _cli([cfg, "-o", part, *common, "--resume", "--json"], env)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    summary = json.loads(out)
    assert summary["already_done"] == len(rows) and summary["written"] == 500 - len(rows)

    key = lambda r: int(r["row"])
    a, b = sorted(read_csv_rows(full), key=key), sorted(read_csv_rows(part), key=key)
    assert [key(r) for r in b] == list(range(1, 501))
    assert a == b  # every cell, as written (exact float reprs)


def test_the_log_of_many_malformed_rows_is_bounded(tmp_path):
    path = write_file(tmp_path / "cfg.csv", "noise_multiplier,sample_rate,num_steps\n" + "x,0.1,5\n" * 50)
    log = io.StringIO()
    out = str(tmp_path / "r.csv")
    s = sweep.run_sweep(path, out, progress=False, log=log)
    assert s["invalid"] == 50 and s["written"] == 50
    lines = log.getvalue().splitlines()
    assert len(lines) == 21 and "30 more malformed row(s)" in lines[-1]
    assert len(sweep.read_results(out)) == 50


def _malformed_config(tmp_path, n=3):
    path = tmp_path / "bad.csv"
    path.write_text("noise_multiplier,sample_rate,num_steps\n" + "x,0.1,5\n" * n)
    return str(path)


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_sweep_progress_is_plain_lines_in_a_log(tmp_path, monkeypatch):
    cfg = _malformed_config(tmp_path)  # rows written as 'invalid': nothing computed
    monkeypatch.setattr(progress, "INTERVAL", 0.0)  # a line at every write
    log = io.StringIO()
    sweep.run_sweep(cfg, str(tmp_path / "a.csv"), log=log)  # progress=None, log not a terminal
    lines = [s for s in log.getvalue().splitlines() if s.startswith("dpax sweep: ") and "elapsed" in s]
    assert lines == ["dpax sweep: 3/3 rows (100%), 0:00:00 elapsed",
                     "dpax sweep: done, 3/3 rows (100%), 0:00:00 elapsed"]
    assert "\r" not in log.getvalue()
    monkeypatch.setattr(progress, "INTERVAL", 30.0)
    log = io.StringIO()
    sweep.run_sweep(cfg, str(tmp_path / "b.csv"), log=log)  # short: no line
    assert "elapsed" not in log.getvalue()
    sweep.run_sweep(cfg, str(tmp_path / "c.csv"), log=log, progress=True)  # asked: the last line
    assert log.getvalue().rstrip("\n").endswith("dpax sweep: done, 3/3 rows (100%), 0:00:00 elapsed")
    log = io.StringIO()
    sweep.run_sweep(cfg, str(tmp_path / "d.csv"), log=log, progress=False)
    assert "elapsed" not in log.getvalue()


def test_sweep_progress_is_a_bar_on_a_terminal(tmp_path):
    tty = _Tty()
    sweep.run_sweep(_malformed_config(tmp_path), str(tmp_path / "a.csv"), log=tty, progress=True)
    assert "dpax sweep" in tty.getvalue() and "\r" in tty.getvalue() and "elapsed" not in tty.getvalue()


def test_the_cli_sweep_writes_plain_lines_to_a_log(tmp_path, monkeypatch, capsys):
    cfg = _malformed_config(tmp_path)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    assert main(["sweep", cfg, "-o", str(tmp_path / "a.csv"), "--no-cache"]) == 2  # no valid row: exit 2
    err = capsys.readouterr().err
    assert "dpax sweep: done, 3/3 rows (100%)" in err and "\r" not in err
    assert main(["sweep", cfg, "-o", str(tmp_path / "b.csv"), "--no-cache", "--no-progress"]) == 2
    assert "elapsed" not in capsys.readouterr().err


def test_compare_standard_must_be_a_flag(tmp_path):
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("sample_rate,num_steps,advantage\n0.1,10,0.3\n")
    with pytest.raises(TypeError, match="compare_standard must be True or False"):
        sweep.run_sweep(str(cfg), str(tmp_path / "out.csv"), compare_standard="no", progress=False)
    assert not (tmp_path / "out.csv").exists()



@pytest.mark.parametrize("rtol", [float("nan"), 0.0, -1.0, 0.5])
def test_rtol_outside_the_calibrations_range_is_refused_before_any_row(tmp_path, rtol):
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("sample_rate,num_steps,advantage\n0.1,10,0.3\n")
    with pytest.raises(ValueError, match="rtol"):
        sweep.run_sweep(str(cfg), str(tmp_path / "out.csv"), rtol=rtol, progress=False)
    assert not (tmp_path / "out.csv").exists()


CONFIG = """noise_multiplier,sample_rate,num_steps,advantage,grid_step,name
0.8,0.05,20,,0.01,a
,0.05,20,0.2,0.01,b
1.0,0.1,10,,0.01,c
-1,0.1,10,,0.01,bad
1.2,0.02,50,,0.01,e
,0.1,10,0.3,0.01,d
1.5,0.2,5,,0.01,g
"""


def _sweep_argv(tmp_path, port, *extra):
    return lambda i: ["-m", "dpax", "sweep", str(tmp_path / "cfg.csv"), "-o", str(tmp_path / "two.csv"),
                      "--batch-size", "1", "--no-progress", "--distributed", "--coordinator", f"127.0.0.1:{port}",
                      "--num-processes", "2", "--process-id", str(i), "--heartbeat-timeout", str(HEARTBEAT),
                      "--join-timeout", "60", *extra]


@pytest.mark.slow
def test_two_process_sweep_killed_resumed_equals_one_process(tmp_path):
    """dpax sweep --distributed: process 1 killed mid-sweep, process 0 names it (bounded wait),
    nothing written is lost; resumed, the merged file is the one-process file byte for byte."""
    (tmp_path / "cfg.csv").write_text(CONFIG)
    dpax.sweep.run_sweep(str(tmp_path / "cfg.csv"), str(tmp_path / "one.csv"), batch_size=1, progress=False,
                         log=open(os.devnull, "w"))
    port = free_port()
    argv = _sweep_argv(tmp_path, port)
    logs = [open(tmp_path / f"k{i}.txt", "w+") for i in range(2)]
    procs = [start(argv(i), logs[i]) for i in range(2)]
    part1 = tmp_path / "two.part-1-of-2.csv"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (part1.exists() and part1.read_text().count("\n") >= 2):
        time.sleep(0.1)
    procs[1].kill()
    killed = time.monotonic()
    code0 = procs[0].wait(300)
    logs[0].seek(0)
    text0 = logs[0].read()
    assert code0 == 2, text0[-3000:]
    assert "process 1 of 2 stopped" in text0 and "--resume" in text0, text0[-3000:]
    assert time.monotonic() - killed < 120
    written = part1.read_text().count("\n")
    assert written >= 2 and not (tmp_path / "two.csv").exists()

    codes, logs2 = pair(_sweep_argv(tmp_path, free_port(), "--resume"), tmp_path)
    assert codes == [0, 0], logs2
    assert not any("experimental" in log for log in [text0, *logs2]), logs2  # JAX's recoverable-mode notice
    assert (tmp_path / "two.csv").read_bytes() == (tmp_path / "one.csv").read_bytes()
    assert parts._existing_parts(str(tmp_path / "two.csv")) == []
