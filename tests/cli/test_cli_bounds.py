"""Certified brackets on the command line: ``dpax curve`` and ``dpax gdp`` print each
number with the optimistic side of its bracket, ``--no-bounds`` drops it, ``--accuracy`` chooses
the grid.

The orientation is checked against a closed form: DP-SGD with sample rate 1 and one step is
the Gaussian mechanism with mu = 1 / sigma, whose trade-off curve is
beta(alpha) = Phi(Phi^-1(1 - alpha) - mu). Coarse grids (1e-2, 1e-3) keep the file fast.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import norm

import dpax
from dpax import _text, cli
from dpax._engine import grid as engine_grid

SIGMA = 1.25  # mu = 0.8
GAUSSIAN = ["--noise-multiplier", str(SIGMA), "--sample-rate", "1", "--num-steps", "1"]
SMALL = ["--noise-multiplier", "1", "--sample-rate", "0.01", "--num-steps", "100"]
ALPHAS = [0.001, 0.01, 0.1, 0.3]
DELTAS = [1e-3, 1e-5]
CURVE = ["curve", *GAUSSIAN, "--alpha", *map(str, ALPHAS), "--delta", *map(str, DELTAS)]  # one set of kernels
#: `dpax gdp`'s Gaussian: sigma 2 (mu = 0.5), whose 1024-point support at grid 1e-2 is that of the
#: dpax.gdp docstring examples (tests/test_docs.py): the construction, companion, mu, regret and
#: regret-bound kernels other files compile (sigma 1.25's 2048 points compiled 4 of its own, ~4 s)
GDP_SIGMA = 2.0
GDP_GAUSSIAN = ["--noise-multiplier", str(GDP_SIGMA), "--sample-rate", "1", "--num-steps", "1"]


def run(capsys, args, json_out=True):
    code = cli.main(args + (["--json"] if json_out else []))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out) if json_out else out


def usage_error(capsys, args) -> str:
    assert cli.main(args + ["--no-cache"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    return err


def widths(out, keys):
    return np.concatenate([np.abs(np.subtract(out[k], out[k + "_optimistic"])).ravel() for k in keys])


def test_curve_brackets_hold_the_gaussian_truth(capsys):
    out = run(capsys, CURVE + ["--grid-step", "1e-2"])
    mu = 1 / SIGMA
    beta_true = norm.cdf(norm.isf(ALPHAS) - mu)
    # beta: safe (the existing key, unchanged) <= truth <= optimistic; TPR the other way round
    assert np.all(np.asarray(out["beta"]) <= beta_true) and np.all(beta_true <= np.asarray(out["beta_optimistic"]))
    np.testing.assert_allclose(out["tpr_optimistic"], 1 - np.asarray(out["beta_optimistic"]), rtol=0, atol=1e-15)
    # advantage and epsilon: optimistic <= truth <= safe
    adv_true = dpax.gdp.advantage(mu)
    # (2.2e-16 of float64 round-off either way: the closed form's own, and jax 0.8's sums differ by that)
    assert out["advantage_optimistic"] <= adv_true + 1e-15 and adv_true <= out["advantage"] + 1e-15
    eps_true = np.asarray(dpax.gdp.epsilon(np.asarray(DELTAS), mu))
    assert np.all(np.asarray(out["epsilon_optimistic"]) <= eps_true) and np.all(eps_true <= np.asarray(out["epsilon"]))
    # the keys are the library's numbers, safe side unchanged
    pl = dpax.dpsgd(SIGMA, 1.0, 1, grid_step=1e-2)
    b = pl.beta(np.asarray(ALPHAS), bounds=True)
    np.testing.assert_array_equal(out["beta"], b.safe)
    np.testing.assert_array_equal(out["beta_optimistic"], b.optimistic)
    assert out["bounds"] is True and "accuracy" not in out
    assert out["max_width"] == pytest.approx(widths(out, ["beta", "epsilon", "advantage"]).max(), rel=1e-12)


def test_curve_table_shows_brackets_and_no_bounds_drops_them(capsys):
    text = run(capsys, CURVE + ["--grid-step", "1e-2"], False)
    for header in ("optimistic beta", "width", "optimistic epsilon", "optimistic", "the truth lies between"):
        assert header in text, header
    pl = dpax.dpsgd(SIGMA, 1.0, 1, grid_step=1e-2)
    # beta and epsilon read off the ALPHAS and DELTAS queries (CURVE's kernels; one alpha or one
    # delta alone compiled its own)
    bb, ee = pl.beta(np.asarray(ALPHAS), bounds=True), pl.epsilon(np.asarray(DELTAS), bounds=True)
    b = type(bb)(*(float(np.asarray(x)[ALPHAS.index(0.01)]) for x in bb))
    e = type(ee)(*(float(np.asarray(x)[DELTAS.index(1e-5)]) for x in ee))
    row = next(line.split() for line in text.splitlines() if line.split()[:1] == ["0.01"])
    assert [float(x) for x in row[1:]] == pytest.approx([b.safe, 1 - b.safe, b.optimistic, b.width], rel=5e-2)
    row = next(line.split() for line in text.splitlines() if line.split()[:1] == ["1e-05"])
    assert [float(x) for x in row[1:]] == pytest.approx([e.safe, e.optimistic, e.width], rel=5e-2)
    plain = run(capsys, CURVE + ["--grid-step", "1e-2", "--no-bounds"], False)
    assert "optimistic" not in plain and "width" not in plain and f"{b.safe:.6g}" in plain
    out = run(capsys, ["curve", *GAUSSIAN, "--grid-step", "1e-2", "--no-bounds", "--delta", *map(str, DELTAS)])
    assert not any(k.endswith("_optimistic") for k in out) and "bounds" not in out


def test_curve_accuracy_chooses_the_grid(capsys):
    acc = 2e-5  # grid 1e-2 gives epsilon(1e-5) a bracket 1e-4 wide: refined once
    out = run(capsys, CURVE + ["--accuracy", str(acc)])
    tried = out["grid_steps_tried"]
    assert out["accuracy"] == acc and tried[0][0] == 1e-2 and tried[0][1] > acc >= tried[-1][1]
    assert out["grid_step"] == tried[-1][0] < 1e-2
    # every reported number's bracket is within the accuracy, and the one that decided is reported
    w = widths(out, ["beta", "tpr", "epsilon", "advantage"])
    assert w.max() <= acc and out["max_width"] == pytest.approx(tried[-1][1], rel=1e-12)
    text = cli.curve_command.render_curve(out)
    assert f"grid step {out['grid_step']:g} chosen by --accuracy 2e-05" in text


def test_accuracy_stopped_by_the_memory_budget_says_the_width_reached(capsys, monkeypatch):
    # room for grid 1e-2 but not for the next grid the refinement asks for
    monkeypatch.setattr(engine_grid, "MEMORY_LIMIT_BYTES", 2**20)
    assert cli.main(CURVE + ["--accuracy", "1e-9", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpax: error: --accuracy: accuracy=1e-09 not reached: width ")
    assert "at grid_step=0.01" in err and "memory budget" in err and "Traceback" not in err


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


# default: the only default test of dpax gdp's brackets (tests/gdp/test_gdp.py runs it with --no-bounds)
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


def readme_cli_example():
    """The ``dpax curve`` command of the README's "Certified error bars" section and the output
    it is shown to print."""
    from test_readme import README, code_blocks

    section = README.split("\n## Certified error bars", 1)[1].split("\n## ", 1)[0]
    command = next(b for b in code_blocks(section, "bash") if b.code.startswith("dpax curve")).code.split()
    shown = section.split("It prints (timing aside):", 1)[1]
    return command[1:], code_blocks(shown, "")[0].code


@pytest.mark.slow  # three grids down to 1e-4 at 10,000 steps (~15 s cold); its run alone is in test_readme's slow set
def test_readme_cli_example_prints_what_the_readme_shows(capsys):
    from test_readme import mismatches

    args, shown = readme_cli_example()
    text = run(capsys, args, False)
    actual = "\n".join(x for x in text.splitlines() if not x.startswith("(computed in"))
    assert "--accuracy" in args and not mismatches(shown, actual), mismatches(shown, actual)


@pytest.mark.slow  # a calibration with brackets (~20 s cold)
def test_calibrate_accuracy_prints_the_noise_interval(capsys):
    acc, p, t = 1e-3, 0.01, 100
    args = ["calibrate", "--sample-rate", str(p), "--num-steps", str(t), "--alpha", "0.1", "--beta", "0.5",
            "--accuracy", str(acc), "--rtol", "1e-3", "--no-compare-standard"]
    out = run(capsys, args)
    noise, low = out["noise_multiplier"], out["noise_multiplier_optimistic"]
    assert out["accuracy"] == acc and 0 < low <= noise
    # the safe noise meets the target on the grid chosen; the optimistic end fails it with the companion
    pl = dpax.dpsgd(noise, p, t, grid_step=out["grid_step"])
    b = pl.beta(0.1, bounds=True)
    assert b.safe >= 0.5 and b.width <= acc
    assert out["achieved"]["beta"] == b.safe and out["achieved_optimistic"]["beta"] == pytest.approx(b.optimistic)
    assert dpax.dpsgd(low, p, t, grid_step=out["grid_step"]).optimistic_companion().beta(0.1) < 0.5
    text = cli.render_calibrate(out)
    assert f"chosen by --accuracy {acc:g}" in text and "noise, optimistic" in text and "optimistic " in text
    # without --accuracy nothing of it is printed
    plain = {k: v for k, v in out.items()
             if k not in ("accuracy", "noise_multiplier_optimistic", "achieved_optimistic")}
    assert "optimistic" not in cli.render_calibrate(plain) and "--accuracy" not in cli.render_calibrate(plain)


def test_calibrate_accuracy_when_subsampling_alone_meets_the_target(capsys):
    """No row to search: the grid is the coarsest (1e-2), so the standard comparison has one (it
    failed with "unsupported operand type(s) for *: 'NoneType' and 'float'"); the advantage is
    the leak probability 1 - (1 - p)^T exactly, and no noise interval is printed."""
    p, t = 0.01, 10
    out = run(capsys, ["calibrate", "--sample-rate", str(p), "--num-steps", str(t), "--advantage", "0.3",
                       "--accuracy", "0.05", "--rtol", "1e-2"])
    assert out["status"] == "met_without_noise" and out["noise_multiplier"] == 0.0 and out["grid_step"] == 1e-2
    q = -np.expm1(t * np.log1p(-p))
    assert out["achieved"]["advantage"] == pytest.approx(q, rel=1e-15)
    assert out["achieved_optimistic"]["advantage"] == out["achieved"]["advantage"]
    assert 0 < out["standard_noise_multiplier"] < np.inf  # the comparison ran, on the grid 1e-2
    std = dpax.dpsgd(out["standard_noise_multiplier"], p, t, grid_step=1e-2).epsilon(1e-5)
    assert std <= out["standard_epsilon"]
    text = cli.render_calibrate(out)
    assert "subsampling alone meets the target" in text and "noise, optimistic" not in text


def test_calibrate_at_sample_rate_one_warns_nothing(capsys):
    """At p = 1 the leak probability 1 - (1 - p)^T took log(0): NumPy's RuntimeWarning reached
    the terminal."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = run(capsys, ["calibrate", *GDP_GAUSSIAN[2:], "--advantage", "0.3", "--grid-step", "1e-2",
                           "--rtol", "1e-2", "--no-compare-standard"])
    # sample rate 1, one step: the Gaussian, whose mu* is 2 Phi^-1(1.3 / 2) (Corollary B.3)
    assert out["status"] == "calibrated"
    assert out["noise_multiplier"] >= 1 / (2 * norm.ppf(1.3 / 2))
