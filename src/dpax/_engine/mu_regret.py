"""The compiled mu/regret kernels of :mod:`dpax.gdp` (Gomez et al. 2025, "(epsilon, delta)
considered harmful: report Gaussian DP"): tight mu (Eq. 29), the regret Delta(h, f_mu)
(Eq. 13) and an upper bound of the regret for a companion pair, for a batch of pairs in one
kernel each; the maxima are found by the branch and bound of
:mod:`dpax._engine.branch_and_bound`. :mod:`dpax.gdp.mu_regret` runs them on PrivacyLoss
rows.

Geometry used throughout: write a trade-off curve in the rotated coordinates u = alpha - beta,
v = alpha + beta, so that its graph is v = V(u) with V convex on [-1, 1]; shifting a curve
down-left by kappa (Eq. 8) lowers V by 2 kappa. Hence

    Delta(f, g) = max(0, sup_u (V_f(u) - V_g(u)) / 2),

and for a piecewise-linear convex f (the max of its segments' lines) against f_mu this sup is
attained where f_mu's tangent is parallel to one of f's segments: the regret is evaluated
exactly at those tangent points, in closed form, not on a fixed grid of FPR values.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import ndtri

from . import analyse as _analyse
from . import branch_and_bound as _bounds
from . import cache as _cache
from . import cumulative as _cumulative
from . import grid as _grid
from .pair import Pair
from .special import ndtr

#: Longest support padded to a power of two for the mu/regret kernel (few compiled shapes);
#: longer supports are padded to the grid's ladder (:func:`dpax._engine.grid.padded_length`).
MU_POWER_OF_TWO_MAX = 2**16


class MuRegret(NamedTuple):
    """Per row: tight mu (Eq. 29), regret Delta (Eq. 13) and the FPR where it is attained."""

    mu: Any
    regret: Any
    witness: Any


def _mu_and_tables(pair: Pair, tail, slack):
    """Tight mu (rows,) of Eq. 29 and the tables (cx, cy) it read (slack included), for
    :func:`_regret_at`: the first half of :func:`mu_regret`."""
    cx, cy, nx, ny = _tables(pair)
    tables = (cx + slack, cy + slack, nx, ny)  # (x + 0.0 is x: a dominating pair's tables as summed)
    ratio = pair.pmf_y / pair.pmf_x  # the segments' slopes (inf: vertical, NaN: no step), for the block bounds
    return _tight_mu(pair, tables, ratio, jnp.asarray(tail), slack), tables[0], tables[1]


def _regret_at(pair: Pair, cx, cy, mu, at_mu):
    """(regret, witness) per row against f_m, m = ``at_mu`` where given (not NaN), else the
    curve's own ``mu``: the second half of :func:`mu_regret`."""
    ratio = pair.pmf_y / pair.pmf_x
    m = mu if at_mu is None else jnp.where(jnp.isnan(at_mu), mu, at_mu)
    return _regret(pair, cx, cy, ratio, m)


