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
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import batching as _batching
from . import cache as _cache
from . import grid as _grid
from .cumulative import first_true, head_sums, mass_deficit, precise_sum, tail_sums
from .pair import Pair
from .queries import by_rows, traced


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



def tradeoff_tables(pair: Pair, held: float = 0, complement: bool = False):
    """:func:`tradeoff_points_kernel` (two tables (rows, n + 1), four with ``complement``;
    NumPy when split) with the rows in chunks whose breakpoint tables fit the memory budget
    beside the outputs and ``held`` bytes the caller keeps meanwhile (checked before any
    kernel runs)."""
    rows, n = pair.pmf_x.shape
    tables = 4 if complement else 2
    fixed = tables * rows * (n + 1) * 8 + held
    per_row = n * _grid.BYTES_PER_POINT
    if traced(pair) or fixed + rows * per_row <= _grid.MEMORY_LIMIT_BYTES:
        return tradeoff_points_kernel(pair, complement=complement)
    chunk = _grid.rows_per_chunk(rows, per_row, fixed, "tradeoff_points",
                                 f"{rows} row(s) of {n + 1} breakpoints ({_grid._gib(fixed)} of arrays)")
    out = tuple(np.empty((rows, n + 1)) for _ in range(tables))
    for index, real in _batching.row_chunks(rows, _batching.chunk_size(chunk)):
        parts = tradeoff_points_kernel(Pair(*(np.asarray(t)[index] for t in pair)), complement=complement)
        for whole, part in zip(out, parts):
            whole[index[:real]] = np.asarray(part)[:real]
    return out


def interpolate_curve(ccdf_x, cdf_y, alpha, at_start=0.0, ncdf_x=None, ncdf_y=None):
    """Algorithm 1 for one direction: beta at each alpha (rows, m), by breakpoint interpolation
    (``at_start`` where alpha reaches the first breakpoint's; given Pr[Y > x] as ``cdf_y``
    and ``at_start=1``, the same interpolation gives 1 - beta).

    ``ncdf_x``, ``ncdf_y``: the complement tables Pr[X <= x] (the -inf atom included) and
    Pr[Y > x] (the +inf atom included), each summed from its small end. Alphas above
    :data:`NEAR_ONE` are then placed by 1 - alpha (exact there) against the first, and a beta
    above 1/2 is 1 minus the second's interpolation. Near 1 a table of Pr[X > x] or Pr[Y <= x]
    holds only float64's absolute precision (~1e-16), so a breakpoint 1 - c keeps c only to
    ~1e-16 / c relative: gaussian(1.0)'s beta at 1 - 1e-10 was 2.7e-6 relative off (its
    optimistic side below the truth), beta(1) above 0 where the table's total rounded above
    1, and a companion's beta(0) 1 - 2^-53 where its Y-masses summed below 1."""
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

    def near(cx, cy, nx, ny, a):
        far, c = a <= NEAR_ONE, 1.0 - a  # c: 1 - alpha, exact for alpha >= 1/2
        k = first_true(lambda j: jnp.where(far[..., None], cx[j] <= a[..., None], nx[j] >= c[..., None]), n1,
                       a.shape)  # one search: cx falls and nx rises with j
        kk = jnp.clip(k, 1, n1 - 1)
        width = jnp.where(far, cx[kk - 1] - cx[kk], nx[kk] - nx[kk - 1])
        safe_width = jnp.where(width > 0, width, 1.0)
        # the fractions of the segment from its right end (gamma) and from its left end, each
        # formed from its own difference, and beta interpolated from the nearer end: from the
        # far one, alpha 1 - 1e-15 on randomized response's last segment (from (1, 0)) read
        # beta as Q(1 - gamma) with gamma = 1 - 1.7e-15 rounded, 2.4% off
        gamma = jnp.clip(jnp.where(width > 0, jnp.where(far, a - cx[kk], nx[kk] - c) / safe_width, 0.0), 0.0, 1.0)
        rest = jnp.clip(jnp.where(width > 0, jnp.where(far, cx[kk - 1] - a, c - nx[kk - 1]) / safe_width, 1.0),
                        0.0, 1.0)
        left = gamma > 0.5

        def along(t):  # t interpolated at alpha between the breakpoints k - 1 and k
            return jnp.where(left, t[kk - 1] + rest * (t[kk] - t[kk - 1]), t[kk] - gamma * (t[kk] - t[kk - 1]))

        beta = along(cy)
        beta = jnp.where(beta > 0.5, 1.0 - along(ny), beta)
        return jnp.where(k <= 0, at_start, beta)

    if ncdf_x is None:
        return jax.vmap(one)(ccdf_x, cdf_y, alpha)
    return jax.vmap(near)(ccdf_x, cdf_y, ncdf_x, ncdf_y, alpha)


