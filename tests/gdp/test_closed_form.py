"""dpax.gdp.closed_form: the curves of mu-GDP (f_mu, the advantage, delta(epsilon),
epsilon(delta)) and the mu of an (epsilon, delta) guarantee, against Dong, Roth & Su's
formulas (exact_refs) and mpmath, over all of float64: never on the unsafe side; a bad mu or
alpha refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from dpax import conversions as cv
from dpax import gdp
from exact_refs import gdp_advantage, gdp_beta, gdp_delta, mp_gdp_beta


def test_closed_forms_match_dong_roth_su():
    alpha = np.array([0.0, 1e-10, 1e-4, 0.1, 0.5, 0.9, 1.0])
    for mu in (0.0, 0.3, 1.0, 4.0):
        np.testing.assert_allclose(gdp.tradeoff(mu, alpha), gdp_beta(alpha, mu), rtol=1e-12, atol=1e-300)
        assert gdp.advantage(mu) == pytest.approx(gdp_advantage(mu), abs=1e-15)
    # delta(epsilon) against the reference in exact_refs and epsilon(delta) as its inverse
    eps = np.array([0.0, 0.5, 1.0, 3.0, 8.0])
    for mu in (0.5, 1.0, 2.0):
        np.testing.assert_allclose(gdp.delta(eps, mu), gdp_delta(eps, mu), rtol=1e-10, atol=1e-17)
        d = gdp.delta(eps[1:], mu)
        np.testing.assert_allclose(gdp.epsilon(d, mu), eps[1:], rtol=1e-9)
    assert gdp.epsilon(0.9, 1.0) == 0.0  # delta above delta(0) = advantage
    # large epsilon: e^eps overflows float64 but the log-space evaluation does not
    d = gdp.delta(800.0, 40.0)
    assert np.isfinite(d) and 0.0 <= d <= norm.cdf(-800 / 40 + 20)


def _delta_exact(eps, mu):
    """delta(eps) of mu-GDP in arbitrary precision (enough digits for t = eps / mu - mu / 2 where
    the two cancel): Phi(-t) - e^eps Phi(-s), s = t + mu, or phi(t) (R(t) - R(s)) for t >= 0, R
    the Mills ratio."""
    mp = pytest.importorskip("mpmath")
    scale = max(1.0, abs(float(eps)), float(mu))
    with mp.workdps(60 + int(max(0.0, -np.log10(max(float(mu), 1e-320)))) + 2 * int(np.log10(scale))):
        eps, mu = mp.mpf(float(eps)), mp.mpf(float(mu))
        t = eps / mu - mu / 2
        s = t + mu
        if t < 0:  # no cancellation to fear: Phi(-t) >= 1/2
            return +(mp.ncdf(-t) - mp.exp(eps) * mp.ncdf(-s))
        mills = mp.ncdf(-s) / mp.npdf(s) if s < 1e8 else 1 / s - 1 / s**3 + 3 / s**5
        return +(mp.ncdf(-t) - mp.npdf(t) * mills)


#: delta from the smallest subnormal to the largest float below 1, mu from tiny to huge
EXTREME_DELTAS = (5e-324, 1e-310, 2.2250738585072014e-308, 1e-300, 1e-20, 1e-5, 0.5, 0.9, 1 - 1e-12, 1 - 2**-53)
EXTREME_MUS = (1e-12, 1e-3, 1.0, 10.0, 1e3, 1e6, 1e10, 1e100)


@pytest.mark.parametrize("mu", EXTREME_MUS)
def test_gdp_epsilon_meets_delta_at_the_ends_of_its_range(mu):
    """epsilon(delta) is never below the truth: delta(epsilon returned) <= delta in exact
    arithmetic, and 1e-10 less epsilon fails (it was 1.8% low at delta 5e-324, mu 1, where the
    direct difference underflows, and 8e-9 low at mu 1e100, where eps / mu and mu / 2 cancel)."""
    got = gdp.epsilon(np.array(EXTREME_DELTAS), mu)
    for d, e in zip(EXTREME_DELTAS, got):
        if e == 0.0:
            assert _delta_exact(0.0, mu) <= d
            continue
        assert _delta_exact(e, mu) <= d, (d, e)
        assert _delta_exact(e * (1 - 1e-10), mu) > d, (d, e)
    assert gdp.epsilon(5e-324, 1.0) >= 38.8718328324943  # the truth, 38.87183283249431...


@pytest.mark.parametrize("mu", (1e-300, *EXTREME_MUS, 1e154))
def test_gdp_delta_is_never_below_the_truth(mu):
    """delta(epsilon) within 1e-10 above the truth from delta ~1e-300 up to 1 - 1e-16, at the
    epsilon of t = eps / mu - mu / 2 in -40..38 (the direct difference read 0 for delta below
    1e-308, and for mu 1e10 read 0 at t = 0.3 where the truth is 0.38), and below 0 epsilon."""
    for t in (-40.0, -5.0, -1.0, -0.3, 0.0, 0.3, 1.0, 5.0, 20.0, 37.0, 38.0):
        eps = mu * (t + mu / 2)
        truth = _delta_exact(eps, mu)
        if truth < 1e-300:
            continue
        got = gdp.delta(eps, mu)
        assert truth <= got <= truth * (1 + 1e-10), (t, eps, got, truth)
    for eps in (-1e5, -1.0, -1e-10):
        got, truth = gdp.delta(eps, mu), _delta_exact(eps, mu)
        assert truth <= got <= truth * (1 + 1e-10), (eps, got, truth)
    assert gdp.delta(-1.0, 0.0) >= -np.expm1(-1.0)  # mu = 0: delta = 1 - e^eps, not 0


def test_gdp_delta_below_float64_is_the_smallest_subnormal_not_0():
    """mu > 0 gives a positive delta at every epsilon: one below float64's range (delta(1, 1e-3)
    is about e^-500000) is reported as 5e-324, the nearest float on the safe side; at mu = 0
    and epsilon >= 0 the truth is 0 itself."""
    tiny = np.nextafter(0.0, 1.0)
    assert gdp.delta(1.0, 1e-3) == tiny
    np.testing.assert_array_equal(gdp.delta([1.0, 2000.0, 1e300], [1e-3, 1.0, 1.0]), [tiny] * 3)
    assert gdp.delta(1.0, 0.0) == 0.0 and gdp.delta(0.0, 0.0) == 0.0


@pytest.mark.parametrize("eps", (0.0, 1e-300, 1.0, 1e3, 1e40, 1e300, np.finfo(float).max))
def test_mu_from_epsilon_delta_at_the_ends_of_its_range(eps):
    """The mu of the Gaussian that is exactly (epsilon, delta)-DP: never above the root (the
    mechanism returned meets (epsilon, delta)) and 1e-10 more fails; no longer capped at 2**60
    (it was 1.15e18 at epsilon 1e300, where the root is sqrt(2e300) = 1.41e150)."""
    for d in (5e-324, 1e-5, 0.5, 1 - 2**-53):
        mu = cv.mu_from_epsilon_delta(eps, d)
        assert np.isfinite(mu) and mu > 0
        assert _delta_exact(eps, mu) <= d, (d, mu)
        if mu > 1e-300:
            assert _delta_exact(eps, mu * (1 + 1e-10)) > d, (d, mu)
    if eps == 1e300:
        assert cv.mu_from_epsilon_delta(eps, 0.5) == pytest.approx(np.sqrt(2e300), rel=1e-12)


def test_gdp_closed_forms_stay_numbers_over_all_of_float64():
    """No NaN and no warning anywhere in float64 (delta(709, 1e-152), below float64, read NaN: the
    one-sided margin added inf to -inf); epsilon is inf only where it exceeds float64."""
    import warnings

    rng = np.random.default_rng(7)
    mu = 10 ** rng.uniform(-300, 308, 400)
    eps = np.concatenate([-(10 ** rng.uniform(-300, 308, 200)), 10 ** rng.uniform(-300, 308, 200)])
    d = 10 ** rng.uniform(-323, 0, 400)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gdp.delta(709.0, 1e-152) == np.nextafter(0.0, 1.0)  # the truth is below float64: its floor
        out = gdp.delta(eps, mu)
        assert np.all((out >= 0) & (out <= 1))
        e = gdp.epsilon(d, mu)
        assert np.all(e >= 0) and np.array_equal(np.isinf(e), mu > 1.9e154)
        m = cv.mu_from_epsilon_delta(10 ** rng.uniform(-300, 308, 400), np.minimum(d, 1 - 2**-53))
        assert np.all(np.isfinite(m) & (m > 0))


def test_gdp_advantage_keeps_its_relative_precision_for_a_tiny_mu():
    """2 Phi(mu / 2) - 1 read 0 for mu 1e-300 and was 1.8e-4 off at mu 1e-12; now erf, never below."""
    for mu in (1e-300, 1e-12, 1e-3, 1.0, 40.0):
        truth = float(pytest.importorskip("mpmath").erf(mu / (2 * np.sqrt(2))))
        assert truth <= gdp.advantage(mu) <= truth * (1 + 1e-14)


def test_tradeoff_closed_form_is_never_above_the_exact_curve():
    """Invariant: gdp.tradeoff, the safe side of a mu-GDP guarantee and the reference the numeric
    curves are checked against, is never above f_mu = Phi(Phi^-1(1 - alpha) - mu), and within
    1e-11 relative of it; exactly 1 at alpha = 0 and 0 at alpha = 1. Rounded to nearest, it
    was above by up to 1.4e-13 relative in the tails (the first points below, found against
    mpmath; ndtr's own error grows like z^2 ulps for a negative z)."""
    mpmath = pytest.importorskip("mpmath")
    rng = np.random.default_rng(35)
    alpha = np.concatenate([[0.04228589021140805, 0.9999999999998863, 0.999999819316124, 0.9999999999999997,
                             5e-324, 1e-300, 0.5, 1.0 - 2.0**-53],
                            10.0 ** -rng.uniform(0, 320, 60), 1 - 10.0 ** -rng.uniform(0, 16, 40),
                            rng.uniform(0, 1, 20)])
    mu = np.concatenate([[35.447097893340924, 28.63749351797143, 31.991538251770322, 27.052928454693966,
                          1.0, 30.0, 1e-17, 20.0],
                         rng.uniform(0, 40, 60), 10.0 ** rng.uniform(-17, 1.6, 60)])
    got = gdp.tradeoff(mu, alpha)
    for a, m, g in zip(alpha, mu, got):
        exact = mp_gdp_beta(a, m)
        assert mpmath.mpf(float(g)) <= exact, (a, m, g, float(exact))
        assert mpmath.mpf(float(g)) >= exact * (1 - mpmath.mpf(1e-11)) - mpmath.mpf(1e-323), (a, m, g)
    assert gdp.tradeoff(1e162, [0.0, 0.1, 0.5, 1.0]).tolist() == [1.0, 0.0, 0.0, 0.0]  # no NaN: a margin of inf
    for m in (0.0, 1e-300, 1.0, 1e300):
        assert gdp.tradeoff(m, [0.0, 1.0]).tolist() == [1.0, 0.0]
        assert cv.gdp_curve(m).beta(0.0) == 1.0 and cv.gdp_curve(m).beta(1.0) == 0.0


def test_tradeoff_bad_input():
    with pytest.raises(ValueError, match="mu"):
        gdp.tradeoff(-1.0, 0.1)
    with pytest.raises(ValueError, match="alpha"):
        gdp.tradeoff(1.0, 1.5)
