"""Discrete dominating pair of the (Poisson-subsampled) Laplace mechanism, from its loss
law's log CDFs in closed form (atoms at +-epsilon), split by :mod:`.cells`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import cache as _cache
from ..grid import loss_grid
from ..pair import Pair
from .cells import _LOG_HALF, as_pair, close_rounding, split_cells_open


def inverse_subsampled_loss(loss, p):
    """t(g) = log((e^g - (1 - p)) / p): the base loss L with log(1 - p + p e^L) = g.

    -inf where g <= log(1 - p) (no base loss maps there); t(g) = g when p = 1.
    """
    log1mp = jnp.log1p(-p)
    above = loss > log1mp
    z = jnp.where(above, loss - log1mp, 1.0)
    return jnp.where(above, loss + jnp.log(-jnp.expm1(-z)) - jnp.log(p), -jnp.inf)


def laplace_log_cdfs(loss, eps):
    """Log CDFs of the Laplace loss L = (|o| - |o - D|) / b for P = Lap(0, b), Q = Lap(D, b).

    With eps = D / b, L lies in [-eps, eps] with atoms at both ends (o <= 0 and o >= D) and
    L = (2o - D) / b in between; at u = o / b = (g + eps) / 2 in [0, eps):
    Pr_P[L <= g] = 1 - e^-u / 2 and Pr_Q[L <= g] = e^(u - eps) / 2 (right-continuous: the
    atom at -eps is included at g = -eps, the atom at eps only from g >= eps on).
    Returns (log Pr_Q[L <= g], log Pr_Q[L > g], log Pr_P[L <= g], log Pr_P[L > g]).
    """
    u = jnp.clip(0.5 * (loss + eps), 0.0, eps)
    below = loss < -eps
    top = loss >= eps
    ninf = -jnp.inf

    def pick(v, low_value, top_value):
        return jnp.where(below, low_value, jnp.where(top, top_value, v))

    lf_x = pick(jnp.log1p(-0.5 * jnp.exp(-u)), ninf, 0.0)
    ls_x = pick(-u + _LOG_HALF, 0.0, ninf)
    lf_y = pick(u - eps + _LOG_HALF, ninf, 0.0)
    ls_y = pick(jnp.log1p(-0.5 * jnp.exp(u - eps)), 0.0, ninf)
    return lf_y, ls_y, lf_x, ls_x


def subsampled_laplace_log_cdfs(loss, eps, p):
    """Log CDFs of log(1 - p + p e^L) for the Laplace loss L (P = Lap(0, b),
    Q = (1 - p) Lap(0, b) + p Lap(D, b)): the transform is increasing, so
    Pr[L' <= g] = Pr[L <= t(g)] (:func:`inverse_subsampled_loss`), and under Q the mixture
    Pr_Q'[.] = (1 - p) Pr_P[.] + p Pr_Q[.]."""
    t = inverse_subsampled_loss(loss, p)
    lf_y, ls_y, lf_x, ls_x = laplace_log_cdfs(t, eps)
    log1mp, logp = jnp.log1p(-p), jnp.log(p)
    return (
        jnp.logaddexp(log1mp + lf_x, logp + lf_y),
        jnp.logaddexp(log1mp + ls_x, logp + ls_y),
        lf_x,
        ls_x,
    )


def _laplace_pair(eps, p, offset, grid_step, n):
    grid = loss_grid(offset, n, grid_step)
    cdfs = subsampled_laplace_log_cdfs(grid, eps[:, None], p[:, None])
    return close_rounding(*split_cells_open(grid, grid_step, *cdfs), finite_law=True)


_laplace_pair = _cache.kernel(jax.jit(_laplace_pair, static_argnames=("n",)), "laplace_pair")


def laplace_kernel(eps, p, offset, grid_step, n) -> Pair:
    """Discrete dominating pair of the (Poisson-subsampled) Laplace mechanism (rows, n)."""
    return as_pair(_laplace_pair(eps, p, offset, grid_step, n=n), offset)
