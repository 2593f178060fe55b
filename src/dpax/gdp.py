"""Gaussian-DP reporting: tight mu, its regret, Tier I/II reports and GDP closed forms.

Implements "(epsilon, delta) considered harmful: report Gaussian DP" (Gomez et al.):

* :func:`mu_and_regret` -- the smallest mu such that the mechanism is mu-GDP, from the
  breakpoints of the trade-off curve (Eq. 11 / Appendix B, Eq. 29), and the regret
  Delta(f, f_mu) (Eq. 13 / Theorem B.2), for a batch of privacy losses in one kernel;
* :func:`report` -- Tier I (mu, regret, regret < 1e-2) and Tier II (beta at fixed FPRs and at
  the advantage-maximising FPR), with epsilon at common deltas, as a dataclass, table or JSON;
* closed forms of mu-GDP (Dong, Roth & Su 2022): :func:`tradeoff`, :func:`advantage`,
  :func:`delta`, :func:`epsilon`, :func:`compose`, :func:`gaussian_mu`, and the two
  *approximations* :func:`clt_mu` (Dong et al., Theorem 3.5) and :func:`subsampled_clt_mu`
  (Bu et al. / Dong et al., Corollary 5.4), which can be optimistic.

Both numbers are for the symmetrised curve h that dpax reports (convex hull of
min(f, f^-1), see :mod:`dpax.analyse`). Geometry used throughout: write a trade-off curve in
the rotated coordinates u = alpha - beta, v = alpha + beta, so that its graph is v = V(u) with
V convex on [-1, 1]; shifting a curve down-left by kappa (Eq. 8) lowers V by 2 kappa. Hence

    Delta(f, g) = max(0, sup_u (V_f(u) - V_g(u)) / 2),

and for a piecewise-linear convex f (the max of its segments' lines) against f_mu this sup is
attained where f_mu's tangent is parallel to one of f's segments: the regret is evaluated
exactly at those tangent points, in closed form, not on a fixed grid of FPR values.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import ndtri
from scipy.special import log_ndtr as _np_log_ndtr
from scipy.special import ndtr as _np_ndtr
from scipy.special import ndtri as _np_ndtri

from ._engine import analyse as _analyse
from ._engine import text as _text
from ._engine.pair import Pair
from ._engine import validation as _v
from ._engine.special import ndtr
from ._engine.x64 import float64

#: Default tail: mu is the tightest GDP parameter for every attack whose FPR and FNR lie in
#: [tail, 1 - tail] (the grid's truncated mass, kept pessimistically at +-inf, is not GDP for any
#: finite mu). The paper's and gdpnum's value.
DEFAULT_TAIL = 1e-10

#: Regret below which the mu-GDP summary is faithful (Tier I of the paper).
REGRET_THRESHOLD = 1e-2

#: Tier II FPRs (the paper's Section 4.3 / gdpnum's defaults; alpha* is appended).
TIER2_ALPHAS = (1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1)

#: deltas at which the report also gives epsilon (those of the paper's Table 3).
REPORT_DELTAS = (1e-5, 1e-6, 1e-9)


# -- closed forms of mu-GDP ----------------------------------------------------------------


def tradeoff(mu, alpha):
    """f_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu), the trade-off curve of mu-GDP (Eq. 7).

    ``mu`` >= 0 and ``alpha`` in [0, 1] broadcast together.
    """
    m = _v.real_array("mu", mu, low=0.0)
    a = _v.probabilities("alpha", alpha)
    out = _np_ndtr(-_np_ndtri(a) - m)
    return out if out.ndim else float(out)


def advantage(mu):
    """Largest TPR - FPR of any attack on a mu-GDP mechanism: 2 Phi(mu / 2) - 1."""
    m = _v.real_array("mu", mu, low=0.0)
    out = 2.0 * _np_ndtr(m / 2.0) - 1.0
    return out if out.ndim else float(out)


def _delta_np(eps, mu):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = _np_ndtr(-eps / mu + mu / 2.0)
        b = np.exp(eps + _np_log_ndtr(-eps / mu - mu / 2.0))
        d = np.where(mu > 0, a - b, 0.0)
    return np.clip(d, 0.0, 1.0)


def delta(epsilon, mu):
    """delta(epsilon) of mu-GDP (Dong, Roth & Su, Corollary 2.13):
    Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), computed in log space for large eps."""
    e = _v.real_array("epsilon", epsilon)
    m = _v.real_array("mu", mu, low=0.0)
    out = _delta_np(e, m)
    return out if out.ndim else float(out)


def epsilon(delta_, mu):
    """Smallest epsilon >= 0 with mu-GDP's delta(epsilon) <= ``delta_`` (bisection on
    Corollary 2.13, to 1e-12 relative; the result errs upward)."""
    d = _v.probabilities("delta", delta_, low_open=True)
    m = _v.real_array("mu", mu, low=0.0)
    d, m = np.broadcast_arrays(d, m)
    lo = np.zeros(d.shape)
    hi = m * m / 2.0 + 40.0 * m + 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        ok = _delta_np(mid, m) <= d
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
        if np.all(hi - lo <= 1e-13 * np.maximum(hi, 1e-300)):
            break
    out = np.where(_delta_np(np.zeros(d.shape), m) <= d, 0.0, hi)
    return out if out.ndim else float(out)


def compose(*mus):
    """mu of the composition of mu_i-GDP mechanisms: sqrt(sum mu_i^2) (Dong et al., Cor. 3.3).

    ``compose(0.5, 0.5)`` or ``compose([0.5, 0.5])`` (an array is composed along its last axis).
    """
    if len(mus) == 1:
        m = _v.real_array("mu", mus[0], low=0.0)
        out = np.sqrt(np.sum(m * m, axis=-1)) if m.ndim else m
    else:
        ms = np.broadcast_arrays(*(_v.real_array(f"mu {i}", x, low=0.0) for i, x in enumerate(mus)))
        out = np.sqrt(sum(x * x for x in ms))
    return out if np.ndim(out) else float(out)


def gaussian_mu(noise_multiplier, sensitivity=1.0, num_steps=1):
    """mu of the Gaussian mechanism composed ``num_steps`` times: sqrt(T) sensitivity / sigma
    (exact: the mechanism is mu-GDP with this mu and no smaller)."""
    s = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    c = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True)
    t = _v.positive_int_array("num_steps", num_steps)
    out = np.sqrt(t) * c / s
    return out if out.ndim else float(out)


def subsampled_clt_mu(noise_multiplier, sample_rate, num_steps):
    """APPROXIMATION (can be optimistic): the asymptotic mu of DP-SGD, Bu et al. (2020) /
    Dong et al. Corollary 5.4 with mu_step = 1 / sigma:
    p sqrt(T) sqrt(e^{mu^2} Phi(3 mu / 2) + 3 Phi(-mu / 2) - 2).

    Valid only as T -> infinity with p sqrt(T) fixed; it is not a guarantee. Use
    :func:`mu_and_regret` on ``dpax.dpsgd(...)`` for one.
    """
    s = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    t = _v.positive_int_array("num_steps", num_steps)
    m = 1.0 / s
    with np.errstate(over="ignore"):
        inner = np.exp(m * m) * _np_ndtr(1.5 * m) + 3.0 * _np_ndtr(-0.5 * m) - 2.0
    out = p * np.sqrt(t) * np.sqrt(np.maximum(inner, 0.0))
    return out if out.ndim else float(out)


@float64
def clt_mu(pl, num_steps=1):
    """APPROXIMATION (can be optimistic; Gopi et al. 2021 show it can underestimate risk):
    the central-limit mu of ``num_steps`` compositions of ``pl`` (Dong, Roth & Su, Theorem 3.5),
    mu = 2 T kl / sqrt(T (kappa_2 - kl^2)), with kl = KL(P || Q) = -E[X] and
    kappa_2 - kl^2 = Var[X] for X = log(Q/P) under P, the larger over the two directions.

    The moments are those of the finite grid (the truncation atoms at +-inf, which would make
    KL infinite, are left out): one more reason it is an approximation, not a bound.
    """
    t = _v.positive_int_array("num_steps", num_steps)
    x = pl.loss_values()
    out = np.zeros(pl.batch_shape)
    for pmf, sign in ((pl.pmf_x, -1.0), (pl.pmf_y, 1.0)):
        # direction (P, Q): X under P; reversed (Q, P): X' = -Y under Q, so kl = E[Y]
        total = np.sum(pmf, -1)
        mean = np.sum(pmf * x, -1) / total
        var = np.sum(pmf * (x - mean[..., None]) ** 2, -1) / total
        kl = sign * mean
        with np.errstate(divide="ignore", invalid="ignore"):
            mu = np.where(var > 0, 2.0 * kl / np.sqrt(var), 0.0)
        out = np.maximum(out, mu)
    out = np.sqrt(t) * out
    return out if np.ndim(out) else float(out)


# -- mu and regret of a discrete curve ----------------------------------------------------


def _inverse_at(cx, cy, beta, beyond=0.0):
    """alpha at which one direction's curve (tables cx descending, cy ascending) has FNR beta
    (``beyond`` where beta exceeds the last breakpoint's). Given 1 - cx as ``cx`` (and
    ``beyond=1``), the same interpolation gives 1 - alpha."""
    n1 = cx.shape[0]
    j = jnp.clip(_analyse.first_true(lambda k: cy[k] >= beta[..., None], n1, beta.shape), 1, n1 - 1)
    b0, b1, a0, a1 = cy[j - 1], cy[j], cx[j - 1], cx[j]
    w = b1 - b0
    t = jnp.clip(jnp.where(w > 0, (beta - b0) / jnp.where(w > 0, w, 1.0), 1.0), 0.0, 1.0)
    return jnp.where(beta > cy[-1], beyond, a0 + t * (a1 - a0))


def _upper_probit(p, q):
    """-Phi^-1(p), given q = 1 - p summed on its own: from q where p > 1/2, so that a
    probability near 1 (1 - 1e-10 at the box's corner) keeps the digits of its complement."""
    low = p <= 0.5
    z = ndtri(jnp.where(low, p, jnp.minimum(q, 0.5)))  # one ndtri per point
    return jnp.where(low, -z, z)


def _v_at(cx, cy, q):
    """V(q) (rows, m) of one direction's curve, whose vertices are u_k = cx_k - cy_k
    (descending in k) and v_k = cx_k + cy_k; outside them the curve continues along the
    square's edges (alpha = 0 or beta = 0), where V(u) = |u|."""
    n1 = cx.shape[-1]

    def rows(k):  # row indices broadcast against an index array k (rows, ...)
        return jnp.arange(cx.shape[0]).reshape((-1,) + (1,) * (k.ndim - 1))

    def u(k):
        return cx[rows(k), k] - cy[rows(k), k]

    def v(k):
        return cx[rows(k), k] + cy[rows(k), k]

    below = n1 - _analyse.first_true(lambda k: u(k) <= q[..., None], n1, q.shape)  # vertices with u_k <= q
    j = jnp.clip(below, 1, n1 - 1)
    u0, u1, v0, v1 = u(n1 - j), u(n1 - 1 - j), v(n1 - j), v(n1 - 1 - j)  # u0 <= u1
    w = u1 - u0
    t = jnp.where(w > 0, (q - u0) / jnp.where(w > 0, w, 1.0), 0.0)
    inside = v0 + jnp.clip(t, 0.0, 1.0) * (v1 - v0)
    last, first = jnp.full(q.shape, n1 - 1), jnp.zeros(q.shape, jnp.int64)
    return jnp.where(q < u(last), -q, jnp.where(q > u(first), q, inside))


#: Branch and bound (:func:`_bounded_max`): the candidate blocks (those whose bound reaches
#: the best known value) are evaluated BOUND_CHUNK at a time unless the caller says otherwise.
BOUND_CHUNK = 1024
#: The regret's kappas: blocks of KAPPA_BLOCK segments, KAPPA_CHUNK candidates per step.
KAPPA_BLOCK = 256
KAPPA_CHUNK = 8
#: Eq. 29's blocks: EQ29_BLOCK breakpoints each, EQ29_CHUNK candidates per step. Its bounds
#: (:func:`_eq29_block_bounds`) are tight to second order, so on DP-SGD curves 1 to 6 blocks
#: of 256 remain (at 16 points, the box bound of the block's ends left ~1000).
EQ29_BLOCK = 256
EQ29_CHUNK = 8
#: Absolute slack on both sides of the block bounds' comparison: covers float64 rounding of
#: the bounds (values up to ~40) with a wide margin; it only ever keeps more blocks.
BOUND_SLACK = 1e-9


def _masked_max(vals, idx, n):
    """(max, smallest index attaining it; n where the row is empty, all -inf) per row."""
    top = jnp.max(vals, -1)
    return top, jnp.where(jnp.isneginf(top), n, jnp.min(jnp.where(vals == top[:, None], idx, n), -1))


def _as_blocks(a, size, fill=0):
    """(rows, n) -> (rows, blocks, size): consecutive blocks of ``size`` points, the last
    padded with ``fill``."""
    n = a.shape[-1]
    blocks = -(-n // size)
    return jnp.pad(a, ((0, 0), (0, blocks * size - n)), constant_values=fill).reshape(a.shape[0], blocks, size)


def _per_block(a, size, fill, reduce):
    """``reduce`` over blocks of ``size`` points along the last axis (padded with ``fill``)."""
    return reduce(_as_blocks(a, size, fill), -1)


def _first_indices(mask, size):
    """Indices of the first ``size`` True entries of each row of ``mask`` (rows, m), in
    increasing order, padded with 0: ``jnp.nonzero(size=)`` per row, with its running count
    taken by :func:`dpax.analyse.prefix_sum` (XLA:CPU's cumsum, a windowed-sum tree,
    recomputes the mask's producers for every element of each window)."""
    rows, m = mask.shape
    rank = _analyse.prefix_sum(mask.astype(jnp.int32)) - 1  # place of each True among its row's
    target = jnp.where(mask & (rank < size), rank, size)  # the rest to a spare column
    out = jnp.zeros((rows, size + 1), jnp.int32).at[jnp.arange(rows)[:, None], target].set(
        jnp.broadcast_to(jnp.arange(m, dtype=jnp.int32), mask.shape))
    return out[:, :size]


def _bounded_max(value, arrays, upper, lower, size, chunk=None):
    """(max, first argmax; n where none) per row of ``value(index, *points)`` over the
    indices 0..n-1 of the tables ``arrays`` (the first (rows, n), the others at least as
    long), by branch and bound.

    ``value`` maps global indices (rows, m) and the tables' entries there (rows, m) to
    values, -inf where a point does not count. ``upper`` (rows, blocks): a bound on ``value``
    over each block of ``size`` indices [b size, (b + 1) size) (-inf where the block has no
    counted point, +inf or NaN always allowed); ``lower`` (rows,): a value attained at a
    counted point, up to rounding (or -inf). A block whose bound falls short of ``lower``
    cannot hold the maximum; the others (candidates, in increasing order) are evaluated
    point by point, ``chunk`` blocks (default BOUND_CHUNK) per step of a loop that runs as long as the row
    with most candidates needs. Same max and first argmax as evaluating every point, bit for
    bit; the cost follows the number of candidates (one step on DP-SGD curves, all blocks on
    a flat curve such as a composed Gaussian's Eq. 29 terms).
    """
    n = arrays[0].shape[-1]
    rows, blocks = upper.shape
    upper = jnp.where(jnp.isnan(upper), jnp.inf, upper)
    candidate = (upper > -jnp.inf) & (upper + BOUND_SLACK >= lower[:, None] - BOUND_SLACK)
    count = jnp.sum(candidate, -1)
    chunk = min(BOUND_CHUNK if chunk is None else chunk, blocks)
    steps = -(-blocks // chunk)
    order = _first_indices(candidate, steps * chunk)

    # each block read as one contiguous window (the last one ending at n - 1, so it may
    # repeat points of the one before: evaluating a point twice leaves max and argmax alone)
    span = min(size, n)
    window = jax.vmap(jax.vmap(lambda a, s: jax.lax.dynamic_slice(a, (s,), (span,)), (None, 0)))

    def step(i, best):
        ids = jax.lax.dynamic_slice_in_dim(order, i * chunk, chunk, axis=1)
        live = i * chunk + jnp.arange(chunk) < count[:, None]
        starts = jnp.minimum(ids * size, n - span)
        pos = (starts[:, :, None] + jnp.arange(span)).reshape(rows, -1)
        points = [window(a, starts).reshape(rows, -1) for a in arrays]
        top, arg = _masked_max(jnp.where(jnp.repeat(live, span, -1), value(pos, *points), -jnp.inf), pos, n)
        better = top > best[0]  # strictly: earlier steps hold earlier blocks, so ties keep the first
        return jnp.where(better, top, best[0]), jnp.where(better, arg, best[1])

    start = (jnp.full((rows,), -jnp.inf), jnp.full((rows,), n, dtype=jnp.int64))
    return jax.lax.fori_loop(0, (jnp.max(count) + chunk - 1) // chunk, step, start)


#: Bound on the absolute error of a breakpoint table's value up to 16^5 ~ 1e6 points (at
#: most PREFIX_BLOCK = 16 roundings of <= 1.12e-16 per level of
#: :func:`dpax.analyse.prefix_sum`, 5 levels, and 3 of the interpolation at the box's sides;
#: longer tables get their own, :func:`_table_error`). Phi^-1 of a value p > 1/2 taken from
#: the subtraction 1 - p is therefore off by up to TABLE_ERROR / phi(z), phi the normal
#: density (~1e-5 at p = 1 - 1e-10, ~3e-12 at 1 - 1e-3).
TABLE_ERROR = 1e-14


def _table_error(n):
    """TABLE_ERROR, or the rounding bound of a table of n points where that is larger."""
    levels = max(1, math.ceil(math.log(max(n, 2)) / math.log(_analyse.PREFIX_BLOCK) - 1e-12))
    return max(TABLE_ERROR, (levels * _analyse.PREFIX_BLOCK + 3) * 1.12e-16)


#: Eq. 29's max is taken over upper bounds of the terms (term + its error bound e), which is
#: within 2 e of the true max; when 2 e of the attaining term exceeds MU_ROUNDING times the
#: max, the terms are recomputed from complementary sums. So mu is the discrete curve's, or
#: above it by at most this relative amount (1e-8; DP-SGD of the paper: 4e-9).
MU_ROUNDING = 1e-8


def _probit_and_error(p, q, table_error):
    """(-Phi^-1(p), a bound on its error): from q = 1 - p where p > 1/2 (see
    :func:`_upper_probit`); the error is that of a p > 1/2 whose q is the subtraction 1 - p,
    with p off by up to ``table_error``; None where q is summed on its own (a tail sum keeps
    its relative precision: ~1e-14 on z), whose error is zero."""
    z = _upper_probit(p, q)
    if table_error is None:
        return z, jnp.zeros_like(z)
    # dz = dq / phi(z), with phi(z) >= q max(|z|, 0.79): the Mills ratio Q(x) / phi(x) falls
    # from sqrt(pi / 2) = 1.2533 < 1 / 0.79 at x = 0 and stays below 1 / x. The factor 2
    # covers q's own error (<= 1e-4 relative inside the box at tail 1e-10)
    upper = p > 0.5
    return z, jnp.where(upper, 2.0 * table_error / jnp.where(upper, q * jnp.maximum(jnp.abs(z), 0.79), 1.0), 0.0)


def _eq29_block_bounds(pmf_x, pmf_y, ratio, ends, zx, ex, zy, ey, box_first, box_last):
    """Upper bounds (rows, blocks) of Eq. 29's terms, error parts included, over each block
    of breakpoints [q_b, q_b+1] (``ratio``: pmf_y / pmf_x; ``ends``: cx, 1 - cx, cy, 1 - cy at
    the q's; zx, ex, zy, ey: their probits and error parts).

    The term g(alpha, beta) = -Phi^-1(alpha) - Phi^-1(beta) is quasiconvex (its sublevel set
    {g <= m} = {beta >= f_m(alpha)} is the epigraph of a convex curve), so on a polygon it
    peaks at a vertex. Past q_b the breakpoints move by steps (-px_j, py_j) with slopes
    py_j / px_j in [r_lo, r_hi]: the block lies in the parallelogram with diagonal from q_b to
    q_b+1 and sides of these slopes. Its vertex above the diagonal dominates a point of the
    diagonal, where g is at most its value at an end; its lower-left vertex is
    P = (alpha_b+1 + s, beta_b + r_lo t), t = (r_hi S_a - S_b) / (r_hi - r_lo), s = S_a - t,
    with S_a, S_b the block's sums of px and py. So the terms are at most
    max(g(q_b), g(q_b+1), g(P)), plus the error parts, largest at the block's largest alpha
    (q_b) and beta (q_b+1). P is moved down-left by a bound on the rounding of t and s; the
    box corner g(alpha_b+1, beta_b) stands where the slopes give no vertex (a vertical step,
    no step, slopes equal to rounding) and wherever it is lower.
    """
    a, na, b, nb = ends
    rows, n = pmf_x.shape
    blocks = a.shape[-1] - 1
    size = EQ29_BLOCK
    whole = n // size  # blocks read in place; the rest (and the empty one past the last step) padded

    def stats(px, py, r, keep=None):  # (r_lo, r_hi, S_a, S_b) along the last axis, of the steps kept
        counted = ~jnp.isnan(r) if keep is None else keep & ~jnp.isnan(r)  # 0 / 0: no step
        if keep is not None:
            px, py = jnp.where(keep, px, 0.0), jnp.where(keep, py, 0.0)
        return (jnp.min(jnp.where(counted, r, jnp.inf), -1), jnp.max(jnp.where(counted, r, 0.0), -1),
                jnp.sum(px, -1), jnp.sum(py, -1))

    # every block as if wholly inside the box; the (at most two) blocks holding its ends again,
    # with the steps outside masked; blocks wholly outside are dropped by the caller
    arrays = (pmf_x, pmf_y, ratio)
    pieces = []
    if whole:
        pieces.append(stats(*(x[:, :whole * size].reshape(rows, whole, size) for x in arrays)))
    rest = ((0, 0), (0, (blocks - whole) * size - (n - whole * size)))
    pieces.append(stats(*(jnp.pad(x[:, whole * size:], rest, constant_values=fill).reshape(rows, blocks - whole, size)
                          for x, fill in zip(arrays, (0.0, 0.0, jnp.nan)))))
    block_stats = [jnp.concatenate(parts, -1) for parts in zip(*pieces)]
    span = min(size, n)
    window = jax.vmap(lambda x, start: jax.lax.dynamic_slice(x, (start,), (span,)))
    row = jnp.arange(rows)
    for end in (box_first, jnp.maximum(box_last - 1, 0)):
        k = end // size
        start = jnp.clip(k * size, 0, n - span)
        j = start[:, None] + jnp.arange(span)
        keep = (j >= jnp.maximum(k * size, box_first)[:, None]) & (j < jnp.minimum((k + 1) * size, box_last)[:, None])
        patch = stats(*(window(x, start) for x in arrays), keep)
        block_stats = [v.at[row, k].set(p) for v, p in zip(block_stats, patch)]
    r_lo, r_hi, s_a, s_b = block_stats
    width = r_hi - r_lo
    usable = (s_a > 0) & (r_hi < jnp.inf) & (width > 1e-12 * r_hi)
    w = jnp.where(usable, width, 1.0)
    t = (r_hi * s_a - s_b) / w
    s = (s_b - r_lo * s_a) / w
    # rounding of the sums (<= EQ29_BLOCK terms), the slopes, the products and w itself
    slack = (r_hi * s_a + s_b) / w * ((EQ29_BLOCK + 8) * 2.3e-16)
    t_lo, t_hi = jnp.clip(t - slack, 0.0, s_a), jnp.clip(t + slack, 0.0, s_a)
    s_lo, s_hi = jnp.clip(s - slack, 0.0, s_a), jnp.clip(s + slack, 0.0, s_a)
    z_p = (_upper_probit(a[:, 1:] + s_lo, na[:, :-1] + t_hi)
           + _upper_probit(b[:, :-1] + r_lo * t_lo, nb[:, 1:] + jnp.where(usable, r_hi, 0.0) * s_hi))
    errors = ex[:, :-1] + ey[:, 1:]
    corner = zx[:, 1:] + zy[:, :-1] + errors
    vertex = jnp.maximum(jnp.maximum(zx[:, :-1] + zy[:, :-1], zx[:, 1:] + zy[:, 1:]), z_p) + errors
    return jnp.where(usable, jnp.minimum(corner, vertex), corner)


def _eq29_max(pmf_x, pmf_y, ratio, cx, cy, nx, ny, tail_col):
    """Eq. 29's max over f's breakpoints inside the box [tail, 1 - tail]^2 and the points
    where f crosses the box's sides, per row, and the error part of the term attaining it.

    ``nx``, ``ny``: 1 - cx and 1 - cy as their own sums (no error part), or None to take them
    as 1 - cx and 1 - cy. Then each term is raised by the error bound e of its values above
    1/2 (:func:`_probit_and_error`): the max is that of upper bounds of the true terms, hence
    at or above the true max, and above it by at most 2 e of the attaining term.
    """
    n1 = cx.shape[-1]
    rows = jnp.arange(cx.shape[0])
    plain = nx is None
    table_error = _table_error(n1) if plain else None
    if plain:
        nx, ny = 1.0 - cx, 1.0 - cy  # fused into their readers: no tables are written

    def in_box(a, na, b, nb):
        return (a >= tail_col) & (na >= tail_col) & (b >= tail_col) & (nb >= tail_col)

    def term(a, na, b, nb, keep):  # (upper bound of the term, its error part); -inf outside
        za, ea = _probit_and_error(jnp.where(keep, a, 0.5), na, table_error)
        zb, eb = _probit_and_error(jnp.where(keep, b, 0.5), nb, table_error)
        t = za + zb + (ea + eb)
        return jnp.where(keep & ~jnp.isnan(t), t, -jnp.inf), ea + eb

    def at(table):
        return lambda k: table[rows[:, None], k]

    # the box's breakpoints form one index range (cx falls and cy rises with k): four
    # searches for its ends (the blocked sums can leave a table an ulp out of order, which
    # moves an end by a point only where the table meets the box's side within that ulp)
    box_first = jnp.maximum(_analyse.first_true(lambda k: at(nx)(k) >= tail_col, n1, rows.shape),
                            _analyse.first_true(lambda k: at(cy)(k) >= tail_col, n1, rows.shape))
    box_last = jnp.minimum(_analyse.first_true(lambda k: at(cx)(k) < tail_col, n1, rows.shape),
                           _analyse.first_true(lambda k: at(ny)(k) < tail_col, n1, rows.shape)) - 1
    box_first, box_last = jnp.where(box_last >= box_first, box_first, 0), jnp.where(box_last >= box_first, box_last, -1)

    def box_terms(idx, a, b, *complements):
        na, nb = complements if complements else (1.0 - a, 1.0 - b)
        inside = (idx >= box_first[:, None]) & (idx <= box_last[:, None]) & in_box(a, na, b, nb)
        return term(a, na, b, nb, inside)[0]

    # branch and bound on blocks of EQ29_BLOCK breakpoints: the terms of block b, between
    # the boundaries q_b = b EQ29_BLOCK and q_b+1 clipped into the box's range, are bounded
    # by :func:`_block_bounds`; the terms at the boundaries themselves are attained values
    size = EQ29_BLOCK
    starts = jnp.arange(-(-n1 // size) + 1) * size
    q = jnp.clip(starts[None, :], box_first[:, None], jnp.maximum(box_last, box_first)[:, None])
    zx, ex = _probit_and_error(at(cx)(q), at(nx)(q), table_error)
    zy, ey = _probit_and_error(at(cy)(q), at(ny)(q), table_error)
    filled = (starts[None, :-1] <= box_last[:, None]) & (starts[None, 1:] > box_first[:, None])
    ends = [at(t)(q) for t in (cx, nx, cy, ny)]
    upper = _eq29_block_bounds(pmf_x, pmf_y, ratio, ends, zx, ex, zy, ey, box_first, box_last)
    upper = jnp.where(filled, upper, -jnp.inf)
    at_q = zx + zy + ex + ey
    lower = jnp.where(box_last >= box_first, jnp.max(jnp.where(jnp.isnan(at_q), -jnp.inf, at_q), -1), -jnp.inf)
    arrays = (cx, cy) if plain else (cx, cy, nx, ny)
    terms_max, best = _bounded_max(box_terms, arrays, upper, lower, size, EQ29_CHUNK)
    best = jnp.minimum(best, n1 - 1)[:, None]
    best_error = term(at(cx)(best), at(nx)(best), at(cy)(best), at(ny)(best), jnp.ones(best.shape, bool))[1][:, 0]
    # the sides: alpha = tail and 1 - tail (whose complement 1 - (1 - tail) is exact), and
    # beta = the same; f and f^-1 interpolated there (complements from the complement tables)
    hi = 1.0 - tail_col
    sides_a = jnp.concatenate([tail_col, hi], -1)
    sides_na = 1.0 - sides_a
    b_at = _analyse.interpolate_curve(cx, cy, sides_a)  # f(tail), f(1 - tail)
    a_at = jax.vmap(_inverse_at)(cx, cy, sides_a)  # f^-1(tail), f^-1(1 - tail)
    if plain:
        nb_at, na_at = 1.0 - b_at, 1.0 - a_at
    else:
        nb_at = _analyse.interpolate_curve(cx, ny, sides_a, at_start=1.0)
        na_at = jax.vmap(functools.partial(_inverse_at, beyond=1.0))(nx, cy, sides_a)
    e1, r1 = term(sides_a, sides_na, b_at, nb_at, in_box(sides_a, sides_na, b_at, nb_at))
    e2, r2 = term(a_at, na_at, sides_a, sides_na, in_box(a_at, na_at, sides_a, sides_na))
    edge, edge_error = jnp.concatenate([e1, e2], -1), jnp.concatenate([r1, r2], -1)
    top = jnp.maximum(terms_max, jnp.max(edge, -1))
    error = jnp.minimum(jnp.where(terms_max >= top, best_error, jnp.inf),
                        jnp.min(jnp.where(edge >= top[:, None], edge_error, jnp.inf), -1))
    return top, error


def _steep(px, py):
    """Segments with slope -s, s = Pr[Y = x] / Pr[X = x] >= 1: (mask, w = 1 / s, log s)."""
    ok = (px > 0) & (py >= px)
    w = jnp.where(ok, px / jnp.where(ok, py, 1.0), 1.0)
    return ok, w, -jnp.log(w)


def _tangent(log_s, m):
    """f_mu's point (alpha*, beta*) with slope -s: z* = log(s) / mu + mu / 2."""
    z = log_s / m + m / 2.0
    return ndtr(-z), ndtr(z - m)


def _kappa_line(px, py, x0, y0, m):
    """kappa of each steep segment's line through (x0, y0) (two ndtr each), -inf elsewhere."""
    ok, w, log_s = _steep(px, py)
    a_star, b_star = _tangent(log_s, m)
    return jnp.where(ok, (w * (y0 - b_star) + (x0 - a_star)) / (w + 1.0), -jnp.inf)


def _kappa_block_bounds(pmf_x, pmf_y, ratio, cx, cy, m):
    """Upper bounds (rows, blocks) of the kappas of the steep segments in each block of
    KAPPA_BLOCK, for f_mu with m = mu (rows, 1) (``ratio``: pmf_y / pmf_x).

    In u = 1 / (s + 1) a line's offset (s alpha + beta) / (s + 1) is alpha + (beta - alpha) u,
    so h_mu(u), its min over f_mu's points, is concave: above its chord between the block's
    extreme u. With h_f(j) = cx_j + (cy_j - cx_j) u_j at segment j's own point (no ndtr),
    kappa_j = h_f(j) - h_mu(u_j) is at most h_f(j) - chord(u_j): four ndtr per block, and
    tight to second order in the block's range of u.
    """
    n = pmf_x.shape[-1]
    size = KAPPA_BLOCK
    ok = (pmf_x > 0) & (pmf_y >= pmf_x)  # the steep segments of _steep
    u = 1.0 / (1.0 + ratio)  # 1 / (1 + s); 0 where s overflows
    u_lo = _per_block(jnp.where(ok, u, 1.0), size, 1.0, jnp.min)
    u_hi = _per_block(jnp.where(ok, u, 0.0), size, 0.0, jnp.max)

    def h_mu(uu):  # alpha* (1 - u) + beta* u at slope s = (1 - u) / u
        uu = jnp.clip(uu, 0.0, 0.5)
        a_star, b_star = _tangent(jnp.log1p(-uu) - jnp.log(uu), m)
        return a_star + (b_star - a_star) * uu

    h_lo, h_hi = h_mu(u_lo), h_mu(u_hi)
    du = u_hi - u_lo
    rise = jnp.where(du > 0, (h_hi - h_lo) / jnp.where(du > 0, du, 1.0), 0.0)
    ub, cxb, cyb, okb = (_as_blocks(a, size) for a in (u, cx[:, :n], cy[:, :n], ok))
    chord = h_lo[..., None] + (ub - u_lo[..., None]) * rise[..., None]
    return jnp.max(jnp.where(okb, cxb + (cyb - cxb) * ub - chord, -jnp.inf), -1)


class MuRegret(NamedTuple):
    """Per row: tight mu (Eq. 29), regret Delta (Eq. 13) and the FPR where it is attained."""

    mu: Any
    regret: Any
    witness: Any


@jax.jit
def _mu_regret_kernel(pair: Pair, tail) -> MuRegret:
    """(mu, regret, witness alpha) per row for the symmetrised curve.

    mu (Eq. 29): max over breakpoints (alpha_i, beta_i) of f inside the box
    [tail, 1 - tail]^2 of Phi^-1(1 - alpha_i) - Phi^-1(beta_i), and at the points where f
    crosses the box's sides. f_mu is convex and f piecewise linear, so f >= f_mu at those
    points implies it everywhere in the box; since f_mu is symmetric, f_mu <= f iff
    f_mu <= f^-1, so the same mu holds for min(f, f^-1) and its convex hull.

    regret (Eq. 13): max over h's segments (slope -s) of (V_h(u*) - V_mu(u*)) / 2, where
    u* = alpha* - beta* at the point of f_mu with slope -s: z* = log(s) / mu + mu / 2,
    alpha* = Phi(-z*), beta* = Phi(z* - mu). V_h, convex, is the max of its segments' lines,
    so sup_u (V_h - V_mu) = max over lines of sup_u (line - V_mu), attained at u*. Exact for
    a convex h, a lower bound otherwise; by symmetry f's steep slopes (s >= 1) suffice.
    """
    pmf_x, pmf_y, offset, inf_y, neginf_x = pair
    n = pmf_x.shape[-1]
    rows = jnp.arange(pmf_x.shape[0])
    # breakpoint tables of f (analyse.breakpoints: the tail sums run from the small end)
    f = _analyse.breakpoints(pair._replace(inf_y=jnp.zeros_like(inf_y)))
    cx, cy = f.ccdf_x, f.cdf_y
    ratio = pmf_y / pmf_x  # the segments' slopes (inf: vertical, NaN: no step), for the block bounds
    off = offset
    tail_col = jnp.broadcast_to(tail, (pmf_x.shape[0], 1))

    # -- mu: Eq. 29 on the breakpoints inside the box [tail, 1 - tail]^2, plus the points
    # where f crosses the box's sides (f's points in the box: by symmetry, h's as well).
    # Near 1, 1 - cx and 1 - cy keep only the absolute precision of the sums (~1e-15): the
    # max is first taken over upper bounds of the terms there, and only when such a bound
    # attains it with a relative error above MU_ROUNDING (small mu, whose max sits at the
    # box's corner) are the terms recomputed from complementary sums (Pr[X <= x] and
    # Pr[Y > x] summed from their own small ends).
    plain_max, error = _eq29_max(pmf_x, pmf_y, ratio, cx, cy, None, None, tail_col)
    # the max of upper bounds t + e is at most the true max + 2 e (t itself is within e)
    close = ~(2.0 * error > MU_ROUNDING * jnp.abs(plain_max))  # (NaN error: none attains, -inf max)

    def from_complements(_):
        nx = neginf_x[:, None] + _analyse.head_sums(pmf_x)
        ny = _analyse.tail_sums(pmf_y) + inf_y[:, None]
        return jnp.where(close, plain_max, _eq29_max(pmf_x, pmf_y, ratio, cx, cy, nx, ny, tail_col)[0])

    terms_max = jax.lax.cond(jnp.all(close), lambda _: plain_max, from_complements, None)
    mu = jnp.maximum(terms_max, 0.0)
    # tail = 0 asks for every attack: an infinite atom puts the point (0, 1 - Pr[Y = +inf])
    # (or (1 - Pr[X = -inf], 0)) on f, below every f_mu, even when it rounds to 1 in the tables
    mu = jnp.where((tail <= 0.0) & ((inf_y > 0.0) | (neginf_x > 0.0)), jnp.inf, mu)

    # -- regret: tangent points of f_mu parallel to f's steep segments (slope -s, s >= 1;
    # the others are their mirror images). kappa of segment j's own line (closed form)
    # picks the candidate; V_h itself is then evaluated there, so the value is a point of h
    # (a lower bound of Delta), exact when h is convex and the line lies on h.
    k0 = _analyse.zero_index(off, n)
    a_bar, b_bar = cx[rows, k0], cy[rows, k0]
    half_width = jnp.abs(a_bar - b_bar)[:, None]
    v_bar = (a_bar + b_bar)[:, None]
    m = jnp.maximum(mu, 1e-300)[:, None]

    def kappa_line(_idx, px, py, x0, y0):
        return _kappa_line(px, py, x0, y0, m)

    # the max kappa by branch and bound on blocks of KAPPA_BLOCK segments
    size = KAPPA_BLOCK
    upper = _kappa_block_bounds(pmf_x, pmf_y, ratio, cx, cy, m)
    # an attained kappa: the largest of the block with the highest bound
    top_block = jnp.argmax(jnp.where(jnp.isnan(upper), -jnp.inf, upper), -1)
    span = min(size, n)
    at = jnp.minimum(top_block * size, n - span)[:, None] + jnp.arange(span)
    lower = jnp.max(kappa_line(at, *(a[rows[:, None], at] for a in (pmf_x, pmf_y, cx, cy))), -1)
    kappa_best, best = _bounded_max(kappa_line, (pmf_x, pmf_y, cx, cy), upper, lower, size, KAPPA_CHUNK)
    best = jnp.minimum(best, n - 1)
    a_best, b_best = _tangent(_steep(pmf_x[rows, best], pmf_y[rows, best])[2][:, None], m)
    # the slope -1 line of h (u* = 0) is always a candidate (and wins ties)
    a_mid, b_mid = _tangent(jnp.zeros_like(m), m)
    kappa_mid = ((a_bar - a_mid[:, 0]) + (b_bar - b_mid[:, 0])) / 2.0
    use_mid = (kappa_mid >= kappa_best)[:, None]
    a_top = jnp.where(use_mid, a_mid, a_best)
    b_top = jnp.where(use_mid, b_mid, b_best)
    u_top = a_top - b_top
    vf = _v_at(cx, cy, u_top)
    vf_mirror = _v_at(cx, cy, -u_top)
    v_h = jnp.where(jnp.abs(u_top) < half_width, v_bar, jnp.minimum(vf, vf_mirror))
    regret = jnp.maximum((v_h - (a_top + b_top))[:, 0] / 2.0, 0.0)
    witness = jnp.minimum(a_top, b_top)[:, 0]
    # mu = inf: f_mu is the perfect-attack curve, V = |u|; the sup is at u = 0
    v0 = _v_at(cx, cy, jnp.zeros((pmf_x.shape[0], 1)))[:, 0]
    v0 = jnp.where(half_width[:, 0] > 0, v_bar[:, 0], v0)
    regret = jnp.where(jnp.isinf(mu), v0 / 2.0, regret)
    witness = jnp.where(jnp.isinf(mu), 0.0, witness)
    return MuRegret(mu, regret, witness)


def _check_loss(pl, name="pl"):
    from .privacy_loss import PrivacyLoss

    if not isinstance(pl, PrivacyLoss):
        raise TypeError(f"{name} must be a dpax.PrivacyLoss, got {type(pl).__name__}")


def _out(values, shape):
    arr = np.asarray(values, dtype=np.float64).reshape(shape)
    return float(arr) if arr.ndim == 0 else arr


@float64
def _mu_regret_rows(pl, tail):
    _check_loss(pl)
    t = float(_v.real_array("tail", tail, low=0.0, high=0.5, high_open=True))
    mu, regret, witness = _mu_regret_kernel(pl.pair, np.float64(t))
    return (_out(mu, pl.batch_shape), _out(regret, pl.batch_shape), _out(witness, pl.batch_shape))


def mu_and_regret(pl, tail=DEFAULT_TAIL):
    """(mu, regret) of the symmetrised trade-off curve h of ``pl`` (floats, or arrays shaped
    like its batch).

    mu (Eq. 11 / Appendix B Eq. 29): the smallest mu with f_mu(alpha) <= h(alpha) at every
    point of the curve whose FPR alpha and FNR beta lie in [tail, 1 - tail] (default 1e-10,
    as in the paper's code, gdpnum): it bounds every attack except those with FPR, TPR,
    FNR or TNR below ``tail``; exact for the discrete curve, which lies below the true one, so
    mu is never below the mechanism's. (Probabilities near 1 are read from complementary
    sums where their lost digits could matter; otherwise mu may exceed the discrete curve's
    by at most ``MU_ROUNDING`` = 1e-8 relative, on the safe side.) ``tail=0`` asks for every
    attack, and gives inf when the grid keeps any mass at +-inf.

    regret (Eq. 13, Theorem B.2): Delta(h, f_mu), evaluated in closed form at the points of
    f_mu whose tangents are parallel to h's segments (where the maximum lies, see the module
    docstring), so it is exact up to float64 rounding (~1e-15) where h is convex, and an
    underestimate (a lower bound) otherwise; unlike gdpnum it is not limited to a fixed grid
    of 10,000 FPR values. The whole batch is one compiled kernel.
    """
    mu, regret, _ = _mu_regret_rows(pl, tail)
    return mu, regret


def regret_witness(pl, tail=DEFAULT_TAIL):
    """FPR alpha at which the regret is attained: f(alpha + Delta) - Delta = f_mu(alpha)
    (the smaller of the two symmetric points)."""
    return _mu_regret_rows(pl, tail)[2]


def delta_divergence(f, g, **kwargs):
    """Delta-divergence Delta(f, g) (Kaissis et al., Definition 2.10; Eq. 8): see
    :func:`dpax.conversions.delta_divergence`."""
    from . import conversions

    return conversions.delta_divergence(f, g, **kwargs)


def symmetric_delta_divergence(f, g, **kwargs):
    """Symmetrised Delta-divergence max(Delta(f, g), Delta(g, f)) (Eq. 9), a metric:
    see :func:`dpax.conversions.symmetric_delta_divergence`."""
    from . import conversions

    return conversions.symmetric_delta_divergence(f, g, **kwargs)


# -- reporting -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class GDPReport:
    """Two-tier privacy report (Section 4 of the paper), for one mechanism or a batch.

    Tier I: ``mu`` (the tightest mu-GDP guarantee), ``regret`` (Delta of reporting mu-GDP
    instead of the curve) and ``gdp_ok`` (regret < 1e-2: mu alone is a faithful summary).
    Tier II: ``beta`` at ``alpha`` (the FPRs 1e-10 ... 1e-1 and alpha*, the FPR of the
    advantage-maximising attack). Also ``epsilon`` at ``deltas`` for readers who want it.
    Array fields carry the batch shape in front.
    """

    description: str
    grid_step: float
    tail: float
    mu: object
    regret: object
    regret_alpha: object
    gdp_ok: object
    advantage: object
    alpha: np.ndarray  # batch_shape + (8,): TIER2_ALPHAS then alpha*
    beta: np.ndarray
    alpha_star: object
    deltas: np.ndarray
    epsilon: np.ndarray

    def to_dict(self) -> dict:
        """JSON-ready dict (plain floats and lists; inf as the string "inf")."""
        return _text.jsonable({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    def table(self) -> str:
        """Human-readable report (one block per configuration of a batch)."""
        _fmt, _pairs, _table = _text.fmt, _text.pairs, _text.table
        mu = np.asarray(self.mu)
        blocks = []
        for idx in np.ndindex(mu.shape):
            def at(x, idx=idx):
                return np.asarray(x)[idx]

            head = self.description if not idx else f"{self.description} [{', '.join(map(str, idx))}]"
            lines = [head, "", "Tier I: Gaussian DP"]
            ok = bool(at(self.gdp_ok))
            lines += _pairs([
                ("mu", _fmt(at(self.mu))),
                ("regret Delta", f"{_fmt(at(self.regret), 3)}  (attained at FPR {_fmt(at(self.regret_alpha), 3)})"),
                ("mu-GDP faithful", f"{'yes' if ok else 'no'}  (regret {'<' if ok else '>='} {REGRET_THRESHOLD:g})"),
                ("advantage", _fmt(at(self.advantage))),
            ])
            lines += ["", "Tier II: trade-off curve (best membership-inference attack)"]
            alphas = at(self.alpha)
            betas = at(self.beta)
            rows = [(_fmt(a, 4) + (" (alpha*)" if i == len(alphas) - 1 else ""), _fmt(b), _fmt(1 - b))
                    for i, (a, b) in enumerate(zip(alphas, betas))]
            lines += _table(("FPR alpha", "FNR beta", "TPR"), rows)
            lines += [""]
            lines += _table(("delta", "epsilon"), [(_fmt(d), _fmt(e)) for d, e in zip(self.deltas, at(self.epsilon))])
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    def __str__(self) -> str:
        return self.table()


@float64
def report(pl, deltas=REPORT_DELTAS, tail=DEFAULT_TAIL) -> GDPReport:
    """Tier I / Tier II report of ``pl`` (a PrivacyLoss, possibly a batch); see :class:`GDPReport`.

    alpha* = (1 - advantage) / 2, the symmetric point of the slope -1 segment, where the
    attack maximising TPR - FPR operates.
    """
    _check_loss(pl)
    d = _v.probabilities("deltas", deltas).reshape(-1)
    mu, regret, witness = _mu_regret_rows(pl, tail)
    adv = pl.advantage()
    a_star = 0.5 * (1.0 - np.asarray(adv))
    fixed = np.asarray(TIER2_ALPHAS, dtype=np.float64)
    shape = pl.batch_shape
    beta_fixed = np.asarray(pl.beta(fixed)).reshape(shape + (fixed.size,))
    b_star = np.asarray(_analyse.beta_kernel(pl.pair, np.asarray(a_star, np.float64).reshape(-1, 1))).reshape(shape + (1,))
    eps = np.asarray(pl.epsilon(d)).reshape(shape + (d.size,))
    alpha_col = np.concatenate([np.broadcast_to(fixed, shape + fixed.shape), np.reshape(a_star, shape + (1,))], -1)
    return GDPReport(
        description=pl.description,
        grid_step=pl.grid_step,
        tail=float(tail),
        mu=mu,
        regret=regret,
        regret_alpha=witness,
        gdp_ok=np.asarray(regret) < REGRET_THRESHOLD if np.ndim(regret) else bool(regret < REGRET_THRESHOLD),
        advantage=adv,
        alpha=alpha_col,
        beta=np.concatenate([beta_fixed, b_star], -1),
        alpha_star=a_star if np.ndim(a_star) else float(a_star),
        deltas=d,
        epsilon=eps,
    )
