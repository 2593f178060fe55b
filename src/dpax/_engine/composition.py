"""Composition of discrete PLRVs by FFT (Kulynych et al. 2024, Appendix E.1).

Under composition the PLRVs add: X = X_1 + ... + X_T under P^T and Y = Y_1 + ... + Y_T
under Q^T, so both pmfs are convolution powers (products of their spectra). The +inf atom
of Y survives only if no step hit it: Pr[Y = +inf] = 1 - prod_i (1 - Pr[Y_i = +inf])^{T_i};
likewise for X's -inf atom.

The composed support is bounded by Chernoff: for every t > 0,
Pr[S >= h] <= exp(sum_i T_i K_i(t) - t h) with K_i the log-moment generating function of
the (finite part of the) i-th pmf, computed exactly from the discrete masses. The output
window [lo, hi] is chosen so that each of the four tails (X and Y, both sides) holds at
most ``TAIL_MASS`` = 1e-18; the circular convolution of length L >= hi - lo + 1 then
aliases at most that much mass. The Chernoff bounds of the mass cut off at lo and hi are
booked on the infinite atoms (Y's on +inf, X's on -inf), so every delta(epsilon) stays at or
above the exact composition's however far the window ends; epsilon(delta) is +inf for a
delta below them (~1e-18).

The FFT itself leaves absolute round-off at every point: raising a spectrum to the power T
costs ~T ulps per frequency, so each point carries up to ~T ulps of the law's peak (measured:
a Gaussian composed 5 times at grid 3e-3 erred by 2e-19 beside masses of 1e-20 in its tail,
which made epsilon(1e-18) 46.06 for a true 46.84). Each point's bound (:func:`roundoff`) is
booked on the safe side (:func:`bounded_masses`: upper bounds where a law is large, lower
bounds where it is small, the two laws kept in the ratio e^x in their far tails), so risks
read from tails below the round-off are pessimistic (by about the round-off: K points of
tail carry ~K times the bound) instead of noise; nothing is negative.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np

from . import batching as _batching
from . import cache as _cache
from . import grid as _grid
from .construct import close_mass
from .pair import Pair

#: Mass each tail of the composition may leave outside the output window (see above).
TAIL_MASS = 1e-18
#: Round-off bound of an FFT composition on the safe side (:func:`roundoff`): each point of
#: the inverse FFT is a sum over the n frequencies of the composed spectrum S (divided by
#: n), each carrying ~(T + log2 n) ulps of its modulus (T from the power, log2 n from the
#: transforms), so a point's error is at most ~(T + log2 n) x 2^-53 x mean_k |S_k|, however
#: the law is padded (the companion's model in ||law||_2 / sqrt(n),
#: :data:`dpax._engine.optimistic.FFT_ULPS`, shrinks with padding: DP-SGD's 2000
#: steps at noise 4, sample rate 0.002, ~800 points, in an FFT of 2^19 points erred 29 times
#: that model). mean_k |S_k| is at least the law's largest mass and, for a law of one mode
#: (or a lattice of them), about equal to it; the bound takes the largest mass (a cheap
#: reduction over the output, where mean |S_k| would cost a fifth of an inverse FFT) and
#: allows each point ROUNDOFF_ULPS times that. Measured (Gaussian and DP-SGD laws, 4 to 10^4
#: steps, FFTs 1 to 64 times the law's length, 84 cases): at most 0.8 times the unscaled bound.
ROUNDOFF_ULPS = 4.0
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


@functools.partial(_cache.kernel, name="window")
@jax.jit
def window_kernel(factors: tuple[Pair, ...], counts: tuple, grid_step) -> Window:
    """Chernoff window [lo, hi] (grid indices) of the composition of ``counts[k]`` copies of
    each factor k (rows, n_k). Factors of one support length are stacked and looped over
    (``lax.scan``, see :func:`_groups`), so the traced graph grows with the number of
    distinct lengths only, and no factor is padded."""
    log_tail = math.log(TAIL_MASS)
    groups = _groups(factors, counts)
    rows = factors[0].pmf_x.shape[0]

    def variance(acc, factor):
        px, py, off, count = factor
        loss = _grid.loss_grid(off, px.shape[-1], grid_step)
        (mean_x, var_x), (mean_y, var_y) = _moments(px, loss), _moments(py, loss)
        return (acc[0] + count * jnp.maximum(var_x, var_y), acc[1] + count * mean_y, acc[2] + count * mean_x), None

    moments = (jnp.zeros(rows),) * 3
    for g, c in groups:
        moments, _ = jax.lax.scan(variance, moments, (g.pmf_x, g.pmf_y, g.offset, c))
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
        acc, _ = jax.lax.scan(mgf, acc, (g.pmf_x, g.pmf_y, g.offset, c))
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


def _rfft_folded(pmf, length, shift=None):
    """Spectrum of each row's masses placed circularly from position 0: position j holds
    the loss (offset + j) * step, so a row's composed sum starts at sum(count * offset).
    A row longer than ``length`` wraps around (aliasing is exact); a shorter one is only
    zero-padded, which the FFT does itself. ``shift`` (rows,): place each row ``shift``
    positions earlier instead (position j holds the loss (offset + shift + j) * step)."""
    n = pmf.shape[-1]
    if shift is not None:
        pos = jnp.mod(jnp.arange(n)[None, :] - shift[:, None], length)
        pmf = jnp.zeros(pmf.shape[:-1] + (length,), pmf.dtype).at[jnp.arange(pmf.shape[0])[:, None], pos].add(pmf)
    elif n > length:
        pos = jnp.arange(n) % length
        pmf = jnp.zeros(pmf.shape[:-1] + (length,), pmf.dtype).at[:, pos].add(pmf)
    return jnp.fft.rfft(pmf, n=length)


def power_bits(counts) -> int:
    """Static bit budget of :func:`_spectrum_power` for these counts: the largest count's bit
    length rounded up to a multiple of 4 (few compiled variants; a spare bit costs one
    squaring)."""
    top = max((int(np.max(np.asarray(c))) for c in counts), default=0)
    return max(4, -(-max(top, 1).bit_length() // 4) * 4)


def _spectrum_power(spec, count, bits):
    """spec ** count per row by binary exponentiation (``bits`` >= count's bit length):
    ``bits`` squarings and selects, which XLA fuses into one pass. Four times cheaper than
    exp(count * log spec) in complex arithmetic, with the same ~count ulp relative error."""
    result = jnp.ones_like(spec)
    base = spec
    for i in range(bits):
        result = jnp.where(((count >> i) & 1)[:, None] == 1, result * base, result)
        if i + 1 < bits:
            base = base * base
    return result


def use_exact_ratio(pmf_x, pmf_y, offset, grid_step):
    """Where the pair satisfies Pr[X = x] = e^-x Pr[Y = x] exactly (every factor did), take
    each side from the larger of the two: X from Y at losses > 0 and Y from X below 0.

    The FFT leaves absolute round-off of ~1e-16 x the largest mass everywhere, so the
    far upper tail of X (which is e^-x times smaller than Y's) and the far lower tail of Y
    would be noise; rebuilt this way they keep the relative precision of the other side,
    which makes epsilon(delta) and delta(epsilon) right down to tiny delta.
    """
    n = pmf_x.shape[-1]
    index = _grid.loss_grid(offset, n, 1)
    shrink = _exp_abs_loss(offset, n, grid_step)
    return jnp.where(index > 0, pmf_y * shrink, pmf_x), jnp.where(index < 0, pmf_x * shrink, pmf_y)


#: :func:`_exp_abs_loss` multiplies exponentials of block starts by those of offsets within
#: blocks of this many points.
EXP_BLOCK = 256


def _exp_abs_loss(offset, n, grid_step):
    """e^-|x| at x = (offset + j) step, j = 0..n-1 (rows, n): products of the exponentials of
    the block starts (offset + B b) step and of the offsets i step within blocks of
    B = EXP_BLOCK (x = (offset + B b + i) step), one for each sign of x; within ~3 ulps of
    exp(-|x|), at two small tables of exponentials instead of one per point."""
    blocks = -(-n // EXP_BLOCK)
    start = (offset[:, None] + EXP_BLOCK * jnp.arange(blocks)[None, :]) * grid_step  # (rows, blocks)
    within = jnp.arange(EXP_BLOCK) * grid_step
    down = jnp.exp(-start)[:, :, None] * jnp.exp(-within)  # e^-x
    up = jnp.exp(jnp.minimum(start, 0.0))[:, :, None] * jnp.exp(within)  # e^x, where x < 0
    positive = (offset[:, None, None] + EXP_BLOCK * jnp.arange(blocks)[None, :, None] + jnp.arange(EXP_BLOCK)) > 0
    return jnp.where(positive, down, up).reshape(offset.shape[0], blocks * EXP_BLOCK)[:, :n]


def _spectra(laws, count, length, bits, shift=None):
    """Spectra of the laws (X and Y, and the tilted laws of a companion) raised to
    ``count``, stacked (k * rows, length // 2 + 1): one batched FFT for all of them (the FFT
    library runs a batch on all cores)."""
    if shift is not None:
        shift = jnp.concatenate([shift] * len(laws))
    spec = _rfft_folded(jnp.concatenate(laws, 0), length, shift)
    return _spectrum_power(spec, jnp.concatenate([count] * len(laws)), bits)


def tilted_laws(pmf_x, pmf_y, offset, grid_step, theta):
    """X, Y and the tilted laws of a factor (rows, n) at its losses x, ``theta`` (rows, 4)
    the rates: X e^(t0 x) and Y e^(-t1 x) (the small sides' tails: X above 0, Y below 0),
    Y e^(t2 x) and X e^(-t3 x) (the big sides' far tails). The tilt commutes with
    composition, (X e^(t x))^(*T) = X^(*T) e^(t s), so the composed tilted laws give a
    companion's tails with the FFT's round-off relative to the tilted law's size there
    instead of the law's own (:func:`dpax._engine.optimistic.reclose`)."""
    x = _grid.loss_grid(offset, pmf_x.shape[-1], grid_step)
    tilt = lambda pmf, rate: jnp.where(pmf > 0, pmf * jnp.exp(rate * x), 0.0)
    return (pmf_x, pmf_y, tilt(pmf_x, theta[:, :1]), tilt(pmf_y, -theta[:, 1:2]), tilt(pmf_y, theta[:, 2:3]),
            tilt(pmf_x, -theta[:, 3:]))


def roundoff(peak, steps, length):
    """Bound (rows, 1) on the round-off of every point of an FFT composition's output of
    ``steps`` (rows,) composed steps whose largest value is ``peak`` (rows,): ROUNDOFF_ULPS
    x 2^-53 x (T + log2 L) x the peak (see :data:`ROUNDOFF_ULPS`)."""
    ulps = ROUNDOFF_ULPS * 2.0**-53 * (steps + jnp.log2(jnp.asarray(length, jnp.float64)))
    return (ulps * peak)[:, None]


def bounded_masses(comp_x, comp_y, offset, grid_step, eta_x, eta_y, exact_ratio, mean_x, mean_y):
    """The composed masses (rows, n) of a dominating pair from the FFT's values ``comp_x``,
    ``comp_y`` (the point j at the loss (offset + j) step, rows x n), with each point's
    modelled round-off ``eta_x``, ``eta_y`` (rows, 1, :func:`roundoff`) booked on the safe
    side.

    The big sides (Y above 0, X below 0) get their upper bounds (value plus eta); the small
    sides (X above 0, Y below 0, both at 0) their lower bounds (value less eta, at least 0;
    with ``exact_ratio``, e^-|x| times the other law's lower bound, which keeps their
    relative precision far below the FFT's absolute round-off), except where the other law
    is in its far tail (beyond its mean ``mean_x`` / ``mean_y``, rows) and its value is
    round-off (below 2 eta): there e^-|x| times its upper bound, so that every label keeps
    both masses and the likelihood ratio e^x (epsilon stays finite). Every point of the
    result then differs from the exact composition's by an exact-ratio atom of
    non-negative mass (upper bounds) or by mass removed from a small side (lower bounds):
    every Pr[Y > x] (x >= 0) and Pr[X < x] (x <= 0) is at least the exact composition's,
    every Pr[X > x] (x >= 0) and Pr[Y < x] (x <= 0) at most, and every delta(epsilon >= 0),
    epsilon(delta) and the advantage at least the exact composition's, also in tails where
    the raw values are round-off."""
    n = comp_x.shape[-1]
    index = _grid.loss_grid(offset, n, 1)
    up_x, up_y = jnp.maximum(comp_x, 0.0) + eta_x, jnp.maximum(comp_y, 0.0) + eta_y
    low_x, low_y = jnp.maximum(comp_x - eta_x, 0.0), jnp.maximum(comp_y - eta_y, 0.0)
    if exact_ratio:
        x = index * grid_step
        far_y = (x > mean_y[:, None]) & (comp_y < 2.0 * eta_y)  # Y's far upper tail, at round-off
        far_x = (x < mean_x[:, None]) & (comp_x < 2.0 * eta_x)
        small_x, small_y = use_exact_ratio(jnp.where(far_x, up_x, low_x), jnp.where(far_y, up_y, low_y), offset,
                                           grid_step)
    else:
        small_x, small_y = low_x, low_y
    return (jnp.where(index < 0, up_x, jnp.where(index > 0, small_x, low_x)),
            jnp.where(index > 0, up_y, jnp.where(index < 0, small_y, low_y)))


def close_bounded(pmf_x, pmf_y, inf_y, neginf_x, at_bottom, at_top, x_lo, x_hi):
    """:func:`dpax._engine.construct.close_mass` for the masses of :func:`bounded_masses`
    of an exact-ratio pair, with ``at_bottom`` / ``at_top`` (rows, n) the window's first and
    last points (losses ``x_lo``, ``x_hi``, rows). Missing Y-mass (the small side's lower
    bounds took it from labels whose X-mass stayed) goes to the last point with X-mass
    e^-x_hi times it: Q-mass moved up (its atom split, the part moved given the ratio of
    its new label), so the pair still dominates, and its epsilon stays finite (on the +inf
    atom, every delta below it would give an infinite epsilon); missing X-mass likewise to
    the first point with e^x_lo times it as Y-mass. Excess mass (the big sides' upper
    bounds, T ulps a point) is scaled away: a tail sum moves by at most that excess,
    relatively."""
    total_y, total_x = jnp.sum(pmf_y, -1), jnp.sum(pmf_x, -1)
    d_y = jnp.maximum(1.0 - inf_y - total_y, 0.0)
    x_part = jnp.exp(-jnp.maximum(x_hi, -700.0)) * d_y  # 0 past ~745 nats, as every P-mass there
    d_x = jnp.maximum(1.0 - neginf_x - (total_x + x_part), 0.0)
    y_part = jnp.exp(jnp.minimum(x_lo, 700.0)) * d_x
    pmf_y = pmf_y + jnp.where(at_top, d_y[:, None], 0.0) + jnp.where(at_bottom, y_part[:, None], 0.0)
    pmf_x = pmf_x + jnp.where(at_top, x_part[:, None], 0.0) + jnp.where(at_bottom, d_x[:, None], 0.0)
    total_y, total_x = total_y + d_y + y_part, total_x + x_part + d_x

    def scale(pmf, total, atom):
        over = total > 1.0 - atom
        return pmf * jnp.where(over, (1.0 - atom) / jnp.where(over, total, 1.0), 1.0)[:, None]

    return scale(pmf_x, total_x, neginf_x), scale(pmf_y, total_y, inf_y), inf_y, neginf_x


def _finish(spec, start, neglog_fin_y, neglog_fin_x, window: Window, grid_step, length, exact_ratio, aligned=False,
            tilted=False, steps=None):
    """Back from the frequency domain (X's spectra stacked over Y's) onto each row's window
    [lo, hi] (rows, length); returns the PLRV arrays with their offsets.

    The circular position of the window's first point ``lo`` is (lo - start) mod length,
    where position 0 holds the loss ``start``; the rows are rolled to put it first. With
    ``aligned`` (the factors were placed so that lo - start lies in [0, length - width])
    the rows are kept as they are, offset ``start``, with zeros before the window.

    A batch shares one FFT length, the widest row's; past its own Chernoff window ``hi``
    (at most ``TAIL_MASS`` there) a narrower row would only carry FFT round-off, which
    can be relatively large in its far tails, so it is zeroed there. The mass the window
    cuts (its Chernoff bounds, :class:`Window`) is booked on the infinite atoms (Y's on
    +inf, X's on -inf): the +inf atom bounds every delta below, so epsilon(delta) is inf
    for a delta below it instead of read from a truncated tail. Inside the window each
    point's round-off bound (``steps`` (rows,) composed steps, :func:`roundoff`) is booked
    on the safe side (:func:`bounded_masses`), and the mass closed (:func:`close_bounded`
    for an exact-ratio pair; else missing mass on the infinite atoms).

    ``tilted``: the spectra also hold a companion's tilted laws (:func:`tilted_laws`);
    returns the pair and the :class:`Pair` of each two composed tilted laws (atoms 0),
    the FFT's values as they are (the companion books its round-off itself,
    :func:`dpax._engine.optimistic.reclose`).
    """
    lo, hi = window.lo, window.hi
    rows = lo.shape[0]
    laws = 6 if tilted else 2
    comp = jnp.fft.irfft(spec, n=length)
    # each law's largest value, read from the transform's output itself (before any roll or
    # slice, which would be copied for a reduction of their own)
    peak = jnp.max(comp, -1)
    pos = jnp.arange(length)[None, :]
    if aligned:
        first = (lo - start)[:, None]
        inside = (pos >= first) & (pos - first <= (hi - lo)[:, None])
        offset = start
    else:
        shift = jnp.mod(lo - start, length)  # the window's first point, as a circular position
        comp = jax.vmap(lambda c, k: jnp.roll(c, -k))(comp, jnp.concatenate([shift] * laws))
        inside = pos <= (hi - lo)[:, None]
        offset = lo
    inf_y, neginf_x = -jnp.expm1(neglog_fin_y), -jnp.expm1(neglog_fin_x)
    if tilted:
        pmf_x = jnp.where(inside, jnp.maximum(comp[:rows], 0.0), 0.0)
        pmf_y = jnp.where(inside, jnp.maximum(comp[rows:2 * rows], 0.0), 0.0)
        if exact_ratio:
            pmf_x, pmf_y = use_exact_ratio(pmf_x, pmf_y, offset, grid_step)
        pmf_x, pmf_y, inf_y, neginf_x = close_mass(pmf_x, pmf_y, inf_y, neginf_x)
    else:
        comp_x, comp_y = comp[:rows], comp[rows:]
        pmf_x, pmf_y = bounded_masses(comp_x, comp_y, jnp.broadcast_to(offset, (rows,)), grid_step,
                                      roundoff(peak[:rows], steps, length), roundoff(peak[rows:], steps, length),
                                      exact_ratio, window.mean_x, window.mean_y)
        pmf_x, pmf_y = jnp.where(inside, pmf_x, 0.0), jnp.where(inside, pmf_y, 0.0)
        inf_y, neginf_x = jnp.minimum(inf_y + window.cut_y, 1.0), jnp.minimum(neginf_x + window.cut_x, 1.0)
        if exact_ratio:
            bottom = jnp.broadcast_to(first if aligned else jnp.zeros((rows, 1), jnp.int64), (rows, 1))
            at_bottom, at_top = pos == bottom, pos == bottom + (hi - lo)[:, None]
            pmf_x, pmf_y, inf_y, neginf_x = close_bounded(pmf_x, pmf_y, inf_y, neginf_x, at_bottom, at_top,
                                                          lo * grid_step, hi * grid_step)
        else:
            pmf_x, pmf_y, inf_y, neginf_x = close_mass(pmf_x, pmf_y, inf_y, neginf_x)
    pair = Pair(pmf_x, pmf_y, offset, inf_y, neginf_x)
    if not tilted:
        return pair
    xt, yt, yu, xd = (jnp.where(inside, jnp.maximum(comp[k * rows:(k + 1) * rows], 0.0), 0.0) for k in range(2, 6))
    zero = jnp.zeros(rows)
    offset = jnp.broadcast_to(offset, (rows,))
    return pair, Pair(xt, yt, offset, zero, zero), Pair(xd, yu, offset, zero, zero)


@functools.partial(_cache.kernel, name="fft_compose")
@functools.partial(jax.jit, static_argnames=("length", "exact_ratio", "bits", "aligned"))
def fft_compose_kernel(factors: tuple[Pair, ...], counts: tuple, window: Window, grid_step, theta=None, *, length,
                       exact_ratio, bits, aligned=False) -> Pair:
    """Convolution of ``counts[k]`` copies of each factor (rows, n_k) on the window, the
    spectra multiplied in a ``lax.scan`` over each group of equal-length factors.

    ``aligned`` (one factor, every count >= 1 and below length - width + 1): the factor is
    placed floor((lo - start) / count) positions early, so that the composed window starts
    within ``count`` positions of position 0 and needs no roll (see :func:`_finish`).
    ``theta`` (rows, 4), for a companion: the tilted laws are composed too, in the same
    batched FFT (:func:`tilted_laws`); returns (pair, small sides' tilted pair, big sides'
    tilted pair).
    """
    rows = factors[0].pmf_x.shape[0]
    laws = 2 if theta is None else 6

    def body(carry, factor):
        spec, start, fin_y, fin_x = carry
        px, py, off, iy, nx, count = factor
        pmfs = (px, py) if theta is None else tilted_laws(px, py, off, grid_step, theta)
        shift = jnp.floor_divide(window.lo - count * off, count) if aligned else None
        off = off + shift if aligned else off
        spec = spec * _spectra(pmfs, count, length, bits, shift)
        return (spec, start + count * off, fin_y + count * jnp.log1p(-iy), fin_x + count * jnp.log1p(-nx)), None

    zero = jnp.zeros(rows)
    carry = (jnp.ones((laws * rows, length // 2 + 1), jnp.complex128), jnp.zeros(rows, jnp.int64), zero, zero)
    for g, c in _groups(factors, counts):
        carry, _ = jax.lax.scan(body, carry, (*g, c))
    spec, start, neglog_fin_y, neglog_fin_x = carry
    steps = sum(jnp.asarray(c, jnp.float64) for c in counts)
    return _finish(spec, start, neglog_fin_y, neglog_fin_x, window, grid_step, length, exact_ratio, aligned,
                   theta is not None, steps)


def _groups(factors, counts) -> list[tuple[Pair, Any]]:
    """The factors grouped by support length (in order of first appearance), each group
    stacked on a new axis 0 (K_g, rows, n_g) with its counts (K_g, rows). Inside the
    kernels: no eager stacking kernels of their own, and no factor padded to a longer one."""
    by_length: dict[int, list] = {}
    for f, c in zip(factors, counts):
        by_length.setdefault(f.support_length, []).append((f, c))
    return [(Pair(*(jnp.stack([jnp.asarray(f[i]) for f, _ in group]) for i in range(5))),
             jnp.stack([jnp.asarray(c, jnp.int64) for _, c in group]))
            for group in by_length.values()]


#: Bytes per row and factor grid point that the kernels' stacked (and, when chunked,
#: gathered) copies of the factors take, besides their per-point working memory.
_FACTOR_BYTES = 32


class _Plan(NamedTuple):
    """Host-side plan of one composition: each row's window, FFT length and placement."""

    lo: np.ndarray
    hi: np.ndarray
    length: np.ndarray  #: each row's own FFT length
    aligned: np.ndarray  #: each row's own placement (see :func:`fft_compose_kernel`)
    cut_y: np.ndarray  #: the window's Chernoff bounds and the laws' means (see :class:`Window`)
    cut_x: np.ndarray
    mean_y: np.ndarray
    mean_x: np.ndarray


def _take(factors, counts, index):
    """The rows ``index`` of every factor and count (gathered on the host: no kernel to
    compile for each chunk shape)."""
    return (tuple(Pair(*(np.asarray(a)[index] for a in f)) for f in factors),
            tuple(np.asarray(c)[index] for c in counts))


def _window(factors, counts, step) -> Window:
    """Each row's Chernoff window (host arrays), the rows in chunks that fit the budget."""
    rows = factors[0].pmf_x.shape[0]
    sizes = [f.support_length for f in factors]
    per_row = _grid.BYTES_PER_POINT * max(sizes) + _FACTOR_BYTES * sum(sizes)
    chunk = _grid.rows_per_chunk(rows, per_row, 0, "composition (Chernoff window)",
                                 f"{rows} row(s) of factors with {sum(sizes)} grid points in all")
    if chunk >= rows:
        return Window(*(np.asarray(a) for a in window_kernel(factors, counts, step)))
    out = Window(np.empty(rows, np.int64), np.empty(rows, np.int64), *(np.empty(rows) for _ in range(4)))
    chunk = _batching.chunk_size(chunk)
    for index, real in _batching.row_chunks(rows, chunk):
        w = window_kernel(*_take(factors, counts, index), step)
        for a, b in zip(out, w):
            a[index[:real]] = np.asarray(b)[:real]
    return out


def _plan(factors, counts, step) -> _Plan:
    """Windows, FFT lengths and placements, each row's own: a row's answer does not depend
    on the other rows of its batch (beyond round-off). Inside
    :func:`dpax._engine.grid.shared_lengths` (a search, whose answer is evaluated again on
    its own) the batch shares the longest row's length (or a longer one used before) and
    one placement: one kernel call per round, few shapes to compile."""
    lo, hi, cut_y, cut_x, mean_y, mean_x = _window(factors, counts, step)
    width = hi - lo + 1
    if _grid.sharing():  # a search's batch: one length and placement, few kernel shapes
        length = np.full(width.shape, _grid.padded_length(int(np.max(width)), "compose"), np.int64)
    else:
        sizes, where = np.unique(width, return_inverse=True)
        length = np.array([_grid.padded_length(int(w)) for w in sizes], np.int64)[where.reshape(-1)]
    # one factor whose count fits in the FFT's spare length: placed so that no roll is needed
    # (a search's batches always roll: the placement is a static argument, and the rounds of a
    # search would otherwise compile both variants of their composition kernel)
    aligned = np.zeros(len(width), bool)
    if len(factors) == 1 and not _grid.sharing():
        aligned = (counts[0] >= 1) & (counts[0] <= length - width + 1)
    return _Plan(lo, hi, length, aligned, cut_y, cut_x, mean_y, mean_x)


class Tilted(NamedTuple):
    """A companion's composition (:func:`compose_arrays` with ``tilted``): the pair and its
    composed tilted laws (:func:`tilted_laws`) on the same grid, with their rates."""

    pair: Pair
    tilted: Pair  #: X e^(t0 x) and Y e^(-t1 x) composed (the small sides' tails)
    tilted_big: Pair  #: X e^(-t3 x) and Y e^(t2 x) composed (the big sides' far tails)
    theta: Any  #: (rows, 4): the rates t0..t3
    alias: Any  #: ((rows, 2, m), (rows, 2)): log-MGFs and 1e-10 points bounding tilted_big's wrap
    lo: Any  #: (rows,) each row's window [lo, hi] (grid indices) and FFT length
    hi: Any
    length: Any


def compose_arrays(factors, counts, grid_step, exact_ratio=False, tilted=False) -> Pair | Tilted:
    """Compose pairs of rows (each a :class:`Pair`, (rows, n_k)) with integer counts (rows,)
    on one grid step.

    ``exact_ratio``: every factor has Pr[X = x] = e^-x Pr[Y = x] on its finite points
    (see :func:`use_exact_ratio`). ``tilted`` (optimistic companions): also compose the
    tilted laws (:func:`tilted_laws`, rates from :func:`tilt_rates`) in the same FFTs, and
    return a :class:`Tilted`.

    Host side: one kernel finds each row's Chernoff window; each row gets its own padded FFT
    length (so compiled kernels are reused) and placement, and the rows sharing both are
    convolved by one kernel call, so that a row's answer is the one it has alone. Rows are
    taken in chunks that fit the memory budget (:mod:`dpax._engine.grid`), which is checked
    before every kernel; only an output larger than the budget is refused. The result
    holds every row on the longest length, zero beyond a row's own.
    """
    factors = tuple(Pair(*f) for f in factors)
    counts = tuple(np.broadcast_to(np.asarray(c, np.int64), factors[0].offset.shape) for c in counts)
    step = np.float64(grid_step)
    plan = _plan(factors, counts, step)
    theta, alias = tilt_rates(factors, counts, step, plan.length * step) if tilted else (None, None)
    laws = 6 if tilted else 2
    rows = plan.lo.shape[0]
    keys = sorted(set(zip(plan.length.tolist(), plan.aligned.tolist())), reverse=True)
    out_len = int(plan.length.max())
    sizes = [f.support_length for f in factors]
    detail = f"{rows} row(s) composed onto {out_len} grid points"
    if len(keys) == 1:  # every row the same: one call, or chunks of the batch
        per_row = laws * _grid.BYTES_PER_POINT * out_len + _FACTOR_BYTES * sum(sizes)
        if _grid.rows_per_chunk(rows, per_row, 0, "composition", detail) >= rows:
            out = _convolve(factors, counts, plan, np.arange(rows), step, exact_ratio, keys[0], theta, whole=True)
            # tilted: out is the three composed pairs (pair, tilted, tilted_big)
            return out if theta is None else Tilted(*cast("tuple[Pair, Pair, Pair]", out), theta, alias, plan.lo,
                                                    plan.hi, plan.length)
    _grid.check_bytes(_batching.RowAssembly.size(rows, out_len) * (laws // 2), "composition", detail)
    outs = [_batching.RowAssembly(rows, out_len) for _ in range(laws // 2)]  # (before allocating them)
    for key in keys:
        members = np.flatnonzero((plan.length == key[0]) & (plan.aligned == key[1]))
        per_row = laws * _grid.BYTES_PER_POINT * key[0] + _FACTOR_BYTES * sum(sizes)
        chunk = _grid.rows_per_chunk(members.size, per_row, sum(o.nbytes for o in outs), "composition", detail)
        chunk = _batching.chunk_size(min(chunk, _batching.group_size(members.size)))
        for index, real in _batching.row_chunks(members.size, chunk):
            part = _convolve(factors, counts, plan, members[index], step, exact_ratio, key, theta)
            for out, p in zip(outs, (part,) if theta is None else part):
                out.put(members[index[:real]], p, real)
    if theta is None:
        return outs[0].pair()
    return Tilted(outs[0].pair(), outs[1].pair(), outs[2].pair(), theta, alias, plan.lo, plan.hi, plan.length)


def _convolve(factors, counts, plan: _Plan, index, step, exact_ratio, key, theta=None, whole=False):
    """:func:`fft_compose_kernel` on the rows ``index`` (all of them, in order, if ``whole``)."""
    length, aligned = key
    if not whole:
        factors, counts = _take(factors, counts, index)
    window = Window(plan.lo[index], plan.hi[index], *(a[index] for a in plan[4:]))
    extra = () if theta is None else (theta if whole else jnp.asarray(theta)[jnp.asarray(index)],)
    # a companion's six laws: the exact bit length (no spare squarings, more compiled variants)
    bits = power_bits(counts) if theta is None else max(int(np.max(c)) for c in counts).bit_length()
    return fft_compose_kernel(factors, counts, window, step, *extra, length=int(length), exact_ratio=bool(exact_ratio),
                              bits=max(bits, 1), aligned=bool(aligned))


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
    for g, c in _groups(factors, counts):
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
