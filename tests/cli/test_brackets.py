""":mod:`dpax.cli.brackets`, what the risk-reporting subcommands share: the attack table
(probabilities near 1 as "1 - q"), and the "certified brackets" options: ``--accuracy``
(a finite number > 0, not with ``--grid-step``) and ``--no-bounds``, documented in each
subcommand's help. No kernel runs here; the brackets' numbers are checked by each
subcommand's tests (test_curve_command.py, test_gdp_command.py, test_calibrate_command.py).
"""

from __future__ import annotations

import pytest

from dpax import cli

SMALL = ["--noise-multiplier", "1", "--sample-rate", "0.01", "--num-steps", "100"]


def usage_error(capsys, args) -> str:
    assert cli.main(args + ["--no-cache"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    return err


def test_probabilities_near_one_print_as_one_minus_their_complement():
    # an FNR of 1 - 4e-9 beside a TPR of 4e-9 prints as such, never as "1" (dpax gdp's Tier II,
    # the attack tables of dpax curve and dpax mechanism); no kernel runs
    from dpax._text import probability
    from dpax.cli.brackets import attack_lines

    assert probability(1 - 4e-9) == "1 - 4e-09" and probability(1 - 1e-12, complement=1e-12) == "1 - 1e-12"
    assert probability(0.999826) == "0.999826"  # 1.7e-4 from 1: six digits keep three of the complement
    assert (probability(1.0), probability(0.0), probability(0.25), probability(None)) == ("1", "0", "0.25", "-")
    lines = attack_lines({"alpha": [1e-10, 0.1], "beta": [1 - 4e-9, 2e-13], "tpr": [4e-9, 1 - 2e-13]})
    assert lines[1].split() == ["1e-10", "1", "-", "4e-09", "4e-09"]
    assert lines[2].split() == ["0.1", "2e-13", "1", "-", "2e-13"]


@pytest.mark.parametrize("args, message", [
    (["curve", *SMALL, "--grid-step", "1e-3", "--accuracy", "1e-3"], "either --grid-step or --accuracy"),
    (["gdp", *SMALL, "--accuracy", "1e-3", "--grid-step=1e-2"], "either --grid-step or --accuracy"),
    (["curve", *SMALL, "--accuracy", "0"], "argument --accuracy: must be a finite number > 0, got '0'"),
    (["curve", *SMALL, "--accuracy", "-1e-3"], "argument --accuracy: must be a finite number > 0"),
    (["gdp", *SMALL, "--accuracy", "nan"], "argument --accuracy: must be a finite number > 0"),
    (["curve", *SMALL, "--accuracy", "inf"], "argument --accuracy: must be a finite number > 0"),
    (["gdp", "--epsilon", "1", "--accuracy", "1e-3"], "the --epsilon conversion is a closed form"),
    (["calibrate", "--sample-rate", "0.01", "--num-steps", "100", "--advantage", "0.2", "--accuracy", "1e-3",
      "--grid-step", "1e-2"], "either --grid-step or --accuracy"),
    (["calibrate", "--sample-rate", "0.01", "--num-steps", "100", "--advantage", "0.2", "--accuracy", "0"],
     "argument --accuracy: must be a finite number > 0"),
])
def test_accuracy_usage_errors(capsys, args, message):
    assert message in usage_error(capsys, args)


def test_help_documents_brackets_and_accuracy(capsys):
    for command, applies in (("curve", "every number reported"),
                             ("gdp", "every number of the report (mu and the regret"),
                             ("calibrate", "the target's quantity at the calibrated noise")):
        assert cli.main([command, "--help"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        assert "--accuracy A" in text and applies in text and "absolute" in text
        assert ("--no-bounds" in text) == (command != "calibrate")
