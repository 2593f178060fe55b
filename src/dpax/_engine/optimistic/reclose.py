"""A composed optimistic companion closed: the FFT's values and round-off bounds booked on the
optimistic side, the composed tilted laws giving its far tails (:func:`reclose`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import cache as _cache
from ..chernoff import TAIL_MASS, TILT_RATES
from ..grid import loss_grid
from ..pair import Pair
from ..roundoff import roundoff
from .slack import Slack

#: The FFT's round-off at each point is booked with the safe side's bound
#: (:func:`dpax._engine.roundoff.roundoff`: ROUNDOFF_ULPS x 2^-53 x (T + log2 L) x the
#: composed law's largest mass), which does not shrink with the FFT's length. (A model in
#: ||law||_2 / sqrt(L) did, and fell 15 to 29 times short of the measured round-off of a law
#: padded into a long FFT.) Measured on companions (Gaussian 0.5 to 1e4, 5 to 10^6 steps;
#: DP-SGD; Laplace), against direct convolutions of the same single step: at most 1.4 times
#: the unscaled bound, ROUNDOFF_ULPS being 4.
#: The bound is first order in the steps T: a spectrum raised to the power T carries
#: (1 + u)^T - 1 = T u (1 + T u / 2 + ...), which its margin covers while T u is small; from
#: ROUNDOFF_STEPS_MAX steps (2.8e14) on, the composed companion's masses are
#: no longer bounded (2**53 steps of DP-SGD at p = 1e-12 gave a total mass of 1e110 and an
#: epsilon above the safe one); such a row becomes the pair of the constant map (all of P and
#: Q on one label, the point nearest the loss 0): a post-processing of any mechanism, whose
#: curve beta = 1 - alpha lies above every curve (advantage, epsilon and delta(eps >= 0) 0).
ROUNDOFF_STEPS_MAX = 1.0 / (16.0 * 2.2e-16)


@jax.jit
def _reclose(comp, ratio, tilted_p, tilted_q, steps, grid_step) -> Pair:
    pair, tilted, big, theta, alias, lo, hi, length = comp
    n = pair.pmf_x.shape[-1]
    x = loss_grid(pair.offset, n, grid_step)
    inside = (x >= (lo * grid_step)[:, None]) & (x <= (hi * grid_step)[:, None])
    # each point's round-off: the safe side's bound, from the composed law's largest mass
    eta = lambda a: jnp.where(inside, roundoff(jnp.max(a, -1), steps, length), 0.0)
    rel = (1.0 + 4.4e-16 * (steps + 4.0))[:, None]  # the tilts' own rounding (T ulps), and e^-(theta x)'s
    # over-estimates of the small sides: the FFT value plus its round-off, or the tilted
    # law's (plus its round-off) tilted back, whichever is smaller
    est_x = tilted_back(tilted.pmf_x + eta(tilted.pmf_x), theta[:, :1] * jnp.maximum(x, 0.0)) * rel
    est_y = tilted_back(tilted.pmf_y + eta(tilted.pmf_y), theta[:, 1:2] * jnp.maximum(-x, 0.0)) * rel
    eta_x, eta_y = eta(pair.pmf_x), eta(pair.pmf_y)
    up_x, up_y = pair.pmf_x + eta_x, pair.pmf_y + eta_y
    # the big sides' bounds both ways from their own tilts (X e^(-t3 x) below 0, Y e^(t2 x) above)
    back_x = lambda m: tilted_back(m, theta[:, 3:] * jnp.maximum(-x, 0.0))
    back_y = lambda m: tilted_back(m, theta[:, 2:3] * jnp.maximum(x, 0.0))
    # (lower bounds: less the mass the circular wrap may have added, see wrapped_mass)
    span = (length * grid_step)[:, None]
    log_mgfs, points = alias
    wrap_x = wrapped_mass(log_mgfs[:, 1], theta[:, 3:], -x + span, -x - span, span + points[:, 1:])
    wrap_y = wrapped_mass(log_mgfs[:, 0], theta[:, 2:3], x + span, x - span, span + points[:, :1])
    big_x = (back_x(big.pmf_x - eta(big.pmf_x) - wrap_x) * (2.0 - rel), back_x(big.pmf_x + eta(big.pmf_x)) * rel)
    big_y = (back_y(big.pmf_y - eta(big.pmf_y) - wrap_y) * (2.0 - rel), back_y(big.pmf_y + eta(big.pmf_y)) * rel)
    low_x, high_x = big_side_bounds(pair.pmf_x, eta_x, big_x)
    low_y, high_y = big_side_bounds(pair.pmf_y, eta_y, big_y)
    # each point's (lower, upper) bounds: the small sides' upper bounds as above, their lower
    # ones the FFT value less its round-off and less the most the window's aliasing adds
    small_low = lambda pmf, e: jnp.maximum(pmf - e - 2.0 * TAIL_MASS, 0.0)
    upper_x = jnp.where(x > 0, jnp.where(jnp.isfinite(est_x), jnp.minimum(up_x, est_x), up_x), high_x)
    upper_y = jnp.where(x < 0, jnp.where(jnp.isfinite(est_y), jnp.minimum(up_y, est_y), up_y), high_y)
    lower_x = jnp.where(x > 0, small_low(pair.pmf_x, eta_x), low_x)
    lower_y = jnp.where(x < 0, small_low(pair.pmf_y, eta_y), low_y)
    # the window's cut: X-mass above it is at most TAIL_MASS (Chernoff), and at most
    # e^-x_hi times the tilted X_1-mass there (<= e^ratio TAIL_MASS + tilted_p, see Slack);
    # an upper bound on the last point; Y-mass below it likewise on the first; X below and
    # Y above it are dropped (harmless, see the module docstring)
    x_hi, x_lo = hi * grid_step, lo * grid_step
    # (e^-x_hi tilted_p in log space: a product 0 * inf, an underflowed factor beside an
    # overflowed slack (1e5 steps of a Gaussian), was NaN on the last point)
    log_p, log_q = jnp.log(tilted_p), jnp.log(tilted_q)  # -inf where 0, inf where the slack overflowed
    cut_x = jnp.exp(jnp.minimum(ratio - x_hi, 0.0)) * TAIL_MASS + jnp.exp(jnp.minimum(log_p - x_hi, 700.0))
    cut_y = jnp.exp(jnp.minimum(x_lo + ratio, 0.0)) * TAIL_MASS + jnp.exp(jnp.minimum(log_q + x_lo, 700.0))
    upper_x = upper_x.at[:, -1].add(jnp.minimum(cut_x, TAIL_MASS))
    upper_y = upper_y.at[:, 0].add(jnp.minimum(cut_y, TAIL_MASS))
    # Y's head sums (Pr[Y <= x]) over-estimated and its tail sums under-estimated; X's the
    # other way round (its tail sums are the head sums of the flipped law)
    # (each law's total: the FFT's, at most 1; the single step's rounding leaves it a few
    # ulps per step off 1, and the composed masses are exact for that law)
    total = lambda pmf: jnp.minimum(jnp.sum(pmf, -1, keepdims=True), 1.0)
    pmf_y = head_heavy(lower_y, upper_y, total(pair.pmf_y))
    pmf_x = jnp.flip(head_heavy(jnp.flip(lower_x, -1), jnp.flip(upper_x, -1), total(pair.pmf_x)), -1)
    # beyond the round-off model (see ROUNDOFF_STEPS_MAX) the row is the constant map's pair
    at_zero = jnp.arange(n)[None, :] == jnp.clip(-pair.offset, 0, n - 1)[:, None]
    trivial = (steps > ROUNDOFF_STEPS_MAX)[:, None]
    pmf_x = jnp.where(trivial, jnp.where(at_zero, 1.0, 0.0), pmf_x)
    pmf_y = jnp.where(trivial, jnp.where(at_zero, 1.0, 0.0), pmf_y)
    zero = jnp.zeros_like(ratio)
    return Pair(pmf_x, pmf_y, pair.offset, zero, zero)


def head_heavy(lower, upper, total):
    """Masses (rows, n) of total at most ``total`` (rows, 1) whose head sums are at least,
    and tail sums at most, those of every law of that total with masses between ``lower``
    and ``upper`` (rows, n, point by point).

    With D(k) = sum_{j <= k} upper_j + sum_{j > k} lower_j - total (non-decreasing in k, as
    upper >= lower) and c the first k with D(k) >= 0: upper below c, lower above it, and at
    c the rest, total - sum_{j < c} upper_j - sum_{j > c} lower_j (in [lower_c, upper_c]).
    The head sum to k is then min(sum_{j <= k} upper_j, total - sum_{j > k} lower_j), each
    at least the law's, and the sum of all min(sum upper, total), so each tail sum (that sum
    less a head sum) is at most the law's. Where sum upper < total every point keeps its
    upper bound.

    A companion's masses are one law known only between such bounds; reading them as
    upper bounds everywhere (as much mass as the round-off allows on every point) puts the
    total above 1 by the round-off (3e-9 for 10^6 steps of the Gaussian at grid 1e-3),
    and a threshold event that reaches below the loss 0 (delta at a negative epsilon, whose
    optimal event is nearly everything) then reads more Q-mass than the law has.

    >>> import jax.numpy as jnp
    >>> lower, upper = jnp.array([[0.2, 0.3, 0.4]]), jnp.array([[0.3, 0.4, 0.5]])
    >>> [round(float(v), 6) for v in head_heavy(lower, upper, jnp.ones((1, 1)))[0]]
    [0.3, 0.3, 0.4]
    """
    lower = jnp.clip(lower, 0.0, upper)  # (bounds read two ways may cross by rounding)
    above = jnp.flip(jnp.cumsum(jnp.flip(lower, -1), -1), -1) - lower  # sum_{j > k} lower_j
    before = jnp.cumsum(upper, -1) - upper  # sum_{j < k} upper_j
    cross = before + upper + above >= total
    c = jnp.where(jnp.any(cross, -1), jnp.argmax(cross, -1), upper.shape[-1])[:, None]
    idx = jnp.arange(upper.shape[-1])[None, :]
    rest = jnp.clip(total - before - above, lower, upper)
    return jnp.where(idx < c, upper, jnp.where(idx == c, rest, lower))


def wrapped_mass(log_mgf, rate, far, near, aim):
    """Bound (rows, n) on the mass the FFT's circular wrap adds at each point to a tilted
    law L(s) e^(rate s) (s = +-label, L = Y or -X): the points s >= ``far`` (one FFT length
    above) hold at most E[e^(tL)] e^(-(t - rate) far) for any t > ``rate`` (Chernoff; one t
    of :data:`TILT_RATES` per row, the best at ``far`` = ``aim``; ``log_mgf`` = log E[e^(tL)],
    rows x m), those s <= ``near`` (one length below) at most e^(rate near)."""
    t = jnp.asarray(TILT_RATES)
    at_aim = jnp.where(t > rate, log_mgf - (t - rate) * aim, jnp.inf)
    best = jnp.argmin(at_aim, -1)[:, None]
    k, tb = jnp.take_along_axis(log_mgf, best, -1), t[best]
    far_log = jnp.where(tb > rate, k - (tb - rate) * far, jnp.inf)
    return jnp.exp(jnp.minimum(far_log, 700.0)) + jnp.exp(jnp.minimum(rate * near, 700.0))


def big_side_bounds(pmf, eta, tilted):
    """Bounds (lower, upper) on a big side's masses (X at x <= 0, Y at x >= 0): the larger
    of its FFT value less its round-off ``eta`` and its tilted law's lower bound, and the
    smaller of the two upper bounds (``tilted`` = (lower, upper), relative precision in the
    far tail); :func:`head_heavy` makes the pair's masses of them."""
    ok = jnp.isfinite(tilted[0]) & jnp.isfinite(tilted[1])
    low = jnp.maximum(pmf - eta, jnp.where(ok, tilted[0], 0.0))
    high = jnp.where(ok, jnp.minimum(pmf + eta, tilted[1]), pmf + eta)
    return jnp.maximum(low, 0.0), jnp.maximum(high, 0.0)