#: FPRs above this are read from the complement tables (:func:`interpolate_curve`): 1 - alpha
#: is exact in float64 there, and the breakpoints' complements keep their relative precision.
NEAR_ONE = 0.5


def needs_complements(alpha) -> bool:
    """Whether FPRs ``alpha`` hold one above :data:`NEAR_ONE` or an end of the curve (0 or 1):
    then :func:`beta_kernel` and :func:`risk_summary_kernel` run with ``near_one=True`` (two
    more prefix sums in the former); other queries keep the kernels without the complements.

    >>> needs_complements([0.1, 0.5]), needs_complements([0.1, 0.9]), needs_complements([0.0])
    (False, True, True)
    """
    a = np.asarray(alpha)
    return bool(np.any(a > NEAR_ONE) or np.any(a == 0.0))


def near_one(kernel):
    """:func:`beta_kernel` with ``near_one=True``, under the same name (the memory tables of
    :func:`dpax._engine.queries.query_plan`)."""

    @functools.wraps(kernel)
    def call(pair, queries, **options):
        return kernel(pair, queries, near_one=True, **options)

    return call


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


def _beta_from_tables(tables: Curves, n, alpha, complements: bool = False, slack=0.0):
    f, r = tables
    if slack:  # a companion's breakpoints as upper bounds despite underflow: moved up and right, above the truth
        f = f._replace(ccdf_x=f.ccdf_x + slack, cdf_y=f.cdf_y + slack)
        r = r._replace(ccdf_x=r.ccdf_x + slack, cdf_y=r.cdf_y + slack)
    # the complements of f's alphas, Pr[X <= x] (the -inf atom included), are the reversed
    # pair's Pr[Y' > x'] read backwards, and f^-1's f's Pr[Y > x]; of the betas, Pr[Y > x] and Pr[Y' > x']
    nx_f, ny_f, nx_r, ny_r = ((jnp.flip(r.ccdf_y, -1), f.ccdf_y, jnp.flip(f.ccdf_y, -1), r.ccdf_y) if complements
                              else (None, None, None, None))
    beta_f = interpolate_curve(f.ccdf_x, f.cdf_y, alpha, ncdf_x=nx_f, ncdf_y=ny_f)
    beta_f_inv = interpolate_curve(r.ccdf_x, r.cdf_y, alpha, ncdf_x=nx_r, ncdf_y=ny_r)
    k0 = zero_index(f.offset, n)
    rows = jnp.arange(f.ccdf_x.shape[0])
    a_bar = f.ccdf_x[rows, k0][:, None]
    b_bar = f.cdf_y[rows, k0][:, None]
    lo, hi = jnp.minimum(a_bar, b_bar), jnp.maximum(a_bar, b_bar)
    line = a_bar + b_bar - alpha
    on_line = (alpha > lo) & (alpha < hi)
    if complements:  # near 1: (1 - alpha) - (Pr[Y > 0] - alpha_bar), and alpha < hi as 1 - alpha > 1 - hi,
        # from the complements (b_bar and 1 - a_bar near 1 cancelled to ~1e-16)
        nb_bar, na_bar = f.ccdf_y[rows, k0][:, None], r.ccdf_y[rows, n - k0][:, None]  # ny_f, nx_f at k0
        near = alpha > NEAR_ONE
        line = jnp.where(near, (1.0 - alpha) - (nb_bar - a_bar), line)
        on_line = jnp.where(near, (alpha > lo) & (1.0 - alpha > jnp.minimum(nb_bar, na_bar)), on_line)
    beta = jnp.where(on_line, line, jnp.minimum(beta_f, beta_f_inv))
    return jnp.clip(beta, 0.0, 1.0)