def mu_regret(pair: Pair, tail, at_mu=None, slack=0.0) -> MuRegret:
    """(mu, regret, witness alpha) per row for the symmetrised curve; with ``at_mu`` (rows,),
    the regret Delta(h, f_m) against f_m at those m instead of the curve's own mu (the ends of
    the regret's bracket, :func:`regret_bracket`; mu is still the curve's); a NaN entry means
    the curve's own mu (dpax always passes the array: one compiled kernel for both).

    ``slack`` (traced: one kernel for both sides): 0 for a dominating pair; for an optimistic
    companion, n times the smallest normal float64 (:data:`dpax._engine.analyse.UNDERFLOW`),
    by which every breakpoint (Pr[X > x], Pr[Y <= x]) is raised, as the companion's beta
    reads them: its masses e^-x Pr[Y = x] past ~708 nats may have underflowed, and points read
    as they were sat at alpha ~ 0 below its curve, so its mu came out above the truth or
    infinite. A companion's mu at ``tail`` = 0 also ignores its infinite atoms (leaving out
    attacks only lowers mu: still a lower bound).

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
    mu, cx, cy = _mu_and_tables(pair, tail, slack)
    return MuRegret(mu, *_regret_at(pair, cx, cy, mu, at_mu))


#: The two halves of :func:`mu_regret` as compiled kernels: two kernels compile side by side
#: (the regret's ahead, :func:`dpax._engine.cache.compile_ahead_of`, while the call compiles
#: mu's), where one took their sum (2.4 s -> 1.8 s on a 2-core CPU); the tables pass from one
#: to the other on the device, the same bits and the same run time as one kernel.
tight_mu_kernel = _cache.kernel(jax.jit(_mu_and_tables), "mu_tight", fusion_emitters=False)
regret_kernel = _cache.kernel(jax.jit(_regret_at), "regret", fusion_emitters=False)


def mu_regret_kernel(pair: Pair, tail, at_mu=None, slack=0.0) -> MuRegret:
    """:func:`mu_regret` by its two compiled kernels (:data:`tight_mu_kernel`, then
    :data:`regret_kernel`, asked for ahead of the first's call)."""
    rows, n = pair.pmf_x.shape
    table = jax.ShapeDtypeStruct((rows, n + 1), jnp.float64)
    regret_kernel.ahead(pair, table, table, jax.ShapeDtypeStruct((rows,), jnp.float64), at_mu)
    mu, cx, cy = tight_mu_kernel(pair, tail, slack)
    return MuRegret(mu, *regret_kernel(pair, cx, cy, mu, at_mu))


def _tables(pair: Pair) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """f's breakpoint tables (cx, cy) = (Pr[X > x], Pr[Y <= x]) and their complements (nx, ny)
    = (Pr[X <= x], Pr[Y > x]), each summed from its own small end (as analyse.breakpoints' tail
    sums), so that every value keeps its relative precision: near 1, 1 - cx and 1 - cy would
    keep only the absolute precision of the sums (~1e-15). (Taking Eq. 29's max over upper
    bounds from 1 - cx first, and the complements only where needed, compiles both paths:
    40% more compilation for no faster answer. Summing X's and Y's rows as one array
    compiles one sum instead of two, but its copy costs a third more time.)"""
    pmf_x, pmf_y, _, inf_y, neginf_x = pair
    return (_cumulative.tail_sums(pmf_x), _cumulative.head_sums(pmf_y),
            neginf_x[:, None] + _cumulative.head_sums(pmf_x), _cumulative.tail_sums(pmf_y) + inf_y[:, None])


def _tight_mu(pair: Pair, tables: tuple[jax.Array, jax.Array, jax.Array, jax.Array], ratio, tail, slack=0.0):
    """mu of Eq. 29 per row (rows,), given f's breakpoint tables and their complements
    (:func:`_tables`) and its segment slopes: the max over f's points in the box [tail,
    1 - tail]^2 (by symmetry, h's as well), every probability near 1 read from a complement."""
    pmf_x, pmf_y, _, inf_y, neginf_x = pair
    tail_col = jnp.broadcast_to(tail, (pmf_x.shape[0], 1))
    terms_max = _bounds.eq29_max(pmf_x, pmf_y, ratio, *tables, tail_col)[0]
    mu = jnp.maximum(terms_max, 0.0)
    # tail = 0 asks for every attack: an infinite atom puts the point (0, 1 - Pr[Y = +inf])
    # (or (1 - Pr[X = -inf], 0)) on f, below every f_mu, even when it rounds to 1 in the tables
    # (a companion's, slack > 0, is a lower bound: its infinite atoms may be left out)
    return jnp.where((tail <= 0.0) & (slack <= 0.0) & ((inf_y > 0.0) | (neginf_x > 0.0)), jnp.inf, mu)


def _regret(pair: Pair, cx, cy, ratio, mu):
    """(regret of Eq. 13, FPR where it is attained) per row, for the curve's tight ``mu``."""
    pmf_x, pmf_y, offset, _, _ = pair
    n = pmf_x.shape[-1]
    # -- regret: tangent points of f_mu parallel to f's steep segments (slope -s, s >= 1;
    # the others are their mirror images). kappa of segment j's own line (closed form)
    # picks the candidate; V_h itself is then evaluated there, so the value is a point of h
    # (a lower bound of Delta), exact when h is convex and the line lies on h.
    k0 = _analyse.zero_index(offset, n)
    a_bar, b_bar = (_bounds.take(t, k0[:, None])[:, 0] for t in (cx, cy))
    half_width = jnp.abs(a_bar - b_bar)[:, None]
    v_bar = (a_bar + b_bar)[:, None]
    m = jnp.maximum(mu, 1e-300)[:, None]

    def kappa_line(_idx, px, py, x0, y0):
        return _bounds.kappa_line(px, py, x0, y0, m)

    # the max kappa by branch and bound on blocks of KAPPA_BLOCK segments
    size = _bounds.KAPPA_BLOCK
    upper = _bounds.kappa_block_bounds(pmf_x, pmf_y, ratio, cx, cy, m)
    # an attained kappa: the largest of the block with the highest bound
    top_block = jnp.argmax(jnp.where(jnp.isnan(upper), -jnp.inf, upper), -1)
    span = min(size, n)
    at = jnp.minimum(top_block * size, n - span)[:, None] + jnp.arange(span)
    lower = jnp.max(kappa_line(at, *(_bounds.take(a, at) for a in (pmf_x, pmf_y, cx, cy))), -1)
    kappa_best, best = _bounds.bounded_max(kappa_line, (pmf_x, pmf_y, cx, cy), upper, lower, size, _bounds.KAPPA_CHUNK)
    best = jnp.minimum(best, n - 1)
    # the best segment's tangent point, and the slope -1 line of h (u* = 0), always a candidate
    # (it wins ties): both in one evaluation
    log_s_best = _bounds.steep(*(_bounds.take(a, best[:, None]) for a in (pmf_x, pmf_y)))[2]
    (a_best, a_mid), (b_best, b_mid) = (_bounds.split_last(t, 1, 1) for t in _bounds.tangent(
        jnp.concatenate([log_s_best, jnp.zeros_like(m)], -1), m))
    kappa_mid = ((a_bar - a_mid[:, 0]) + (b_bar - b_mid[:, 0])) / 2.0
    use_mid = (kappa_mid >= kappa_best)[:, None]
    a_top = jnp.where(use_mid, a_mid, a_best)
    b_top = jnp.where(use_mid, b_mid, b_best)
    u_top = a_top - b_top
    # V_f at u*, at -u* (f^-1's) and at 0, in one search
    vf, vf_mirror, v0 = _bounds.split_last(
        _bounds.v_at(cx, cy, jnp.concatenate([u_top, -u_top, jnp.zeros_like(u_top)], -1)), 1, 1, 1)
    v_h = jnp.where(jnp.abs(u_top) < half_width, v_bar, jnp.minimum(vf, vf_mirror))
    regret = jnp.maximum((v_h - (a_top + b_top))[:, 0] / 2.0, 0.0)
    witness = jnp.minimum(a_top, b_top)[:, 0]
    # mu = inf: f_mu is the perfect-attack curve, V = |u|; the sup is at u = 0
    v0 = jnp.where(half_width[:, 0] > 0, v_bar[:, 0], v0[:, 0])
    regret = jnp.where(jnp.isinf(mu), v0 / 2.0, regret)
    witness = jnp.where(jnp.isinf(mu), 0.0, witness)
    return regret, witness


def kernel_length(n: int) -> int:
    """Support length the mu/regret kernels run at for a support of ``n`` points (the padding
    changes no answer). Up to :data:`MU_POWER_OF_TWO_MAX`, a power of two: one compiled kernel
    (a compilation takes seconds) serves every support up to twice shorter. Longer supports
    keep the grid's ladder length (at most 25% longer): there the padded work is what every
    warm call pays (327,680 points padded to 2^19 ran 4x slower on a 2-core CPU, its working
    arrays no longer fitting the processor's cache), for one compilation per ladder step.

    >>> [kernel_length(n) for n in (300, 65536, 327680, 327681)]
    [512, 65536, 327680, 393216]
    """
    return _grid.power_of_two(n) if n <= MU_POWER_OF_TWO_MAX else _grid.padded_length(n)


@functools.partial(_cache.kernel, name="regret_upper")
@jax.jit
def regret_upper_kernel(pair: Pair, m):
    """An upper bound (rows,) of Delta(h, f_m) at m (rows,) for the symmetrised curve h of
    every pair whose trade-off curve lies on or above T, the curve of ``pair``'s two laws.

    The companion's labels need not be sorted by likelihood ratio (a label collects outputs
    of neighbouring losses), so its threshold curve need not be convex; sorted by ratio
    (Neyman-Pearson) its masses give T = T(P', Q'), convex. In u = alpha - beta, h =
    hull(min(T, T^-1)) has V_h(u) <= min(V_T(u), V_T(-u)) <= V_T(-|u|) and <= V_T(|u|), so
    V_h lies below the convex hulls of both: W1, T's steep side (u <= 0) mirrored, flat at
    V_T(u_b) on |u| <= -u_b (u_b = min(u0, 0), u0 the vertex between T's slopes below and
    above 1), and W2, its flat side mirrored. f_m is symmetric, so

        Delta(h, f_m) <= min(kappa(W1), kappa(W2)),

    kappa(W1) = max(the tangent kappas of T's steep segments whose tangent point of f_m
    (:func:`branch_and_bound.tangent`) has u* <= u_b, V_T(u_b) / 2 - Phi(-m/2)): the other steep lines
    peak where W1 is flat, below its flat part's kappa (V_m is least at u = 0); W2 likewise.
    At a vertical or horizontal segment (one mass 0) a point's kappa is at most
    min(alpha, beta). Exact for h when T is symmetric-dominated (h = W1 or W2).
    """
    pmf_x, pmf_y, _, _, neginf_x = pair
    n = pmf_x.shape[-1]
    proper = (pmf_x > 0) & (pmf_y > 0)
    safe_x, safe_y = jnp.where(proper, pmf_x, 1.0), jnp.where(proper, pmf_y, 1.0)
    log_s = jnp.where(proper, jnp.log(safe_y) - jnp.log(safe_x), jnp.where(pmf_y > 0, jnp.inf, -jnp.inf))
    log_s = jnp.where(proper | (pmf_x > 0) | (pmf_y > 0), log_s, 0.0)
    order = jnp.argsort(log_s, axis=-1, stable=True)
    px, py, log_s, proper = (jnp.take_along_axis(a, order, -1) for a in (pmf_x, pmf_y, log_s, proper))
    cx = _cumulative.tail_sums(px) + neginf_x[:, None]  # point k: (cx_k, cy_k), k = 0..n
    cy = _cumulative.head_sums(py)
    x0, y0 = cx[:, :n], cy[:, :n]  # segment k: from (x0 - px, y0 + py) to (x0, y0)
    k_c = jnp.sum(log_s < 0.0, -1, keepdims=True)  # the vertex between flat and steep
    u0 = jnp.take_along_axis(cx - cy, k_c, -1)
    vertex = jnp.take_along_axis(cx + cy, k_c, -1) / 2.0
    mm = jnp.maximum(m, 1e-300)[:, None]
    a_t, b_t = _bounds.tangent(jnp.where(proper, log_s, 0.0), mm)
    total = jnp.where(proper, px + py, 1.0)
    at_tangent = jnp.where(proper, (py * (x0 - a_t) + px * (y0 - b_t)) / total, -jnp.inf)
    at_zero = jnp.max(jnp.where(proper, (py * x0 + px * y0) / total, -jnp.inf), -1, keepdims=True)  # V_T(0) / 2
    middle = ndtr(-mm / 2.0)
    u_t = a_t - b_t
    steep_side = jnp.where((log_s >= 0.0) & (u_t <= jnp.minimum(u0, 0.0)), at_tangent, -jnp.inf)
    flat_side = jnp.where((log_s < 0.0) & (u_t >= jnp.maximum(u0, 0.0)), at_tangent, -jnp.inf)
    vertical = jnp.where((px == 0.0) & (py > 0.0), jnp.minimum(x0, y0 + py), -jnp.inf)
    horizontal = jnp.where((py == 0.0) & (px > 0.0), jnp.minimum(x0, y0), -jnp.inf)
    w1 = jnp.maximum(jnp.max(jnp.maximum(steep_side, vertical), -1, keepdims=True),
                     jnp.where(u0 <= 0.0, vertex, at_zero) - middle)
    w2 = jnp.maximum(jnp.max(jnp.maximum(flat_side, horizontal), -1, keepdims=True),
                     jnp.where(u0 >= 0.0, vertex, at_zero) - middle)
    kappa = jnp.minimum(w1, w2)[:, 0]
    # m = inf: f_m is the perfect-attack curve (V = |u|), every point's kappa is min(alpha, beta)
    corner = jnp.where((px > 0) | (py > 0), jnp.minimum(x0, y0 + py), 0.0)
    kappa = jnp.where(jnp.isinf(m), jnp.max(corner, -1), kappa)
    return (jnp.maximum(kappa, 0.0),)


# -- the GDP target's check (dpax.targets.GDP) -----------------------------------------------

#: absolute slack (in beta) of the GDP check, for float64 round-off of the breakpoint sums
GDP_SLACK = 1e-12


@functools.partial(_cache.kernel, name="gdp_margin", fusion_emitters=False)
@jax.jit
def gdp_margin_kernel(pair: Pair, mu: jax.Array) -> jax.Array:
    """min over breakpoints (alpha_i, beta_i) of both directions of beta_i - G_mu(alpha_i),
    plus the off-grid mass and GDP_SLACK (see :class:`dpax.targets.GDP`)."""
    worst: float | jax.Array = jnp.inf
    for t in _analyse.both_directions(pair):
        g = ndtr(-ndtri(jnp.clip(t.ccdf_x, 0.0, 1.0)) - mu[:, None])
        worst = jnp.minimum(worst, jnp.min(t.cdf_y - g, -1))
    return worst + pair.inf_y + pair.neginf_x + GDP_SLACK