def tilted_back(mass, exponent):
    """mass e^-exponent (exponent >= 0), as two factors e^(-exponent / 2): no underflow of
    the factor while the product is above ~1e-308 (mass up to 1.8e308)."""
    half = jnp.exp(-0.5 * exponent)
    return (mass * half) * half


_reclose = _cache.kernel(_reclose, "opt_reclose", fusion_emitters=False)


def reclose(comp, slack: Slack, grid_step: float) -> Pair:
    """A composed companion (a :class:`dpax._engine.composition.Tilted`) made optimistic
    again after the FFT.

    1. The small sides (X above 0, Y below 0; far out mere round-off in X and Y
       themselves) are over-estimated, point by point inside the row's window, by the
       smaller of the FFT value plus its round-off bound eta (:func:`dpax._engine.roundoff.roundoff`) and the
       tilted law tilted back: Pr[X = s] <= e^(-theta s) (X_theta(s) + eta), where
       X_theta = X^(*T) e^(theta s) is what the FFT composed (exactly so in exact
       arithmetic; the circular wrap only adds mass). Over-estimating Pr[X > x] (alpha)
       or Pr[Y <= x] (beta) of an achievable test keeps it above the curve, and lowers
       every epsilon / delta read from it.
    2. The composition kernel's (pessimistic) closing undone: its infinite atoms hold only
       the float64 rounding of 1 - sum (the factors have none) and are set to 0; the
       masses cut by the Chernoff window are booked as in the code.
    3. A row of more than :data:`ROUNDOFF_STEPS_MAX` composed steps, beyond the round-off
       model, becomes the constant map's pair (all mass at the point nearest 0).
    """
    args = [jnp.asarray(np.asarray(a, np.float64)) for a in slack]
    host = lambda a, dtype=None: jnp.asarray(np.asarray(a, dtype))
    window = (comp.tilted_big, jnp.asarray(comp.theta), tuple(jnp.asarray(a) for a in comp.alias),
              host(comp.lo), host(comp.hi), host(comp.length, np.float64))
    return _reclose((comp.pair, comp.tilted) + window, *args, np.float64(grid_step))
