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
    """The range ``((least, most) of X, (least, most) of Y)`` (each rows, n) each point's
    composed mass can take, from each point's bounds ``(lower, upper)`` on X and on Y: the
    most is the upper bound; the least is the lower bound, except on the small sides (X
    above 0, Y below 0) of an exact-ratio pair (``far`` = (far_x, far_y); None otherwise):
    e^-|x| times the other law's lower bound, or its upper bound where ``far`` marks that
    law's far tail at round-off (see :func:`bounded_masses`). :func:`close_bounded` builds the
    pair from them; :func:`big_sides_up` takes the masses before any closing."""
    (low_x, up_x), (low_y, up_y) = bounds_x, bounds_y
    index = _grid.loss_grid(offset, low_x.shape[-1], 1)
    if far is not None:
        far_x, far_y = far
        small_x, small_y = use_exact_ratio(jnp.where(far_x, up_x, low_x), jnp.where(far_y, up_y, low_y), offset,
                                           grid_step)
    else:
        small_x, small_y = low_x, low_y
    least_x = jnp.where(index > 0, small_x, low_x)
    least_y = jnp.where(index < 0, small_y, low_y)
    return (least_x, up_x), (least_y, up_y)


def big_sides_up(bounds, offset):
    """The masses ``(pmf_x, pmf_y)`` of :func:`masses_of_bounds`'s ranges ``bounds`` with the
    big sides (X below 0, Y above 0) at their most and every other point at its least."""
    ((least_x, most_x), (least_y, most_y)) = bounds
    index = _grid.loss_grid(offset, least_x.shape[-1], 1)
    return jnp.where(index < 0, most_x, least_x), jnp.where(index > 0, most_y, least_y)


