"""Every failure of the command line is one line ``dpax: error: <message>`` naming the option
or file, with exit status 2: no traceback, no exit status 1, no message longer than a few
hundred characters; options cannot be abbreviated and a mistyped one is answered with the
closest option of its subcommand; output into a closed pipe ends quietly.

Each test runs ``main`` in-process on inputs that fail before any large kernel compiles
(grid step 1e-2, a few steps); one test starts a subprocess, for the broken pipe.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from dpax.cli import curve_command as curve_cli
from dpax.cli import main
from dpax.cli.parsing import MAX_MESSAGE_CHARS

AUDIT = ["audit", "--false-positives", "1", "--negatives", "10", "--false-negatives", "1", "--positives", "10"]
CHEAP = ["--grid-step", "1e-2", "--no-cache"]
CURVE = ["curve", "--noise-multiplier", "1", "--sample-rate", "0.1", "--num-steps", "5", *CHEAP]


def fail(argv, capsys) -> str:
    """Run ``dpax argv``; assert a clean failure (status 2, nothing on stdout, the last line of
    stderr ``dpax: error: ...`` and no traceback) and return that last line."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (code, err)
    assert out == "" and "Traceback" not in err
    last = err.rstrip("\n").split("\n")[-1]
    assert last.startswith("dpax: error: "), err
    assert len(last) <= len("dpax: error: ") + MAX_MESSAGE_CHARS
    return last


# -- failures that were tracebacks or messages naming nothing ------------------------------


@pytest.mark.parametrize("steps", ["inf", "nan", "-inf", "0"])
def test_claim_dpsgd_steps_not_a_whole_number(steps, capsys):
    msg = fail(AUDIT + ["--claim-dpsgd", "1", "0.1", steps, "--no-cache"], capsys)
    assert "--claim-dpsgd STEPS" in msg and "whole number" in msg


def test_claim_dpsgd_bad_rate_names_the_option(capsys):
    msg = fail(AUDIT + ["--claim-dpsgd", "1", "inf", "5", "--no-cache"], capsys)
    assert "--claim-dpsgd" in msg and "sample_rate" in msg


def test_sweep_results_in_a_missing_directory(tmp_path, capsys):
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("noise_multiplier,sample_rate,num_steps\n1,0.1,5\n")
    target = tmp_path / "nowhere" / "x.csv"
    msg = fail(["sweep", str(cfg), "-o", str(target), "--no-progress", *CHEAP], capsys)
    assert str(target) in msg and "No such file or directory" in msg
    assert not target.parent.exists()


