"""dpax._engine.construct.mixture: the loss's inverse o(g) of the mixture-of-Gaussians pair
P = N(0, 1), Q = p_0 N(0, 1) + sum_i p_i N(c_i, 1) solves L(o) = g (one component in closed
form, no output below log p_0, the identity's atom at 0), and the log CDFs are those of the normal
laws at o(g), both tails to relative precision."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm

from dpax._engine.construct import mixture
from dpax._engine.x64 import float64


def _both(loss, log_p0, shifts, log_p):
    return (mixture.mixture_output_of_loss(loss, log_p0, shifts, log_p),
            mixture.mixture_log_cdfs(loss, log_p0, shifts, log_p))


@float64
def test_output_of_loss_solves_the_loss_equation_and_the_cdfs_are_the_normal_laws():
    """Three rows in one batch: one component (the subsampled Gaussian: noise 0.8, rate 0.3, a
    second component absent), three components (shifts 0.4, 1.5, 3.0), none (Q = P)."""
    loss = np.linspace(-1.0, 12.0, 66)
    shifts = np.array([[1 / 0.8, 1.0, 1.0], [0.4, 1.5, 3.0], [1.0, 1.0, 1.0]])
    p = np.array([[0.3, 0.0, 0.0], [0.2, 0.05, 0.01], [0.0, 0.0, 0.0]])
    p0 = 1.0 - p.sum(-1)
    with np.errstate(divide="ignore"):
        log_p, log_p0 = np.log(p), np.log(p0)
    o, (lf_y, ls_y, lf_x, ls_x) = jax.jit(_both)(
        jnp.asarray(np.broadcast_to(loss, (3, loss.size))), jnp.asarray(log_p0[:, None]),
        jnp.asarray(shifts[:, None, :]), jnp.asarray(log_p[:, None, :]))
    o, lf_y, ls_y, lf_x, ls_x = (np.asarray(a) for a in (o, lf_y, ls_y, lf_x, ls_x))
    for row in (0, 1):
        reached = loss > log_p0[row]  # L(o) = log(p_0 + ...) > log p_0 at every output
        assert np.all(o[row, ~reached] == -np.inf) and np.all(np.isfinite(o[row, reached]))
        terms = log_p[row, :, None] + shifts[row, :, None] * o[row, reached] - shifts[row, :, None] ** 2 / 2
        with np.errstate(divide="ignore"):
            back = logsumexp(np.vstack([np.full(reached.sum(), log_p0[row]), terms]), axis=0)
        np.testing.assert_allclose(back, loss[reached], rtol=1e-12, atol=1e-12)
    # one component: o = (log(e^g - p_0) - log p_1) / c + c / 2
    c = shifts[0, 0]
    reached = loss > log_p0[0]
    closed = (np.log(np.exp(loss[reached]) - p0[0]) - log_p[0, 0]) / c + c / 2
    np.testing.assert_allclose(o[0, reached], closed, rtol=1e-13, atol=1e-13)
    # Q = P: the loss is 0 (o = +inf at g >= 0, -inf below), and both laws' CDFs jump there
    np.testing.assert_array_equal(o[2], np.where(loss >= 0, np.inf, -np.inf))
    for lf in (lf_x[2], lf_y[2]):
        np.testing.assert_array_equal(np.exp(lf), (loss >= 0).astype(float))
    # P = N(0, 1) and Q = p_0 N(0, 1) + sum_i p_i N(c_i, 1) at o(g), in log space
    for row in (0, 1):
        x = o[row]
        with np.errstate(divide="ignore"):
            means = np.concatenate([[0.0], shifts[row]])
            weights = np.concatenate([[log_p0[row]], log_p[row]])[:, None]
            want = (logsumexp(weights + norm.logcdf(x - means[:, None]), axis=0),
                    logsumexp(weights + norm.logsf(x - means[:, None]), axis=0), norm.logcdf(x), norm.logsf(x))
        for got, exact in zip((lf_y[row], ls_y[row], lf_x[row], ls_x[row]), want):
            finite = np.isfinite(exact)
            assert np.array_equal(np.isfinite(got), finite)
            np.testing.assert_allclose(got[finite], exact[finite], rtol=0, atol=1e-12)  # the masses' relative precision
        assert np.min(ls_x[row][np.isfinite(ls_x[row])]) < -25  # far into a tail
