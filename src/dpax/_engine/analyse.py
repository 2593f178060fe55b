"""Risk from a discrete dominating pair: trade-off curve, advantage, privacy profile.

Kernels take the PLRV arrays of a batch as one :class:`~dpax._engine.pair.Pair` of rows
``(rows, n)``: ``pmf_x[r, i]`` and ``pmf_y[r, i]`` are Pr[X = x_i] and Pr[Y = x_i] at the loss
``x_i = (offset[r] + i) * grid_step``, with the atoms Pr[X = -inf] and Pr[Y = +inf] beside them.

Breakpoints (Theorem 3.4 and Appendix E.2 of Kulynych, Gomez, Kaissis, du Pin Calmon and
Troncoso, "Attack-aware noise calibration for differential privacy", NeurIPS 2024; "Kulynych et
al. 2024" below): for threshold index i = -1..n-1 (i = -1 being x = -inf) the curve passes
through (Pr[X > x_i], Pr[Y <= x_i]) and is linear in between (Algorithm 1's gamma). Add/remove
neighbouring makes the pair asymmetric; every reported number is for the symmetrised curve, the
convex hull of min(f, f^-1) (Dong, Roth & Su, Def. F.1), where f^-1 is the curve of the
reversed pair (-Y, -X).
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import batching as _batching
from . import cache as _cache
from . import grid as _grid
from .pair import Pair

#: Block length of :func:`prefix_sum`: the sums run in levels of this many points (floats;
#: integer counts in levels of PREFIX_BLOCK_INT).
PREFIX_BLOCK = 16
PREFIX_BLOCK_INT = 8


def _chain(a, reverse):
    """Running sums along a short last axis as an explicit chain of adds (XLA fuses the
    chain into the pass that writes it out)."""
    order = range(a.shape[-1] - 1, -1, -1) if reverse else range(a.shape[-1])
    sums, total = {}, None
    for j in order:
        total = a[..., j] if total is None else total + a[..., j]
        sums[j] = total
    return jnp.stack([sums[j] for j in range(a.shape[-1])], -1)


def _within_blocks(a, reverse):
    """Running sums along a short last axis: for floats one matrix product with the 0/1
    triangle (each output a sum of its block's terms times 1, the others times 0: at most
    block - 1 roundings, in whatever order the product adds them); integers by :func:`_chain`."""
    if not jnp.issubdtype(a.dtype, jnp.floating):
        return jax.lax.optimization_barrier(_chain(a, reverse))
    i = jnp.arange(a.shape[-1])
    triangle = ((i[:, None] >= i[None, :]) if reverse else (i[:, None] <= i[None, :])).astype(a.dtype)
    return jnp.matmul(a, triangle, precision=jax.lax.Precision.HIGHEST)


def prefix_sum(a, reverse=False):
    """Inclusive running sums along the last axis (``reverse``: from the far end, i.e.
    sum(a[..., k:]) at k), in levels: within blocks of ``PREFIX_BLOCK`` points, then the
    same over the blocks' totals, recursively. Each sum of non-negative terms passes through
    at most PREFIX_BLOCK additions per level (5 levels up to 16^5 ~ 1e6 points), so it keeps
    its relative precision however small it is. The blocks are summed by a matrix product
    with a triangle of ones: on CPU three times faster than ``jnp.cumsum`` (a reduce-window
    tree) and twice as fast as chains of adds; no flips for reverse sums."""
    n = a.shape[-1]
    block = PREFIX_BLOCK if jnp.issubdtype(a.dtype, jnp.floating) else PREFIX_BLOCK_INT
    if n <= block:
        return _within_blocks(a, reverse)
    m = -(-n // block)
    extra = m * block - n
    lead = [(0, 0)] * (a.ndim - 1)
    # reverse sums: padding in front, so that the last block ends at the last point
    blocks = jnp.pad(a, lead + [(extra, 0) if reverse else (0, extra)]).reshape(a.shape[:-1] + (m, block))
    # materialised (a product; an optimisation barrier on chains): fused into its consumers,
    # each level's chain would be recomputed for every element of the next
    inner = _within_blocks(blocks, reverse)
    if reverse:
        carry = jnp.pad(prefix_sum(inner[..., 0], True)[..., 1:], lead + [(0, 1)])  # blocks after b
    else:
        carry = jnp.pad(prefix_sum(inner[..., -1])[..., :-1], lead + [(1, 0)])  # blocks before b
    out = (inner + carry[..., None]).reshape(a.shape[:-1] + (m * block,))
    return out[..., extra:] if reverse else out[..., :n]


def head_sums(a):
    """[sum(a[..., :k]) for k = 0..n], shaped (..., n + 1). The leading zero is padded onto
    the sums, where XLA fuses it into the pass that writes them (n is a multiple of
    PREFIX_BLOCK for every padded support, so the sums need no padding of their own)."""
    return jnp.pad(prefix_sum(a), [(0, 0)] * (a.ndim - 1) + [(1, 0)])


def tail_sums(a):
    """[sum(a[..., k:]) for k = 0..n], shaped (..., n + 1), summed from the far end."""
    return jnp.pad(prefix_sum(a, reverse=True), [(0, 0)] * (a.ndim - 1) + [(0, 1)])


class Breakpoints(NamedTuple):
    """Tables over k = 0..n (threshold index i = k - 1, i = -1 being x = -inf) of one
    direction of a pair, each shaped ``(rows, n + 1)``; ``offset`` (rows,) places x_0."""

    ccdf_x: Any  #: Pr[X > x_i]
    cdf_y: Any  #: Pr[Y <= x_i]
    ccdf_y: Any  #: Pr[Y > x_i], the +inf atom included
    offset: Any


class Curves(NamedTuple):
    """Breakpoint tables of both directions: f = T(P, Q) and f^-1 = T(Q, P)."""

    forward: Breakpoints
    reverse: Breakpoints


def breakpoints(pair: Pair) -> Breakpoints:
    """Breakpoint tables of f for one direction of ``pair`` (Theorem 3.4).

    Tails are summed from the small end so that Pr[X > x] keeps its relative precision at
    tiny alpha.
    """
    ccdf_x = tail_sums(pair.pmf_x)
    cdf_y = head_sums(pair.pmf_y)
    ccdf_y = tail_sums(pair.pmf_y) + pair.inf_y[:, None]
    return Breakpoints(ccdf_x, cdf_y, ccdf_y, pair.offset)


#: :func:`first_true` searches in SEARCH_LEVELS steps of ~n^(1/3) keys (69 at 3e5 points)
#: for up to LEVEL_SEARCH_QUERIES queries, and by bisection beyond.
SEARCH_LEVELS = 3
LEVEL_SEARCH_QUERIES = 256


def first_true(pred, n, shape):
    """Smallest k in [0, n] with ``pred(k)`` (n where none), for a predicate that is False
    then True along k = 0..n-1; elementwise over ``shape``.

    ``pred`` maps an index array shaped ``shape + (m,)`` to booleans of that shape (values
    it compares against broadcast with ``[..., None]``). Only the keys visited are read (no
    table of keys is built). For few queries (the mu kernel's box ends and sides) the search
    runs in SEARCH_LEVELS steps without a loop: at each, the last keys of S ~ n^(1/levels)
    sub-ranges are evaluated at once and the False ones counted, narrowing the range S-fold.
    For many (a fine grid of alphas) it bisects, ~log2(n) keys per query instead of ~3 S.
    """
    queries = math.prod(shape)
    if queries > LEVEL_SEARCH_QUERIES:
        def step(_, bounds):
            lo, hi = bounds
            mid = (lo + hi) // 2
            t = (mid >= n) | pred(jnp.minimum(mid, n - 1)[..., None])[..., 0]  # n: the 'none' answer
            return jnp.where(t, lo, mid + 1), jnp.where(t, mid, hi)

        bounds = (jnp.zeros(shape, jnp.int64), jnp.full(shape, n, jnp.int64))
        return jax.lax.fori_loop(0, max(1, math.ceil(math.log2(n + 1))), step, bounds)[0]
    s = max(2, math.ceil(n ** (1.0 / SEARCH_LEVELS) - 1e-9))
    while s ** SEARCH_LEVELS < n:
        s += 1
    lo = jnp.zeros(shape, jnp.int64)
    span = n
    for level in range(SEARCH_LEVELS - 1, -1, -1):
        width = s**level  # sub-range length at this step; 1 at the last
        keys = -(-span // width)
        last = lo[..., None] + (jnp.arange(keys) * width + width - 1)  # each sub-range's last key
        false = (last < n) & ~pred(jnp.minimum(last, n - 1))
        lo = lo + width * jnp.sum(false, -1)
        span = width
    return lo


def query_width(rows: int, m: int) -> int:
    """Queries per row (alphas, deltas, epsilons) a kernel is compiled for: m rounded up to a
    power of two, so that one executable serves every count up to twice smaller. Kept on m's
    side of LEVEL_SEARCH_QUERIES, where :func:`first_true` changes method, so that padding
    never changes how a table is searched.

    >>> [query_width(1, m) for m in (1, 3, 5, 200, 300)], query_width(10, 20)
    ([1, 4, 8, 256, 512], 25)
    """
    width = 1 << max(0, m - 1).bit_length()
    if rows * m <= LEVEL_SEARCH_QUERIES < rows * width:
        width = max(m, LEVEL_SEARCH_QUERIES // rows)
    return width


#: Working memory of the kernels that compare every query with every breakpoint, in bytes
#: per row, (padded) query and grid point: the (rows, m, n) intermediates of
#: :func:`epsilon_kernel` and :func:`delta_kernel` (measured: 16 and 8); the breakpoint
#: tables of every kernel take ``grid.BYTES_PER_POINT`` per row and point.
QUERY_BYTES = {"epsilon_kernel": 24, "delta_kernel": 16}
#: Working memory per row and (padded) query whatever the support: the kernel's own
#: per-query arrays, its input and output (measured on CPU: beta 64 bytes, delta 18), and
#: the host's copies of a call's queries, padded queries and answers (24).
PER_QUERY_BYTES = {"beta_kernel": 88, "delta_kernel": 48, "epsilon_kernel": 48}
#: The argument each query kernel answers at (named in memory errors).
QUERY_ARGUMENT = {"beta_kernel": "alpha", "delta_kernel": "epsilon", "epsilon_kernel": "delta"}
#: Query kernels that search the breakpoint tables (:func:`first_true`): split for the
#: memory budget, each call of theirs is padded to as many queries as keep the search
#: method of a single call.
SEARCHING_KERNELS = ("beta_kernel",)


def _padded_queries(kernel, pair: Pair, queries: np.ndarray, width: int | None = None):
    rows, m = queries.shape
    width = query_width(rows, m) if width is None else width
    if m == 0 or width == m:
        return kernel(pair, queries)
    padded = np.concatenate([queries, np.repeat(queries[:, -1:], width - m, axis=1)], axis=1)
    return np.asarray(kernel(pair, padded))[:, :m]


def _traced(pair: Pair) -> bool:
    return any(isinstance(a, jax.core.Tracer) for a in pair)


class QueryPlan(NamedTuple):
    """How :func:`per_query` splits a batch of queries: ``rows`` rows and ``block`` queries
    per call, each call's queries padded to ``width``."""

    rows: int
    block: int
    width: int


def query_plan(kernel, pair: Pair, rows: int, m: int, argument: str | None = None, held: float = 0) -> QueryPlan | None:
    """The split of ``m`` queries on each of ``rows`` rows of ``pair`` that keeps the
    answers (kept whole), ``held`` bytes the caller holds meanwhile (its copies of the
    queries, answers computed before) and one call's working memory within the budget;
    None when a single call fits. Raises :class:`~dpax._engine.grid.MemoryBudgetError`,
    naming ``argument`` and its size, when not even one query on one row fits beside the
    answers."""
    name = getattr(kernel, "__name__", "analysis")
    argument = argument or QUERY_ARGUMENT.get(name, "query")
    n = pair.support_length
    per_point = QUERY_BYTES.get(name, 0) * n + PER_QUERY_BYTES.get(name, max(PER_QUERY_BYTES.values()))
    cost = lambda r, w: r * n * _grid.BYTES_PER_POINT + r * w * per_point
    fixed = rows * m * 8 + held
    limit = _grid.MEMORY_LIMIT_BYTES
    if fixed + cost(rows, query_width(rows, m)) <= limit:
        return None
    bisect = name in SEARCHING_KERNELS and rows * m > LEVEL_SEARCH_QUERIES  # as a single call searches
    row_width = lambda block: max(query_width(1, block), LEVEL_SEARCH_QUERIES + 1 if bisect else 0)
    block = m  # queries per call: all, or the most (a power of two) with which one row fits
    while block > 1 and fixed + cost(1, row_width(block)) > limit:
        block = 1 << ((block - 1).bit_length() - 1)
    detail = (f"{argument} of {m:,} value(s) on {rows} row(s) of {n} grid points (the answers alone "
              f"{_grid._gib(rows * m * 8)})")
    chunk = _grid.rows_per_chunk(rows, cost(1, row_width(block)), fixed, name.replace("_kernel", ""), detail,
                                 hint=f"fewer {argument} values per call, a coarser grid_step or a smaller batch")
    chunk = _batching.chunk_size(chunk)
    width = query_width(chunk, block)
    if bisect and chunk * width <= LEVEL_SEARCH_QUERIES:
        width = LEVEL_SEARCH_QUERIES // chunk + 1
    return QueryPlan(chunk, block, width)


def per_query(kernel, pair: Pair, queries, argument: str | None = None, held: float = 0):
    """``kernel(pair, queries)`` for queries (rows, m), evaluated with the query axis padded
    to :func:`query_width` by repeating the last query, and sliced back: every query is
    answered on its own, so the padding changes no answer, only how many shapes compile.

    Rows and queries are independent, so a batch whose working memory (the answers,
    ``held`` bytes the caller keeps meanwhile, :data:`QUERY_BYTES` and
    :data:`PER_QUERY_BYTES` per call) exceeds the budget is evaluated in chunks of rows
    and blocks of queries that fit (:func:`query_plan`), checked before any kernel runs; the
    answers are those of one call."""
    queries = np.asarray(queries)
    rows, m = queries.shape
    if m == 0 or _traced(pair):
        return _padded_queries(kernel, pair, queries)
    plan = query_plan(kernel, pair, rows, m, argument, held)
    if plan is None:
        return _padded_queries(kernel, pair, queries)
    out = np.empty((rows, m))
    for index, real in _batching.row_chunks(rows, plan.rows):
        part = Pair(*(np.asarray(a)[index] for a in pair)) if plan.rows < rows else pair
        for start in range(0, m, plan.block):
            cols = slice(start, min(m, start + plan.block))
            block = queries[index, cols]  # every call (plan.rows, plan.width): one kernel shape
            answers = _padded_queries(kernel, part, block, max(plan.width, block.shape[1]))
            out[index[:real], cols] = np.asarray(answers)[:real]
    return out


def tradeoff_tables(pair: Pair, held: float = 0):
    """:func:`tradeoff_points_kernel` (two tables (rows, n + 1), NumPy when split) with the
    rows in chunks whose breakpoint tables fit the memory budget beside both outputs and
    ``held`` bytes the caller keeps meanwhile (checked before any kernel runs)."""
    rows, n = pair.pmf_x.shape
    fixed = 2 * rows * (n + 1) * 8 + held
    per_row = n * _grid.BYTES_PER_POINT
    if _traced(pair) or fixed + rows * per_row <= _grid.MEMORY_LIMIT_BYTES:
        return tradeoff_points_kernel(pair)
    chunk = _grid.rows_per_chunk(rows, per_row, fixed, "tradeoff_points",
                                 f"{rows} row(s) of {n + 1} breakpoints ({_grid._gib(fixed)} of arrays)")
    cx, cy = np.empty((rows, n + 1)), np.empty((rows, n + 1))
    for index, real in _batching.row_chunks(rows, _batching.chunk_size(chunk)):
        a, b = tradeoff_points_kernel(Pair(*(np.asarray(t)[index] for t in pair)))
        cx[index[:real]], cy[index[:real]] = np.asarray(a)[:real], np.asarray(b)[:real]
    return cx, cy


def by_rows(kernel, pair: Pair, what: str):
    """``kernel(pair)`` (one answer per row), the rows in chunks whose breakpoint tables fit
    the memory budget (checked before any kernel runs)."""
    rows, n = pair.pmf_x.shape
    if _traced(pair) or rows * n * _grid.BYTES_PER_POINT <= _grid.MEMORY_LIMIT_BYTES:
        return kernel(pair)
    chunk = _grid.rows_per_chunk(rows, n * _grid.BYTES_PER_POINT, 0, what, f"{rows} row(s) of {n} grid points")
    out = None
    for index, real in _batching.row_chunks(rows, _batching.chunk_size(chunk)):
        part = np.asarray(kernel(Pair(*(np.asarray(a)[index] for a in pair))))
        if out is None:  # one answer per row, or a row of answers per row
            out = np.empty((rows,) + part.shape[1:])
        out[index[:real]] = part[:real]
    return out


def interpolate_curve(ccdf_x, cdf_y, alpha, at_start=0.0):
    """Algorithm 1 for one direction: beta at each alpha (rows, m), by breakpoint interpolation
    (``at_start`` where alpha reaches the first breakpoint's; given Pr[Y > x] as ``cdf_y``
    and ``at_start=1``, the same interpolation gives 1 - beta)."""
    n1 = ccdf_x.shape[-1]

    def one(cx, cy, a):
        k = first_true(lambda j: cx[j] <= a[..., None], n1, a.shape)  # ccdf_x is non-increasing
        kk = jnp.clip(k, 1, n1 - 1)
        a_right, a_left = cx[kk], cx[kk - 1]
        b_right, b_left = cy[kk], cy[kk - 1]
        width = a_left - a_right
        gamma = jnp.where(width > 0, (a - a_right) / jnp.where(width > 0, width, 1.0), 0.0)
        gamma = jnp.clip(gamma, 0.0, 1.0)
        beta = b_right - gamma * (b_right - b_left)
        return jnp.where(k <= 0, at_start, beta)

    return jax.vmap(one)(ccdf_x, cdf_y, alpha)


def zero_index(offset, n):
    """Index k of the threshold x = 0 in the breakpoint tables (clipped to the support)."""
    return jnp.clip(1 - offset, 0, n)


def both_directions(pair: Pair) -> Curves:
    """Breakpoint tables of f and of f^-1 (the reversed pair, :meth:`Pair.reversed`).

    The reversed pair's Pr[X' > x'] is Pr[Y < x] and its Pr[Y' <= x'] is Pr[X >= x], the
    forward tables read backwards (the same sums, bit for bit), so only its Pr[Y' > x'],
    which the delta and epsilon kernels use, is summed anew."""
    f = breakpoints(pair)
    rev = pair.reversed()
    rccy = tail_sums(rev.pmf_y) + rev.inf_y[:, None]
    return Curves(f, Breakpoints(jnp.flip(f.cdf_y, -1), jnp.flip(f.ccdf_x, -1), rccy, rev.offset))


def _beta_from_tables(tables: Curves, n, alpha):
    f, r = tables
    beta_f = interpolate_curve(f.ccdf_x, f.cdf_y, alpha)
    beta_f_inv = interpolate_curve(r.ccdf_x, r.cdf_y, alpha)
    k0 = zero_index(f.offset, n)
    rows = jnp.arange(f.ccdf_x.shape[0])
    a_bar = f.ccdf_x[rows, k0][:, None]
    b_bar = f.cdf_y[rows, k0][:, None]
    lo, hi = jnp.minimum(a_bar, b_bar), jnp.maximum(a_bar, b_bar)
    line = a_bar + b_bar - alpha
    beta = jnp.where((alpha > lo) & (alpha < hi), line, jnp.minimum(beta_f, beta_f_inv))
    return jnp.clip(beta, 0.0, 1.0)


@functools.partial(_cache.kernel, name="beta_kernel")
@jax.jit
def beta_kernel(pair: Pair, alpha):
    """Symmetrised trade-off curve at ``alpha`` (rows, m): Algorithm 1 + Def. F.1 of Dong et al.

    With alpha_bar = Pr[X > 0] and beta_bar = Pr[Y <= 0] (the ends of the slope -1 piece of
    f), the symmetrised curve is the line alpha_bar + beta_bar - alpha between the two, and
    min(f, f^-1) outside.
    """
    return _beta_from_tables(both_directions(pair), pair.support_length, alpha)


#: :func:`mass_deficit` splits each mass at this granularity: the coarse parts are whole
#: multiples of 2^-40, so their sums below 2^13 are exact in float64 in any order.
_SPLIT = 2.0**40


def _split(a):
    """``a`` as a multiple of 2^-40 and the rest, both exact (for |a| below 2^12)."""
    coarse = jnp.round(a * _SPLIT) / _SPLIT
    return coarse, a - coarse


def mass_deficit(pmf, atom):
    """1 - (sum(pmf) + atom) per row (rows,), up to ~1e-22 (not the ~1e-16 of a float64 sum
    near 1): each mass is split into a multiple of 2^-40 and the rest (both exact), the
    coarse parts summed exactly, the rests (each below 2^-41) to their relative precision.
    For masses below 2^12 and totals below 2^13 (a probability law's)."""
    hi, lo = _split(pmf)
    hi_atom, lo_atom = _split(atom)
    return (1.0 - (jnp.sum(hi, -1) + hi_atom)) - (jnp.sum(lo, -1) + lo_atom)


def precise_sum(terms):
    """sum(terms) along the last axis (rows,), up to ~1e-22 plus the terms' own relative
    precision (not the ~n ulps of a float64 sum of n terms near 1): the coarse parts of
    :func:`_split` summed exactly, the rests to their relative precision. For terms below
    2^12 in size and sums of their sizes below 2^13."""
    hi, lo = _split(terms)
    return jnp.sum(hi, -1) + jnp.sum(lo, -1)


def _advantage_of_pair(pair: Pair):
    """1 - Pr[X > 0] - Pr[Y <= 0] of both directions, the larger, in [0, 1]: (rows, 2), the
    value for a dominating pair (column 0) and for an optimistic companion (column 1).

    Not formed as 1 minus sums near 1 (an absolute error of ~1e-16, the whole answer at a
    sample rate of 1e-12): with T the total stored Y-mass, 1 - Pr[X > 0] - Pr[Y <= 0] =
    (1 - T) + Pr[Y = +inf] + sum over x > 0 of (Pr[Y = x] - Pr[X = x]), the deficit 1 - T
    summed exactly (:func:`mass_deficit`) and each per-point difference exact where the two
    masses are within a factor 2 (Sterbenz), so the answer keeps its relative precision.
    The reverse direction likewise: (1 - T_X) + Pr[X = -inf] + sum over x < 0 of
    (Pr[X = x] - Pr[Y = x]). A law's total differs from 1 only by the rounding of its
    masses (the mass near 1 at the loss 0 carries ~1e-16): a dominating pair counts a
    deficit (mass that could lie at Y > 0) and not an excess, its companion the other way
    round, so each side stays on its own side of the pair it stands for."""
    pmf_x, pmf_y, offset, inf_y, neginf_x = pair
    n = pmf_x.shape[-1]
    x = offset[:, None] + jnp.arange(n)[None, :]  # grid index of every point: loss = x * step
    # summed exactly up to ~1e-22 (precise_sum): near an advantage of 1, a plain float64 sum of
    # 1e4..1e7 terms errs by 1e-14..1e-13, on either side
    forward = inf_y + precise_sum(jnp.where(x > 0, pmf_y - pmf_x, 0.0))
    reverse = neginf_x + precise_sum(jnp.where(x < 0, pmf_x - pmf_y, 0.0))
    d_y, d_x = mass_deficit(pmf_y, inf_y), mass_deficit(pmf_x, neginf_x)
    safe = jnp.maximum(forward + jnp.maximum(d_y, 0.0), reverse + jnp.maximum(d_x, 0.0))
    optimistic = jnp.maximum(forward + jnp.minimum(d_y, 0.0), reverse + jnp.minimum(d_x, 0.0))
    return jnp.clip(jnp.stack([safe, optimistic], -1), 0.0, 1.0)


@functools.partial(_cache.kernel, name="advantage_kernel")
@jax.jit
def _advantage_kernel(pair: Pair):
    return _advantage_of_pair(pair)


def advantage_kernel(pair: Pair, optimistic: bool = False):
    """Maximal TPR - FPR (Algorithm 3 / Eq. 11): 1 - Pr[X > 0] - Pr[Y <= 0], worst direction
    (rows,), to its relative precision, for a dominating pair or (``optimistic``) a
    companion (:func:`_advantage_of_pair`); the rows in chunks that fit the memory budget
    (:func:`by_rows`)."""
    return np.asarray(by_rows(_advantage_kernel, pair, "advantage"))[:, 1 if optimistic else 0]


#: Smallest normal float64. A companion's P-masses of losses beyond ~700 nats (e^-x times
#: the Q-masses) fall below it: they underflow to 0 or to subnormal numbers, each off by
#: less than this, so a tail sum of n masses Pr[X > x] is at most its computed value plus n
#: times this. A companion's delta and epsilon (``optimistic=True``) read that upper bound
#: in place of Pr[X > x] (and likewise the reversed pair's): every threshold event's value
#: Pr[Y > x] - e^eps Pr[X > x] and log-ratio is then on or below the true one, and the
#: answer finite and on or below the truth. The safe side reads the computed sums (an
#: under-estimated Pr[X > x] only raises its numbers; epsilon is +inf where it is 0).
UNDERFLOW = float(np.finfo(np.float64).tiny)


@functools.partial(_cache.kernel, name="delta_kernel")
@functools.partial(jax.jit, static_argnames=("optimistic",))
def delta_kernel(pair: Pair, epsilon, *, optimistic=False):
    """delta(epsilon) (rows, m) of the symmetrised curve: the larger of the two directions'
    max_i Pr[Y > x_i] - e^eps Pr[X > x_i] (Gopi et al.; Kulynych et al. 2024, Eq. 33), which is
    the convex conjugate of the piecewise-linear curve, so it matches ``beta`` exactly.
    ``optimistic`` (a companion): Pr[X > x_i] read as an upper bound despite underflow
    (:data:`UNDERFLOW`)."""
    scale = jnp.exp(epsilon)[:, :, None]
    slack = pair.support_length * UNDERFLOW if optimistic else 0.0

    def one(t: Breakpoints):
        return jnp.max(t.ccdf_y[:, None, :] - scale * (t.ccdf_x[:, None, :] + slack), -1)

    f, r = both_directions(pair)
    return jnp.clip(jnp.maximum(one(f), one(r)), 0.0, 1.0)


def _epsilon_one_direction(cx, ccy, delta, slack=0.0):
    num = ccy[:, None, :] - delta[:, :, None]
    active = num > 0
    cx = cx[:, None, :] + slack
    infinite = jnp.any(active & (cx <= 0), -1)
    ratio = jnp.where(active & (cx > 0), num / jnp.where(cx > 0, cx, 1.0), 0.0)
    eps = jnp.log(jnp.max(jnp.where(active, ratio, 0.0), -1))
    return jnp.where(infinite, jnp.inf, eps)


def _epsilon_from_tables(tables: Curves, delta, slack=0.0):
    f, r = tables
    eps = jnp.maximum(_epsilon_one_direction(f.ccdf_x, f.ccdf_y, delta, slack),
                      _epsilon_one_direction(r.ccdf_x, r.ccdf_y, delta, slack))
    return jnp.maximum(eps, 0.0)


@functools.partial(_cache.kernel, name="epsilon_kernel")
@functools.partial(jax.jit, static_argnames=("optimistic",))
def epsilon_kernel(pair: Pair, delta, *, optimistic=False):
    """Smallest epsilon >= 0 with delta(epsilon) <= delta (rows, m): the largest over
    breakpoints i of log((Pr[Y > x_i] - delta) / Pr[X > x_i]), both directions; +inf when
    Y-mass above delta lies where X has none (the +inf atom, or P-masses of losses beyond
    ~700 nats, which underflow float64). ``optimistic`` (a companion): Pr[X > x_i] read as
    an upper bound despite underflow (:data:`UNDERFLOW`), so the answer is finite and on or
    below the truth."""
    slack = pair.support_length * UNDERFLOW if optimistic else 0.0
    return _epsilon_from_tables(both_directions(pair), delta, slack)


def for_companion(kernel):
    """``kernel`` (:func:`delta_kernel` or :func:`epsilon_kernel`) as a companion reads it
    (``optimistic=True``), under the same name (the memory tables of :func:`query_plan`);
    any other kernel unchanged."""
    if getattr(kernel, "__name__", None) not in ("delta_kernel", "epsilon_kernel"):
        return kernel

    @functools.wraps(kernel)
    def call(pair, queries):
        return kernel(pair, queries, optimistic=True)

    return call


class RiskSummary(NamedTuple):
    """Result of :func:`risk_summary_kernel`."""

    advantage: Any  #: (rows,)
    epsilon: Any  #: at each delta, (rows, m)
    beta: Any  #: at each alpha, (rows, k)


@functools.partial(_cache.kernel, name="risk_summary_kernel")
@jax.jit
def risk_summary_kernel(pair: Pair, alpha, delta) -> RiskSummary:
    """:func:`advantage_kernel`, :func:`epsilon_kernel` and :func:`beta_kernel` from one set
    of breakpoint tables (four prefix sums instead of eight)."""
    tables = both_directions(pair)
    n = pair.support_length
    return RiskSummary(_advantage_of_pair(pair)[:, 0], _epsilon_from_tables(tables, delta),
                       _beta_from_tables(tables, n, alpha))


@functools.partial(_cache.kernel, name="tradeoff_points_kernel")
@jax.jit
def tradeoff_points_kernel(pair: Pair):
    """Breakpoints (alpha_i, beta_i) of f for one direction, alpha descending."""
    t = breakpoints(pair)
    return t.ccdf_x, t.cdf_y
