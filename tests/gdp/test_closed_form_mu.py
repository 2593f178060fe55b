"""dpax.gdp.closed_form_mu: the mu of a composition and of the composed Gaussian mechanism
(never below the exact value, checked in rational arithmetic), and the central-limit
approximations clt_mu and subsampled_clt_mu (exact for the Gaussian, optimistic for DP-SGD)."""

from __future__ import annotations

import numpy as np
import pytest
from gdp_losses import _gaussian

import dpax
from dpax import gdp


def test_compose_and_gaussian_mu_match_dong_roth_su():
    assert gdp.compose(0.3, 0.4) == pytest.approx(0.5)
    assert gdp.compose([0.3, 0.4]) == pytest.approx(0.5)
    assert gdp.gaussian_mu(2.0, sensitivity=1.0, num_steps=16) == pytest.approx(2.0)


def test_compose_neither_overflows_nor_underflows():
    """sqrt(sum mu_i^2) scaled by the largest mu: 1e200 composed with itself is 1.414e200
    (the squares overflowed to inf), and 1e-200 likewise (they underflowed to 0)."""
    assert gdp.compose(1e200, 1e200) == pytest.approx(2**0.5 * 1e200, rel=1e-15)
    assert gdp.compose(1e-200, 1e-200) == pytest.approx(2**0.5 * 1e-200, rel=1e-15)
    assert gdp.compose(0.6, 0.8) == pytest.approx(1.0, rel=1e-15)
    np.testing.assert_allclose(gdp.compose(np.array([[3.0, 4.0], [0.0, 0.0]])), [5.0, 0.0], rtol=1e-15)


def test_closed_form_mus_are_never_below_the_exact_value():
    """Invariant: a composed mu (gdp.compose) and the composed Gaussian's mu (gdp.gaussian_mu),
    reported as guarantees, are never below the exact value and within 2 ulps of it, checked
    in exact rational arithmetic: compose(5e-324, 5e-324) was 5e-324 (the exact 7.0e-324 is
    between two subnormals), compose(0.6, 0.8) was 1.0 (0.6^2 + 0.8^2 exceeds 1 in binary),
    and gaussian_mu, rounded to nearest, was below the exact value about half the time."""
    from fractions import Fraction as F

    assert gdp.compose(5e-324, 5e-324) == 1e-323
    assert gdp.compose(0.6, 0.8) == np.nextafter(1.0, 2.0) and gdp.compose(3.0, 4.0) == 5.0
    assert gdp.gaussian_mu(2.0, num_steps=4) == 1.0 and gdp.compose(0.0, 0.0) == 0.0
    assert gdp.compose(1.5e-151, 5e202) == np.nextafter(5e202, np.inf)  # the small square is lost in scaling
    rng = np.random.default_rng(35)
    for _ in range(150):
        k = int(rng.integers(2, 5))
        mus = 10.0 ** rng.uniform(-323.5, 300, k) if rng.random() < 0.3 else 10.0 ** rng.uniform(-320, 300) * \
            rng.uniform(0.1, 1.0, k)
        got = gdp.compose(*mus) if rng.random() < 0.5 else float(gdp.compose(mus))
        exact = sum(F(float(m)) ** 2 for m in mus)
        assert F(got) ** 2 >= exact, (mus, got)
        assert F(float(np.nextafter(np.nextafter(got, 0.0), 0.0))) ** 2 < exact, (mus, got)
    sigma, sens = 10.0 ** rng.uniform(-5, 5, 200), 10.0 ** rng.uniform(-5, 5, 200)
    steps = rng.integers(1, 2**53, 200)
    got = gdp.gaussian_mu(sigma, sens, steps)
    for g, s, c, t in zip(got, sigma, sens, steps):
        exact = int(t) * F(float(c)) ** 2  # (mu sigma)^2 against T c^2
        assert (F(float(g)) * F(float(s))) ** 2 >= exact
        assert (F(float(np.nextafter(np.nextafter(g, 0.0), 0.0))) * F(float(s))) ** 2 < exact


# -- central-limit approximations (on the Gaussian of gdp_losses.py, which other files build too)


def test_clt_approximations():
    # Gaussian: the CLT is exact
    assert gdp.clt_mu(_gaussian(), num_steps=100) == pytest.approx(10.0, rel=1e-3)


@pytest.mark.slow
def test_clt_approximations_of_dpsgd_are_optimistic():
    # Bu et al. asymptotic mu of DP-SGD approaches the exact one for many small steps ...
    sigma, p, steps = 1.0, 0.01, 2000
    approx = gdp.subsampled_clt_mu(sigma, p, steps)
    exact, _ = gdp.mu_and_regret(dpax.dpsgd(sigma, p, steps, grid_step=1e-3))
    assert approx == pytest.approx(exact, rel=0.25)
    # ... and is optimistic: below the tight mu of the discretised (pessimistic) curve
    assert approx < exact
    assert gdp.clt_mu(dpax.subsampled_gaussian(sigma, p, grid_step=1e-3), steps) < exact