def close_bounded(bounds, inf_y, neginf_x, offset, lo, hi, modes, far, grid_step, precise=False):
    """The masses ``(pmf_x, pmf_y)`` (rows, n, the point j at the loss index ``offset`` + j)
    of an exact-ratio pair composed on the window [``lo``, ``hi``] (rows,), from the range
    ``bounds`` of each point's mass (:func:`masses_of_bounds`), closed to the totals
    1 - neginf_x and 1 - inf_y (the atoms, as :func:`dpax._engine.construct.close_mass`).
    ``modes`` = ((m_x, low_x), (m_y, low_y)): the loss index (rows,) of each law's largest
    FFT value and a lower bound on that mass; ``far`` = ((mean_x, eta_x), (mean_y, eta_y)):
    each law's mean (loss) and round-off bound (rows,).

    Y takes its least below m_y and its most elsewhere, and m_y takes up whatever makes its
    total 1 - inf_y, either sign; X takes its least above m_x and its most below, m_x
    closing it. Against the exact composition, every Pr[Y <= x] below m_y is then a sum of
    lower bounds and every Pr[Y > x] from m_y up a sum of upper bounds (Y stochastically
    larger), and X likewise stochastically smaller, so every threshold test errs less on
    the pair, on both sides: delta(epsilon), epsilon(delta) and the curve stay on the safe
    side, tails near 1 included (scaling an excess away instead lowers those by the whole
    excess, ~n eta). The ranges' widths cost at most their sum on the tails between a mode
    and loss 0, which the mode's mass (at least 1 / n) dwarfs.

    One exception to "least": a far tail at round-off keeps both masses in the ratio e^x
    (:func:`bounded_masses`), an exact-ratio atom whose small side is above the exact mass
    by at most e^-|x| 4 eta. Above m_y (below m_x) Y's (X's) upper bounds carry the atom's
    other side, which outweighs it in every delta; between loss 0 and m_y the closing took
    that side back, so X gives up, at m_y, mass A >= 4 (eta_y e^-max(mean_y, 0) + eta_x
    e^min(mean_x, 0)) / (1 - e^-step) (the atoms of both far tails, summed as a geometric
    series from the means) to m_x, which lowers every Pr[X > x] there by more than the
    atoms add; Y likewise gives A at m_x to m_y. Both moves keep the laws' orders. (A takes
    at most half the mass there, which holds unless the mode lies ~5 nats beyond its mean.)

    Where a mode's mass would go negative (an excess above its lower bound) or lies outside
    the window, the law closes as :func:`dpax._engine.construct.close_mass` would with the
    pair kept dominating: missing Y-mass goes to the last point with X-mass e^-x_hi times it
    (Q-mass moved up, its atom split, the part moved given the ratio of its new label, so
    that its epsilon stays finite), missing X-mass likewise to the first point with e^x_lo
    times it as Y-mass, and an excess is scaled away.

    ``precise``: the missing masses summed to ~1e-22 (:func:`dpax._engine.cumulative.mass_deficit`)
    instead of ~1e-16, for a pair whose far tails are read at that level
    (:mod:`dpax._engine.tail_bounds`): a float64 sum's last bits follow the row's padded
    length."""
    ((least_x, most_x), (least_y, most_y)), ((m_x, low_m_x), (m_y, low_m_y)) = bounds, modes
    index = offset[:, None] + jnp.arange(least_x.shape[-1])[None, :]
    pmf_y = jnp.where(index < m_y[:, None], least_y, most_y)
    pmf_x = jnp.where(index > m_x[:, None], least_x, most_x)
    # the far tails' exact-ratio atoms, at most e^-|x| 4 eta a point beyond each law's mean
    ((mean_x, eta_x), (mean_y, eta_y)) = far
    atoms = 4.0 * (eta_y * jnp.exp(-jnp.maximum(mean_y, 0.0)) + eta_x * jnp.exp(jnp.minimum(mean_x, 0.0)))
    atoms = atoms / -jnp.expm1(-grid_step)
    x_m_x, x_m_y = m_x * grid_step, m_y * grid_step
    give_x = jnp.where(m_y > jnp.maximum(m_x, 0), jnp.minimum(atoms, 0.5 * jnp.exp(-x_m_y) * low_m_y), 0.0)
    give_y = jnp.where(m_x < jnp.minimum(m_y, 0), jnp.minimum(atoms, 0.5 * jnp.exp(x_m_x) * low_m_x), 0.0)
    m_x, m_y = m_x[:, None], m_y[:, None]
    pmf_x = pmf_x - jnp.where(index == m_y, jnp.maximum(give_x, 0.0)[:, None], 0.0)
    pmf_y = pmf_y - jnp.where(index == m_x, jnp.maximum(give_y, 0.0)[:, None], 0.0)
    deficit = mass_deficit if precise else (lambda pmf, atom: 1.0 - atom - jnp.sum(pmf, -1))
    x_lo, x_hi = lo * grid_step, hi * grid_step
    inside = lambda m: (m[:, 0] >= lo) & (m[:, 0] <= hi)

    d_y = deficit(pmf_y, inf_y)
    taken_y = inside(m_y) & (low_m_y + d_y >= 0.0)
    top_y = jnp.where(taken_y, 0.0, jnp.maximum(d_y, 0.0))
    x_part = jnp.exp(-jnp.maximum(x_hi, -700.0)) * top_y  # 0 past ~745 nats, as every P-mass there
    d_x = deficit(pmf_x, neginf_x) - x_part
    taken_x = inside(m_x) & (low_m_x + d_x >= 0.0)
    bottom_x = jnp.where(taken_x, 0.0, jnp.maximum(d_x, 0.0))
    y_part = jnp.exp(jnp.minimum(x_lo, 700.0)) * bottom_x

    at_bottom, at_top = index == lo[:, None], index == hi[:, None]
    pmf_y = (pmf_y + jnp.where(index == m_y, jnp.where(taken_y, d_y, 0.0)[:, None], 0.0)
             + jnp.where(at_top, top_y[:, None], 0.0) + jnp.where(at_bottom, y_part[:, None], 0.0))
    pmf_x = (pmf_x + jnp.where(index == m_x, jnp.where(taken_x, d_x, 0.0)[:, None], 0.0)
             + jnp.where(at_top, x_part[:, None], 0.0) + jnp.where(at_bottom, bottom_x[:, None], 0.0))
    total_y = jnp.where(taken_y, 1.0 - inf_y, 1.0 - inf_y - d_y + top_y) + y_part
    total_x = jnp.where(taken_x, 1.0 - neginf_x, 1.0 - neginf_x - d_x + bottom_x)

    def scale(pmf, total, atom):
        over = total > 1.0 - atom
        return pmf * jnp.where(over, (1.0 - atom) / jnp.where(over, total, 1.0), 1.0)[:, None]

    return scale(pmf_x, total_x, neginf_x), scale(pmf_y, total_y, inf_y), inf_y, neginf_x
