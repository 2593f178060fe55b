"""The FFT's round-off, booked on the safe side of a composed dominating pair.

Raising a spectrum to the power T costs ~T ulps per frequency, so every point of an FFT
composition carries an absolute error of up to ~T ulps of its spectrum's mean modulus (a
Gaussian composed 5 times at grid 3e-3 erred by 2e-19 beside masses of 1e-20 in its tail, which made
epsilon(1e-18) 46.06 for a true 46.84). :func:`roundoff` bounds it per point;
:func:`safe_bounds` turns each law's values into a lower and an upper bound on the exact
composition's mass at every point; :func:`meet` makes one law of those bounds and the law's
total:

* Y takes its upper bounds from the top and its lower bounds from the bottom, so that every
  tail sum Pr[Y > x] is at least, and every head sum Pr[Y <= x] at most, the exact
  composition's;
* X the other way round (heads at least, tails at most the exact composition's).

Every threshold event then reads a Pr[Y > x] on or above the truth and a Pr[X > x] on or
below it (and the reverse direction's Pr[X < x], Pr[Y < x] likewise), at every x: every
delta(epsilon), at any epsilon, epsilon(delta), beta(alpha) and the advantage are on the
safe side of the exact composition's, also where the raw values are round-off (up to the
exact-ratio atoms that keep far tails' likelihood ratios, :func:`safe_bounds`). Scaling
upper bounds down to the total instead lowers tails near 1 by the whole excess (n points'
round-off): 5e-14 below the truth at delta(50) of a Gaussian with mu = 20, and epsilon at
delta = 1 - 1e-12 of a Gaussian with mu = 15.8 2.4% below it.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from . import grid as _grid
from .analyse import mass_deficit

#: Round-off bound of an FFT composition on the safe side (:func:`roundoff`): each point of
#: the inverse FFT is a sum over the n frequencies of the composed spectrum S (divided by
#: n), each carrying ~(T + log2 n) ulps of its modulus (T from the power, log2 n from the
#: transforms), so a point's error is at most ~(T + log2 n) x 2^-53 x mean_k |S_k|
#: (:func:`spectrum_scale`), however the law is padded. mean_k |S_k| is at least the law's
#: largest mass (every mass is a mean of S_k e^(2 pi i j k / n)); for a law of one mode it
#: is about equal to it, for a lattice law (randomized response: atoms 200 points apart)
#: several times larger, and the largest mass then fell short (10 steps of randomized
#: response at epsilon 1 erred by 4.5e-15 beside a bound of 2.5e-15 at its atoms).
#: ROUNDOFF_ULPS allows each point that many times the estimate. Measured with the largest
#: mass in its place (Gaussian and DP-SGD laws, 4 to 10^4 steps, FFTs 1 to 64 times the
#: law's length, 84 cases): at most 0.8 times the unscaled bound.
ROUNDOFF_ULPS = 4.0
#: :func:`meet` sums the bounds' gaps in blocks of this many points (every padded FFT length,
#: 2^k x {1, 5/4, 3/2, 7/4} >= 256, is a multiple of it).
MEET_BLOCK = 64


def spectrum_scale(spec, length):
    """mean_k |S_k| over the ``length`` frequencies of each row of a real law's half
    spectrum ``spec`` (rows, length // 2 + 1; ``length`` even): the scale of the inverse
    FFT's round-off at every point (:data:`ROUNDOFF_ULPS`)."""
    mag = jnp.abs(spec)
    return (2.0 * jnp.sum(mag, -1) - mag[:, 0] - mag[:, -1]) / length


def roundoff(scale, steps, length):
    """Bound (rows, 1) on the round-off of every point of an FFT composition's output of
    ``steps`` (rows,) composed steps of scale ``scale`` (rows,: mean |S_k|,
    :func:`spectrum_scale`, or a value below it such as the largest mass): ROUNDOFF_ULPS x
    2^-53 x (T + log2 L) x the scale (see :data:`ROUNDOFF_ULPS`)."""
    ulps = ROUNDOFF_ULPS * 2.0**-53 * (steps + jnp.log2(jnp.asarray(length, jnp.float64)))
    return (ulps * scale)[:, None]


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


def safe_bounds(comp_x, comp_y, offset, grid_step, eta_x, eta_y, exact_ratio, mean_x, mean_y):
    """Upper bounds on the exact composition's masses at every point, how far below them the
    masses may lie, and the exact-ratio atoms added to them, (upper_x, gap_x, added_x,
    upper_y, gap_y, added_y), each (rows, n), from the FFT's values ``comp_x``, ``comp_y``
    (the point j at the loss (offset + j) step) and each point's round-off bound ``eta_x``,
    ``eta_y`` (rows, 1, :func:`roundoff`): the value plus eta, and down to the value less
    eta (at least 0).

    With ``exact_ratio`` (the exact composition has Pr[X = x] = e^-x Pr[Y = x]) each small
    side (X above the loss 0, Y below it) has as its lower bound e^-|x| times the other
    law's, which keeps its relative precision far below the FFT's absolute round-off, and
    gap 0: :func:`meet` keeps a law's upper bounds from its big side's end and meets the
    lower bounds there (else the mass is closed as before the bounds, see
    :func:`safe_masses`), so a small side's upper bounds are never read. Where the other
    law is in its far tail (beyond its mean ``mean_x`` / ``mean_y``, rows) and its value is
    round-off (below 2 eta), an exact-ratio atom is added (``added``, apart from ``upper``;
    :func:`safe_masses` adds it): the other law's gap on it and e^-|x| times that on the small side, so that
    every label keeps both masses and the likelihood ratio e^x (epsilon stays finite). An
    exact-ratio atom of non-negative mass keeps a pair dominating (at a threshold
    t >= epsilon its part of delta(epsilon), a - e^epsilon e^-x a with x > t, is not
    negative); its masses are fixed points of the law (gap 0) inside its total: each law
    still sums to 1 less its infinite atom, which the risk kernels' complements assume, and
    the atoms' halves on the small sides (e^-|x| times a gap in the other law's far tail)
    are the only masses a tail may read beyond the exact composition's."""
    low_x, low_y = jnp.maximum(comp_x - eta_x, 0.0), jnp.maximum(comp_y - eta_y, 0.0)
    # (value + eta) - max(value - eta, 0), without forming the upper bound
    gap_x = jnp.clip(comp_x, 0.0, eta_x) + eta_x
    gap_y = jnp.clip(comp_y, 0.0, eta_y) + eta_y
    if not exact_ratio:
        zero = jnp.zeros_like(low_x)
        return low_x + gap_x, gap_x, zero, low_y + gap_y, gap_y, zero
    n = comp_x.shape[-1]
    index = _grid.loss_grid(offset, n, 1)
    x = index * grid_step
    shrink = _exp_abs_loss(offset, n, grid_step)  # e^-|x|
    far_y = (x > mean_y[:, None]) & (comp_y < 2.0 * eta_y)  # Y's far upper tail, at round-off
    far_x = (x < mean_x[:, None]) & (comp_x < 2.0 * eta_x)
    # the atoms: in Y's far upper tail Y's gap on Y and e^-x times it on X; in X's far lower
    # tail X's gap on X and e^x times it on Y
    far_y, far_x = far_y & (index > 0), far_x & (index < 0)
    added_x = jnp.where(far_x, gap_x, jnp.where(far_y, shrink * gap_y, 0.0))
    added_y = jnp.where(far_y, gap_y, jnp.where(far_x, shrink * gap_x, 0.0))
    gap_x = jnp.where((index > 0) | far_x, 0.0, gap_x)
    gap_y = jnp.where((index < 0) | far_y, 0.0, gap_y)
    return (jnp.where(index > 0, shrink * low_y, low_x) + gap_x, gap_x, added_x,
            jnp.where(index < 0, shrink * low_x, low_y) + gap_y, gap_y, added_y)


def _crossing(sums, target):
    """For running sums of ``sums`` (rows, m) in order: the first k whose running sum
    reaches ``target`` (rows, 1; m where none does), k clipped to m - 1, and the running sum
    before k. A cumulative sum over m values (m small: XLA's cumsum on CPU is a
    reduce-window, quadratic in m)."""
    run = jnp.cumsum(sums, -1)
    k = jnp.sum(run < target, -1, keepdims=True)
    kk = jnp.minimum(k, sums.shape[-1] - 1)
    return k, kk, jnp.take_along_axis(run, kk, -1) - jnp.take_along_axis(sums, kk, -1)


def meet(upper, gap, excess, keep_top: bool):
    """One law (rows, n) between ``upper - gap`` and ``upper`` whose masses fall short of the
    upper bounds by ``excess`` (rows,) in all: upper bounds kept from the top (``keep_top``)
    or the bottom, lower bounds from the other end, and at the point c where they meet the
    rest. With U the sum of upper bounds beyond a point and L of lower bounds before it,
    every tail sum (from the top: heads) is then at least, and every head sum at most, those
    of any law between the bounds with that total. Returns the masses and the part of
    ``excess`` the gaps could not take (rows,; > 0 only when the lower bounds sum above the
    total).

    c is found in three levels of :data:`MEET_BLOCK` (points, blocks, groups of blocks): one
    pass over the points for the block sums, then running sums over a few hundred values at
    most. The gaps are round-off, so their sums are precise absolutely."""
    rows, n = upper.shape
    size = MEET_BLOCK
    blocks = gap.reshape(rows, n // size, size)
    block_sums = jnp.sum(blocks, -1)  # (rows, nb), natural order
    order = block_sums if keep_top else jnp.flip(block_sums, -1)  # the order the gaps are taken in
    nb = order.shape[-1]
    groups = -(-nb // size)
    padded = jnp.pad(order, ((0, 0), (0, groups * size - nb))).reshape(rows, groups, size)
    target = excess[:, None]
    g, gg, before_g = _crossing(jnp.sum(padded, -1), target)
    _, bb, before_b = _crossing(jnp.take_along_axis(padded, gg[:, :, None], 1)[:, 0, :], target - before_g)
    k = jnp.minimum(gg * size + bb, nb - 1)  # the block of c, in taking order
    block = k if keep_top else nb - 1 - k
    within = jnp.take_along_axis(blocks, block[:, :, None], 1)[:, 0, :]
    within = within if keep_top else jnp.flip(within, -1)
    _, ii, before_i = _crossing(within, target - before_g - before_b)
    c = block * size + (ii if keep_top else size - 1 - ii)
    g_c = jnp.take_along_axis(within, ii, -1)
    at_c = jnp.clip(target - before_g - before_b - before_i, 0.0, g_c)
    j = jnp.arange(n)[None, :]
    taken = jnp.where((j < c) if keep_top else (j > c), gap, jnp.where(j == c, at_c, 0.0))
    everything = g >= groups  # the gaps sum below the excess: every lower bound
    masses = upper - jnp.where(everything, gap, jnp.where(target > 0.0, taken, 0.0))
    left = jnp.where(everything, target - jnp.sum(block_sums, -1, keepdims=True), 0.0)
    return masses, jnp.maximum(left, 0.0)[:, 0]


def safe_masses(comp_x, comp_y, offset, grid_step, eta_x, eta_y, exact_ratio, mean_x, mean_y, inside, inf_y,
                neginf_x, at_bottom, at_top, x_lo, x_hi) -> tuple[Any, Any, Any, Any]:
    """The composed dominating pair's masses and atoms (pmf_x, pmf_y, inf_y, neginf_x) from
    the FFT's values, its round-off bounds booked on the safe side (:func:`safe_bounds`,
    zero outside each row's window ``inside``, rows x n) and each law made one law of its
    bounds and its total (1 less its atom; the exact-ratio atoms of far tails fixed points
    of it): Y tail-heavy, X head-heavy (:func:`meet`).

    Where the upper bounds sum below the total (the single steps' own rounding: a
    subsampled Laplace's masses), the missing Y-mass goes to the window's last point
    ``at_top`` (loss ``x_hi``) with e^-x_hi times it as X-mass, the missing X-mass to its
    first point ``at_bottom`` (``x_lo``) with e^x_lo times it as Y-mass: Q-mass moved up
    (P-mass down) with the likelihood ratio of its new label, so the pair still dominates
    and epsilon stays finite (on the +inf atom every delta below it would give an infinite
    epsilon; without ``exact_ratio`` it goes there). A law left above its total (its lower
    bounds alone, or a partner mass) is scaled down to it."""
    upper_x, gap_x, added_x, upper_y, gap_y, added_y = (jnp.where(inside, a, 0.0) for a in safe_bounds(
        comp_x, comp_y, offset, grid_step, eta_x, eta_y, exact_ratio, mean_x, mean_y))
    upper_x, upper_y = upper_x + added_x, upper_y + added_y
    # each law's upper bounds' excess over its total, 1 less its atom (summed in blocks
    # first: one pass over the points, then exactly over the block sums, the blocks' own
    # rounding ~1e-16 of the total, as the risk kernels' running sums)
    excess_y, excess_x = (-mass_deficit(jnp.sum(u.reshape(u.shape[0], -1, MEET_BLOCK), -1), atom)
                          for u, atom in ((upper_y, inf_y), (upper_x, neginf_x)))
    pmf_y, over_y = meet(upper_y, gap_y, excess_y, keep_top=True)
    pmf_x, over_x = meet(upper_x, gap_x, excess_x, keep_top=False)
    short_y, short_x = jnp.maximum(-excess_y, 0.0), jnp.maximum(-excess_x, 0.0)
    if exact_ratio:
        x_part = jnp.exp(-jnp.maximum(x_hi, -700.0)) * short_y  # 0 past ~745 nats, as every P-mass there
        d_x = jnp.maximum(short_x - x_part, 0.0)
        y_part = jnp.exp(jnp.minimum(x_lo, 700.0)) * d_x
        pmf_y = pmf_y + jnp.where(at_top, short_y[:, None], 0.0) + jnp.where(at_bottom, y_part[:, None], 0.0)
        pmf_x = pmf_x + jnp.where(at_top, x_part[:, None], 0.0) + jnp.where(at_bottom, d_x[:, None], 0.0)
        over_y, over_x = over_y + y_part, over_x + jnp.maximum(x_part - short_x, 0.0)
    else:
        inf_y, neginf_x = jnp.minimum(inf_y + short_y, 1.0), jnp.minimum(neginf_x + short_x, 1.0)

    def scaled(pmf, over, atom):
        kept = 1.0 - atom
        return pmf * jnp.where(over > 0.0, kept / (kept + over), 1.0)[:, None]

    return scaled(pmf_x, over_x, neginf_x), scaled(pmf_y, over_y, inf_y), inf_y, neginf_x
