"""Block bounds and branch and bound behind the tight mu (Eq. 29) and the regret (Eq. 13).

The mu/regret kernel (:mod:`dpax._engine.mu_regret`) needs the maximum of a term over every
breakpoint of a curve with ~10^5-10^6 points. The breakpoints are cut into blocks; a cheap
upper bound per block (from the block's extreme slopes: the Eq. 29 term is quasiconvex, the
regret's kappa of a line is bounded by a chord of h_mu) leaves a few candidate blocks, which
alone are evaluated point by point (:func:`bounded_max`). Every bound carries the rounding
error of the tables it reads, so the result equals the full evaluation.
"""

from __future__ import annotations

import functools
import itertools
import math

import jax
import jax.numpy as jnp
from jax.scipy.special import ndtri

from . import cumulative as _cumulative
from .cumulative import level_search
from .special import ndtr


def upper_probit(p, q):
    """-Phi^-1(p), given q = 1 - p summed on its own: from q where p > 1/2, so that a
    probability near 1 (1 - 1e-10 at the box's corner) keeps the digits of its complement."""
    low = p <= 0.5
    z = ndtri(jnp.where(low, p, jnp.minimum(q, 0.5)))  # one ndtri per point
    return jnp.where(low, -z, z)


def take(table, k):
    """``table[r, k[r, ...]]`` for each row r of a table (rows, n) and indices k (rows, ...)
    that lie in [0, n) (no code for negative or out-of-range indices)."""
    flat = k.reshape(k.shape[0], -1)
    return jnp.take_along_axis(table, flat, -1, mode="promise_in_bounds").reshape(k.shape)


def v_at(cx, cy, q):
    """V(q) (rows, m) of one direction's curve, whose vertices are u_k = cx_k - cy_k
    (descending in k) and v_k = cx_k + cy_k; outside them the curve continues along the
    square's edges (alpha = 0 or beta = 0), where V(u) = |u|."""
    n1 = cx.shape[-1]

    def u(k):
        return take(cx, k) - take(cy, k)

    def v(k):
        return take(cx, k) + take(cy, k)

    below = n1 - level_search(lambda k: u(k) <= q[..., None], n1, q.shape)  # vertices with u_k <= q
    j = jnp.clip(below, 1, n1 - 1)
    u0, u1, v0, v1 = u(n1 - j), u(n1 - 1 - j), v(n1 - j), v(n1 - 1 - j)  # u0 <= u1
    w = u1 - u0
    t = jnp.where(w > 0, (q - u0) / jnp.where(w > 0, w, 1.0), 0.0)
    inside = v0 + jnp.clip(t, 0.0, 1.0) * (v1 - v0)
    return jnp.where(q < cx[:, -1:] - cy[:, -1:], -q, jnp.where(q > cx[:, :1] - cy[:, :1], q, inside))


#: Branch and bound (:func:`bounded_max`): the candidate blocks (those whose bound reaches
#: the best known value) are evaluated by groups of BOUND_CHUNK consecutive blocks unless the
#: caller says otherwise.
BOUND_CHUNK = 1024
#: The regret's kappas: blocks of KAPPA_BLOCK segments, groups of KAPPA_CHUNK blocks per step.
KAPPA_BLOCK = 256
KAPPA_CHUNK = 8
#: Eq. 29's blocks: EQ29_BLOCK breakpoints each, groups of EQ29_CHUNK blocks per step. Its bounds
#: (:func:`eq29_block_bounds`) are tight to second order, so on DP-SGD curves 1 to 6 blocks
#: of 256 remain (at 16 points, the box bound of the block's ends left ~1000).
EQ29_BLOCK = 256
EQ29_CHUNK = 8
#: Absolute slack on both sides of the block bounds' comparison: covers float64 rounding of
#: the bounds (values up to ~40) with a wide margin; it only ever keeps more blocks.
BOUND_SLACK = 1e-9


def masked_max(vals, idx, n):
    """(max, smallest index attaining it; n where the row is empty, all -inf) per row, for
    indices ``idx`` listed as contiguous runs of increasing start (overlapping runs repeat a
    point): the first entry attaining the max then holds the smallest index (one argmax)."""
    first = jnp.argmax(vals, -1)[:, None]
    top = jnp.take_along_axis(vals, first, -1)[:, 0]
    return top, jnp.where(jnp.isneginf(top), n, jnp.take_along_axis(idx, first, -1)[:, 0])


