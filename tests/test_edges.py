"""Answers and errors at the ends of documented ranges: no NaN for valid input, and every bad
input (including what a caller's function returns) refused with a message naming it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpax
from dpax.accountants import PLDAccountant


@pytest.mark.parametrize("make", [lambda e: dpax.approximate_dp(e, grid_step=0.01),
                                  lambda e: dpax.randomized_response(e, grid_step=0.01)])
def test_pure_dp_at_the_top_of_the_epsilon_range_has_no_nan(make):
    """epsilon up to 600 is documented: a grid padded past 709 nats once gave inf * 0."""
    pl = make(599.0)
    assert np.all(np.isfinite(pl.pmf_x)) and np.all(np.isfinite(pl.pmf_y))
    assert pl.advantage() == 1.0
    assert 598.99 <= pl.epsilon(1e-5) <= 599.0 and pl.delta(0.0) == 1.0
    assert 0.0 <= pl.beta(0.1) < 1e-250


BAD_ACCOUNTANTS = {
    "negative": (lambda w, x: -np.ones_like(x), ValueError, "must lie in"),
    "nan": (lambda w, x: np.full_like(x, np.nan), ValueError, "returned NaN"),
    "wrong length": (lambda w, x: np.ones(3), ValueError, "one per point"),
    "strings": (lambda w, x: ["0.5"] * len(x), TypeError, "not strings"),
    "complex": (lambda w, x: np.ones_like(x) * (0.5 + 1j), TypeError, "not complex numbers"),
}


@pytest.mark.parametrize("kind", list(BAD_ACCOUNTANTS))
@pytest.mark.parametrize("which", ["epsilon", "delta"])
@pytest.mark.parametrize("target", [dpax.targets.Advantage(0.2), dpax.targets.ErrRates(0.1, 0.5),
                                    dpax.targets.Epsilon(1.0, 1e-5)], ids=["advantage", "err_rates", "epsilon"])
def test_calibrate_blackbox_refuses_what_a_bad_accountant_returns(kind, which, target):
    fn, error, words = BAD_ACCOUNTANTS[kind]
    with pytest.raises(error, match=words) as info:
        dpax.calibrate_blackbox(target, **{which: fn})
    assert f"the accountant {which}(w=" in str(info.value)


def test_calibrate_blackbox_still_takes_an_infinite_epsilon():
    """epsilon = inf (no guarantee) is an answer, not an error: such a w fails the target."""
    eps = lambda w, deltas: np.where(w < 1.0, np.inf, dpax.gdp.epsilon(deltas, 1.0 / w))
    assert round(dpax.calibrate_blackbox(dpax.targets.Advantage(0.2), epsilon=eps), 2) == 1.97


def test_calibrate_blackbox_says_which_rows_are_infeasible_and_why():
    """full_output: each row's status and reason, as calibrate's (a NaN alone said neither)."""
    eps = lambda w, deltas: dpax.gdp.epsilon(deltas, 1.0 / w)  # an accountant of the 1/w-GDP mechanism
    target = dpax.targets.Advantage([0.2, 1e-6, 0.99])
    result = dpax.calibrate_blackbox(target, epsilon=eps, noise_bounds=(0.5, 5.0), full_output=True)
    assert isinstance(result, dpax.CalibrationResult)
    assert result.status.tolist() == ["calibrated", "infeasible", "met_at_bound"]
    assert "not met even at 5" in result.reason[1] and "low end of noise_bounds (0.5)" in result.reason[2]
    assert result.reason[0] == "" and result.evaluations > 0
    noise = result.noise_multiplier
    assert round(noise[0], 2) == 1.97 and np.isnan(noise[1]) and noise[2] == 0.5
    np.testing.assert_array_equal(noise, dpax.calibrate_blackbox(target, epsilon=eps, noise_bounds=(0.5, 5.0)))
    with pytest.raises(TypeError, match="full_output must be True or False"):
        dpax.calibrate_blackbox(target, epsilon=eps, full_output="yes")


@pytest.mark.parametrize("returns, error, words", [
    (lambda e: np.array(["0.1"] * np.size(e)), TypeError, r"delta\(epsilon\) must return .* not strings"),
    (lambda e: np.zeros(np.shape(e)) + 0.1j, TypeError, "not complex numbers"),
    (lambda e: np.full(np.shape(e), np.nan), ValueError, "returned NaN"),
    (lambda e: np.zeros(3), ValueError, "one per point"),
])
def test_from_privacy_profile_refuses_what_the_profile_returns(returns, error, words):
    with pytest.raises(error, match=words):
        dpax.from_privacy_profile(returns, grid_step=0.1, epsilon_max=1.0)


def test_a_scalar_argument_given_several_numbers_is_named():
    with pytest.raises(ValueError, match="noise_multiplier must be one number here, got 2 numbers"):
        PLDAccountant().step(noise_multiplier=[1.0, 2.0], sample_rate=0.1)
    with pytest.raises(ValueError, match="mu must be one number here"):
        dpax.compat.gdpnum.gaussian_fdp([0.5, 1.0])
    acct = PLDAccountant()
    acct.step(noise_multiplier=np.array([1.0]), sample_rate=0.1)  # a size-1 array is one number
    assert acct.history == [(1.0, 0.1, 1)]


def test_an_overflowing_gaussian_is_named_in_the_callers_terms():
    with pytest.raises(ValueError, match=r"noise_multiplier / sensitivity \(substitution doubles the sensitivity\) "
                                         r"= 1e-300 is too small"):
        dpax.gaussian(1.0, sensitivity=1e300, neighbouring="substitution")


@pytest.mark.slow  # kernels of their own (grid 1e-5, 2**53 steps); default sibling:
# test_tiny_sample_rate_brackets_are_certificates_without_the_fallback
def test_brackets_never_cross_at_extreme_settings():
    """A sample rate of 1e-12 leaves risks of ~1e-12. The companion's single step formed its
    label masses as differences of cell masses near 1/2 (1e-16 / h of error) and crossed the
    safe side; formed from the normal laws' cells it no longer did. Noise over 1e6 times the
    sample rate now maps outputs to the nearest point (SPLIT_MAX_NOISE_OVER_RATE), as here:
    the brackets still hold the truth, at a coarser grid and at 2**53 steps. The fallback,
    should it fire, still keeps a certificate."""
    tiny = dpax.dpsgd(1.0, 1e-12, 7, grid_step=1e-5)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        adv = tiny.advantage(bounds=True)
        huge = dpax.dpsgd(2.0, 1e-12, 2**53, grid_step=0.01).epsilon(1e-9, bounds=True)
    assert adv.optimistic <= TINY_TRUE_ADVANTAGE <= adv.safe == tiny.advantage()
    assert 2.6e-12 < adv.safe < 2.8e-12  # the seven steps' own advantages summed: the grid cannot resolve them
    assert huge.optimistic <= huge.safe
    assert not [w for w in seen if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("sigma, p", [(1e9, 1.0), (1e12, 1.0), (1e300, 1.0), (1e7, 1e-3), (100.0, 1e-12),
                                      (1e4, 1e-8)])
def test_the_optimistic_mu_stays_below_the_truth_at_huge_noise(sigma, p):
    """Where sigma / p is huge the companion's split shares lost their precision and its mu
    rose above the truth (the Gaussian at noise 1e12: 7e-5, above even the safe side's 1.7e-5;
    noise 100 at p 1e-12: 7e-12 against ~1e-14); those rows now map outputs to the nearest
    point. The truth is at least the mu its total variation implies, sqrt(2 pi) TV to first
    order, TV = p erf(1 / (2 sqrt(2) sigma)) (1 / sigma for the Gaussian)."""
    from scipy.special import erf

    mu, _ = dpax.gdp.mu_and_regret(dpax.subsampled_gaussian(sigma, p), bounds=True)
    at_least = np.sqrt(2 * np.pi) * p * erf(1.0 / (2.0 * np.sqrt(2.0) * sigma))
    assert 0.0 <= mu.optimistic <= at_least and mu.optimistic <= mu.safe


def test_rows_on_either_side_of_the_nearest_point_switch_keep_their_own_companions():
    batch = dpax.subsampled_gaussian(np.array([1e5, 1e9, 2.0]), np.array([1.0, 1.0, 0.01]))
    both = batch.optimistic_companion()
    for row, (sigma, p) in enumerate([(1e5, 1.0), (1e9, 1.0), (2.0, 0.01)]):
        alone = dpax.subsampled_gaussian(sigma, p).optimistic_companion()
        n = alone.pmf_x.shape[-1]
        np.testing.assert_allclose(np.asarray(both.pmf_x)[row, :n], alone.pmf_x, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(np.asarray(both.pmf_y)[row, :n], alone.pmf_y, rtol=1e-12, atol=1e-300)


#: Advantage (total variation) of 7 steps of DP-SGD, noise 1, sample rate 1e-12: to first order
#: p E[(S)_+], S = sum of 7 independent e^(Z - 1/2) - 1, Z ~ N(0, 1); E[(S)_+] = 1.24556547406
#: (7-fold convolution of the lognormal's cell masses, Richardson-extrapolated in the cell width;
#: the p^2 term is ~1e-24). Below 7 p TV(N(0,1), N(1,1)) = 2.68e-12: the steps' losses partly cancel.
TINY_TRUE_ADVANTAGE = 1.24556547406e-12


def test_tiny_sample_rate_brackets_are_certificates_without_the_fallback():
    """DP-SGD at sample rate 1e-12: every loss (~1e-12) lies inside a cell of the grid (1e-7).
    The companion's exponential interpolation formed the mass it sends to a cell's upper end as
    (e^-a Q - P)(cell), a difference of two masses near 1/2: 5e-10 of error beside risks of
    1e-12, so its advantage (3.9e-9) and epsilon crossed the safe side and the bracket fell
    back to the trivial bound with a RuntimeWarning. Formed from the normal laws' cells, and
    now (noise / sample rate 1e12, over SPLIT_MAX_NOISE_OVER_RATE) by nearest point, both
    brackets contain the truth, the companion's single step stays below the truth, and no
    warning is raised. (The safe side, 2.68e-12 from the FFT's values, is 2.71e-12 with their
    round-off bound, ~7e-15 a point, booked on the safe side.)"""
    pl = dpax.dpsgd(1.0, 1e-12, 7, grid_step=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        adv = pl.advantage(bounds=True)
        eps = pl.epsilon(1e-9, bounds=True)
    assert 0.0 <= adv.optimistic <= TINY_TRUE_ADVANTAGE <= adv.safe < 2.75e-12
    assert eps.safe == eps.optimistic == 0.0  # delta(0) = the advantage ~1.2e-12 < 1e-9: the truth is 0
    # truth p TV(N(0,1), N(1,1)) = 3.83e-13
    one = dpax.subsampled_gaussian(1.0, 1e-12, grid_step=1e-7).optimistic_companion()
    assert 0.0 <= one.advantage() <= 0.38292492254802624e-12
    assert np.all(one.pmf_x >= 0.0) and abs(np.sum(one.pmf_x) - 1.0) < 1e-15 and abs(np.sum(one.pmf_y) - 1.0) < 1e-15


def test_advantage_keeps_its_relative_precision():
    """1 - Pr[X > 0] - Pr[Y <= 0] formed as 1 minus sums near 1 keeps ~1e-16 absolute: 6e-8
    relative at an advantage of 2.7e-12. Now it is the exact value for the stored masses
    (fractions) to 1e-13: per direction, the per-point differences beyond the loss 0 plus the
    infinite atom, plus the law's mass deficit where it has one (a dominating pair counts
    missing mass as privacy loss, not an excess of rounding); the larger direction."""
    from fractions import Fraction

    pl = dpax.dpsgd(1.0, 1e-12, 7, grid_step=1e-7)
    x, y = ([Fraction(float(v)) for v in a] for a in (pl.pmf_x, pl.pmf_y))
    k0 = -int(pl.offset)  # the index of the loss 0
    inf_y, neginf_x = Fraction(float(pl.inf_mass_y)), Fraction(float(pl.neginf_mass_x))
    forward = sum(b - a for a, b in zip(x[k0 + 1:], y[k0 + 1:])) + inf_y + max(0, 1 - sum(y) - inf_y)
    reverse = sum(a - b for a, b in zip(x[:k0], y[:k0])) + neginf_x + max(0, 1 - sum(x) - neginf_x)
    exact = float(max(forward, reverse))
    assert pl.advantage() == pytest.approx(exact, rel=1e-13, abs=0.0)
    assert pl.advantage() >= TINY_TRUE_ADVANTAGE


def test_crossed_sides_fall_back_to_the_trivial_bound():
    from dpax.privacy_loss import _uncrossed

    with pytest.warns(RuntimeWarning, match="epsilon: the optimistic companion's answer crossed"):
        b = _uncrossed(np.array([1.0, 2.0]), np.array([1.5, 2.0 + 1e-15]), True, 0.0, "epsilon")
    np.testing.assert_array_equal(b.optimistic, [0.0, 2.0])  # crossed: 0; round-off: the safe side
    with pytest.warns(RuntimeWarning, match="beta"):
        b = _uncrossed(np.array([0.5]), np.array([0.4]), False, np.array([0.9]), "beta")
    np.testing.assert_array_equal(b.optimistic, [0.9])


def test_brackets_that_agree_to_round_off_are_kept(recwarn):
    g = dpax.gaussian(1.0, grid_step=1e-2)
    b, a = g.beta([0.1, 0.5], bounds=True), g.advantage(bounds=True)
    assert np.all(b.safe <= b.optimistic) and a.optimistic <= a.safe
    assert np.all(b.width < 1e-4) and a.width < 1e-4
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
