"""Chernoff bounds of a composition's laws (Kulynych et al. 2024, Appendix E.1): the output
window of an FFT composition and the rates of an optimistic companion's tilts.

The composed support is bounded by Chernoff: for every t > 0,
Pr[S >= h] <= exp(sum_i T_i K_i(t) - t h) with K_i the log-moment generating function of
the (finite part of the) i-th pmf, computed exactly from the discrete masses. The output
window [lo, hi] is chosen so that each of the four tails (X and Y, both sides) holds at
most ``TAIL_MASS`` = 1e-18; the circular convolution of length L >= hi - lo + 1 then
aliases at most that much mass. The Chernoff bounds of the mass cut off at lo and hi are
returned with the window (:class:`Window`), for :mod:`dpax._engine.composition` to book
on the infinite atoms.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import cache as _cache
from . import grid as _grid
from .pair import Pair

#: Mass each tail of the composition may leave outside the output window (see above).
TAIL_MASS = 1e-18
#: Chernoff parameters t of each row: a geometric grid from 0.25 to 400 over the row's own
#: standard deviation; t = 9 / sd suits a Gaussian tail at 1e-18, smaller t heavier tails,
#: larger t bounded few-step sums. Each row's grid is its own, so that its window (and
#: everything after) does not depend on the other rows of its batch.
_CHERNOFF_SPAN = (0.25, 400.0)
_CHERNOFF_POINTS = 48


def _chernoff_grid(scale):
    """Each row's Chernoff parameters (rows, CHERNOFF_POINTS) for row scales (rows,)."""
    ratio = _CHERNOFF_SPAN[1] / _CHERNOFF_SPAN[0]
    steps = ratio ** (jnp.arange(_CHERNOFF_POINTS) / (_CHERNOFF_POINTS - 1))
    return (_CHERNOFF_SPAN[0] / scale)[:, None] * steps[None, :]