def as_blocks(a, size, fill=0):
    """(rows, n) -> (rows, blocks, size): consecutive blocks of ``size`` points, the last
    padded with ``fill``."""
    n = a.shape[-1]
    blocks = -(-n // size)
    return jnp.pad(a, ((0, 0), (0, blocks * size - n)), constant_values=fill).reshape(a.shape[0], blocks, size)


def per_block(a, size, fill, reduce):
    """``reduce`` over blocks of ``size`` points along the last axis (padded with ``fill``)."""
    return reduce(as_blocks(a, size, fill), -1)


def bounded_max(value, arrays, upper, lower, size, chunk=None):
    """(max, first argmax; n where none) per row of ``value(index, *points)`` over the
    indices 0..n-1 of the tables ``arrays`` (the first (rows, n), the others at least as
    long), by branch and bound.

    ``value`` maps global indices (rows, m) and the tables' entries there (rows, m) to
    values, -inf where a point does not count. ``upper`` (rows, blocks): a bound on ``value``
    over each block of ``size`` indices [b size, (b + 1) size) (-inf where the block has no
    counted point, +inf or NaN always allowed); ``lower`` (rows,): a value attained at a
    counted point, up to rounding (or -inf). A block whose bound falls short of ``lower``
    cannot hold the maximum; the others (candidates) are evaluated point by point, in groups
    of ``chunk`` consecutive blocks (default BOUND_CHUNK): each step of a loop takes, per row,
    the next group that holds a candidate, for as many steps as the row with most such
    groups needs. Same max and first argmax as evaluating every point, bit for bit; the cost
    follows the number of candidates (one or two steps on DP-SGD curves, all blocks on a flat
    curve such as a composed Gaussian's Eq. 29 terms).
    """
    n = arrays[0].shape[-1]
    rows, blocks = upper.shape
    upper = jnp.where(jnp.isnan(upper), jnp.inf, upper)
    candidate = (upper > -jnp.inf) & (upper + BOUND_SLACK >= lower[:, None] - BOUND_SLACK)
    chunk = min(BOUND_CHUNK if chunk is None else chunk, blocks)
    grouped = as_blocks(candidate, chunk, False)  # (rows, groups, chunk)
    held = jnp.any(grouped, -1)
    groups = jnp.arange(held.shape[-1])

    # each block read as one contiguous window (the last one ending at n - 1, so it may
    # repeat points of the one before: evaluating a point twice leaves max and argmax alone)
    span = min(size, n)
    window = jax.vmap(jax.vmap(lambda a, s: jax.lax.dynamic_slice(a, (s,), (span,)), (None, 0)))

    def step(_, state):
        top_so_far, arg_so_far, done = state  # done: the last group evaluated per row (-1: none)
        group = jnp.argmax(held & (groups > done[:, None]), -1)  # the next one holding a candidate
        live = jnp.take_along_axis(grouped, group[:, None, None], 1)[:, 0] & (group > done)[:, None]
        starts = jnp.minimum(jnp.minimum(group[:, None] * chunk + jnp.arange(chunk), blocks - 1) * size, n - span)
        pos = (starts[:, :, None] + jnp.arange(span)).reshape(rows, -1)
        points = [window(a, starts).reshape(rows, -1) for a in arrays]
        top, arg = masked_max(jnp.where(jnp.repeat(live, span, -1), value(pos, *points), -jnp.inf), pos, n)
        better = top > top_so_far  # strictly: earlier steps hold earlier blocks, so ties keep the first
        return jnp.where(better, top, top_so_far), jnp.where(better, arg, arg_so_far), jnp.maximum(group, done)

    start = (jnp.full((rows,), -jnp.inf), jnp.full((rows,), n, dtype=jnp.int64), jnp.full((rows,), -1, dtype=jnp.int64))
    return jax.lax.fori_loop(0, jnp.max(jnp.sum(held, -1)), step, start)[:2]


#: Bound on the absolute error of a breakpoint table's value up to 16^5 ~ 1e6 points (at
#: most PREFIX_BLOCK = 16 roundings of <= 1.12e-16 per level of
#: :func:`dpax._engine.cumulative.prefix_sum`, 5 levels, and 3 of the interpolation at the box's sides;
#: longer tables get their own, :func:`_table_error`). Phi^-1 of a value p > 1/2 taken from
#: the subtraction 1 - p is therefore off by up to TABLE_ERROR / phi(z), phi the normal
#: density (~1e-5 at p = 1 - 1e-10, ~3e-12 at 1 - 1e-3).
TABLE_ERROR = 1e-14


def _table_error(n):
    """TABLE_ERROR, or the rounding bound of a table of n points where that is larger."""
    levels = max(1, math.ceil(math.log(max(n, 2)) / math.log(_cumulative.PREFIX_BLOCK) - 1e-12))
    return max(TABLE_ERROR, (levels * _cumulative.PREFIX_BLOCK + 3) * 1.12e-16)


#: Without complementary sums (``eq29_max(..., nx=None, ny=None, ...)``) Eq. 29's max is
#: taken over upper bounds of the terms (term + its error bound e), within 2 e of the true
#: max: a caller that accepts 2 e up to MU_ROUNDING times the max, and recomputes from
#: complementary sums otherwise, gets mu within this relative amount (1e-8) of the discrete
#: curve's. The mu kernel reads the complementary sums always (exact up to rounding).
MU_ROUNDING = 1e-8


def probit_and_error(p, q, table_error):
    """(-Phi^-1(p), a bound on its error): from q = 1 - p where p > 1/2 (see
    :func:`upper_probit`); the error is that of a p > 1/2 whose q is the subtraction 1 - p,
    with p off by up to ``table_error``; None where q is summed on its own (a tail sum keeps
    its relative precision: ~1e-14 on z), whose error is zero."""
    z = upper_probit(p, q)
    if table_error is None:
        return z, jnp.zeros_like(z)
    # dz = dq / phi(z), with phi(z) >= q max(|z|, 0.79): the Mills ratio Q(x) / phi(x) falls
    # from sqrt(pi / 2) = 1.2533 < 1 / 0.79 at x = 0 and stays below 1 / x. The factor 2
    # covers q's own error (<= 1e-4 relative inside the box at tail 1e-10)
    upper = p > 0.5
    return z, jnp.where(upper, 2.0 * table_error / jnp.where(upper, q * jnp.maximum(jnp.abs(z), 0.79), 1.0), 0.0)


def eq29_block_bounds(pmf_x, pmf_y, ratio, ends, zx, ex, zy, ey, box_first, box_last):
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
    window = jax.vmap(jax.vmap(lambda x, start: jax.lax.dynamic_slice(x, (start,), (span,)), (None, 0)))
    # both ends at once (in one block, both patches are the same)
    k = jnp.stack([box_first, jnp.maximum(box_last - 1, 0)], -1) // size
    start = jnp.clip(k * size, 0, n - span)
    j = start[..., None] + jnp.arange(span)
    keep = ((j >= jnp.maximum(k * size, box_first[:, None])[..., None])
            & (j < jnp.minimum((k + 1) * size, box_last[:, None])[..., None]))
    patch = stats(*(window(x, start) for x in arrays), keep)
    # each end's block replaced by its patch (a select, not a scatter: fewer kernels to compile)
    at_end = [jnp.arange(blocks)[None, :] == k[:, e:e + 1] for e in range(2)]
    block_stats = [jnp.where(at_end[1], p[:, 1:], jnp.where(at_end[0], p[:, :1], v))
                   for v, p in zip(block_stats, patch)]
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
    z_a, z_b = split_last(upper_probit(jnp.concatenate([a[:, 1:] + s_lo, b[:, :-1] + r_lo * t_lo], -1),
                                       jnp.concatenate([na[:, :-1] + t_hi,
                                                        nb[:, 1:] + jnp.where(usable, r_hi, 0.0) * s_hi], -1)),
                          blocks, blocks)
    z_p = z_a + z_b
    errors = ex[:, :-1] + ey[:, 1:]
    corner = zx[:, 1:] + zy[:, :-1] + errors
    vertex = jnp.maximum(jnp.maximum(zx[:, :-1] + zy[:, :-1], zx[:, 1:] + zy[:, 1:]), z_p) + errors
    return jnp.where(usable, jnp.minimum(corner, vertex), corner)


def split_last(a, *sizes):
    """``a`` cut along its last axis into consecutive pieces of the given lengths."""
    return jnp.split(a, list(itertools.accumulate(sizes))[:-1], -1)


def term(a, na, b, nb, keep, table_error=None):
    """Eq. 29's term -Phi^-1(a) - Phi^-1(b) (an upper bound with its error part, see
    :func:`probit_and_error`; ``na``, ``nb``: 1 - a and 1 - b), -inf where not ``keep`` or
    NaN; and the error part. One probit evaluation for both coordinates."""
    m = a.shape[-1]
    z, e = probit_and_error(jnp.where(jnp.concatenate([keep, keep], -1), jnp.concatenate([a, b], -1), 0.5),
                            jnp.concatenate([na, nb], -1), table_error)
    (za, zb), (ea, eb) = split_last(z, m, m), split_last(e, m, m)
    t = za + zb + (ea + eb)
    return jnp.where(keep & ~jnp.isnan(t), t, -jnp.inf), ea + eb


def _box_and_sides(tables, tail_col):
    """The box's breakpoint range (box_first, box_last) per row and f's points on the box's
    sides: (sides_a, sides_na, b_at, nb_at), f at alpha = tail and 1 - tail (Algorithm 1's
    interpolation, as analyse.interpolate_curve), and (a_at, na_at), f^-1 there (alpha where
    f's FNR is tail, 1 - tail); each (rows, 2), complements from the complement tables.

    One search (seven queries per row) finds the first k where nx >= tail and cy >= tail (the
    box's first breakpoint), cx < tail and ny < tail (one past its last), cx <= tail and
    nx >= 1 - (1 - tail) (f's segments at the sides), and cy >= tail and ny <= 1 - (1 - tail)
    (f^-1's). A side at 1 - tail is placed and interpolated in the complement tables (its
    complement 1 - (1 - tail) is exact): near 1, cx and cy hold only ~1e-16 absolute
    precision, which the probit's slope there (1 / phi(6.4) ~ 1e9 at tail 1e-10) turned into
    a term off by ~1e-8, so an identity companion (gaussian(1e300)'s) had mu 1.3e-8. The
    box's breakpoints form one index range (cx falls and cy rises with k; the blocked sums
    can leave a table an ulp out of order, which moves an end by a point only where the table
    meets the box's side within that ulp).
    """
    cx, cy, nx, ny = tables
    n1 = cx.shape[-1]
    hi = 1.0 - tail_col
    n_hi = 1.0 - hi  # the complement of the side 1 - tail, exact
    # queries: cx < tail, cx <= tail | cy >= tail | nx >= n_hi, nx >= tail | ny <= n_hi, ny < tail
    bound = jnp.concatenate([tail_col, tail_col, tail_col, n_hi, tail_col, n_hi, tail_col], -1)[..., None]
    groups = ((cx, 0, 2), (cy, 2, 3), (nx, 3, 5), (ny, 5, 7))
    at_least = jnp.asarray([False, False, True, True, True, False, False])[:, None]  # the others: below
    strict = jnp.asarray([True, False, False, False, False, False, True])[:, None]

    def pred(k):  # k (rows, 7, keys)
        v = jnp.concatenate([take(t, k[:, lo:hi_]) for t, lo, hi_ in groups], 1)
        return jnp.where(at_least, v >= bound, jnp.where(strict, v < bound, v <= bound))

    k = level_search(pred, n1, (cx.shape[0], 7))
    box_first = jnp.maximum(k[:, 4], k[:, 2])
    box_last = jnp.minimum(k[:, 0], k[:, 6]) - 1
    ok = box_last >= box_first
    sides_a = jnp.concatenate([tail_col, hi], -1)
    sides_na = jnp.concatenate([1.0 - tail_col, n_hi], -1)
    near = jnp.asarray([False, True])[None, :]  # the side at 1 - tail: read from the complements

    at = take
    # f at the sides (Algorithm 1's interpolation between the breakpoints k - 1 and k)
    kf = k[:, jnp.asarray([1, 3])]
    kk = jnp.clip(kf, 1, n1 - 1)
    width = jnp.where(near, at(nx, kk) - at(nx, kk - 1), at(cx, kk - 1) - at(cx, kk))
    past = jnp.where(near, at(nx, kk) - sides_na, sides_a - at(cx, kk))  # alpha minus the right breakpoint's
    gamma = jnp.clip(jnp.where(width > 0, past / jnp.where(width > 0, width, 1.0), 0.0), 0.0, 1.0)
    b_at, nb_at = (jnp.where(kf <= 0, start, at(t, kk) - gamma * (at(t, kk) - at(t, kk - 1)))
                   for t, start in ((cy, 0.0), (ny, 1.0)))
    # f^-1 at the sides: alpha where f has FNR beta = tail, 1 - tail (beyond the last breakpoint: 0)
    kb = k[:, jnp.asarray([2, 5])]
    j = jnp.clip(kb, 1, n1 - 1)
    w = jnp.where(near, at(ny, j - 1) - at(ny, j), at(cy, j) - at(cy, j - 1))
    rise = jnp.where(near, at(ny, j - 1) - sides_na, sides_a - at(cy, j - 1))  # beta minus the left breakpoint's
    t = jnp.clip(jnp.where(w > 0, rise / jnp.where(w > 0, w, 1.0), 1.0), 0.0, 1.0)
    beyond = jnp.where(near, sides_na < ny[:, -1:], sides_a > cy[:, -1:])
    a_at, na_at = (jnp.where(beyond, far, at(t_, j - 1) + t * (at(t_, j) - at(t_, j - 1)))
                   for t_, far in ((cx, 0.0), (nx, 1.0)))
    return ((jnp.where(ok, box_first, 0), jnp.where(ok, box_last, -1)),
            (sides_a, sides_na, b_at, nb_at, a_at, na_at))


def eq29_max(pmf_x, pmf_y, ratio, cx, cy, nx, ny, tail_col):
    """Eq. 29's max over f's breakpoints inside the box [tail, 1 - tail]^2 and the points
    where f crosses the box's sides, per row, and the error part of the term attaining it.

    ``nx``, ``ny``: 1 - cx and 1 - cy as their own sums (no error part), or None to take them
    as 1 - cx and 1 - cy. Then each term is raised by the error bound e of its values above
    1/2 (:func:`probit_and_error`): the max is that of upper bounds of the true terms, hence
    at or above the true max, and above it by at most 2 e of the attaining term.
    """
    n1 = cx.shape[-1]
    plain = nx is None
    table_error = _table_error(n1) if plain else None
    if plain:
        nx, ny = 1.0 - cx, 1.0 - cy

    def in_box(a, na, b, nb):
        return (a >= tail_col) & (na >= tail_col) & (b >= tail_col) & (nb >= tail_col)

    def at(table):
        return functools.partial(take, table)

    (box_first, box_last), (sides_a, sides_na, b_at, nb_at, a_at, na_at) = _box_and_sides((cx, cy, nx, ny), tail_col)
    if plain:  # the complements of the interpolated points, as the tables' are
        nb_at, na_at = 1.0 - b_at, 1.0 - a_at

    def box_terms(idx, a, b, *complements):
        na, nb = complements if complements else (1.0 - a, 1.0 - b)
        inside = (idx >= box_first[:, None]) & (idx <= box_last[:, None]) & in_box(a, na, b, nb)
        return term(a, na, b, nb, inside, table_error)[0]

    # branch and bound on blocks of EQ29_BLOCK breakpoints: the terms of block b, between
    # the boundaries q_b = b EQ29_BLOCK and q_b+1 clipped into the box's range, are bounded
    # by :func:`eq29_block_bounds`; the terms at the boundaries themselves are attained values
    size = EQ29_BLOCK
    starts = jnp.arange(-(-n1 // size) + 1) * size
    q = jnp.clip(starts[None, :], box_first[:, None], jnp.maximum(box_last, box_first)[:, None])
    ends = [at(t)(q) for t in (cx, nx, cy, ny)]
    z, e = probit_and_error(jnp.concatenate([ends[0], ends[2]], -1), jnp.concatenate([ends[1], ends[3]], -1),
                            table_error)
    (zx, zy), (ex, ey) = split_last(z, q.shape[-1], q.shape[-1]), split_last(e, q.shape[-1], q.shape[-1])
    filled = (starts[None, :-1] <= box_last[:, None]) & (starts[None, 1:] > box_first[:, None])
    upper = eq29_block_bounds(pmf_x, pmf_y, ratio, ends, zx, ex, zy, ey, box_first, box_last)
    upper = jnp.where(filled, upper, -jnp.inf)
    at_q = zx + zy + ex + ey
    lower = jnp.where(box_last >= box_first, jnp.max(jnp.where(jnp.isnan(at_q), -jnp.inf, at_q), -1), -jnp.inf)
    arrays = (cx, cy) if plain else (cx, cy, nx, ny)
    terms_max, best = bounded_max(box_terms, arrays, upper, lower, size, EQ29_CHUNK)
    if plain:
        best = jnp.minimum(best, n1 - 1)[:, None]
        best_error = term(at(cx)(best), at(nx)(best), at(cy)(best), at(ny)(best), jnp.ones(best.shape, bool),
                          table_error)[1][:, 0]
    else:
        best_error = jnp.zeros(cx.shape[:1])
    # the sides: alpha = tail and 1 - tail (whose complement 1 - (1 - tail) is exact), and
    # beta = the same; f and f^-1 interpolated there (complements from the complement tables)
    a, na = jnp.concatenate([sides_a, a_at], -1), jnp.concatenate([sides_na, na_at], -1)
    b, nb = jnp.concatenate([b_at, sides_a], -1), jnp.concatenate([nb_at, sides_na], -1)
    # a side point with a coordinate below tail (f passes under the box's corner (tail, tail)
    # and never enters the box) moves up to tail: the attack there is achievable (it lies above
    # f) and inside the box, and gives the largest term any point of the box can, 2 Phi^-1(1 - tail)
    a, na = jnp.where(a < tail_col, tail_col, a), jnp.where(a < tail_col, 1.0 - tail_col, na)
    b, nb = jnp.where(b < tail_col, tail_col, b), jnp.where(b < tail_col, 1.0 - tail_col, nb)
    edge, edge_error = term(a, na, b, nb, in_box(a, na, b, nb), table_error)
    top = jnp.maximum(terms_max, jnp.max(edge, -1))
    error = jnp.minimum(jnp.where(terms_max >= top, best_error, jnp.inf),
                        jnp.min(jnp.where(edge >= top[:, None], edge_error, jnp.inf), -1))
    return top, error


def steep(px, py):
    """Segments with slope -s, s = Pr[Y = x] / Pr[X = x] >= 1: (mask, w = 1 / s, log s)."""
    ok = (px > 0) & (py >= px)
    w = jnp.where(ok, px / jnp.where(ok, py, 1.0), 1.0)
    return ok, w, -jnp.log(w)


def tangent(log_s, m):
    """f_mu's point (alpha*, beta*) with slope -s: z* = log(s) / mu + mu / 2."""
    z = log_s / m + m / 2.0
    return ndtr(-z), ndtr(z - m)


def kappa_line(px, py, x0, y0, m):
    """kappa of each steep segment's line through (x0, y0) (two ndtr each), -inf elsewhere."""
    ok, w, log_s = steep(px, py)
    a_star, b_star = tangent(log_s, m)
    return jnp.where(ok, (w * (y0 - b_star) + (x0 - a_star)) / (w + 1.0), -jnp.inf)


def kappa_block_bounds(pmf_x, pmf_y, ratio, cx, cy, m):
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
    ok = (pmf_x > 0) & (pmf_y >= pmf_x)  # the steep segments of steep
    u = 1.0 / (1.0 + ratio)  # 1 / (1 + s); 0 where s overflows
    u_lo = per_block(jnp.where(ok, u, 1.0), size, 1.0, jnp.min)
    u_hi = per_block(jnp.where(ok, u, 0.0), size, 0.0, jnp.max)

    def h_mu(uu):  # alpha* (1 - u) + beta* u at slope s = (1 - u) / u
        uu = jnp.clip(uu, 0.0, 0.5)
        a_star, b_star = tangent(jnp.log1p(-uu) - jnp.log(uu), m)
        return a_star + (b_star - a_star) * uu

    h_lo, h_hi = split_last(h_mu(jnp.concatenate([u_lo, u_hi], -1)), u_lo.shape[-1], u_lo.shape[-1])
    du = u_hi - u_lo
    rise = jnp.where(du > 0, (h_hi - h_lo) / jnp.where(du > 0, du, 1.0), 0.0)
    ub, cxb, cyb, okb = (as_blocks(a, size) for a in (u, cx[:, :n], cy[:, :n], ok))
    chord = h_lo[..., None] + (ub - u_lo[..., None]) * rise[..., None]
    return jnp.max(jnp.where(okb, cxb + (cyb - cxb) * ub - chord, -jnp.inf), -1)