@functools.partial(_cache.kernel, name="beta_kernel", fusion_emitters=False)
@functools.partial(jax.jit, static_argnames=("near_one", "optimistic"))
def beta_kernel(pair: Pair, alpha, *, near_one=False, optimistic=False):
    """Symmetrised trade-off curve at ``alpha`` (rows, m): Algorithm 1 + Def. F.1 of Dong et al.

    With alpha_bar = Pr[X > 0] and beta_bar = Pr[Y <= 0] (the ends of the slope -1 piece of
    f), the symmetrised curve is the line alpha_bar + beta_bar - alpha between the two, and
    min(f, f^-1) outside. ``near_one`` (for queries above :data:`NEAR_ONE`,
    :func:`needs_complements`): those are read from the complement tables too, two more prefix
    sums (:func:`interpolate_curve`); beta(1) is then exactly 0.

    ``optimistic`` (a companion): each breakpoint, (Pr[X > x_i], Pr[Y <= x_i]) and f^-1's,
    is read as an upper bound despite underflow, both coordinates raised by n
    :data:`UNDERFLOW`. A mass e^-x Pr[Y = x] (or e^x Pr[X = x]) below float64's smallest
    normal number, past ~708 nats, may be stored as 0 or without its low digits; read as
    they were, such points sat at alpha = 0 below the companion's true curve: beta(0) of a
    pair whose finite losses pass ~745 nats fell below the truth (0.446 for a curve whose
    beta(0) is 1), and betas below ~1e-300 lost their low digits. Breakpoints moved up and
    right stay on or above a decreasing curve; only alphas or betas below ~n 2.2e-308 read
    differently (beta(0) is then Pr[Y < inf], the companion's exact value).
    """
    slack = pair.support_length * UNDERFLOW if optimistic else 0.0
    return _beta_from_tables(both_directions(pair), pair.support_length, alpha, near_one, slack)