def test_plot_output_that_cannot_be_written(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    args = ["plot", "tradeoff", "--noise-multiplier", "1", "--sample-rate", "0.1", "--num-steps", "5", *CHEAP]
    target = tmp_path / "nowhere" / "x.png"
    msg = fail(args + ["-o", str(target)], capsys)  # refused before anything is computed
    assert "--output" in msg and str(target) in msg
    folder = tmp_path / "taken.png"  # a directory where the figure should go
    folder.mkdir()
    msg = fail(args + ["-o", str(folder)], capsys)
    assert "--output" in msg and str(folder) in msg


def test_plot_dpi_is_bounded(tmp_path, capsys):
    msg = fail(["plot", "tradeoff", "--noise-multiplier", "1", "--sample-rate", "0.1", "--num-steps", "5",
                "-o", str(tmp_path / "x.png"), "--dpi", "1e6", *CHEAP], capsys)
    assert "--dpi" in msg and "1200" in msg


def test_sweep_csv_field_over_the_csv_limit(tmp_path, capsys):
    cfg = tmp_path / "long.csv"
    cfg.write_text("noise_multiplier,sample_rate,num_steps,name\n1,0.1,5," + "x" * 140_000 + "\n")
    msg = fail(["sweep", str(cfg), "-o", str(tmp_path / "r.csv"), "--no-progress", *CHEAP], capsys)
    assert str(cfg) in msg and "line 2" in msg and "131,072" in msg


def test_sweep_yaml_rows_not_a_list(tmp_path, capsys):
    cfg = tmp_path / "rows.yaml"
    cfg.write_text("rows: 5\n")
    msg = fail(["sweep", str(cfg), "-o", str(tmp_path / "r.csv"), "--no-progress", *CHEAP], capsys)
    assert str(cfg) in msg and "'rows' must be a list" in msg


def test_sweep_latin1_csv_names_file_and_line(tmp_path, capsys):
    cfg = tmp_path / "latin1.csv"
    cfg.write_bytes("noise_multiplier,sample_rate,num_steps,name\n1,0.1,5,café\n".encode("latin-1"))
    msg = fail(["sweep", str(cfg), "-o", str(tmp_path / "r.csv"), "--no-progress", *CHEAP], capsys)
    assert str(cfg) in msg and "line 2" in msg and "UTF-8" in msg


class _Unpickled:
    """Unpickling this would create the file ``path``: a .npy holding it must be refused unread."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_loss_files_that_are_not_plain_numbers(tmp_path, capsys):
    good = tmp_path / "good.npy"
    np.save(good, np.arange(50.0))
    marker = tmp_path / "unpickled"
    objects = tmp_path / "objects.npy"
    np.save(objects, np.array([_Unpickled(str(marker)), 1.0], dtype=object), allow_pickle=True)
    corrupt = tmp_path / "corrupt.npy"
    corrupt.write_bytes(b"\x93NUMPY\x01\x00garbage")
    latin = tmp_path / "latin1.csv"
    latin.write_bytes("loss\n1.0\n2.0 é\n".encode("latin-1"))
    for path in (objects, corrupt, latin):
        msg = fail(["epsilon-star", str(good), str(path), "--no-cache"], capsys)
        assert str(path) in msg, msg
    assert "pickle" in fail(["epsilon-star", str(good), str(objects), "--no-cache"], capsys)
    assert not marker.exists()  # refused, never unpickled


@pytest.mark.parametrize("option, value", [("--goodness-of-fit", "nan"), ("--goodness-of-fit", "2.5"),
                                           ("--goodness-of-fit", "21"), ("--seed", "nan"), ("--seed", "-1")])
def test_epsilon_star_integer_options(option, value, tmp_path, capsys):
    good = tmp_path / "good.npy"
    np.save(good, np.arange(50.0))
    msg = fail(["epsilon-star", str(good), str(good), option, value, "--no-cache"], capsys)
    assert f"argument {option}" in msg and "whole number" in msg


def test_sweep_batch_size_nan(tmp_path, capsys):
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("noise_multiplier,sample_rate,num_steps\n1,0.1,5\n")
    msg = fail(["sweep", str(cfg), "-o", str(tmp_path / "r.csv"), "--batch-size", "nan", *CHEAP], capsys)
    assert "argument --batch-size" in msg


def test_long_messages_are_one_capped_line(capsys):
    alphas = [f"{a:.3f}" for a in np.linspace(0.001, 0.5, 300)] + ["nan"]
    msg = fail(CURVE + ["--alpha", *alphas], capsys)  # the library quotes the bad entry, not the array
    assert "alpha" in msg and "nan" in msg and "(301,)" in msg
    msg = fail(["curve", "--noise-multiplier", "1", "--sample-rate", "x" * 5000, "--num-steps", "5"], capsys)
    assert "argument --sample-rate" in msg and msg.endswith(" ...")


@pytest.mark.parametrize("value", ["-1e-3", "-inf"])
def test_negative_numbers_are_values_not_options(value, capsys):
    msg = fail(["curve", "--noise-multiplier", value, "--sample-rate", "0.1", "--num-steps", "5", *CHEAP], capsys)
    assert "noise_multiplier" in msg and "expected one argument" not in msg


@pytest.mark.parametrize("error, expected", [
    (RuntimeError("boom"), "internal error (RuntimeError: boom)"),
    (MemoryError(), "out of memory"),
    (PermissionError(13, "Permission denied", "/some/file"), "'/some/file': Permission denied"),
])
def test_unexpected_errors_are_clean(error, expected, monkeypatch, capsys):
    def boom(args):
        raise error

    monkeypatch.setattr(curve_cli, "run_curve", boom)
    monkeypatch.delenv("DPAX_DEBUG", raising=False)
    msg = fail(CURVE, capsys)
    assert expected in msg
    if isinstance(error, RuntimeError):
        assert "DPAX_DEBUG=1" in msg
        monkeypatch.setenv("DPAX_DEBUG", "1")  # the traceback, when asked for
        with pytest.raises(RuntimeError, match="boom"):
            main(CURVE)


def test_ctrl_c_exits_130_without_a_traceback(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(curve_cli, "run_curve", interrupted)
    try:
        code = main(CURVE)
    except KeyboardInterrupt:  # would stop pytest itself
        pytest.fail("KeyboardInterrupt escaped dpax.cli.main")
    assert code == 130
    out, err = capsys.readouterr()
    assert out == "" and err == "dpax: interrupted\n"


# -- mistyped options ----------------------------------------------------------------------


@pytest.mark.parametrize("argv, typed, meant", [
    (["curve", "--noise-multiplier", "1", "--sample-rate", "0.1", "--num-step", "5"], "--num-step", "--num-steps"),
    (["curve", "--noise-mult", "1", "--sample-rate", "0.1", "--num-steps", "5"], "--noise-mult", "--noise-multiplier"),
    (["curve", "--noise-multiplier", "1", "--sample-rate", "0.1", "--num-steps", "5", "--grid", "0.01"],
     "--grid", "--grid-step"),
    (["calibrate", "--sample-rate", "0.1", "--num-steps", "5", "--adv=0.1"], "--adv", "--advantage"),
])
def test_abbreviated_options_are_refused(argv, typed, meant, capsys):
    msg = fail(argv + ["--no-cache"], capsys)
    assert f"unrecognized arguments: {typed} (did you mean {meant}?)" in msg


def test_unknown_option_gets_the_subcommands_usage_and_a_suggestion(capsys):
    assert main(["calibrate", "--alpah", "0.1"]) == 2  # reported before the missing required options
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: dpax calibrate ")
    assert err.rstrip().split("\n")[-1] == "dpax: error: unrecognized arguments: --alpah (did you mean --alpha?)"
    msg = fail(["sweep", "cfg.csv", "-o", "r.csv", "--batchsize", "4"], capsys)
    assert "did you mean --batch-size?" in msg
    msg = fail(["mechanism", "laplace", "--scale", "1", "--zzz", "1"], capsys)
    assert msg == "dpax: error: unrecognized arguments: --zzz"


def test_unknown_command_and_usage_errors_share_the_format(capsys):
    assert "did you mean calibrate?" in fail(["calibrat"], capsys)
    assert "argument --num-steps" in fail(["curve", "--noise-multiplier", "1", "--sample-rate", "0.1",
                                           "--num-steps", "x"], capsys)
    assert "required" in fail(["curve"], capsys)
    assert "unrecognized arguments: extra" in fail(CURVE + ["extra"], capsys)


# -- output into a closed pipe -------------------------------------------------------------


def test_output_into_a_closed_pipe_ends_quietly():
    """`dpax ... | head`: the reader is gone before dpax writes; no traceback, status 141."""
    proc = subprocess.Popen([sys.executable, "-m", "dpax", "gdp", "--epsilon", "1", "--delta", "1e-5", "--no-cache"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    proc.stdout.close()  # before dpax has imported jax, let alone printed
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141, err
    assert err == ""
