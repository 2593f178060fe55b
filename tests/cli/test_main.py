""":mod:`dpax.cli.main`, the entry point: usage errors and ``--help`` give their exit
status; an unexpected error is one line ``dpax: error: ...`` (the traceback only with
``DPAX_DEBUG=1``), Ctrl-C exits 130 and output into a closed pipe ends quietly with 141,
never a traceback; importing the command line leaves JAX's configuration alone.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cli_helpers import fail

from dpax import cli
from dpax.cli import curve_command as curve_cli
from dpax.cli import main

CHEAP = ["--grid-step", "1e-2", "--no-cache"]
CURVE = ["curve", "--noise-multiplier", "1", "--sample-rate", "0.1", "--num-steps", "5", *CHEAP]


def test_usage_errors_and_help(capsys):
    assert cli.main([]) == 2
    assert cli.main(["curve", "--sample-rate", "abc"]) == 2
    assert cli.main(["--help"]) == 0
    assert "calibrate" in capsys.readouterr().out


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


def test_output_into_a_closed_pipe_ends_quietly():
    """`dpax ... | head`: the reader is gone before dpax writes; no traceback, status 141."""
    proc = subprocess.Popen([sys.executable, "-m", "dpax", "gdp", "--epsilon", "1", "--delta", "1e-5", "--no-cache"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    proc.stdout.close()  # before dpax has imported jax, let alone printed
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141, err
    assert err == ""


def test_importing_dpax_leaves_jax_config_alone():
    code = (
        "import jax; before = dict(jax.config.values); import dpax, dpax.cli; "
        "changed = sorted(k for k, v in jax.config.values.items() if before.get(k) != v); "
        "assert not changed, changed"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
