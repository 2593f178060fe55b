"""``dpax gdp`` (:mod:`dpax.cli.gdp_command`): mu, the regret and the Tier II attack table
of DP-SGD with their certified brackets, which hold the Gaussian mechanism's closed form;
``--accuracy`` applies to mu and every bracketed number; the (epsilon, delta) -> mu
conversion is a closed form, without brackets.

DP-SGD with sample rate 1 and one step is the Gaussian mechanism with mu = 1 / sigma, whose
trade-off curve is beta(alpha) = Phi(Phi^-1(1 - alpha) - mu).
"""

from __future__ import annotations

import numpy as np
import pytest
from cli_helpers import run, widths
from scipy.stats import norm

import dpax
from dpax import _text, cli

SIGMA = 1.25  # mu = 0.8
GAUSSIAN = ["--noise-multiplier", str(SIGMA), "--sample-rate", "1", "--num-steps", "1"]
DELTAS = [1e-3, 1e-5]
#: `dpax gdp`'s Gaussian: sigma 2 (mu = 0.5), whose 1024-point support at grid 1e-2 is that of the
#: dpax.gdp docstring examples (tests/test_docs.py): the construction, companion, mu, regret and
#: regret-bound kernels other files compile (sigma 1.25's 2048 points compiled 4 of its own, ~4 s)
GDP_SIGMA = 2.0
GDP_GAUSSIAN = ["--noise-multiplier", str(GDP_SIGMA), "--sample-rate", "1", "--num-steps", "1"]


# default: the only default test of dpax gdp's brackets (tests/gdp/test_gdp_cli.py runs it with --no-bounds)
def test_gdp_brackets_hold_the_gaussian_truth(capsys):
    out = run(capsys, ["gdp", *GDP_GAUSSIAN, "--grid-step", "1e-2", "--delta", *map(str, DELTAS)])
    mu = 1 / GDP_SIGMA
    # mu: the companion's mu is a lower bound of mu; the safe mu an upper bound
    assert out["mu_optimistic"] <= mu <= out["mu"] and out["mu"] - out["mu_optimistic"] < 0.05
    beta_true = norm.cdf(norm.isf(out["alpha"]) - mu)
    beta, beta_opt = np.asarray(out["beta"]), np.asarray(out["beta_optimistic"])
    assert np.all(beta <= beta_true + 1e-15) and np.all(beta_true <= beta_opt + 1e-15)
    # (a few ulps either way: the closed form is an upper bound of the exact value by up to 3 ulps)
    adv_true = dpax.gdp.advantage(mu)
    assert out["advantage_optimistic"] <= adv_true + 1e-15 and adv_true <= out["advantage"] + 1e-15
    eps_true = np.asarray(dpax.gdp.epsilon(np.asarray(DELTAS), mu))
    assert np.all(np.asarray(out["epsilon_optimistic"]) <= eps_true) and np.all(eps_true <= np.asarray(out["epsilon"]))
    # the Gaussian is exactly mu-GDP: its regret 0 lies in the bracket, which holds the point regret
    assert out["regret_lower"] == 0.0 <= out["regret"] <= out["regret_upper"] < 1e-4
    text = cli.gdp_command.render_gdp(out)
    assert "mu, optimistic" in text and "a lower bound of mu" in text and "the true regret lies in [0" in text
    assert "optimistic beta" in text and "optimistic epsilon" in text
    # Tier II: the FNR at FPR 1e-10 (within 1e-4 of 1) as 1 - its TPR, both sides of the bracket;
    # the last row is the advantage-maximising attack, labelled in words
    rows = text.split("Tier II")[1].splitlines()
    first = next(line for line in rows if line.strip().startswith("1e-10 "))
    tpr = _text.probability(1 - out["beta"][0], complement=out["beta"][0])
    assert first.split()[1:4] == ["1", "-", tpr] and first.split()[4] == tpr
    assert first.split()[5:8] == ["1", "-", _text.fmt(1 - out["beta_optimistic"][0])]
    assert "(max advantage)" in next(
        line for line in rows if line.strip().startswith(_text.fmt(out["alpha"][-1], 4)))
    assert "alpha*" not in text
    # the (epsilon, delta) -> mu conversion is a closed form: no bracket
    conv = run(capsys, ["gdp", "--epsilon", "1", "--delta", "1e-5"])
    assert not any("optimistic" in k for k in conv)


@pytest.mark.slow  # the mu kernel on both sides at every grid tried (~15 s cold)
def test_gdp_accuracy_applies_to_mu_and_every_bracketed_number(capsys):
    acc = 1e-4
    out = run(capsys, ["gdp", *GAUSSIAN, "--accuracy", str(acc), "--delta", *map(str, DELTAS)])
    tried = out["grid_steps_tried"]
    assert tried[0][1] > acc >= tried[-1][1] and out["grid_step"] == tried[-1][0]
    w = np.append(widths(out, ["beta", "epsilon", "advantage"]), out["mu"] - out["mu_optimistic"])
    assert w.max() <= acc and out["max_width"] == pytest.approx(w.max(), rel=1e-12)
    assert out["mu_optimistic"] <= 1 / SIGMA <= out["mu"]


@pytest.mark.parametrize("extra", [["--tail", "1e-5"], ["--grid-step", "1e-3"], ["--no-bounds"]])
def test_gdp_conversion_refuses_the_reports_options(extra, capsys):
    """The (epsilon, delta) -> mu conversion is a closed form: --tail, --grid-step and
    --no-bounds would change nothing, and are refused naming the option."""
    assert cli.main(["gdp", "--epsilon", "8", *extra]) == 2
    assert f"dpax: error: {extra[0]} applies to the DP-SGD report" in capsys.readouterr().err
