"""The mu/regret kernels of dpax._engine.mu_regret on small pairs whose answers are known: the
regret's upper bound is the regret Delta(h, f_m) itself for a symmetric curve (randomized
response, against a dense evaluation of its definition in the rotated coordinates) whatever the
labels' order, the GDP check's margin is the least beta_i - G_mu(alpha_i) over both directions'
breakpoints plus its slack, and kernel_length pads as documented. The tight mu and regret
kernel (a few seconds of compilation) runs in tests/engine/test_branch_and_bound.py and through
dpax.gdp."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.stats import norm

from dpax._engine import grid, mu_regret
from dpax._engine.pair import Pair
from dpax._engine.x64 import float64

EPS = 1.0
A = 1.0 / (1.0 + np.exp(EPS))  # randomized response's error rates: its curve's breakpoint (A, A)
MU = 2.0 * norm.isf(A)  # its mu: f_mu passes through (A, A)


def _pair(pmf_x, pmf_y):
    pmf_x, pmf_y = np.atleast_2d(pmf_x), np.atleast_2d(pmf_y)
    rows = pmf_x.shape[0]
    return Pair(jnp.asarray(pmf_x), jnp.asarray(pmf_y), jnp.full(rows, -1), jnp.zeros(rows), jnp.zeros(rows))


def _regret_of_rr(m):
    """Delta(h, f_m) = max(0, sup_u (V_h(u) - V_m(u)) / 2) for randomized response's curve h
    (V_h(u) = 2A + (1 - 2A) |u|), with f_m's points (Phi(-z), Phi(z - m)) over a dense grid of z,
    refined around its best point."""
    if np.isinf(m):
        return A  # f_inf is the perfect-attack curve, V = |u|: the sup is at u = 0
    z = np.linspace(-15.0, 15.0 + m, 200_001)
    for _ in range(2):
        alpha, beta = norm.sf(z), norm.cdf(z - m)
        gap = (2 * A + (1 - 2 * A) * np.abs(alpha - beta) - (alpha + beta)) / 2
        best = np.argmax(gap)
        z = np.linspace(z[max(best - 2, 0)], z[min(best + 2, z.size - 1)], 20_001)
    return max(gap[best], 0.0)


@float64
def test_regret_upper_bound_is_the_regret_of_a_symmetric_curve_in_any_label_order():
    """Randomized response at epsilon 1 (curve symmetric, so the bound is exact: the curve is its
    own symmetrisation), against f_m at half, one and two times its mu and at m = inf; the same
    masses with the labels in the other order (not sorted by likelihood ratio) give the same bound."""
    ms = np.array([0.5 * MU, MU, 2.0 * MU, np.inf])
    sorted_x, sorted_y = [1 - A, 0.0, A, 0.0], [A, 0.0, 1 - A, 0.0]
    pmf_x = np.array([sorted_x] * 4 + [sorted_x[::-1]] * 4)
    pmf_y = np.array([sorted_y] * 4 + [sorted_y[::-1]] * 4)
    (upper,) = mu_regret.regret_upper_kernel(_pair(pmf_x, pmf_y), jnp.asarray(np.tile(ms, 2)))
    upper = np.asarray(upper)
    want = np.array([_regret_of_rr(m) for m in ms])
    assert np.all(want > 1e-3)  # every f_m leaves a regret (h is straight, f_m steep, near the ends)
    np.testing.assert_allclose(upper[:4], want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(upper[4:], upper[:4], rtol=0, atol=1e-15)


@float64
def test_gdp_margin_is_the_least_distance_to_the_gdp_curve_in_both_directions():
    """min over the breakpoints (alpha_k, beta_k) = (Pr[X > x_k], Pr[Y <= x_k]) of
    beta_k - G_mu(alpha_k) and of the mirrored alpha_k - G_mu(beta_k) (the reversed pair), with
    G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu), plus GDP_SLACK: 0 at randomized response's own mu
    (and at every larger one, from the corner (0, 1)), negative below it; for an asymmetric pair
    the reversed direction decides."""
    asym_x, asym_y = np.array([0.1, 0.3, 0.6, 0.0]), np.array([0.0, 0.3, 0.7, 0.0])
    rr_x, rr_y = np.array([1 - A, 0.0, A, 0.0]), np.array([A, 0.0, 1 - A, 0.0])
    mus = np.array([0.5 * MU, MU, 1.5 * MU, 0.2, 0.6, 1.2])
    pmf_x = np.array([rr_x] * 3 + [asym_x] * 3)
    pmf_y = np.array([rr_y] * 3 + [asym_y] * 3)
    margin = np.asarray(mu_regret.gdp_margin_kernel(_pair(pmf_x, pmf_y), jnp.asarray(mus)))

    def gdp(alpha, mu):
        return norm.cdf(norm.isf(alpha) - mu)

    want, forward_only = [], []
    for px, py, mu in zip(pmf_x, pmf_y, mus):
        alpha = np.append(np.cumsum(px[::-1])[::-1][1:], 0.0)  # Pr[X > x_k]
        beta = np.cumsum(py)  # Pr[Y <= x_k]
        forward = np.min(beta - gdp(alpha, mu))
        forward_only.append(forward + mu_regret.GDP_SLACK)
        want.append(min(forward, np.min(alpha - gdp(beta, mu))) + mu_regret.GDP_SLACK)
    np.testing.assert_allclose(margin, want, rtol=0, atol=1e-15)
    assert margin[0] < 0 and margin[1] == margin[2] == pytest.approx(mu_regret.GDP_SLACK, abs=1e-15)
    assert np.all(np.array(forward_only)[3:] > margin[3:] + 1e-3)  # the reversed pair is further below


def test_kernel_length_is_a_power_of_two_then_the_grids_ladder():
    """At most MU_POWER_OF_TWO_MAX points: the next power of two, at least the grid's shortest
    length (one kernel for every support up to twice shorter); beyond: the grid's ladder
    length, at most 25% longer."""
    top = mu_regret.MU_POWER_OF_TWO_MAX
    for n in (1, 3, 256, 300, 4097, top - 1, top):
        length = mu_regret.kernel_length(n)
        floor = max(n, grid.MIN_LENGTH)
        assert length & (length - 1) == 0 and floor <= length < 2 * floor, (n, length)
    for n in (top + 1, 100_000, 327_680, 327_681, 10**6 + 7):
        length = mu_regret.kernel_length(n)
        assert length == grid.padded_length(n) and n <= length <= 1.25 * n, (n, length)
