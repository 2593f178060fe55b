"""Optimistic companions moved onto a grid: atoms merged to their nearest points
(:func:`merge_to_grid`) and a companion moved to another grid step (:func:`regrid`), each a
post-processing, so still optimistic.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..grid import check_memory, loss_grid
from ..pair import Pair
from .slack import Slack


def _host_close(pmf_x, pmf_y) -> tuple:
    """Device arrays of host masses, with both infinite atoms 0."""
    zero = jnp.zeros(pmf_x.shape[0])
    return jnp.asarray(pmf_x), jnp.asarray(pmf_y), zero, zero


def merge_to_grid(loss, log_p, log_q, offset, grid_step, n) -> tuple[Pair, Slack]:
    """Optimistic companion (rows, n) of a loss law made of atoms (rows, m) on the grid of a
    pair with first index ``offset`` (rows,) and ``n`` points: every atom, with both its
    masses, goes to the grid point nearest its loss, clamped to the grid (atoms at -inf /
    +inf to the first / last point). One map for P and Q: a post-processing, exact. Returns
    the pair and its :class:`Slack` (clamped atoms are irregular).

    >>> import numpy as np
    >>> pair, slack = merge_to_grid(np.array([[-1.0, 1.0]]), np.log([[0.7, 0.3]]), np.log([[0.3, 0.7]]),
    ...                      np.array([-100]), 0.01, 256)
    >>> round(float(pair.pmf_y[0, 0]), 6), round(float(pair.pmf_y[0, 200]), 6)
    (0.3, 0.7)
    """
    loss = np.atleast_2d(np.asarray(loss, np.float64))
    rows = loss.shape[0]
    lp, lq = (np.broadcast_to(np.atleast_2d(np.asarray(a, np.float64)), loss.shape) for a in (log_p, log_q))
    offset = np.broadcast_to(np.asarray(offset, np.int64), (rows,))
    check_memory(rows, max(int(n), loss.shape[-1]), "optimistic companion")
    with np.errstate(invalid="ignore", over="ignore"):
        k = np.where(np.isfinite(loss), np.round(np.where(np.isfinite(loss), loss, 0.0) / grid_step), 0.0)
    k = np.where(loss == np.inf, np.inf, np.where(loss == -np.inf, -np.inf, k))
    rel = k - offset[:, None]
    idx = np.clip(rel, 0, n - 1).astype(np.int64)
    below, above = rel < idx, rel > idx  # clamped to the first / last point (or infinite)
    r = np.broadcast_to(np.arange(rows)[:, None], loss.shape)
    p, q = np.exp(lp), np.exp(lq)
    pmf_x = np.zeros((rows, n))
    pmf_y = np.zeros((rows, n))
    np.add.at(pmf_x, (r, idx), p)
    np.add.at(pmf_y, (r, idx), q)
    pmf_x, pmf_y, inf_y, neginf_x = _host_close(pmf_x, pmf_y)
    first, last = offset * grid_step, (offset + n - 1) * grid_step
    with np.errstate(over="ignore"):
        slack = Slack(np.full(rows, 0.5 * grid_step), np.exp(first) * np.sum(np.where(below, p, 0.0), -1),
                      np.exp(-last) * np.sum(np.where(above, q, 0.0), -1), np.ones(rows))
    return Pair(pmf_x, pmf_y, jnp.asarray(offset), inf_y, neginf_x), slack


def regrid(pair: Pair, slack: Slack, old_step: float, new_step: float, padded_length) -> tuple[Pair, Slack]:
    """A companion on the grid ``k * new_step``: each old grid point's masses move to the
    nearest new point (a post-processing, so still optimistic; every label moves by at most
    half the new step, which widens the :class:`Slack`). ``padded_length(n)`` picks the new
    support length."""
    pmf_x, pmf_y, offset, _, _ = (np.asarray(a) for a in pair)
    rows, n = pmf_x.shape
    loss = loss_grid(offset.astype(np.int64), n, old_step)
    k = np.round(loss / new_step).astype(np.int64)
    lo = k[:, 0]
    m = padded_length(int(np.max(k[:, -1] - lo)) + 1)
    idx = k - lo[:, None]
    r = np.broadcast_to(np.arange(rows)[:, None], idx.shape)
    new_x = np.zeros((rows, m))
    new_y = np.zeros((rows, m))
    np.add.at(new_x, (r, idx), pmf_x)
    np.add.at(new_y, (r, idx), pmf_y)
    px, py, inf_y, neginf_x = _host_close(new_x, new_y)
    return Pair(px, py, jnp.asarray(lo), inf_y, neginf_x), slack.widened(0.5 * new_step)
