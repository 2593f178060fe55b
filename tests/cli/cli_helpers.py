"""Helpers of the command-line tests (tests/cli/): running ``dpax`` in-process for its JSON or
text output, for a usage error, or for a clean failure, and the widths of certified brackets."""

from __future__ import annotations

import json

import numpy as np

from dpax import cli
from dpax.cli.parsing import MAX_MESSAGE_CHARS


def run(capsys, args, json_out=True):
    """Run ``dpax args`` (with ``--json`` when ``json_out``); assert exit status 0 and return the
    parsed JSON, or the text printed."""
    code = cli.main(args + (["--json"] if json_out else []))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out) if json_out else out


def run_json(capsys, args):
    """Run ``dpax args --json``; assert exit status 0 and return the parsed JSON."""
    return run(capsys, args)


def run_error(argv, capsys):
    """Run ``dpax argv --no-cache``; assert exit status 2 and return what went to stderr."""
    code = cli.main(argv + ["--no-cache"])
    err = capsys.readouterr().err
    assert code == 2
    return err


def fail(argv, capsys) -> str:
    """Run ``dpax argv``; assert a clean failure (status 2, nothing on stdout, the last line of
    stderr ``dpax: error: ...`` and no traceback) and return that last line."""
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (code, err)
    assert out == "" and "Traceback" not in err
    last = err.rstrip("\n").split("\n")[-1]
    assert last.startswith("dpax: error: "), err
    assert len(last) <= len("dpax: error: ") + MAX_MESSAGE_CHARS
    return last


def widths(out, keys):
    """The widths of the brackets of ``keys`` in a JSON report (each number against its
    ``_optimistic`` side), flattened into one array."""
    return np.concatenate([np.abs(np.subtract(out[k], out[k + "_optimistic"])).ravel() for k in keys])
