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
    """The range (:func:`masses_of_bounds`) of each composed mass (rows, n) of a dominating
    pair, from the FFT's values ``comp_x``, ``comp_y`` (the point j at the loss (offset + j)
    step, rows x n) and each point's modelled round-off ``eta_x``, ``eta_y`` (rows, 1,
    :func:`roundoff`).

    The most is the value plus eta. The least is the value less eta (at least 0), except on
    the small sides (X above 0, Y below 0) with ``exact_ratio``: e^-|x| times the other law's
    least, which keeps their relative precision far below the FFT's absolute round-off, or,
    where the other law is in its far tail (beyond ``mean_x`` / ``mean_y``, rows: the
    composition passes each law's mean or mode, whichever is further out) and its value is
    round-off (below 2 eta), e^-|x| times its most, so that every label keeps both masses and
    the likelihood ratio e^x (epsilon stays finite): an exact-ratio atom of non-negative mass.
    :func:`big_sides_up` takes the big sides (Y above 0, X below 0) at their most and the
    rest at their least: every Pr[Y > x] (x >= 0) and Pr[X < x] (x <= 0) at least the exact
    composition's, every Pr[X > x] and Pr[Y < x] at most but for those atoms, which raise
    every delta; :func:`close_bounded` closes an exact-ratio pair's totals."""
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


