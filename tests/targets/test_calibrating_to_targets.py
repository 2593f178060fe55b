"""Calibrating to the targets of dpax.targets (dpax.calibrate and dpax.calibrate_blackbox): target
fields and configuration arguments broadcast into one search, a family less private in its
parameter, infeasible rows marked in a batch and raised alone, and black-box calibration
(Appendix A) from an epsilon(delta) or delta(epsilon) accountant, against the Gaussian's closed
forms. (TARGETS and "the closed-form tests" in the comments below are tests/targets/test_targets.py's:
the searches here walk on their kernels.)"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm
from target_refs import STEP, _exact_mu

import dpax
from dpax.targets import Advantage, Epsilon, ErrRates
from exact_refs import gdp_beta, gdp_delta


def test_batched_targets_and_configuration_args():
    """Arrays in target fields and in args broadcast; one search for the whole batch."""
    adv = np.array([0.37, 0.383, 0.4])  # mu* 0.96, 1.00, 1.05: about TARGETS' noise, whose kernels serve
    sens = np.array([[1.0], [2.0]])
    # bounds (0.05, 50), the closed-form tests' (answers 0.95..2.08): at (0.05, 100) the search's
    # first rounds took 3 kernel shapes more
    got = dpax.calibrate(lambda s, c: dpax.gaussian(s, sensitivity=c, grid_step=STEP), Advantage(adv), args=(sens,),
                         param_bounds=(0.05, 50))
    assert got.shape == (2, 3)
    exact = sens / (2 * norm.ppf((1 + adv) / 2))
    assert np.all(got >= exact * (1 - 1e-9)) and np.all(got <= exact * (1 + 2e-3))
    for (i, j), s in np.ndenumerate(got):
        assert dpax.gaussian(s, sensitivity=sens[i, 0], grid_step=STEP).advantage() <= adv[j]
        assert dpax.gaussian(0.995 * s, sensitivity=sens[i, 0], grid_step=STEP).advantage() > adv[j]


def test_decreasing_family_randomised_parameter():
    """A family less private in its parameter (privacy='decreasing'): the largest sensitivity
    a unit-noise Gaussian can take for advantage 0.383 (TARGETS' advantage: the same mechanisms)
    is mu* = 2 Phi^-1(1.383 / 2)."""
    fam = lambda c: dpax.gaussian(1.0, sensitivity=c, grid_step=STEP)
    # sensitivity c at unit noise is noise 1 / c: bounds (0.02, 20) search the noises (0.05, 50) of
    # the closed-form tests, with their kernels
    res = dpax.calibrate(fam, Advantage(0.383), param_bounds=(0.02, 20), privacy="decreasing", full_output=True)
    c = res.noise_multiplier
    assert res.status == "calibrated"
    exact = 2 * norm.ppf(1.383 / 2)
    assert exact * (1 - 2e-3) <= c <= exact * (1 + 1e-9)
    assert fam(c).advantage() <= 0.383 < fam(1.005 * c).advantage()
    assert res.achieved["advantage"] == pytest.approx(fam(c).advantage(), abs=1e-12)


def test_infeasible_rows_marked_in_batch_and_raised_alone():
    # TARGETS' advantage and the closed-form tests' bounds: their kernels serve
    fam = lambda s: dpax.gaussian(s, grid_step=STEP)
    res = dpax.calibrate(fam, Advantage([0.383, 0.001]), param_bounds=(0.05, 50), full_output=True)
    assert list(res.status) == ["calibrated", "infeasible"]
    assert np.isnan(res.noise_multiplier[1]) and "not met" in res.reason[1] and "50" in res.reason[1]
    assert res.noise_multiplier[0] == pytest.approx(1 / (2 * norm.ppf(1.383 / 2)), rel=2e-3)
    with pytest.raises(ValueError, match=r"row \[1\].*not met even at"):
        dpax.calibrate(fam, Advantage([0.383, 0.001]), param_bounds=(0.05, 50), on_infeasible="raise")
    # bounds (1, 2.5): the closed-form tests' first guess (their geometric mean, 1.58) and TARGETS' noise 1 at the
    # least private end, so the searches below walk on their kernels (bounds (0.05, 50) and (0.5, 10): 12 compilations)
    with pytest.raises(ValueError, match="calibrate: the target: the target is not met"):
        dpax.calibrate(fam, Advantage(0.001), param_bounds=(1.0, 2.5))
    # the least private end of the bounds already meets it: an answer, with a flag
    res = dpax.calibrate(fam, Advantage(0.9), param_bounds=(1.0, 2.5), full_output=True)
    assert res.status == "met_at_bound" and res.noise_multiplier == 1.0


# --------------------------------------------------------------------------------------
# black-box calibration (Appendix A) from an epsilon(delta) / delta(epsilon) accountant
# --------------------------------------------------------------------------------------


def _delta_acct(s, eps):  # the Gaussian mechanism's exact privacy profile (Eq. 22)
    return gdp_delta(np.asarray(eps), 1.0 / s)


def _eps_acct(s, deltas):
    mu = 1.0 / s
    return np.array([brentq(lambda e, d=d: gdp_delta(e, mu) - d, 0.0, 200.0) if gdp_delta(0.0, mu) > d else 0.0
                     for d in deltas])


def test_blackbox_advantage_is_exact_from_delta_at_zero():
    """Eq. 19: delta_w(0) <= eta*; exact for the Gaussian (Corollary B.3)."""
    got = dpax.calibrate_blackbox(Advantage(0.2), delta=_delta_acct, rtol=1e-5)
    exact = 1 / (2 * norm.ppf(0.6))
    assert exact * (1 - 1e-9) <= got <= exact * (1 + 2e-5)


# "epsilon" is slow (~5 s of brentq calls); default siblings: "delta" here and
# tests/calibration/test_calibration_blackbox.py::test_err_rates_through_the_eq20_bound_are_pessimistic (the same
# ErrRates(0.1, 0.5) through an epsilon(delta) accountant)
@pytest.mark.parametrize("kind", ["delta", pytest.param("epsilon", marks=pytest.mark.slow)])
def test_blackbox_err_rates_is_safe_and_close(kind):
    """Eq. 20 lower-bounds the curve, so the noise is never below the exact answer."""
    kw = {"delta": _delta_acct} if kind == "delta" else {"epsilon": _eps_acct, "deltas": np.geomspace(1e-8, 0.9, 60)}
    got = dpax.calibrate_blackbox(ErrRates(alpha=0.1, beta=0.5), rtol=1e-4, **kw)
    exact = 1 / (norm.isf(0.1) - norm.ppf(0.5))
    assert exact * (1 - 1e-9) <= got <= exact * 1.02
    assert gdp_beta(0.1, 1 / got) >= 0.5


def test_blackbox_epsilon_and_infeasible():
    got = dpax.calibrate_blackbox(Epsilon(1.0, 1e-5), delta=_delta_acct, rtol=1e-6)
    assert got == pytest.approx(1.0 / _exact_mu(Epsilon(1.0, 1e-5)), rel=2e-6)
    out = dpax.calibrate_blackbox(Advantage([0.2, 1e-4]), delta=_delta_acct, noise_bounds=(0.1, 10))
    assert np.isfinite(out[0]) and np.isnan(out[1])
    with pytest.raises(TypeError, match="exactly one"):
        dpax.calibrate_blackbox(Advantage(0.2))
