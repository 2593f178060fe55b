"""dpax._engine.construct.laplace: the Laplace loss law's log CDFs against the Laplace law itself
(atoms at -epsilon and epsilon, right-continuous, both tails to relative precision), the
subsampled law through the inverse of its loss transform, and the discrete pair built from them:
every mass kept, no infinite atom, and delta(eps) exact at the grid's epsilons, above it between."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from scipy.stats import laplace as laplace_law

from dpax._engine.construct import laplace
from dpax._engine.x64 import float64


def _laws(loss, eps, p):
    return (laplace.laplace_log_cdfs(loss, eps), laplace.subsampled_laplace_log_cdfs(loss, eps, p),
            laplace.inverse_subsampled_loss(loss, p), laplace.inverse_subsampled_loss(loss, 1.0))


@float64
def test_log_cdfs_are_those_of_the_laplace_law():
    """P = Lap(0, 1), Q = Lap(eps, 1): L = |o| - |o - eps| <= g iff o <= (g + eps) / 2 for g in
    [-eps, eps); all of P's and Q's mass at or below -eps lies on the atom -eps, at or above eps
    on the atom eps. Subsampled (rate p): L' = log(1 - p + p e^L), increasing, so
    Pr[L' <= g] = Pr[L <= t] at t = log((e^g - (1 - p)) / p), Q' = (1 - p) P + p Q."""
    eps, p = 30.0, 0.3
    loss = np.array([-31.0, -30.0, -29.5, -12.0, -0.3, 0.0, 0.1, 0.7, 2.0, 29.0, 30.0 - 1e-9, 30.0, 31.0])
    cdfs, sub, t, t_whole = jax.jit(_laws)(jnp.asarray(loss), eps, p)
    lf_y, ls_y, lf_x, ls_x = (np.asarray(a) for a in cdfs)
    u = (loss + eps) / 2  # the output at which L = g
    below, top = loss < -eps, loss >= eps
    for got, want, none, whole in ((lf_x, laplace_law.logcdf(u), below, top), (ls_x, laplace_law.logsf(u), top, below),
                                   (lf_y, laplace_law.logcdf(u - eps), below, top),
                                   (ls_y, laplace_law.logsf(u - eps), top, below)):
        inside = ~none & ~whole
        np.testing.assert_allclose(got[inside], want[inside], rtol=0, atol=1e-13)  # relative precision of the mass
        assert np.all(got[none] == -np.inf) and np.all(got[whole] == 0.0)
    # the atoms: Pr_P[L = -eps] = 1/2 and Pr_Q[L = -eps] = e^-eps / 2 (counted at -eps), Pr_Q[L = eps] = 1/2
    # and Pr_P[L = eps] = e^-eps / 2 (the survival just below eps)
    np.testing.assert_allclose(np.exp([lf_x[1], lf_y[1]]), [0.5, np.exp(-eps) / 2], rtol=1e-14)
    np.testing.assert_allclose(np.exp([ls_y[10], ls_x[10]]), [0.5, np.exp(-eps) / 2], rtol=1e-8)
    # the inverse of the subsampled transform: -inf where no base loss maps, the identity at p = 1
    t, t_whole = np.asarray(t), np.asarray(t_whole)
    reached = loss > np.log1p(-p)
    assert np.all(t[~reached] == -np.inf)
    np.testing.assert_allclose(np.log1p(-p + p * np.exp(t[reached])), loss[reached], rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(t_whole, loss)
    base = np.log(np.expm1(loss[reached] - np.log1p(-p)) * (1 - p) / p)  # the base loss t, in closed form
    np.testing.assert_allclose(t[reached], base, rtol=1e-12, atol=1e-15)
    lf_q, ls_q, lf_p, ls_p = (np.asarray(a) for a in sub)
    v = (t + eps) / 2
    cdf_p = np.where(t < -eps, 0.0, np.where(t >= eps, 1.0, laplace_law.cdf(v)))
    cdf_q = np.where(t < -eps, 0.0, np.where(t >= eps, 1.0, laplace_law.cdf(v - eps)))
    np.testing.assert_allclose(np.exp(lf_p), cdf_p, rtol=1e-13, atol=0)
    np.testing.assert_allclose(np.exp(lf_q), (1 - p) * cdf_p + p * cdf_q, rtol=1e-13, atol=0)
    np.testing.assert_allclose(np.exp(ls_q), 1 - ((1 - p) * cdf_p + p * cdf_q), rtol=1e-12, atol=1e-16)


@float64
def test_the_pair_is_exact_at_the_grid_epsilons_and_safe_between():
    """Each cell's P- and Q-mass kept: the pair's delta(eps) = sum Pr[Y = x] (1 - e^(eps - x))_+
    is the Laplace mechanism's 1 - e^((eps - epsilon) / 2) at every grid point, at or above it
    between; every mass on the grid (the law is bounded), Pr[X = x] = e^-x Pr[Y = x]."""
    step, n = 0.25, 9
    eps = np.array([1.0, 0.5])
    pair = laplace.laplace_kernel(jnp.asarray(eps), jnp.ones(2), jnp.array([-4, -4]), np.float64(step), n)
    px, py, offset, inf_y, neginf_x = (np.asarray(a) for a in pair)
    x = (offset[:, None] + np.arange(n)) * step
    np.testing.assert_array_equal(inf_y, 0.0)
    np.testing.assert_array_equal(neginf_x, 0.0)
    np.testing.assert_allclose([px.sum(-1), py.sum(-1)], 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(px, np.exp(-x) * py, rtol=1e-14, atol=1e-300)
    assert np.all(py[np.abs(x) > eps[:, None]] == 0.0)  # nothing beyond the atoms
    for row, epsilon in enumerate(eps):
        on_grid = np.arange(0.0, epsilon + step / 2, step)
        between = on_grid[:-1] + step * np.array([[0.1], [0.5], [0.9]])
        for e, exact in ((on_grid, True), (between.ravel(), False)):
            d = np.sum(py[row] * np.maximum(-np.expm1(e[:, None] - x[row]), 0.0), -1)
            truth = -np.expm1((e - epsilon) / 2)
            if exact:
                np.testing.assert_allclose(d, truth, rtol=0, atol=1e-15)
            else:
                assert np.all(d > truth) and np.all(d - truth < step**2 / 16), (row, d - truth)
