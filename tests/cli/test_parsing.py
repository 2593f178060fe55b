""":mod:`dpax.cli.parsing`, the parser every subcommand shares: options cannot be abbreviated
and a mistyped one is answered with the closest option of its subcommand; an unknown command
or usage error is one line ``dpax: error: <message>`` after the usage; negative numbers are
values, not options; messages are capped at one line; ``--no-cache`` (the compilation-cache
switch) keeps a call off the disk and touches no JAX setting.

Each test runs ``main`` in-process on inputs that fail before any large kernel compiles
(grid step 1e-2, a few steps), but for the cache test's one-step curves.
"""

from __future__ import annotations

import os

import jax
import numpy as np
import pytest
from cli_helpers import fail, run_json

from dpax import cli
from dpax.cli import main

P, SIGMA = 0.01, 1.0  # the cache test's one-step DP-SGD curve
CHEAP = ["--grid-step", "1e-2", "--no-cache"]
CURVE = ["curve", "--noise-multiplier", "1", "--sample-rate", "0.1", "--num-steps", "5", *CHEAP]


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


def test_no_cache_keeps_the_call_off_the_disk_and_touches_no_jax_setting(capsys, _cache_dir):
    from dpax._engine import cache

    before = dict(jax.config.values)
    cache.follow_environment()
    with cli.compilation_cache(True) as path:
        assert path == str(_cache_dir)
    with cli.compilation_cache(False) as path:
        assert path is None and not cache.enabled()
    assert cache.directory() == str(_cache_dir)  # restored
    files = set(os.listdir(_cache_dir))
    # --no-bounds: this test is about the cache, not the brackets (tests/cli/test_curve_command.py)
    # one step (no composition kernels); follow_environment() emptied the table of kernels in
    # memory and the directory is new: every kernel of the call is compiled, none may be stored
    one_step = ["curve", "--noise-multiplier", str(SIGMA), "--sample-rate", str(P), "--num-steps", "1",
                "--grid-step", "2e-3", "--no-bounds"]
    out = run_json(capsys, one_step + ["--no-cache"])
    assert out["command"] == "curve" and len(out["alpha"]) > 1
    assert set(os.listdir(_cache_dir)) == files
    # with the cache: the same call at one alpha reuses the kernels in memory but for the beta
    # kernel of one query, compiled here and stored
    run_json(capsys, one_step + ["--alpha", "0.1"])
    assert set(os.listdir(_cache_dir)) > files
    assert dict(jax.config.values) == before
    cache.follow_environment()