def _advantage_of_pair(pair: Pair, allowance: bool = False):
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
    round, so each side stays on its own side of the pair it stands for. ``allowance`` (a
    companion): the optimistic column is lowered by the masses' rounding, TABLE_ROUNDING
    times the mass summed on its side (each difference is exact, but of masses that carry a
    few ulps each: randomized response with k = 2^40 values and epsilon 0.1, whose
    difference is a tenth of its masses, was 1.4e-14 relative above the truth)."""
    pmf_x, pmf_y, offset, inf_y, neginf_x = pair
    n = pmf_x.shape[-1]
    x = offset[:, None] + jnp.arange(n)[None, :]  # grid index of every point: loss = x * step
    # summed exactly up to ~1e-22 (precise_sum): near an advantage of 1, a plain float64 sum of
    # 1e4..1e7 terms errs by 1e-14..1e-13, on either side
    forward = inf_y + precise_sum(jnp.where(x > 0, pmf_y - pmf_x, 0.0))
    reverse = neginf_x + precise_sum(jnp.where(x < 0, pmf_x - pmf_y, 0.0))
    d_y, d_x = mass_deficit(pmf_y, inf_y), mass_deficit(pmf_x, neginf_x)
    safe = jnp.maximum(forward + jnp.maximum(d_y, 0.0), reverse + jnp.maximum(d_x, 0.0))
    if allowance:
        forward = forward - TABLE_ROUNDING * jnp.sum(jnp.where(x > 0, pmf_y + pmf_x, 0.0), -1)
        reverse = reverse - TABLE_ROUNDING * jnp.sum(jnp.where(x < 0, pmf_x + pmf_y, 0.0), -1)
    optimistic = jnp.maximum(forward + jnp.minimum(d_y, 0.0), reverse + jnp.minimum(d_x, 0.0))
    return jnp.clip(jnp.stack([safe, optimistic], -1), 0.0, 1.0)


@functools.partial(_cache.kernel, name="advantage_kernel", fusion_emitters=False)
@functools.partial(jax.jit, static_argnames=("optimistic",))
def _advantage_kernel(pair: Pair, *, optimistic=False):
    return _advantage_of_pair(pair, optimistic)


def advantage_kernel(pair: Pair, optimistic: bool = False):
    """Maximal TPR - FPR (Algorithm 3 / Eq. 11): 1 - Pr[X > 0] - Pr[Y <= 0], worst direction
    (rows,), to its relative precision, for a dominating pair or (``optimistic``) a
    companion (:func:`_advantage_of_pair`); the rows in chunks that fit the memory budget
    (:func:`by_rows`)."""
    kernel = functools.partial(_advantage_kernel, optimistic=True) if optimistic else _advantage_kernel
    return np.asarray(by_rows(kernel, pair, "advantage"))[:, 1 if optimistic else 0]


#: Smallest normal float64. A companion's P-masses of losses beyond ~700 nats (e^-x times
#: the Q-masses) fall below it: they underflow to 0 or to subnormal numbers, each off by
#: less than this, so a tail sum of n masses Pr[X > x] is at most its computed value plus n
#: times this. A companion's beta, delta and epsilon (``optimistic=True``) read that upper bound
#: in place of Pr[X > x] (and likewise the reversed pair's): every threshold event's value
#: Pr[Y > x] - e^eps Pr[X > x] and log-ratio is then on or below the true one, and the
#: answer finite and on or below the truth; its beta on or above the truth. The safe side reads the computed sums (an
#: under-estimated Pr[X > x] only raises its numbers; epsilon is +inf where it is 0).
UNDERFLOW = float(np.finfo(np.float64).tiny)
#: Relative rounding of a breakpoint table's value (a tail sum of masses: each mass a few ulps,
#: the levelled prefix sum at most 15 roundings per level, six levels up to 1.7e7 points;
#: 128 ulps in all). A companion's delta and epsilon (``optimistic=True``) lower each
#: threshold's Pr[Y > x] and raise its Pr[X > x] by it: where both are near 1 (the loss 0 of
#: randomized response with k = 2^40 values, which holds all but 1e-12 of the mass) their
#: float64 difference carried ~1e-16 of round-off above a true delta of 1e-13, and the max
#: over thresholds picked it up (5e-4 relative above the truth); the safe side is unchanged.
TABLE_ROUNDING = 128 * 2.0**-53


@functools.partial(_cache.kernel, name="delta_kernel", fusion_emitters=False)
@functools.partial(jax.jit, static_argnames=("optimistic",))
def delta_kernel(pair: Pair, epsilon, *, optimistic=False):
    """delta(epsilon) (rows, m) of the symmetrised curve: the larger of the two directions'
    max_i Pr[Y > x_i] - e^eps Pr[X > x_i] (Gopi et al.; Kulynych et al. 2024, Eq. 33), which is
    the convex conjugate of the piecewise-linear curve, so it matches ``beta`` exactly.
    ``optimistic`` (a companion): Pr[X > x_i] read as an upper bound despite underflow
    (:data:`UNDERFLOW`) and each value lowered by its rounding (:data:`TABLE_ROUNDING`)."""
    scale = jnp.exp(epsilon)[:, :, None]
    slack = pair.support_length * UNDERFLOW if optimistic else 0.0

    def one(t: Breakpoints):
        if optimistic:  # each value on or below its exact one (TABLE_ROUNDING)
            return jnp.max(t.ccdf_y[:, None, :] * (1.0 - TABLE_ROUNDING)
                           - scale * (t.ccdf_x[:, None, :] * (1.0 + TABLE_ROUNDING) + slack), -1)
        return jnp.max(t.ccdf_y[:, None, :] - scale * (t.ccdf_x[:, None, :] + slack), -1)

    f, r = both_directions(pair)
    return jnp.clip(jnp.maximum(one(f), one(r)), 0.0, 1.0)


def _epsilon_one_direction(cx, ccy, delta, slack=0.0, optimistic=False):
    if optimistic:  # each ratio on or below its exact one (TABLE_ROUNDING)
        ccy, cx = ccy * (1.0 - TABLE_ROUNDING), cx * (1.0 + TABLE_ROUNDING)
    num = ccy[:, None, :] - delta[:, :, None]
    active = num > 0
    cx = cx[:, None, :] + slack
    infinite = jnp.any(active & (cx <= 0), -1)
    ratio = jnp.where(active & (cx > 0), num / jnp.where(cx > 0, cx, 1.0), 0.0)
    eps = jnp.log(jnp.max(jnp.where(active, ratio, 0.0), -1))
    return jnp.where(infinite, jnp.inf, eps)


def _epsilon_from_tables(tables: Curves, delta, slack=0.0, optimistic=False):
    f, r = tables
    eps = jnp.maximum(_epsilon_one_direction(f.ccdf_x, f.ccdf_y, delta, slack, optimistic),
                      _epsilon_one_direction(r.ccdf_x, r.ccdf_y, delta, slack, optimistic))
    return jnp.maximum(eps, 0.0)


@functools.partial(_cache.kernel, name="epsilon_kernel", fusion_emitters=False)
@functools.partial(jax.jit, static_argnames=("optimistic",))
def epsilon_kernel(pair: Pair, delta, *, optimistic=False):
    """Smallest epsilon >= 0 with delta(epsilon) <= delta (rows, m): the largest over
    breakpoints i of log((Pr[Y > x_i] - delta) / Pr[X > x_i]), both directions; +inf when
    Y-mass above delta lies where X has none (the +inf atom, or P-masses of losses beyond
    ~700 nats, which underflow float64). ``optimistic`` (a companion): Pr[X > x_i] read as
    an upper bound despite underflow (:data:`UNDERFLOW`) and each ratio lowered by its
    rounding (:data:`TABLE_ROUNDING`), so the answer is finite and on or below the truth."""
    slack = pair.support_length * UNDERFLOW if optimistic else 0.0
    return _epsilon_from_tables(both_directions(pair), delta, slack, optimistic)


def for_companion(kernel):
    """``kernel`` (:func:`beta_kernel`, :func:`delta_kernel` or :func:`epsilon_kernel`) as a
    companion reads it (``optimistic=True``), under the same name (the memory tables of
    :func:`query_plan`); any other kernel unchanged."""
    if getattr(kernel, "__name__", None) not in ("beta_kernel", "delta_kernel", "epsilon_kernel"):
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


@functools.partial(_cache.kernel, name="risk_summary_kernel", fusion_emitters=False)
@functools.partial(jax.jit, static_argnames=("near_one",))
def risk_summary_kernel(pair: Pair, alpha, delta, *, near_one=False) -> RiskSummary:
    """:func:`advantage_kernel`, :func:`epsilon_kernel` and :func:`beta_kernel` from one set
    of breakpoint tables (four prefix sums instead of eight); ``near_one`` as for
    :func:`beta_kernel` (no more sums: its complements are among these four)."""
    tables = both_directions(pair)
    n = pair.support_length
    return RiskSummary(_advantage_of_pair(pair)[:, 0], _epsilon_from_tables(tables, delta),
                       _beta_from_tables(tables, n, alpha, near_one))


@functools.partial(_cache.kernel, name="tradeoff_points_kernel", fusion_emitters=False)
@functools.partial(jax.jit, static_argnames=("complement",))
def tradeoff_points_kernel(pair: Pair, *, complement=False):
    """Breakpoints (alpha_i, beta_i) of f for one direction, alpha descending; with
    ``complement``, also 1 - alpha_i = Pr[X <= x_i] (the -inf atom included) and 1 - beta_i =
    Pr[Y > x_i] (the +inf atom included), each summed from its small end (precise near 1)."""
    t = breakpoints(pair)
    if not complement:
        return t.ccdf_x, t.cdf_y
    return t.ccdf_x, t.cdf_y, pair.neginf_x[:, None] + head_sums(pair.pmf_x), t.ccdf_y
