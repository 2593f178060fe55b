"""Cumulative sums over a support, precise to a few ulps, and the search for the first point
where a monotone predicate holds: the tables every risk kernel reads (Pr[X > x], Pr[Y <= x]
and their complements, each summed from its own small end) and the searches in them.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

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
    # the carries shifted by one block with a concatenated zero: a pad there made XLA:CPU's
    # fused output loop 2-3x slower for forward sums (327,680 points: 1.6 -> 0.46 ms), the same bits
    zero = jnp.zeros(a.shape[:-1] + (1,), a.dtype)
    if reverse:
        carry = jnp.concatenate([prefix_sum(inner[..., 0], True)[..., 1:], zero], -1)  # blocks after b
    else:
        carry = jnp.concatenate([zero, prefix_sum(inner[..., -1])[..., :-1]], -1)  # blocks before b
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


def first_max_index(values):
    """Index of the first largest entry along the last axis (an entry of NaN counts as the
    largest, as in ``jnp.argmax``), by two plain reductions: the max, then the smallest index
    holding it. XLA:CPU runs ``argmax``'s (value, index) reduction as one scalar loop, about
    three times slower on 655,360 points than these two vectorised passes; same answer."""
    top = jnp.max(values, -1, keepdims=True)
    hit = (values == top) | jnp.isnan(values)
    n = values.shape[-1]
    return jnp.min(jnp.where(hit, jnp.arange(n), n), -1)


#: :func:`first_true` searches in SEARCH_LEVELS steps of ~n^(1/3) keys (69 at 3e5 points)
#: for up to LEVEL_SEARCH_QUERIES queries, and by bisection beyond.
SEARCH_LEVELS = 3
LEVEL_SEARCH_QUERIES = 256


def first_true(pred, n, shape):
    """Smallest k in [0, n] with ``pred(k)`` (n where none), for a predicate that is False
    then True along k = 0..n-1; elementwise over ``shape``.

    ``pred`` maps an index array shaped ``shape + (m,)`` to booleans of that shape (values
    it compares against broadcast with ``[..., None]``). Only the keys visited are read (no
    table of keys is built). For few queries (a few alphas, the mu kernel's box ends and
    sides) it is :func:`level_search`, SEARCH_LEVELS steps of ~S = n^(1/levels) keys; for
    many (a fine grid of alphas) it bisects, ~log2(n) keys per query instead of ~3 S.
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
    return level_search(pred, n, shape)


def level_search(pred, n, shape):
    """Smallest k in [0, n] with ``pred(k)`` (n where none), as :func:`first_true`, by a
    level search whatever the number of queries: SEARCH_LEVELS steps of one loop, each
    evaluating the last keys of S ~ n^(1/levels) sub-ranges at once and counting the False
    ones, which narrows the range S-fold (keys past n count as True). The loop holds one copy
    of ``pred`` where unrolled steps would hold one per level (fewer XLA fusions to compile),
    and never switches method with the number of queries, so a row's answer does not depend
    on the batch around it."""
    levels = SEARCH_LEVELS
    s = max(2, math.ceil(n ** (1.0 / levels) - 1e-9))
    while s**levels < n:
        s += 1
    widths = jnp.asarray([s**level for level in range(levels - 1, -1, -1)], jnp.int64)

    def step(i, lo):
        width = widths[i]  # sub-range length at this step; 1 at the last
        last = lo[..., None] + (jnp.arange(s) * width + width - 1)  # each sub-range's last key
        false = (last < n) & ~pred(jnp.minimum(last, n - 1))
        return lo + width * jnp.sum(false, -1)

    return jax.lax.fori_loop(0, levels, step, jnp.zeros(shape, jnp.int64))


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
