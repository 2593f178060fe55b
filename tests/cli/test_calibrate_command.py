"""``dpax calibrate`` (:mod:`dpax.cli.calibrate_command`): the noise it prints meets the
target (err_rates, TPR or advantage) and the bracket's lower end does not; exactly one target
is asked for; ``--accuracy`` prints the noise's certified interval; the standard comparison,
as a table or JSON.

Small configurations and a coarse grid (1e-2) keep the file fast.
"""

from __future__ import annotations

import numpy as np
import pytest
from cli_helpers import run, run_json
from scipy.stats import norm

import dpax
from dpax import cli

P, T = 0.01, 100

#: the Gaussian mechanism as DP-SGD (sample rate 1, one step) of test_gdp_command.py: sigma 2 (mu = 0.5); its
#: sample rate and steps are the configuration test_calibrate_at_sample_rate_one_warns_nothing calibrates
GDP_SIGMA = 2.0
GDP_GAUSSIAN = ["--noise-multiplier", str(GDP_SIGMA), "--sample-rate", "1", "--num-steps", "1"]


def test_calibrate_err_rates_meets_target(capsys):
    alpha, beta, grid = 0.1, 0.5, 1e-2
    out = run_json(capsys, ["calibrate", "--sample-rate", str(P), "--num-steps", str(T), "--alpha", str(alpha),
                            "--beta", str(beta), "--grid-step", str(grid), "--rtol", "1e-3", "--no-compare-standard"])
    assert out["command"] == "calibrate" and out["status"] == "calibrated"
    noise = out["noise_multiplier"]
    assert isinstance(noise, float) and 0.05 < noise < 10
    assert out["target"] == {"type": "err_rates", "alpha": alpha, "beta": beta}
    # it meets the target at the requested grid, and the bracket's lower end does not
    assert dpax.dpsgd(noise, P, T, grid_step=grid).beta(alpha) >= beta
    assert dpax.dpsgd(out["noise_multiplier_failing"], P, T, grid_step=grid).beta(alpha) < beta
    assert noise / out["noise_multiplier_failing"] - 1 <= 1e-3 * (1 + 1e-9)
    assert out["achieved"]["beta"] >= beta
    # no comparison was asked for: NaN becomes null, not a non-JSON NaN
    assert out["standard_noise_multiplier"] is None and out["noise_reduction"] is None


def test_calibrate_tpr_target_and_table(capsys):
    code = cli.main(["calibrate", "--sample-rate", str(P), "--num-steps", str(T), "--alpha", "0.1", "--tpr", "0.5",
                     "--grid-step", "1e-2", "--rtol", "1e-3", "--no-compare-standard"])
    out, err = capsys.readouterr()
    assert code == 0, err
    for text in ("noise multiplier", "achieved FNR beta at FPR 0.1", "TPR <= 0.5", "noise not computed"):
        assert text in out


@pytest.mark.slow  # 13 s; CLI calibration also in test_calibrate_err_rates_meets_target
def test_calibrate_advantage_json(capsys):
    target, grid = 0.2, 1e-2
    out = run_json(capsys, ["calibrate", "--sample-rate", str(P), "--num-steps", str(T), "--advantage", str(target),
                            "--grid-step", str(grid), "--rtol", "1e-3"])
    noise = out["noise_multiplier"]
    assert dpax.dpsgd(noise, P, T, grid_step=grid).advantage() <= target
    assert out["achieved"]["advantage"] <= target
    # attack-aware calibration needs no more noise than standard calibration for the same bound
    assert 0 < noise <= out["standard_noise_multiplier"]
    assert out["noise_reduction"] == pytest.approx(1 - noise / out["standard_noise_multiplier"])
    # the table shows the same comparison
    table = cli.render_calibrate(out)
    for text in ("advantage TPR - FPR <= 0.2", "standard calibration", "noise reduction",
                 f"{100 * out['noise_reduction']:.1f}%"):
        assert text in table


@pytest.mark.parametrize(
    "target",
    [
        ["--alpha", "0.1"],
        ["--beta", "0.5"],
        ["--alpha", "0.1", "--beta", "0.5", "--tpr", "0.5"],
        ["--advantage", "0.1", "--alpha", "0.1", "--beta", "0.5"],
        ["--epsilon", "1"],
        [],
    ],
)
def test_calibrate_needs_exactly_one_target(capsys, target):
    code = cli.main(["calibrate", "--sample-rate", "0.01", "--num-steps", "100", *target, "--no-cache"])
    assert code == 2
    err = capsys.readouterr().err
    assert "exactly one of" in err and "Traceback" not in err


def test_calibrate_bad_target_is_a_clean_error(capsys):
    code = cli.main(["calibrate", "--sample-rate", "0.01", "--num-steps", "100", "--alpha", "0.6", "--beta", "0.5",
                     "--no-cache"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("dpax: error:") and "alpha + beta" in err


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
