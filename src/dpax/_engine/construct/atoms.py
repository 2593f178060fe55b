"""Discrete dominating pairs of loss laws made of atoms (randomized response, discrete
Laplace / Gaussian, (epsilon, delta) worst case, pairs imported as arrays): split atom by atom
where the masses are in ratio e^-l, else from the CDFs at the new grid points.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import cache as _cache
from ..grid import MAX_LOSS, loss_grid
from ..pair import Pair
from .cells import as_pair, by_row_length, close_rounding, split_cells_kernel


def atoms_log_cdfs(grid, loss, log_p, log_q):
    """Log CDFs at the grid points of a loss law made of atoms (rows, m).

    ``loss`` is sorted ascending per row (may hold -inf: P-only mass, and +inf: Q-only
    mass; padding atoms carry log mass -inf); ``log_p``, ``log_q`` are the atoms' log
    masses under P and Q. Pr[L <= g] counts the atoms at g (right-continuous CDFs); sums
    are taken in log space from the near end, so both tails keep relative precision.
    """

    def one(g, loss_row, lp, lq):
        m = loss_row.shape[0]
        k = jnp.searchsorted(loss_row, g, side="right")  # atoms with loss <= g

        def cdf_sf(lm):
            below = jax.lax.cumlogsumexp(lm)
            above = jnp.flip(jax.lax.cumlogsumexp(jnp.flip(lm)))
            lf = jnp.where(k > 0, below[jnp.clip(k - 1, 0, m - 1)], -jnp.inf)
            ls = jnp.where(k < m, above[jnp.clip(k, 0, m - 1)], -jnp.inf)
            return lf, ls

        lf_y, ls_y = cdf_sf(lq)
        lf_x, ls_x = cdf_sf(lp)
        return lf_y, ls_y, lf_x, ls_x

    return jax.vmap(one)(grid, loss, log_p, log_q)


def split_atoms(loss, log_p, log_q, offset, grid_step, n):
    """Connect-the-dots masses (rows, n) of a loss law made of atoms, atom by atom.

    An atom with loss l in the cell [a, b] = [k h, (k + 1) h] and masses (p, q),
    p = q e^-l, goes to a with Q-mass q e^(a - l) (1 - e^(l - b)) / (1 - e^-h) and to b
    with Q-mass q (1 - e^(a - l)) / (1 - e^-h): both P- and Q-mass are kept, and the
    expm1 forms leave only float64 rounding (no cancellation, unlike differences of
    CDFs). An atom on a grid point goes there whole. Atoms below the first point go to it
    with P-mass e^-g0 q (the rest of their P-mass to X = -inf); atoms above the last go to
    it with Q-mass e^g_last p (the rest to Y = +inf); atoms at -inf / +inf are the
    infinite atoms. Returns ``(pmf_x, pmf_y, inf_y, neginf_x)`` before closing the mass.
    """
    h = grid_step
    rows = loss.shape[0]
    finite = jnp.isfinite(loss)
    loss_f = jnp.where(finite, loss, 0.0)
    g0 = offset[:, None] * h
    g_last = (offset[:, None] + n - 1) * h
    q = jnp.exp(log_q)
    p = jnp.exp(log_p)
    pos = loss_f / h
    near = jnp.round(pos)
    on_grid = jnp.abs(pos - near) < 1e-11 * jnp.maximum(1.0, jnp.abs(pos))
    k = jnp.where(on_grid, near, jnp.floor(pos))
    a = k * h
    frac = loss_f - a  # in [0, h)
    q_lo = jnp.where(on_grid, q, jnp.exp(log_q - frac) * -jnp.expm1(frac - h) / -jnp.expm1(-h))
    q_hi = jnp.where(on_grid, 0.0, q * -jnp.expm1(-frac) / -jnp.expm1(-h))
    idx = k.astype(jnp.int64) - offset[:, None]
    below = finite & (idx < 0)
    above = finite & (idx + jnp.where(on_grid, 0, 1) > n - 1)
    inside = finite & ~below & ~above
    zero = jnp.zeros_like(q)
    r = jnp.arange(rows)[:, None]
    pmf_y = jnp.zeros((rows, n), q.dtype)
    pmf_y = pmf_y.at[r, jnp.clip(idx, 0, n - 1)].add(jnp.where(inside, q_lo, zero))
    pmf_y = pmf_y.at[r, jnp.clip(idx + 1, 0, n - 1)].add(jnp.where(inside, q_hi, zero))
    pmf_y = pmf_y.at[:, 0].add(jnp.sum(jnp.where(below, q, zero), -1))
    # e^g_last p = q e^(g_last - l) <= q above the grid, e^-g0 q = p e^(l - g0) <= p below it:
    # written as these ratios, no factor overflows (a grid padded past 709 nats would give inf * 0)
    top_q = jnp.sum(jnp.where(above, q * jnp.exp(jnp.minimum(g_last - loss_f, 0.0)), zero), -1)
    pmf_y = pmf_y.at[:, -1].add(top_q)
    inf_y = jnp.sum(jnp.where(loss == jnp.inf, q, zero), -1) + jnp.maximum(
        jnp.sum(jnp.where(above, q, zero), -1) - top_q, 0.0)
    neginf_x = jnp.sum(jnp.where(loss == -jnp.inf, p, zero), -1) + jnp.maximum(
        jnp.sum(jnp.where(below, p * -jnp.expm1(jnp.minimum(loss_f - g0, 0.0)), zero), -1), 0.0)
    grid = loss_grid(offset, n, h)
    pmf_x = jnp.exp(jnp.log(pmf_y) - grid)
    return pmf_x, pmf_y, inf_y, neginf_x


def _atoms_pair(loss, log_p, log_q, offset, grid_step, n):
    return close_rounding(*split_atoms(loss, log_p, log_q, offset, grid_step, n))


_atoms_pair = _cache.kernel(jax.jit(_atoms_pair, static_argnames=("n",)), "atoms_pair", fusion_emitters=False)


def _atoms_cdfs(loss, log_p, log_q, offset, grid_step, n):
    grid = loss_grid(offset, n, grid_step)
    return grid, atoms_log_cdfs(grid, loss, log_p, log_q)


_atoms_cdfs = _cache.kernel(jax.jit(_atoms_cdfs, static_argnames=("n",)), "atoms_cdfs")


def atoms_kernel(loss, log_p, log_q, offset, grid_step, n) -> Pair:
    """Connect-the-dots pair (rows, n) of a loss law made of exact atoms (p = q e^-l at
    finite losses: randomized response, discrete Laplace / Gaussian, (epsilon, delta)
    worst case), split atom by atom (:func:`split_atoms`)."""
    return as_pair(_atoms_pair(loss, log_p, log_q, offset, grid_step, n=n), offset)


def regrid_kernel(loss, log_p, log_q, offset, grid_step, n) -> Pair:
    """Connect-the-dots pair (rows, n) of any discrete pair given as atoms, from the CDFs
    at the new grid points (:func:`split_cells`): valid even where the atoms' P- and
    Q-masses are not in ratio e^-l (a pair imported from elsewhere); each cell's content
    is replaced by the two-point pair with ratios e^a, e^b (a post-processing)."""
    grid, cdfs = _atoms_cdfs(loss, log_p, log_q, offset, grid_step, n=n)
    return as_pair(split_cells_kernel(grid, grid_step, *cdfs), offset)


def pair_from_atoms(loss, log_p, log_q, grid_step: float, *, tail: float, exact_ratio: bool, what: str) -> Pair:
    """Connect-the-dots :class:`Pair` (host side: picks each row's grid, then one kernel) of
    a loss law made of atoms (rows, m): ``loss`` log(Q/P) of each atom (-inf: P-mass only,
    +inf: Q-mass only), ``log_p`` / ``log_q`` their log masses.

    Row r's grid spans the finite atoms from where the P-mass below exceeds ``tail`` to
    where the Q-mass above exceeds it; atoms outside collapse onto the end points plus the
    infinite atoms (pessimistically). ``exact_ratio``: p = q e^-l on every finite atom
    (:func:`atoms_kernel`); otherwise the CDFs are split cell by cell (:func:`regrid_kernel`),
    which holds for any pair. ``what`` names the mechanism in errors.
    """
    loss = np.atleast_2d(np.asarray(loss, np.float64))
    lp, lq = (np.broadcast_to(np.atleast_2d(np.asarray(a, np.float64)), loss.shape) for a in (log_p, log_q))
    order = np.argsort(loss, axis=-1, kind="stable")
    loss, lp, lq = (np.take_along_axis(a, order, -1) for a in (loss, lp, lq))
    finite = np.isfinite(loss) & ((lp > -np.inf) | (lq > -np.inf))
    cp = np.cumsum(np.where(finite, np.exp(lp), 0.0), -1)
    rq = np.flip(np.cumsum(np.flip(np.where(finite, np.exp(lq), 0.0), -1), -1), -1)
    lo_ok = finite & (cp > tail)
    hi_ok = finite & (rq > tail)
    lo = np.min(np.where(lo_ok, loss, np.inf), -1)
    hi = np.max(np.where(hi_ok, loss, -np.inf), -1)
    lo = np.where(np.isfinite(lo), lo, np.where(np.isfinite(hi), hi, 0.0))  # e.g. delta = 1: no finite atom
    hi = np.where(np.isfinite(hi), hi, lo)
    hi = np.maximum(hi, lo)
    if np.any(hi > MAX_LOSS) or np.any(lo < -MAX_LOSS):
        raise ValueError(f"{what}: privacy loss beyond {MAX_LOSS:g} nats, outside float64 range")
    step = float(grid_step)
    offset = np.floor(lo / step + 1e-9).astype(np.int64)
    needed = np.ceil(hi / step - 1e-9).astype(np.int64) - offset + 1
    kernel = atoms_kernel if exact_ratio else regrid_kernel
    return by_row_length(kernel, (loss, lp, lq, offset), step, needed, what, min_points=loss.shape[-1])
