"""The round-off of an FFT composition, booked on the safe side.

The FFT leaves absolute round-off at every point: raising a spectrum to the power T
costs ~T ulps per frequency, so each point carries up to ~T ulps of the law's peak (measured:
a Gaussian composed 5 times at grid 3e-3 erred by 2e-19 beside masses of 1e-20 in its tail,
which made epsilon(1e-18) 46.06 for a true 46.84). Each point's bound (:func:`roundoff`) is
booked on the safe side (:func:`bounded_masses`: upper bounds where a law is large, lower
bounds where it is small, the two laws kept in the ratio e^x in their far tails), so risks
read from tails below the round-off are pessimistic (by about the round-off: K points of
tail carry ~K times the bound) instead of noise; nothing is negative. :func:`close_bounded`
then closes each law's total.
"""

from __future__ import annotations

import jax.numpy as jnp

from . import grid as _grid
from .cumulative import mass_deficit

#: Round-off bound of an FFT composition on the safe side (:func:`roundoff`): each point of
#: the inverse FFT is a sum over the n frequencies of the composed spectrum S (divided by
#: n), each carrying ~(T + log2 n) ulps of its modulus (T from the power, log2 n from the
#: transforms), so a point's error is at most ~(T + log2 n) x 2^-53 x mean_k |S_k|, however
#: the law is padded (a model in ||law||_2 / sqrt(n) shrinks with padding: DP-SGD's 2000
#: steps at noise 4, sample rate 0.002, ~800 points, in an FFT of 2^19 points erred 29 times
#: that model; the optimistic companion uses this bound too, :mod:`dpax._engine.optimistic`).
#: mean_k |S_k| is at least the law's largest mass and, for a law of one mode
#: (or a lattice of them), about equal to it; the bound takes the largest mass (a cheap
#: reduction over the output, where mean |S_k| would cost a fifth of an inverse FFT) and
#: allows each point ROUNDOFF_ULPS times that. Measured (Gaussian and DP-SGD laws, 4 to 10^4
#: steps, FFTs 1 to 64 times the law's length, 84 cases): at most 0.8 times the unscaled bound.
ROUNDOFF_ULPS = 4.0


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
    far = None
    if exact_ratio:
        x = index * grid_step
        far_y = (x > mean_y[:, None]) & (comp_y < 2.0 * eta_y)  # Y's far upper tail, at round-off
        far_x = (x < mean_x[:, None]) & (comp_x < 2.0 * eta_x)
        far = (far_x, far_y)
    return masses_of_bounds((low_x, up_x), (low_y, up_y), far, offset, grid_step)


def masses_of_bounds(bounds_x, bounds_y, far, offset, grid_step):
    """The masses (rows, n) of :func:`bounded_masses` from each point's bounds ``(lower,
    upper)`` on X and on Y: upper bounds on the big sides, lower bounds on the small sides
    and at 0, and with ``far`` = (far_x, far_y) (an exact-ratio pair; None otherwise) the
    small sides as e^-|x| times the other law's lower bound, or its upper bound where
    ``far`` marks that law's far tail at round-off."""
    (low_x, up_x), (low_y, up_y) = bounds_x, bounds_y
    index = _grid.loss_grid(offset, low_x.shape[-1], 1)
    if far is not None:
        far_x, far_y = far
        small_x, small_y = use_exact_ratio(jnp.where(far_x, up_x, low_x), jnp.where(far_y, up_y, low_y), offset,
                                           grid_step)
    else:
        small_x, small_y = low_x, low_y
    return (jnp.where(index < 0, up_x, jnp.where(index > 0, small_x, low_x)),
            jnp.where(index > 0, up_y, jnp.where(index < 0, small_y, low_y)))


def close_bounded(pmf_x, pmf_y, inf_y, neginf_x, at_bottom, at_top, x_lo, x_hi, precise=False):
    """:func:`dpax._engine.construct.close_mass` for the masses of :func:`bounded_masses`
    of an exact-ratio pair, with ``at_bottom`` / ``at_top`` (rows, n) the window's first and
    last points (losses ``x_lo``, ``x_hi``, rows). Missing Y-mass (the small side's lower
    bounds took it from labels whose X-mass stayed) goes to the last point with X-mass
    e^-x_hi times it: Q-mass moved up (its atom split, the part moved given the ratio of
    its new label), so the pair still dominates, and its epsilon stays finite (on the +inf
    atom, every delta below it would give an infinite epsilon); missing X-mass likewise to
    the first point with e^x_lo times it as Y-mass. Excess mass (the big sides' upper
    bounds, T ulps a point) is scaled away: a tail sum moves by at most that excess,
    relatively, which can put a tail within the excess of 1 below the truth (the known
    exception in the README's accuracy section: closing it exactly, the big side's points
    nearest loss 0 taking their lower bounds, needs a running sum that adds 40-100% to
    this kernel's compilation).

    ``precise``: the missing masses summed to ~1e-22 (:func:`dpax._engine.cumulative.mass_deficit`)
    instead of ~1e-16, for a pair whose far tails are read at that level
    (:mod:`dpax._engine.tail_bounds`): the missing mass lands on the window's end, and a
    float64 sum's last bits, which follow the row's padded length, would move a tail of
    1e-10 there by 1e-6 relatively."""
    total_y, total_x = jnp.sum(pmf_y, -1), jnp.sum(pmf_x, -1)
    if precise:
        d_y = jnp.maximum(mass_deficit(pmf_y, inf_y), 0.0)
        x_part = jnp.exp(-jnp.maximum(x_hi, -700.0)) * d_y
        d_x = jnp.maximum(mass_deficit(pmf_x, neginf_x) - x_part, 0.0)
    else:
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