def _discounted_sums(pmf, t, grid_step):
    """sum_j pmf[r, j] exp(-t[r, k] j step) (rows, m), every term in (0, 1] times a mass.

    exp(-t j step) = exp(-t (j - i) step) exp(-t i step) with i = j mod B (B ~ sqrt(n)):
    each row's masses in blocks of B times its own small table of exp(-t i step) (a
    batched product), then the block sums times exp(-t (j - i) step). No (n, m) table is
    built, and each row is summed against its own t only. Within a few ulps of the plain
    sum (the factor 1 + 1e-14 of the caller covers that); products that underflow lose at
    most 2.3e-308 each.
    """
    rows, n = pmf.shape
    block = max(1, math.isqrt(n))
    blocks = -(-n // block)
    within = jnp.exp(-t[:, None, :] * (jnp.arange(block) * grid_step)[None, :, None])  # (rows, B, m)
    starts = jnp.exp(-t[:, None, :] * (jnp.arange(blocks) * block * grid_step)[None, :, None])  # (rows, nb, m)
    a = jnp.pad(pmf, ((0, 0), (0, blocks * block - n))).reshape(rows, blocks, block)
    inner = jnp.einsum("rbi,rim->rbm", a, within, precision=jax.lax.Precision.HIGHEST)
    return jnp.sum(inner * starts, 1)


def _log_mgfs(pmf, offset, t, grid_step):
    """log E[exp(t L)] and log E[exp(-t L)] of each row (rows, n) at its own t > 0 (rows, m).

    Each row is rolled so that its highest (lowest) loss with mass sits first, and summed
    with weights exp(-t (top - x)) (exp(-t (x - bottom))), entries in (0, 1], so that no
    sum overflows (:func:`_discounted_sums`). The n x 2.3e-308 added to every sum covers
    the products that underflow: the result stays an upper bound. Also returns each row's
    first and last index with mass (the array's ends for a row without any).
    """
    n = pmf.shape[-1]
    has_mass = pmf > 0
    top = n - 1 - jnp.argmax(jnp.flip(has_mass, -1), -1)
    bottom = jnp.argmax(has_mass, -1)
    roll = jax.vmap(jnp.roll)
    floor = n * 2.3e-308
    up = jnp.log(_discounted_sums(jnp.flip(roll(pmf, n - 1 - top), -1), t, grid_step) * (1.0 + 1e-14) + floor)
    down = jnp.log(_discounted_sums(roll(pmf, -bottom), t, grid_step) * (1.0 + 1e-14) + floor)
    return (t * ((offset + top) * grid_step)[:, None] + up,
            -t * ((offset + bottom) * grid_step)[:, None] + down, bottom, top)


def _moments(pmf, loss):
    mass = jnp.sum(pmf, -1)
    safe = jnp.where(mass > 0, mass, 1.0)
    mean = jnp.sum(pmf * loss, -1) / safe
    var = jnp.sum(pmf * (loss - mean[:, None]) ** 2, -1) / safe
    return mean, var


class Window(NamedTuple):
    """Grid indices [lo, hi] (rows,) of a composition's output support, with Chernoff bounds
    (rows,) on the mass each law leaves outside it (0 where the window reaches the exact
    support's end)."""

    lo: Any
    hi: Any
    cut_y: Any = 0.0  #: Pr[Y < lo step] + Pr[Y > hi step] (finite part), at most
    cut_x: Any = 0.0  #: Pr[X < lo step] + Pr[X > hi step] (finite part), at most
    mean_y: Any = 0.0  #: the composed finite laws' means (losses), where their far tails begin
    mean_x: Any = 0.0


@functools.partial(_cache.kernel, name="window", fusion_emitters=False)
@jax.jit
def window_kernel(factors: tuple[Pair, ...], counts: tuple, grid_step) -> Window:
    """Chernoff window [lo, hi] (grid indices) of the composition of ``counts[k]`` copies of
    each factor k (rows, n_k). Factors of one support length are stacked and looped over
    (``lax.scan``, see :func:`factor_groups`), so the traced graph grows with the number of
    distinct lengths only, and no factor is padded."""
    log_tail = math.log(TAIL_MASS)
    groups = factor_groups(factors, counts)
    rows = factors[0].pmf_x.shape[0]

    def variance(acc, factor):
        px, py, off, count = factor
        loss = _grid.loss_grid(off, px.shape[-1], grid_step)
        (mean_x, var_x), (mean_y, var_y) = _moments(px, loss), _moments(py, loss)
        return (acc[0] + count * jnp.maximum(var_x, var_y), acc[1] + count * mean_y, acc[2] + count * mean_x), None

    moments = (jnp.zeros(rows),) * 3
    for g, c in groups:
        moments = fold(variance, moments, (g.pmf_x, g.pmf_y, g.offset, c))
    total_var, mean_y, mean_x = moments
    t = _chernoff_grid(jnp.sqrt(total_var) + grid_step)

    def mgf(acc, factor):
        px, py, off, count = factor
        up, down, first, last = _log_mgfs(jnp.concatenate([px, py], 0), jnp.concatenate([off, off]),
                                          jnp.concatenate([t, t]), grid_step)
        c = count[:, None]
        terms = (c * up[:rows], c * down[:rows], c * up[rows:], c * down[rows:])
        # the exact support bound: the sums of the factors' first and last points with mass
        # (FFT round-off beyond it is not mass: a pure-DP composition's epsilon at delta 0 must
        # not see it)
        first = jnp.minimum(first[:rows], first[rows:])
        last = jnp.maximum(last[:rows], last[rows:])
        hard = (acc[4] + count * (off + first), acc[5] + count * (off + last))
        return tuple(x + y for x, y in zip(acc[:4], terms)) + hard, None

    acc = (jnp.zeros(t.shape),) * 4 + (jnp.zeros(rows, jnp.int64),) * 2
    for g, c in groups:
        acc = fold(mgf, acc, (g.pmf_x, g.pmf_y, g.offset, c))
    up_x, down_x, up_y, down_y, lo_hard, hi_hard = acc
    high = jnp.maximum(jnp.min((up_x - log_tail) / t, -1), jnp.min((up_y - log_tail) / t, -1))
    low = jnp.minimum(jnp.max(-(down_x - log_tail) / t, -1), jnp.max(-(down_y - log_tail) / t, -1))
    lo = jnp.maximum(jnp.floor(low / grid_step).astype(jnp.int64), lo_hard)
    hi = jnp.maximum(jnp.minimum(jnp.ceil(high / grid_step).astype(jnp.int64), hi_hard), lo)

    def cut(up, down):
        """Chernoff bounds on the mass above hi and below lo (exactly 0 past the support)."""
        above = jnp.exp(jnp.minimum(jnp.min(up - t * ((hi + 1) * grid_step)[:, None], -1), 0.0))
        below = jnp.exp(jnp.minimum(jnp.min(down + t * ((lo - 1) * grid_step)[:, None], -1), 0.0))
        return jnp.where(hi >= hi_hard, 0.0, above) + jnp.where(lo <= lo_hard, 0.0, below)

    return Window(lo, hi, cut(up_y, down_y), cut(up_x, down_x), mean_y, mean_x)


def fold(body, carry, stacked):
    """``body`` applied along axis 0 of ``stacked`` (a ``lax.scan`` body returning (carry,
    None)); a group of one factor is applied directly: a scan of length 1 is a loop that
    XLA compiles as one (about a quarter of the window kernel's compilation)."""
    if stacked[0].shape[0] == 1:
        return body(carry, tuple(a[0] for a in stacked))[0]
    return jax.lax.scan(body, carry, stacked)[0]


def factor_groups(factors, counts) -> list[tuple[Pair, Any]]:
    """The factors grouped by support length (in order of first appearance), each group
    stacked on a new axis 0 (K_g, rows, n_g) with its counts (K_g, rows). Inside the
    kernels: no eager stacking kernels of their own, and no factor padded to a longer one."""
    by_length: dict[int, list] = {}
    for f, c in zip(factors, counts):
        by_length.setdefault(f.support_length, []).append((f, c))
    return [(Pair(*(jnp.stack([jnp.asarray(f[i]) for f, _ in group]) for i in range(5))),
             jnp.stack([jnp.asarray(c, jnp.int64) for _, c in group]))
            for group in by_length.values()]


#: Rates tried for a companion's tilts (:func:`tilt_rates`), and the tail probability whose
#: Chernoff point they aim at (mu's default box, :data:`dpax.gdp.mu_regret.DEFAULT_TAIL`).
TILT_RATES = tuple(float(v) for v in np.geomspace(1.0, 128.0, 22))
_TILT_AIM = 1e-10


@functools.partial(_cache.kernel, name="tilt_rates")
@jax.jit
def _tilt_kernel(factors: tuple[Pair, ...], counts: tuple, grid_step, span):
    rows = factors[0].pmf_x.shape[0]
    t = jnp.broadcast_to(jnp.asarray(TILT_RATES), (rows, len(TILT_RATES)))

    def mgf(acc, factor):
        px, py, off, count = factor
        (up_x, down_x), (up_y, down_y) = (_log_mgfs(pmf, off, t, grid_step)[:2] for pmf in (px, py))
        return tuple(a + count[:, None] * m for a, m in zip(acc, (up_x, down_y, up_y, down_x))), None

    acc = (jnp.zeros(t.shape),) * 4
    for g, c in factor_groups(factors, counts):
        acc, _ = jax.lax.scan(mgf, acc, (g.pmf_x, g.pmf_y, g.offset, c))
    aim = math.log(_TILT_AIM)
    pick = lambda log_mgf: jnp.take_along_axis(t, jnp.argmin((log_mgf - aim) / t, -1)[:, None], -1)[:, 0]
    rates = [pick(acc[0]), pick(acc[1]), _big_rate(acc[2], t, aim, span), _big_rate(acc[3], t, aim, span)]
    points = [jnp.min((a - aim) / t, -1) for a in acc[2:]]  # the big sides' 1e-10 points
    return jnp.stack(rates, -1), (jnp.stack([acc[2], acc[3]], 1), jnp.stack(points, -1))


def _big_rate(log_mgf, t, aim, span):
    """The rate of a big side's tilt: the one of the grid ``t`` with the smallest bound on
    the error at the tail's 1e-10 point s (tilted back): the round-off, at most e^(K(rate)
    - rate s) times ulps, or the circular wrap from one FFT length ``span`` above, at most
    min over t > rate of e^(K(t) - t s - (t - rate) span) (K the log-MGF on the grid)."""
    point = jnp.min((log_mgf - aim) / t, -1, keepdims=True)
    err = log_mgf - t * point + math.log(1e-14)
    wrap = (log_mgf[:, None, :] - t[:, None, :] * point[:, :, None]
            - (t[:, None, :] - t[:, :, None]) * span[:, None, None])
    wrap = jnp.min(jnp.where(t[:, None, :] > t[:, :, None], wrap, jnp.inf), -1)
    best = jnp.argmin(jnp.maximum(err, wrap), -1)
    return jnp.take_along_axis(t, best[:, None], -1)[:, 0]


def tilt_rates(factors, counts, step, span) -> tuple[Any, tuple[Any, Any]]:
    """Rates (rows, 4) of a companion's tilts (:func:`tilted_laws`): for X's upper tail, the
    rate t >= 1 of the Chernoff bound Pr[X >= s] <= E[e^(tX)] e^(-ts) at its 1e-10 point s
    (where mu's box ends), so that the tilted law peaks there and the FFT's round-off is
    relative to the masses that matter; for Y's lower, Y's upper and X's lower tails
    likewise (the big sides' rates also weigh the circular wrap: :func:`_big_rate`, ``span``
    (rows,) the loss span of each row's FFT length). Any rate is valid (the tilt is exact);
    these make the tails precise down to ~1e-10 and beyond. Also returns the composed
    log E[e^(tY)] and log E[e^(-tX)] (rows, 2, len(TILT_RATES)) at the rates t of
    :data:`TILT_RATES` (upper bounds, as for the window), which bound the mass the FFT's
    circular wrap adds to the big sides' tilted laws, and their 1e-10 points (rows, 2)."""
    return _tilt_kernel(factors, counts, step, jnp.asarray(np.asarray(span, np.float64)))  # on the device: no wait
