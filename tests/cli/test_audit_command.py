"""``dpax audit`` (:mod:`dpax.cli.audit_command`): its numbers equal the library's
(:func:`dpax.audit.audit`, :func:`dpax.audit.mu_lower_bound`) with an (epsilon, delta), a mu or
a DP-SGD claim or none; bad counts and claims fail with exit status 2 and a message naming
the problem."""

from __future__ import annotations

import pytest
from cli_helpers import fail, run_error, run_json

import dpax
from dpax.cli import main

# the counts of the audit in Tramèr et al. (2022)
TRAMER_AUDIT = ["audit", "--false-positives", "174", "--negatives", "100000", "--false-negatives", "95078",
                "--positives", "1e5", "--confidence", "0.9999999999", "--claim-epsilon", "0.21",
                "--claim-delta", "1e-5", "--no-cache"]
AUDIT = ["audit", "--false-positives", "1", "--negatives", "10", "--false-negatives", "1", "--positives", "10"]


def test_audit_tramer_example(capsys):
    r = run_json(capsys, TRAMER_AUDIT)
    lib = dpax.audit.audit(174, 100000, 95078, 100000, confidence=1 - 1e-10, claim_epsilon=0.21, claim_delta=1e-5)
    assert r["contradicted"] is True
    assert r["fnr_upper"] == lib.fnr_upper and r["fpr_upper"] == lib.fpr_upper
    assert r["fnr_upper"] == pytest.approx(0.95508, abs=1e-5) and r["fpr_upper"] == pytest.approx(0.00274, abs=1e-5)
    assert r["required_fpr"] == pytest.approx(0.0364, abs=1e-4)
    assert r["epsilon_lower"] == lib.epsilon_lower and r["delta"] == 1e-5
    assert main(TRAMER_AUDIT) == 0
    text = capsys.readouterr().out
    assert "CONTRADICTED" in text and "0.955082" in text


def test_audit_mu_claim_and_no_claim(capsys):
    base = ["audit", "--false-positives", "50", "--negatives", "1000", "--false-negatives", "500",
            "--positives", "1000", "--no-cache"]
    r = run_json(capsys, base)
    assert "claim" not in r and r["mu_lower"] == pytest.approx(dpax.audit.mu_lower_bound(50, 1000, 500, 1000))
    r = run_json(capsys, base + ["--claim-mu", "3"])
    assert r["contradicted"] is False and r["claim"]["type"] == "gdp"
    r = run_json(capsys, base + ["--claim-mu", "1"])
    assert r["contradicted"] is True


@pytest.mark.parametrize("extra, match", [
    (["--false-positives", "11", "--negatives", "10", "--false-negatives", "1", "--positives", "10"],
     "false_positives"),
    (["--false-positives", "1", "--negatives", "10", "--false-negatives", "1", "--positives", "10",
      "--confidence", "1.5"], "confidence"),
    (["--false-positives", "1", "--negatives", "10", "--false-negatives", "1", "--positives", "10",
      "--claim-mu", "1", "--claim-epsilon", "1", "--claim-delta", "0"], "at most one"),
    (["--false-positives", "1", "--negatives", "10", "--false-negatives", "1", "--positives", "10",
      "--claim-delta", "0.1"], "claim_delta needs claim_epsilon"),
    (["--false-positives", "1", "--negatives", "10", "--false-negatives", "1", "--positives", "10",
      "--claim-epsilon", "1", "--claim-delta", "2"], "claim_delta"),
    (["--false-positives", "1", "--negatives", "10", "--false-negatives", "1", "--positives", "10",
      "--claim-dpsgd", "1", "0.01", "2.5"], "STEPS"),
])
def test_audit_bad_input(extra, match, capsys):
    err = run_error(["audit"] + extra, capsys)
    assert "dpax: error:" in err and match in err


def test_audit_claim_epsilon_alone_claims_delta_0(capsys):
    """--claim-delta defaults to 0, as its help says: --claim-epsilon alone is an epsilon-DP claim."""
    assert main(["audit", "--false-positives", "5", "--negatives", "100", "--false-negatives", "5", "--positives",
                 "100", "--claim-epsilon", "1"]) == 0
    assert "(1, 0)-DP" in capsys.readouterr().out


@pytest.mark.parametrize("steps", ["inf", "nan", "-inf", "0"])
def test_claim_dpsgd_steps_not_a_whole_number(steps, capsys):
    msg = fail(AUDIT + ["--claim-dpsgd", "1", "0.1", steps, "--no-cache"], capsys)
    assert "--claim-dpsgd STEPS" in msg and "whole number" in msg


def test_claim_dpsgd_bad_rate_names_the_option(capsys):
    msg = fail(AUDIT + ["--claim-dpsgd", "1", "inf", "5", "--no-cache"], capsys)
    assert "--claim-dpsgd" in msg and "sample_rate" in msg


def test_grid_step_without_a_dpsgd_claim_is_refused(capsys):
    """--grid-step only sets the grid of --claim-dpsgd's accounting: alone it changed nothing."""
    msg = fail(AUDIT + ["--grid-step", "1e-3", "--no-cache"], capsys)
    assert "--grid-step applies only to --claim-dpsgd" in msg