def close_bounded(bounds, inf_y, neginf_x, offset, lo, hi, modes, etas, grid_step, precise=False):
    """The masses ``(pmf_x, pmf_y)`` (rows, n, the point j at the loss index ``offset`` + j)
    of an exact-ratio pair composed on the window [``lo``, ``hi``] (rows,), from the range
    ``bounds`` of each point's mass (:func:`masses_of_bounds`), closed to the totals
    1 - neginf_x and 1 - inf_y, and the atoms (as :func:`dpax._engine.construct.close_mass`).
    ``modes`` = ((m_x, low_x), (m_y, low_y)): the loss index (rows,) of each law's largest
    FFT value and a lower bound on that mass; ``etas`` = (eta_x, eta_y) (rows,): the laws'
    round-off bounds (:func:`roundoff`).

    Y takes its least below m_y and its most elsewhere, and m_y takes up whatever makes its
    total 1 - inf_y, either sign; X takes its least above m_x and its most below, m_x
    closing it. Against the exact composition, every Pr[Y <= x] below m_y is then a sum of
    lower bounds and every Pr[Y > x] from m_y up a sum of upper bounds (Y stochastically
    larger), and X likewise stochastically smaller, so every threshold test errs less on
    the pair, on both sides: delta(epsilon), epsilon(delta) and the curve stay on the safe
    side, tails near 1 included (scaling an excess away instead lowers those by the whole
    excess, ~n eta). The ranges' widths cost at most their sum on the tails between a mode
    and loss 0; the mode's mass (at least 1 / n) dwarfs what it takes up.

    One exception to "least": a far tail at round-off keeps both masses in the ratio e^x
    (:func:`bounded_masses`; beyond the law's mean and mode), an exact-ratio atom whose
    small side is above the exact mass by at most e^-|x| 4 eta. From m_y up (below m_x)
    Y's (X's) upper bounds carry the atom's other side, which outweighs it in every delta;
    between loss 0 and m_y the closing took that side back. So X moves e^-max(x(m_y), 0) A_y
    from m_y to m_x, A = 4 eta / (1 - e^-step) (Y's far atoms, beyond m_y and the mean,
    which is at least 0, summed as a geometric series in e^-x), which lowers every
    Pr[X > x] in between by more than those atoms add, and Y moves e^min(x(m_x), 0) A_x
    from m_x to m_y for X's far atoms (the swapped pair's likewise, whichever sides of loss
    0 the modes lie on). Each move keeps the laws' orders and costs at most A in any
    delta; each takes at most half the law's mass at the other's mode (at least e^-+x times
    that mode's, less 2 eta), which A is far below.

    A mode outside the window or unable to give up an excess (its mass below it: only for
    n x steps beyond ~1e15) leaves the law as it is, its missing mass on its infinite atom
    and an excess scaled away.

    ``precise``: the missing masses summed to ~1e-22 (:func:`dpax._engine.cumulative.mass_deficit`)
    instead of ~1e-16, for a pair whose far tails are read at that level
    (:mod:`dpax._engine.tail_bounds`): a float64 sum's last bits follow the row's padded
    length."""
    ((least_x, most_x), (least_y, most_y)), ((m_x, low_m_x), (m_y, low_m_y)) = bounds, modes
    index = offset[:, None] + jnp.arange(least_x.shape[-1])[None, :]
    pmf_y = jnp.where(index < m_y[:, None], least_y, most_y)
    pmf_x = jnp.where(index > m_x[:, None], least_x, most_x)
    deficit = mass_deficit if precise else (lambda pmf, atom: 1.0 - atom - jnp.sum(pmf, -1))
    d_y, d_x = deficit(pmf_y, inf_y), deficit(pmf_x, neginf_x)
    taken_y = (m_y >= lo) & (m_y <= hi) & (jnp.maximum(low_m_y, 0.0) + d_y >= 0.0)
    taken_x = (m_x >= lo) & (m_x <= hi) & (jnp.maximum(low_m_x, 0.0) + d_x >= 0.0)
    # the far tails' atoms (beyond the modes and loss 0): X moves e^-max(x(m_y), 0) A_y from
    # m_y to m_x, Y moves e^min(x(m_x), 0) A_x from m_x to m_y, each at most half the mass
    # there (at least e^-+x times the other law's mode's, less the law's own bound twice)
    atoms = lambda eta: 4.0 * eta / -jnp.expm1(-grid_step)
    x_m_x, x_m_y = m_x * grid_step, m_y * grid_step
    give_x = jnp.minimum(atoms(etas[1]) * jnp.exp(-jnp.maximum(x_m_y, 0.0)),
                         0.5 * jnp.maximum(jnp.exp(-x_m_y) * low_m_y - 2.0 * etas[0], 0.0))
    give_y = jnp.minimum(atoms(etas[0]) * jnp.exp(jnp.minimum(x_m_x, 0.0)),
                         0.5 * jnp.maximum(jnp.exp(x_m_x) * low_m_x - 2.0 * etas[1], 0.0))
    give_x = jnp.where(taken_x & (m_y > m_x), give_x, 0.0)[:, None]
    give_y = jnp.where(taken_y & (m_y > m_x), give_y, 0.0)[:, None]
    m_x, m_y = m_x[:, None], m_y[:, None]
    pmf_y = (pmf_y + jnp.where(index == m_y, jnp.where(taken_y[:, None], d_y[:, None] + give_y, 0.0), 0.0)
             - jnp.where(index == m_x, give_y, 0.0))
    pmf_x = (pmf_x + jnp.where(index == m_x, jnp.where(taken_x[:, None], d_x[:, None] + give_x, 0.0), 0.0)
             - jnp.where(index == m_y, give_x, 0.0))
    # otherwise missing mass goes to the law's infinite atom, an excess is scaled away
    close = lambda pmf, taken, d, atom: pmf * jnp.where(taken | (d >= 0.0), 1.0, (1.0 - atom) / (1.0 - atom - d))[
        :, None]
    pmf_x, pmf_y = close(pmf_x, taken_x, d_x, neginf_x), close(pmf_y, taken_y, d_y, inf_y)
    inf_y = inf_y + jnp.where(taken_y, 0.0, jnp.maximum(d_y, 0.0))
    neginf_x = neginf_x + jnp.where(taken_x, 0.0, jnp.maximum(d_x, 0.0))
    return pmf_x, pmf_y, inf_y, neginf_x
