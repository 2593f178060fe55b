"""dpax.compat.riskcal.calibration.dpsgd: riskcal's DP-SGD risk functions and evaluators on
dpax.dpsgd. Their signatures as the real riskcal's; their values dpax's DP-SGD at the grid
asked for, on the safe side of the Gaussian mechanism's closed forms (sample rate 1, one step)
and close to the real riskcal's; the checks of the calibration functions' arguments (no
search runs here: the searches are tested in test_riskcal_dpax_checks.py and riskcal's suites).
Grid 1e-2."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from scipy.stats import norm

import dpax
from dpax.compat.riskcal.calibration import dpsgd

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    rc_dpsgd = pytest.importorskip("riskcal.calibration.dpsgd")

STEP = 1e-2
ALPHAS = np.array([0.01, 0.1, 0.5])
PUBLIC = ("find_noise_multiplier_for_advantage", "find_noise_multiplier_for_err_rates", "get_advantage_for_dpsgd",
          "get_beta_for_dpsgd", "create_dpsgd_evaluator", "create_dpsgd_epsilon_evaluator")


@pytest.mark.parametrize("name", PUBLIC)
def test_signatures_are_riskcals(name):
    ours = inspect.signature(getattr(dpsgd, name)).parameters.values()
    ref = inspect.signature(getattr(rc_dpsgd, name)).parameters.values()
    assert [(p.name, p.default, p.kind) for p in ours] == [(p.name, p.default, p.kind) for p in ref]
    assert name in dpsgd.__all__


def test_risk_is_dpsgds_and_on_the_safe_side_of_the_gaussian_mechanism():
    pl = dpax.dpsgd(1.0, 1.0, 1, grid_step=STEP)
    beta = dpsgd.get_beta_for_dpsgd(1.0, 1.0, 1, ALPHAS, grid_step=STEP)
    adv = dpsgd.get_advantage_for_dpsgd(1.0, 1.0, 1, grid_step=STEP)
    np.testing.assert_array_equal(beta, pl.beta(ALPHAS))
    assert adv == float(pl.advantage())
    # p = 1, T = 1: the Gaussian mechanism, 1-GDP; dpax errs on the safe side (beta low, advantage high), within
    # the grid's error
    exact_beta, exact_adv = norm.cdf(norm.ppf(1 - ALPHAS) - 1.0), 2 * norm.cdf(0.5) - 1
    assert np.all(beta <= exact_beta + 1e-12) and np.all(beta >= exact_beta - 2e-3)
    assert exact_adv - 1e-12 <= adv <= exact_adv + 2e-3
    # and close to riskcal's at the same grid (dp-accounting's connect-the-dots PLD)
    np.testing.assert_allclose(beta, rc_dpsgd.get_beta_for_dpsgd(1.0, 1.0, 1, ALPHAS, grid_step=STEP), atol=2e-3)
    assert adv == pytest.approx(rc_dpsgd.get_advantage_for_dpsgd(1.0, 1.0, 1, grid_step=STEP), abs=2e-3)


def test_evaluators():
    pl = dpax.dpsgd(1.0, 1.0, 1, grid_step=STEP)
    evaluator = dpsgd.create_dpsgd_evaluator(1.0, 1, grid_step=STEP, target_alpha=0.1)
    m = evaluator(noise_multiplier=1.0)  # riskcal's evaluators are called with the keyword too
    assert m.advantage == float(pl.advantage()) and (m.alpha, m.beta) == (0.1, float(pl.beta(0.1)))
    assert m.epsilon is None and m.delta is None
    m = dpsgd.create_dpsgd_evaluator(1.0, 1, grid_step=STEP)(1.0)
    assert m.advantage == float(pl.advantage()) and m.alpha is None and m.beta is None
    m = dpsgd.create_dpsgd_epsilon_evaluator(1.0, 1, target_delta=1e-3, grid_step=STEP)(1.0)
    assert (m.epsilon, m.delta) == (float(pl.epsilon(1e-3)), 1e-3) and m.advantage is None and m.beta is None
    assert "sample_rate=1, num_steps=1, grid_step=0.01, target_alpha=0.1" in repr(evaluator)
    with pytest.raises(ValueError, match="sample_rate"):
        dpsgd.create_dpsgd_evaluator(0.0, 1)
    with pytest.raises(ValueError, match="target_alpha"):
        dpsgd.create_dpsgd_evaluator(1.0, 1, target_alpha=1.5)


def test_calibration_arguments_are_checked_before_any_search():
    find_adv, find_err = dpsgd.find_noise_multiplier_for_advantage, dpsgd.find_noise_multiplier_for_err_rates
    with pytest.raises(ValueError, match="noise_min must be below noise_max, got 5 and 2"):
        find_adv(0.1, 1.0, 1, grid_step=STEP, noise_min=5.0, noise_max=2.0)
    with pytest.raises(ValueError, match="noise_min"):
        find_err(0.1, 0.5, 1.0, 1, grid_step=STEP, noise_min=0.0)
    with pytest.raises(ValueError, match="advantage_tol"):
        find_adv(0.1, 1.0, 1, grid_step=STEP, advantage_tol=-1.0)
    with pytest.raises(ValueError, match="beta_tol"):
        find_err(0.1, 0.5, 1.0, 1, grid_step=STEP, beta_tol=-1.0)
    # riskcal's deprecated names: the bounds under their old names, with riskcal's warning; the first deprecated
    # tolerance given is the one used (and the one warned about)
    with pytest.warns(DeprecationWarning, match="'mu_max' is deprecated") as record:
        with pytest.raises(ValueError, match="noise_min must be below noise_max, got 0.1 and 0.05"):
            find_adv(0.1, 1.0, 1, grid_step=STEP, mu_max=0.05)
    assert len(record) == 1
    with pytest.warns(DeprecationWarning) as record:
        with pytest.raises(ValueError, match="beta_tol"):
            find_err(0.1, 0.5, 1.0, 1, grid_step=STEP, beta_error=-1.0, mu_error=1e-3)
    assert [str(w.message) for w in record] == [
        "Parameter 'beta_error' is deprecated and will be removed in v2.0.0. Use 'beta_tol' instead."]
