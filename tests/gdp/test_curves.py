"""Trade-off curves as objects (dpax.gdp.curves) against their definitions: the mu-GDP
curve's beta, V(u) and tangents against the closed form (at slope -inf its vertical end), and
the piecewise-linear curve as the greatest convex minorant of its points."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from dpax.gdp.curves import GDPCurve, PiecewiseLinearCurve


@pytest.mark.parametrize("mu", [0.3, 1.0, 3.0])
def test_gdp_curve_beta_and_v_are_the_closed_form_in_rotated_coordinates(mu):
    curve = GDPCurve(mu)
    alpha = np.linspace(0.001, 0.999, 37)
    beta = norm.cdf(norm.isf(alpha) - mu)
    np.testing.assert_allclose(curve.beta(alpha), beta, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(curve.v(alpha - beta), alpha + beta, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(curve.v([-1.0, 1.0, 2.0]), [1.0, 1.0, 2.0])  # V(u) = |u| outside (-1, 1)
    assert curve.advantage() >= 2 * norm.cdf(mu / 2) - 1 - 1e-16


def test_gdp_curve_tangent_points_have_the_slope_asked_for():
    mu, s = 1.5, np.array([0.2, 1.0, 5.0])
    u, v = GDPCurve(mu).tangent_u(s)
    alpha, beta = (v + u) / 2, (v - u) / 2
    h = 1e-6  # the curve's slope at alpha, by central differences
    slope = (norm.cdf(norm.isf(alpha + h) - mu) - norm.cdf(norm.isf(alpha - h) - mu)) / (2 * h)
    np.testing.assert_allclose(-slope, s, rtol=1e-6)
    np.testing.assert_allclose(beta, norm.cdf(norm.isf(alpha) - mu), rtol=1e-12)


def test_piecewise_linear_curve_is_the_greatest_convex_minorant_of_its_points():
    rng = np.random.default_rng(11)
    for _ in range(20):
        a, b = rng.uniform(0, 1, 12), rng.uniform(0, 1, 12)
        curve = PiecewiseLinearCurve(a, b)
        # never above a point, and its vertices are points (or the corners (0, 1), (1, 0))
        assert np.all(curve.beta(a) <= b + 1e-15)
        pts = set(zip(a.tolist(), b.tolist())) | {(0.0, 1.0), (1.0, 0.0)}
        assert all((x, y) in pts for x, y in zip(curve.alpha.tolist(), curve.beta_points.tolist()))
        # convex and non-increasing: slopes between vertices ascend and stay <= 0
        slopes = np.diff(curve.beta_points) / np.diff(curve.alpha)
        assert np.all(np.diff(slopes) >= -1e-12) and np.all(slopes <= 1e-15)


def test_piecewise_linear_curve_refuses_by_name():
    with pytest.raises(ValueError, match="alpha and beta must have the same length, got 2 and 3"):
        PiecewiseLinearCurve([0.1, 0.2], [0.5, 0.4, 0.3])
    with pytest.raises(ValueError, match="^beta"):
        PiecewiseLinearCurve([0.1], [1.5])
    with pytest.raises(TypeError, match="description must be a string"):
        PiecewiseLinearCurve([0.1], [0.5], description=3)


def test_a_gdp_curves_tangent_at_infinite_slope_is_its_vertical_end():
    from dpax.gdp.curves import GDPCurve

    u, value = GDPCurve(1.0).tangent_u(np.array([1.0, np.inf]))
    assert np.all(np.isfinite(u)) and u[1] == -1.0  # slope -inf: the point (0, 1), u = alpha - beta = -1
