""":mod:`dpax.cli.configuration`: `--dataset-size N --batch-size B --epochs E` in place of
`--sample-rate P --num-steps T` (dpax.dpsgd_schedule) in every subcommand that takes a DP-SGD
configuration: the pairs are exclusive and each complete, with usage errors that say so, and
the schedule is reported beside the result. The one calibration is calibrate_dpsgd's
docstring example (sample rate 0.1, 10 steps, grid 1e-2: its kernels)."""

from __future__ import annotations

import json

import pytest

from dpax.cli import main
from dpax.cli.main import build_parser

# the kernel cache: shared
CALIBRATE = ["calibrate", "--advantage", "0.3", "--grid-step", "1e-2", "--no-compare-standard"]


def _fail(argv, capsys) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    return err.rstrip().split("\n")[-1]


def test_calibrate_from_epochs(capsys):
    assert main(CALIBRATE + ["--dataset-size", "1000", "--batch-size", "100", "--epochs", "1", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["sample_rate"] == 0.1 and r["num_steps"] == 10
    assert r["schedule"] == {"sample_rate": 0.1, "num_steps": 10, "steps_per_epoch": 10, "dataset_size": 1000,
                             "batch_size": 100, "epochs": 1}
    assert round(r["noise_multiplier"], 3) == 0.538
    assert main(CALIBRATE + ["--dataset-size", "1e3", "--batch-size", "100", "--epochs", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("from 1 epoch of batches of 100 out of 1,000 records: sample rate 0.1 (= 100 / 1,000), "
                          "10 steps (10 per epoch)")
    assert "DP-SGD: sample rate 0.1, 10 steps" in out


@pytest.mark.parametrize("options, message", [
    (["--sample-rate", "0.1", "--num-steps", "10", "--epochs", "3"],
     "give --sample-rate and --num-steps, or --dataset-size, --batch-size and --epochs, not both (got --sample-rate "
     "--num-steps --epochs)"),
    (["--dataset-size", "1000", "--epochs", "3"],
     "--dataset-size, --batch-size and --epochs go together: --batch-size is missing"),
    (["--sample-rate", "0.1"], "--sample-rate and --num-steps go together: --num-steps is missing"),
    ([], "the following arguments are required: --sample-rate and --num-steps, or --dataset-size, --batch-size "
         "and --epochs"),
])
def test_the_two_ways_are_exclusive_and_complete(options, message, capsys):
    msg = _fail(CALIBRATE + options, capsys)
    assert msg == f"dpax: error: {message}" or msg.startswith(f"dpax: error: {message}")


@pytest.mark.parametrize("options, message", [
    (["--dataset-size", "1000", "--batch-size", "2000", "--epochs", "3"], "batch_size must lie in [1, dataset_size]"),
    (["--dataset-size", "1000", "--batch-size", "100", "--epochs", "2.5"],
     "epochs must be a whole number >= 1, got 2.5"),
    (["--sample-rate", "0.0042", "--num-steps", "14062.5"],
     "num_steps (--num-steps) must be a whole number >= 1, got 14062.5; to train for a number of epochs, give "
     "--dataset-size N --batch-size B --epochs E in place of --sample-rate and --num-steps"),
])
def test_bad_values_are_named(options, message, capsys):
    assert message in _fail(CALIBRATE + options, capsys)


def test_every_dpsgd_subcommand_takes_epochs(capsys):
    parser = build_parser()
    for argv in (["curve", "--noise-multiplier", "1"], ["gdp", "--noise-multiplier", "1"], CALIBRATE[:3],
                 ["plot", "calibration", "-o", "x.png"]):
        args = parser.parse_args(argv + ["--dataset-size", "60000", "--batch-size", "256", "--epochs", "60"])
        assert (args.dataset_size, args.batch_size, args.epochs) in ((60000, 256, 60), ([60000], [256], [60]))
    # gdp's DP-SGD report names both ways; the conversion needs neither
    assert "--dataset-size, --batch-size and --epochs in place of" in _fail(
        ["gdp", "--sample-rate", "0.1", "--num-steps", "10", "--no-cache"], capsys)
    assert "go together" in _fail(["gdp", "--epsilon", "1", "--epochs", "3", "--no-cache"], capsys)
    assert "required" in _fail(["curve", "--noise-multiplier", "1", "--no-cache"], capsys)
