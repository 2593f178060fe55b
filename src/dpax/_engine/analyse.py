"""Risk from a discrete dominating pair: trade-off curve, advantage, privacy profile.

Kernels take the PLRV arrays of a batch, shaped ``(rows, n)``: ``pmf_x[r, i]`` and
``pmf_y[r, i]`` are Pr[X = x_i] and Pr[Y = x_i] at the loss ``x_i = (offset[r] + i) * grid_step``,
with the atoms Pr[X = -inf] and Pr[Y = +inf] beside them.

Breakpoints (seed paper, Theorem 3.4 and Appendix E.2): for threshold index i = -1..n-1
(i = -1 being x = -inf) the curve passes through (Pr[X > x_i], Pr[Y <= x_i]) and is linear
in between (Algorithm 1's gamma). Add/remove neighbouring makes the pair asymmetric; every
reported number is for the symmetrised curve, the convex hull of min(f, f^-1) (Dong, Roth
& Su, Def. F.1), where f^-1 is the curve of the reversed pair (-Y, -X).
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp

from . import cache as _cache


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


def _head_sums(a):
    """[sum(a[..., :k]) for k = 0..n], shaped (..., n + 1). The leading zero is padded onto
    the sums, where XLA fuses it into the pass that writes them (n is a multiple of
    PREFIX_BLOCK for every padded support, so the sums need no padding of their own)."""
    return jnp.pad(prefix_sum(a), [(0, 0)] * (a.ndim - 1) + [(1, 0)])


def _tail_sums(a):
    """[sum(a[..., k:]) for k = 0..n], shaped (..., n + 1), summed from the far end."""
    return jnp.pad(prefix_sum(a, reverse=True), [(0, 0)] * (a.ndim - 1) + [(0, 1)])


def breakpoints(pmf_x, pmf_y, inf_y):
    """Tables over k = 0..n (threshold index i = k - 1) for one direction of the pair.

    Returns ``(ccdf_x, cdf_y, ccdf_y)``: Pr[X > x_i], Pr[Y <= x_i] and Pr[Y > x_i]
    (the last including the +inf atom), each shaped ``(rows, n + 1)``. Tails are summed
    from the small end so that Pr[X > x] keeps its relative precision at tiny alpha.
    """
    ccdf_x = _tail_sums(pmf_x)
    cdf_y = _head_sums(pmf_y)
    ccdf_y = _tail_sums(pmf_y) + inf_y[:, None]
    return ccdf_x, cdf_y, ccdf_y


def reverse_pair(pmf_x, pmf_y, offset, inf_y, neginf_x):
    """PLRVs of the swapped pair (Q, P): X' = -Y and Y' = -X on the mirrored grid."""
    n = pmf_x.shape[-1]
    return jnp.flip(pmf_y, -1), jnp.flip(pmf_x, -1), -(offset + n - 1), neginf_x, inf_y


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


def _curve(ccdf_x, cdf_y, alpha, at_start=0.0):
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


def _zero_index(offset, n):
    """Index k of the threshold x = 0 in the breakpoint tables (clipped to the support)."""
    return jnp.clip(1 - offset, 0, n)


def _both_directions(pmf_x, pmf_y, offset, inf_y, neginf_x):
    """Breakpoint tables of f and of f^-1 (the reversed pair, :func:`reverse_pair`).

    The reversed pair's Pr[X' > x'] is Pr[Y < x] and its Pr[Y' <= x'] is Pr[X >= x], the
    forward tables read backwards (the same sums, bit for bit), so only its Pr[Y' > x'],
    which the delta and epsilon kernels use, is summed anew."""
    cx, cy, ccy = breakpoints(pmf_x, pmf_y, inf_y)
    _, _, roff, rinf, _ = reverse_pair(pmf_x, pmf_y, offset, inf_y, neginf_x)
    rccy = _tail_sums(jnp.flip(pmf_x, -1)) + rinf[:, None]
    return ((cx, cy, ccy), offset), ((jnp.flip(cy, -1), jnp.flip(cx, -1), rccy), roff)


def _beta_from_tables(tables, offset, n, alpha):
    ((cx, cy, _), _), ((rcx, rcy, _), _) = tables
    f = _curve(cx, cy, alpha)
    f_inv = _curve(rcx, rcy, alpha)
    k0 = _zero_index(offset, n)
    rows = jnp.arange(cx.shape[0])
    a_bar = cx[rows, k0][:, None]
    b_bar = cy[rows, k0][:, None]
    lo, hi = jnp.minimum(a_bar, b_bar), jnp.maximum(a_bar, b_bar)
    line = a_bar + b_bar - alpha
    beta = jnp.where((alpha > lo) & (alpha < hi), line, jnp.minimum(f, f_inv))
    return jnp.clip(beta, 0.0, 1.0)


@functools.partial(_cache.kernel, name="beta_kernel")
@jax.jit
def beta_kernel(pmf_x, pmf_y, offset, inf_y, neginf_x, alpha):
    """Symmetrised trade-off curve at ``alpha`` (rows, m): Algorithm 1 + Def. F.1 of Dong et al.

    With alpha_bar = Pr[X > 0] and beta_bar = Pr[Y <= 0] (the ends of the slope -1 piece of
    f), the symmetrised curve is the line alpha_bar + beta_bar - alpha between the two, and
    min(f, f^-1) outside.
    """
    tables = _both_directions(pmf_x, pmf_y, offset, inf_y, neginf_x)
    return _beta_from_tables(tables, offset, pmf_x.shape[-1], alpha)


def _advantage_from_tables(tables, n):
    ((cx, cy, _), off), ((rcx, rcy, _), roff) = tables
    rows = jnp.arange(cx.shape[0])
    k0 = _zero_index(off, n)
    rk0 = _zero_index(roff, n)
    adv = jnp.maximum(1.0 - cx[rows, k0] - cy[rows, k0], 1.0 - rcx[rows, rk0] - rcy[rows, rk0])
    return jnp.clip(adv, 0.0, 1.0)


@functools.partial(_cache.kernel, name="advantage_kernel")
@jax.jit
def advantage_kernel(pmf_x, pmf_y, offset, inf_y, neginf_x):
    """Maximal TPR - FPR (Algorithm 3 / Eq. 11): 1 - Pr[X > 0] - Pr[Y <= 0], worst direction."""
    return _advantage_from_tables(_both_directions(pmf_x, pmf_y, offset, inf_y, neginf_x), pmf_x.shape[-1])


@functools.partial(_cache.kernel, name="delta_kernel")
@jax.jit
def delta_kernel(pmf_x, pmf_y, offset, inf_y, neginf_x, epsilon):
    """delta(epsilon) (rows, m) of the symmetrised curve: the larger of the two directions'
    max_i Pr[Y > x_i] - e^eps Pr[X > x_i] (Gopi et al.; Eq. 33 of the seed paper), which is
    the convex conjugate of the piecewise-linear curve, so it matches ``beta`` exactly."""
    ((cx, _, ccy), _), ((rcx, _, rccy), _) = _both_directions(pmf_x, pmf_y, offset, inf_y, neginf_x)
    scale = jnp.exp(epsilon)[:, :, None]
    d = jnp.max(ccy[:, None, :] - scale * cx[:, None, :], -1)
    rd = jnp.max(rccy[:, None, :] - scale * rcx[:, None, :], -1)
    return jnp.clip(jnp.maximum(d, rd), 0.0, 1.0)


def _epsilon_one_direction(cx, ccy, delta):
    num = ccy[:, None, :] - delta[:, :, None]
    active = num > 0
    infinite = jnp.any(active & (cx[:, None, :] <= 0), -1)
    ratio = jnp.where(active & (cx[:, None, :] > 0), num / jnp.where(cx[:, None, :] > 0, cx[:, None, :], 1.0), 0.0)
    eps = jnp.log(jnp.max(jnp.where(active, ratio, 0.0), -1))
    return jnp.where(infinite, jnp.inf, eps)


def _epsilon_from_tables(tables, delta):
    ((cx, _, ccy), _), ((rcx, _, rccy), _) = tables
    eps = jnp.maximum(_epsilon_one_direction(cx, ccy, delta), _epsilon_one_direction(rcx, rccy, delta))
    return jnp.maximum(eps, 0.0)


@functools.partial(_cache.kernel, name="epsilon_kernel")
@jax.jit
def epsilon_kernel(pmf_x, pmf_y, offset, inf_y, neginf_x, delta):
    """Smallest epsilon >= 0 with delta(epsilon) <= delta (rows, m): the largest over
    breakpoints i of log((Pr[Y > x_i] - delta) / Pr[X > x_i]), both directions; +inf when
    the +inf atom alone exceeds delta."""
    return _epsilon_from_tables(_both_directions(pmf_x, pmf_y, offset, inf_y, neginf_x), delta)


@functools.partial(_cache.kernel, name="risk_summary_kernel")
@jax.jit
def risk_summary_kernel(pmf_x, pmf_y, offset, inf_y, neginf_x, alpha, delta):
    """(advantage (rows,), epsilon at ``delta`` (rows, m), beta at ``alpha`` (rows, k)):
    :func:`advantage_kernel`, :func:`epsilon_kernel` and :func:`beta_kernel` from one set of
    breakpoint tables (four prefix sums instead of eight)."""
    tables = _both_directions(pmf_x, pmf_y, offset, inf_y, neginf_x)
    n = pmf_x.shape[-1]
    return _advantage_from_tables(tables, n), _epsilon_from_tables(tables, delta), _beta_from_tables(tables, offset, n, alpha)


@functools.partial(_cache.kernel, name="tradeoff_points_kernel")
@jax.jit
def tradeoff_points_kernel(pmf_x, pmf_y, offset, inf_y, neginf_x):
    """Breakpoints (alpha_i, beta_i) of f for one direction, alpha descending."""
    cx, cy, _ = breakpoints(pmf_x, pmf_y, inf_y)
    return cx, cy
