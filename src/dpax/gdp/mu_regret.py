"""Tight mu-GDP and its regret for a batch of privacy losses, in one compiled kernel.

Implements "(epsilon, delta) considered harmful: report Gaussian DP" (Gomez et al.):
mu from the breakpoints of the trade-off curve (Eq. 11 / Appendix B, Eq. 29) and the regret
Delta(f, f_mu) (Eq. 13 / Theorem B.2). Both are for the symmetrised curve h that dpax
reports (convex hull of min(f, f^-1), see :mod:`dpax._engine.analyse`). Geometry used
throughout: write a trade-off curve in the rotated coordinates u = alpha - beta,
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
import numpy as np

from .._engine import analyse as _analyse
from .._engine import batching as _batching
from .._engine import cache as _cache
from .._engine import grid as _grid
from .._engine import pair as _pair
from .._engine import validation as _v
from .._engine.pair import Pair
from .._engine.x64 import as_result, float64
from ..privacy_loss import PrivacyLoss
from . import bounds as _bounds

#: Default tail: mu is the tightest GDP parameter for every attack whose FPR and FNR lie in
#: [tail, 1 - tail] (the grid's truncated mass, kept pessimistically at +-inf, is not GDP for any
#: finite mu). The paper's and gdpnum's value.
DEFAULT_TAIL = 1e-10

class MuRegret(NamedTuple):
    """Per row: tight mu (Eq. 29), regret Delta (Eq. 13) and the FPR where it is attained."""

    mu: Any
    regret: Any
    witness: Any


@functools.partial(_cache.kernel, name="mu_regret")
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
    tables = _tables(pair)
    ratio = pair.pmf_y / pair.pmf_x  # the segments' slopes (inf: vertical, NaN: no step), for the block bounds
    mu = _tight_mu(pair, tables, ratio, tail)
    regret, witness = _regret(pair, *tables[:2], ratio, mu)
    return MuRegret(mu, regret, witness)


def _tables(pair: Pair):
    """f's breakpoint tables (cx, cy) = (Pr[X > x], Pr[Y <= x]) and their complements (nx, ny)
    = (Pr[X <= x], Pr[Y > x]), each summed from its own small end (as analyse.breakpoints' tail
    sums), so that every value keeps its relative precision: near 1, 1 - cx and 1 - cy would
    keep only the absolute precision of the sums (~1e-15). (Taking Eq. 29's max over upper
    bounds from 1 - cx first, and the complements only where needed, compiles both paths:
    40% more compilation for no faster answer. Summing X's and Y's rows as one array
    compiles one sum instead of two, but its copy costs a third more time.)"""
    pmf_x, pmf_y, _, inf_y, neginf_x = pair
    return (_analyse.tail_sums(pmf_x), _analyse.head_sums(pmf_y),
            neginf_x[:, None] + _analyse.head_sums(pmf_x), _analyse.tail_sums(pmf_y) + inf_y[:, None])


def _tight_mu(pair: Pair, tables, ratio, tail):
    """mu of Eq. 29 per row (rows,), given f's breakpoint tables and their complements
    (:func:`_tables`) and its segment slopes: the max over f's points in the box [tail,
    1 - tail]^2 (by symmetry, h's as well), every probability near 1 read from a complement."""
    pmf_x, pmf_y, _, inf_y, neginf_x = pair
    tail_col = jnp.broadcast_to(tail, (pmf_x.shape[0], 1))
    terms_max = _bounds.eq29_max(pmf_x, pmf_y, ratio, *tables, tail_col)[0]
    mu = jnp.maximum(terms_max, 0.0)
    # tail = 0 asks for every attack: an infinite atom puts the point (0, 1 - Pr[Y = +inf])
    # (or (1 - Pr[X = -inf], 0)) on f, below every f_mu, even when it rounds to 1 in the tables
    return jnp.where((tail <= 0.0) & ((inf_y > 0.0) | (neginf_x > 0.0)), jnp.inf, mu)


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
    a_best, b_best = _bounds.tangent(_bounds.steep(*(_bounds.take(a, best[:, None]) for a in (pmf_x, pmf_y)))[2], m)
    # the slope -1 line of h (u* = 0) is always a candidate (and wins ties)
    a_mid, b_mid = _bounds.tangent(jnp.zeros_like(m), m)
    kappa_mid = ((a_bar - a_mid[:, 0]) + (b_bar - b_mid[:, 0])) / 2.0
    use_mid = (kappa_mid >= kappa_best)[:, None]
    a_top = jnp.where(use_mid, a_mid, a_best)
    b_top = jnp.where(use_mid, b_mid, b_best)
    u_top = a_top - b_top
    # V_f at u*, at -u* (f^-1's) and at 0, in one search
    vf, vf_mirror, v0 = _bounds.split_last(_bounds.v_at(cx, cy, jnp.concatenate([u_top, -u_top, jnp.zeros_like(u_top)], -1)), 1, 1, 1)
    v_h = jnp.where(jnp.abs(u_top) < half_width, v_bar, jnp.minimum(vf, vf_mirror))
    regret = jnp.maximum((v_h - (a_top + b_top))[:, 0] / 2.0, 0.0)
    witness = jnp.minimum(a_top, b_top)[:, 0]
    # mu = inf: f_mu is the perfect-attack curve, V = |u|; the sup is at u = 0
    v0 = jnp.where(half_width[:, 0] > 0, v_bar[:, 0], v0[:, 0])
    regret = jnp.where(jnp.isinf(mu), v0 / 2.0, regret)
    witness = jnp.where(jnp.isinf(mu), 0.0, witness)
    return regret, witness


def check_loss(pl, name="pl"):
    if not isinstance(pl, PrivacyLoss):
        raise TypeError(f"{name} must be a dpax.PrivacyLoss, got {type(pl).__name__}")


@float64
def mu_regret_rows(pl, tail):
    """(mu, regret, witness) of every row of ``pl``, shaped like its batch.

    Rows are independent: they run in chunks that fit the memory budget
    (:func:`dpax._engine.grid.rows_per_chunk`, checked before any kernel runs), so peak
    memory is the results plus one chunk's working arrays, and the answers do not depend
    on the chunking.
    """
    check_loss(pl)
    t = _v.scalar("tail", tail, low=0.0, high=0.5, high_open=True)  # one tail for the batch
    pair = pl.pair
    rows, n = pair.pmf_x.shape
    # one compiled kernel serves every support up to twice shorter and batch up to ~1.75x
    # smaller (a compilation of this kernel takes seconds); the padding changes no answer
    length = _grid.power_of_two(n)
    chunk = _batching.chunk_size(_grid.rows_per_chunk(
        rows, length * _grid.BYTES_PER_POINT, 0, "mu_and_regret", f"{rows} row(s) of {length} grid points"))
    out = np.empty((3, rows))
    for index, real in _batching.row_chunks(rows, chunk):
        part = pair.take(jnp.asarray(index)) if chunk < rows else pair
        values = _mu_regret_kernel(_pair.padded(part, _batching.group_size(chunk), length), np.float64(t))
        out[:, index[:real]] = [np.asarray(v)[:real] for v in values]
    return tuple(as_result(v, pl.batch_shape) for v in out)


def mu_and_regret(pl, tail=DEFAULT_TAIL):
    """(mu, regret) of the symmetrised trade-off curve h of ``pl`` (floats, or arrays shaped
    like its batch).

    mu (Eq. 11 / Appendix B Eq. 29): the smallest mu with f_mu(alpha) <= h(alpha) at every
    point of the curve whose FPR alpha and FNR beta lie in [tail, 1 - tail] (default 1e-10,
    as in the paper's code, gdpnum): it bounds every attack except those with FPR, TPR,
    FNR or TNR below ``tail``; exact for the discrete curve, which lies below the true one, so
    mu is never below the mechanism's. (Probabilities near 1 are read from complementary
    sums, so mu is the discrete curve's up to float64 rounding.) ``tail=0`` asks for every
    attack, and gives inf when the grid keeps any mass at +-inf.

    regret (Eq. 13, Theorem B.2): Delta(h, f_mu), evaluated in closed form at the points of
    f_mu whose tangents are parallel to h's segments (where the maximum lies, see the module
    docstring), so it is exact up to float64 rounding (~1e-15) where h is convex, and an
    underestimate (a lower bound) otherwise; unlike gdpnum it is not limited to a fixed grid
    of 10,000 FPR values. The whole batch is one compiled kernel.
    """
    mu, regret, _ = mu_regret_rows(pl, tail)
    return mu, regret


def regret_witness(pl, tail=DEFAULT_TAIL):
    """FPR alpha at which the regret is attained: f(alpha + Delta) - Delta = f_mu(alpha)
    (the smaller of the two symmetric points)."""
    return mu_regret_rows(pl, tail)[2]
