"""Discrete dominating pairs of the Poisson-subsampled Gaussian mechanism, under add/remove
and under substitution (replace one), from the loss laws' log CDFs in closed form, split by
:mod:`.cells` (Kulynych et al. 2024, Appendix E.1).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import cache as _cache
from ..grid import loss_grid
from ..pair import Pair
from ..special import log_ndtr_pair
from .cells import as_pair, split_cells_ahead, split_cells_kernel


def subsampled_gaussian_log_cdfs(loss, sigma, p):
    """Log CDFs of the loss L = log(Q/P)(o) of the Poisson-subsampled Gaussian pair
    P = N(0, sigma^2), Q = (1 - p) N(0, sigma^2) + p N(1, sigma^2) (p = 1: plain Gaussian).

    L(o) = log(1 - p + p exp((2o - 1) / (2 sigma^2))) is increasing in o, so
    Pr[L <= eps] = Pr[o <= o(eps)] with o(eps) = sigma^2 log((e^eps - 1 + p) / p) + 1/2.
    Returns (log Pr_Q[L <= g], log Pr_Q[L > g], log Pr_P[L <= g], log Pr_P[L > g]).
    """
    log1mp = jnp.log1p(-p)  # -inf for p == 1
    above = loss > log1mp
    z = jnp.where(above, loss - log1mp, 1.0)
    # log(e^eps - (1 - p)) = eps + log(1 - e^-(eps - log(1-p)))
    log_excess = loss + jnp.log(-jnp.expm1(-z))
    o = jnp.where(above, sigma**2 * (log_excess - jnp.log(p)) + 0.5, -jnp.inf)
    # one log_ndtr_pair over both standardised outputs (o / sigma, (o - 1) / sigma): one
    # call site compiles once, in half the time of two
    (lf_x, lf_v), (ls_x, ls_v) = (jnp.split(side, 2, -1) for side in log_ndtr_pair(
        jnp.concatenate(jnp.broadcast_arrays(o / sigma, (o - 1.0) / sigma), -1)))
    lf_y = jnp.logaddexp(log1mp + lf_x, jnp.log(p) + lf_v)
    ls_y = jnp.logaddexp(log1mp + ls_x, jnp.log(p) + ls_v)
    return lf_y, ls_y, lf_x, ls_x


def _subsampled_gaussian_cdfs(sigma, p, offset, grid_step, n):
    grid = loss_grid(offset, n, grid_step)
    return grid, subsampled_gaussian_log_cdfs(grid, sigma[:, None], p[:, None])


# XLA's classic emitters: half the compile time, as fast to run (benchmarks/README.md, "Compile options")
_subsampled_gaussian_cdfs = _cache.kernel(jax.jit(_subsampled_gaussian_cdfs, static_argnames=("n",)), "sg_cdfs",
                                          fusion_emitters=False)


def subsampled_gaussian_kernel(sigma, p, offset, grid_step, n) -> Pair:
    """Discrete dominating pair of the Poisson-subsampled Gaussian, rows of length n.

    Two compiled stages (CDFs, then cell splitting): one fused kernel would recompute the
    CDFs inside every consumer and take several times longer to compile. The second is
    compiled ahead (:func:`dpax._engine.cache.compile_ahead_of`), beside the first.
    """
    split_cells_ahead(np.shape(sigma)[0], n, grid_step)
    grid, cdfs = _subsampled_gaussian_cdfs(sigma, p, offset, grid_step, n=n)
    return as_pair(split_cells_kernel(grid, grid_step, *cdfs), offset)


# -- under substitution (replace one)


def substitution_output_of_loss(loss, sigma, p):
    """Output o(g) with L(o) = g for the pair Q = p N(1, s^2) + (1 - p) N(0, s^2),
    P = p N(-1, s^2) + (1 - p) N(0, s^2) (replace-one neighbours under Poisson subsampling).

    With A = 1 - p, B = p e^(-1/(2 s^2)) and z = e^(o / s^2), L = log((A + B z) / (A + B / z))
    is increasing and odd in o, and L = g solves B z^2 + A (1 - e^g) z - e^g B = 0:
    z = (A (e^g - 1) + sqrt(A^2 (e^g - 1)^2 + 4 B^2 e^g)) / (2B) for g >= 0 (no
    cancellation), o(-g) = -o(g). Computed in log space.
    """
    g = jnp.abs(loss)
    log_a = jnp.log1p(-p)  # -inf for p = 1
    log_b = jnp.log(p) - 0.5 / sigma**2
    log_ae = log_a + jnp.log(jnp.expm1(g))  # -inf at g = 0 or p = 1
    log_root = 0.5 * jnp.logaddexp(2.0 * log_ae, jnp.log(4.0) + 2.0 * log_b + g)
    u = jnp.logaddexp(log_ae, log_root) - jnp.log(2.0) - log_b
    return jnp.sign(loss) * sigma**2 * u


def subsampled_gaussian_substitution_log_cdfs(loss, sigma, p):
    """Log CDFs of L = log(Q/P) for the replace-one pair of :func:`substitution_output_of_loss`:
    Pr[L <= g] = Pr[o <= o(g)] under the mixtures Q and P.
    Returns (log Pr_Q[L <= g], log Pr_Q[L > g], log Pr_P[L <= g], log Pr_P[L > g])."""
    o = substitution_output_of_loss(loss, sigma, p)
    log1mp, logp = jnp.log1p(-p), jnp.log(p)
    # one log_ndtr_pair over the three standardised outputs (one call site compiles once)
    lf, ls = log_ndtr_pair(jnp.concatenate(jnp.broadcast_arrays(o / sigma, (o - 1.0) / sigma, (o + 1.0) / sigma), -1))
    (lf_o, lf_1, lf_m1), (ls_o, ls_1, ls_m1) = jnp.split(lf, 3, -1), jnp.split(ls, 3, -1)

    def mix(lf_s, ls_s):
        return jnp.logaddexp(log1mp + lf_o, logp + lf_s), jnp.logaddexp(log1mp + ls_o, logp + ls_s)

    lf_y, ls_y = mix(lf_1, ls_1)
    lf_x, ls_x = mix(lf_m1, ls_m1)
    return lf_y, ls_y, lf_x, ls_x


def _substitution_cdfs(sigma, p, offset, grid_step, n):
    grid = loss_grid(offset, n, grid_step)
    return grid, subsampled_gaussian_substitution_log_cdfs(grid, sigma[:, None], p[:, None])


_substitution_cdfs = _cache.kernel(jax.jit(_substitution_cdfs, static_argnames=("n",)), "sg_sub_cdfs")


def subsampled_gaussian_substitution_kernel(sigma, p, offset, grid_step, n) -> Pair:
    """Discrete dominating pair (rows, n) of the Poisson-subsampled Gaussian, replace-one."""
    split_cells_ahead(np.shape(sigma)[0], n, grid_step)
    grid, cdfs = _substitution_cdfs(sigma, p, offset, grid_step, n=n)
    return as_pair(split_cells_kernel(grid, grid_step, *cdfs), offset)
