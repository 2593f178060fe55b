"""dpax.calibration.blackbox: calibrate_blackbox against mu-GDP accountants seen only through
delta(epsilon) or epsilon(delta) (mu = 1 / w), checked with the GDP closed forms. Through delta,
an Advantage target is exact (delta at epsilon 0) and the answer lies within rtol above the
closed form; through epsilon, and for ErrRates targets (the Eq. 20 lower bound on the trade-off
curve), it is pessimistic: never below the closed form, a little above it. Rows met at the low
end of noise_bounds or infeasible are marked (or raise), and a bad accountant or target is
refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import ndtri
from scipy.stats import norm

import dpax
from dpax.calibration.blackbox import _tradeoff_lower_bound
from dpax.targets import GDP, Advantage, Epsilon, ErrRates
from exact_refs import gdp_delta, gdp_epsilon

RTOL = 1e-3  # calibrate_blackbox's default


def by_delta(w, epsilons):
    """The mu-GDP accountant, mu = 1 / w, as delta(epsilon) (exact_refs: independent of dpax)."""
    return gdp_delta(epsilons, 1.0 / w)


def by_epsilon(w, deltas):
    """The mu-GDP accountant, mu = 1 / w, as epsilon(delta)."""
    return dpax.gdp.epsilon(deltas, 1.0 / w)


def exact_advantage_noise(a):
    return 1.0 / (2 * ndtri((1 + a) / 2))  # Corollary B.3


def exact_err_rates_noise(alpha, beta):
    return 1.0 / (norm.isf(alpha) - norm.ppf(beta))  # Corollary B.4


def test_the_eq20_bound_is_the_epsilon_delta_curve_of_each_profile_point():
    """f(alpha) >= max_i max(0, 1 - delta_i - e^eps_i alpha, e^-eps_i (1 - delta_i - alpha)); an
    infinite epsilon says nothing."""
    assert _tradeoff_lower_bound(0.1, [1.0], [0.0]) == pytest.approx(1 - np.e * 0.1, rel=1e-15)
    assert _tradeoff_lower_bound(0.5, [1.0], [0.01]) == pytest.approx((1 - 0.01 - 0.5) / np.e, rel=1e-15)
    two = _tradeoff_lower_bound(0.1, [1.0, 0.5], [0.0, 0.2])
    assert two == pytest.approx(max(1 - np.e * 0.1, 1 - 0.2 - np.exp(0.5) * 0.1), rel=1e-15)
    assert _tradeoff_lower_bound(0.1, [np.inf, 1.0], [0.0, 0.0]) == _tradeoff_lower_bound(0.1, [1.0], [0.0])
    assert _tradeoff_lower_bound(0.1, [np.inf], [0.0]) == 0.0
    assert _tradeoff_lower_bound(0.9, [0.1], [0.5]) == 0.0  # never below 0


@pytest.mark.parametrize("a", [0.2, 0.3])
def test_an_advantage_through_delta_is_within_rtol_of_the_closed_form(a):
    w = dpax.calibrate_blackbox(Advantage(a), delta=by_delta)
    exact = exact_advantage_noise(a)
    assert isinstance(w, float)
    assert exact * (1 - 1e-9) <= w <= exact * (1 + RTOL) * (1 + 1e-9)


def test_an_advantage_through_epsilon_is_pessimistic():
    adv = dpax.calibrate_blackbox(Advantage(0.2), epsilon=by_epsilon)
    exact = exact_advantage_noise(0.2)
    assert exact * (1 - 1e-9) <= adv <= exact * 1.01


def test_err_rates_through_the_eq20_bound_are_pessimistic():
    exact = exact_err_rates_noise(0.1, 0.5)
    for accountant in (dict(epsilon=by_epsilon), dict(delta=by_delta)):
        r = dpax.calibrate_blackbox(ErrRates(0.1, 0.5), full_output=True, **accountant)
        assert r.status == "calibrated" and r.reason == ""
        assert exact * (1 - 1e-9) <= r.noise_multiplier <= exact * 1.01
        # the bracket: the failing end is rtol below the answer
        assert r.noise_multiplier_failing < r.noise_multiplier <= r.noise_multiplier_failing * (1 + RTOL)
        assert r.evaluations > 0 and np.isnan(r.grid_step) and r.achieved == {}


def test_an_epsilon_target_is_met_by_the_accountant_itself():
    r = dpax.calibrate_blackbox(Epsilon(1.0, 1e-5), epsilon=by_epsilon, full_output=True)
    exact = brentq(lambda w: gdp_epsilon(1e-5, 1.0 / w) - 1.0, 0.5, 20.0, xtol=1e-14)
    assert exact * (1 - 1e-9) <= r.noise_multiplier <= exact * (1 + RTOL) * (1 + 1e-9)
    assert gdp_epsilon(1e-5, 1.0 / r.noise_multiplier) <= 1.0 + 1e-9
    assert gdp_epsilon(1e-5, 1.0 / r.noise_multiplier_failing) > 1.0


def test_rows_are_searched_together_and_a_list_of_targets_meets_all():
    both = dpax.calibrate_blackbox(Advantage([0.2, 0.3]), delta=by_delta)
    assert both.shape == (2,)
    for w, a in zip(both, (0.2, 0.3)):
        assert exact_advantage_noise(a) * (1 - 1e-9) <= w <= exact_advantage_noise(a) * (1 + RTOL) * (1 + 1e-9)
    w = dpax.calibrate_blackbox([Advantage(0.3), ErrRates(0.1, 0.5)], delta=by_delta)
    need = max(exact_advantage_noise(0.3), exact_err_rates_noise(0.1, 0.5))  # 0.780: ErrRates decides
    assert need * (1 - 1e-9) <= w <= need * 1.01


def test_rows_met_at_the_low_end_or_infeasible_are_marked_or_raise():
    r = dpax.calibrate_blackbox(Advantage(0.2), delta=by_delta, noise_bounds=(5.0, 100.0), full_output=True)
    assert r.status == "met_at_bound" and r.noise_multiplier == 5.0 and np.isnan(r.noise_multiplier_failing)
    assert r.reason == "the low end of noise_bounds (5) already meets the target"
    # Advantage(0.001) needs noise 399: beyond noise_bounds' upper end, marked in a batch ...
    r = dpax.calibrate_blackbox(Advantage([0.2, 0.001]), delta=by_delta, noise_bounds=(0.5, 100.0), full_output=True)
    assert r.status.tolist() == ["calibrated", "infeasible"]
    assert np.isnan(r.noise_multiplier[1]) and "not met even at 100 (the upper end of noise_bounds)" in r.reason[1]
    assert r.noise_multiplier[0] == pytest.approx(exact_advantage_noise(0.2), rel=RTOL)
    # ... raised for one configuration, or when asked
    with pytest.raises(ValueError, match="calibrate_blackbox: the target: the target is not met even at 100"):
        dpax.calibrate_blackbox(Advantage(0.001), delta=by_delta)
    with pytest.raises(ValueError, match=r"calibrate_blackbox: row \[1\]: the target is not met"):
        dpax.calibrate_blackbox(Advantage([0.2, 0.001]), delta=by_delta, on_infeasible="raise")


def test_a_bad_accountant_or_target_is_refused_by_name():
    with pytest.raises(TypeError, match="exactly one of epsilon"):
        dpax.calibrate_blackbox(Advantage(0.2))
    with pytest.raises(TypeError, match="exactly one of epsilon"):
        dpax.calibrate_blackbox(Advantage(0.2), epsilon=by_epsilon, delta=by_delta)
    with pytest.raises(TypeError, match="delta .the accountant. must be a callable"):
        dpax.calibrate_blackbox(Advantage(0.2), delta=0.5)
    with pytest.raises(TypeError, match="black-box calibration supports .*got GDP"):
        dpax.calibrate_blackbox(GDP(1.0), epsilon=by_epsilon)
    # a NaN or a negative epsilon would read as a met target
    with pytest.raises(ValueError, match=r"the accountant epsilon\(w=.*NaN"):
        dpax.calibrate_blackbox(Advantage(0.2), epsilon=lambda w, deltas: np.full(deltas.shape, np.nan))
    with pytest.raises(ValueError, match=r"the accountant delta\(w="):
        dpax.calibrate_blackbox(Advantage(0.2), delta=lambda w, epsilons: np.full(epsilons.shape, 1.5))
    with pytest.raises(ValueError, match=r"the accountant epsilon\(w="):
        dpax.calibrate_blackbox(Advantage(0.2), epsilon=lambda w, deltas: np.ones(3))  # not one per delta


def test_the_other_accountants_points_are_refused():
    """epsilon=... is asked at deltas, delta=... at epsilons: the other's points changed nothing."""
    eps = lambda w, d: dpax.gdp.epsilon(d, 1.0 / w)  # noqa: E731
    dl = lambda w, e: dpax.gdp.delta(e, 1.0 / w)  # noqa: E731
    with pytest.raises(TypeError, match=r"epsilons is not used with epsilon=...: that accountant is asked at deltas"):
        dpax.calibrate_blackbox(dpax.targets.Advantage(0.3), epsilon=eps, epsilons=[0.0, 1.0])
    with pytest.raises(TypeError, match=r"deltas is not used with delta=...: that accountant is asked at epsilons"):
        dpax.calibrate_blackbox(dpax.targets.Advantage(0.3), delta=dl, deltas=[1e-5, 0.5])


def test_an_accountant_that_is_not_a_privacy_profile_is_refused():
    """delta(w, epsilons) growing with epsilon (or epsilon with delta) is no privacy profile:
    it was read as a met target (delta = e / 100 calibrated to 0.05, the low end)."""
    with pytest.raises(ValueError, match=r"the accountant delta\(w=.*, epsilons\) must not grow with epsilon"):
        dpax.calibrate_blackbox(dpax.targets.Advantage(0.3), delta=lambda w, e: e / 100)
    with pytest.raises(ValueError, match=r"the accountant epsilon\(w=.*, deltas\) must not grow with delta"):
        dpax.calibrate_blackbox(dpax.targets.Advantage(0.3), epsilon=lambda w, d: d * 10)
