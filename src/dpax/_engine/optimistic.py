r"""Optimistic companion pairs: the other side of every bracket.

dpax's own pairs (:mod:`dpax._engine.construct`) are *dominating*: their trade-off curve
lies on or below the mechanism's, so every number they give is on the safe side. The
companion built here is the opposite: a pair (P', Q') whose trade-off curve lies on or above
the truth, so that together

    beta_safe(alpha) <= beta_true(alpha) <= beta_opt(alpha),

and advantage, epsilon(delta), delta(epsilon) the other way round. The width of the bracket
is what the discretisation costs, shown instead of guessed.

Construction (one map applied to both P and Q)
---------------------------------------------

Let L(o) = log(dQ/dP)(o) be the mechanism's privacy loss and h the grid step. Any map K
from outputs to grid labels (deterministic or randomised) that depends on the output alone
gives P' = K P and Q' = K Q, a post-processing of the mechanism; by the data processing
inequality T(P', Q') >= T(P, Q) and T(Q', P') >= T(Q, P). Two maps are used:

* Nearest point (Laplace, subsampled Laplace, the replace-one subsampled Gaussian, the
  mixture of Gaussians, atoms: randomized response, discrete Laplace / Gaussian). o -> k with L(o) in
  ((k - 1/2) h, (k + 1/2) h]; outputs beyond the grid go to its end points. The masses
  q_k = Pr_Q[(k - 1/2) h < L <= (k + 1/2) h], p_k = Pr_P[same] come from the exact loss
  CDFs in log space (the ``*_log_cdfs`` laws of :mod:`construct`, at the half-way points),
  each atom of an atom law goes whole to its nearest point.
* Exponential interpolation (the add/remove subsampled Gaussian, hence the Gaussian and
  DP-SGD; :func:`split_map`). An output with L in [a, b] = [x_j, x_{j+1}] goes to b with
  probability w = (e^L - e^a) / (e^b - e^a) and to a otherwise. Since dQ = e^L dP and
  dR = e^L dQ with R = Q^2 / P,

      P'(b) gets (Q(cell) - e^a P(cell)) / (e^b - e^a)   (connect-the-dots' own P-mass)
      Q'(b) gets (R(cell) - e^a Q(cell)) / (e^b - e^a)   (<= e^b P'(b): connect-the-dots'
                                                         Q-mass, hence its dominance)

  P, Q and R are mixtures of N(k, s^2), k = 0, 1, 2 ((Q/P)^2 P = (1-p)^2 N(0, s^2)
  + 2p(1-p) N(1, s^2) + p^2 e^(1/s^2) N(2, s^2)), so every cell mass is a non-negative
  mixture of the three normal laws' cell masses, each a difference of its smaller tails
  (one erfc per point and law, :func:`three_normal_tails`). Unlike rounding to a point, the
  map keeps the information of a loss much narrower than a cell (DP-SGD's per-step loss at
  small sample rates): at grid 1e-3 the beta(0.01) bracket of DP-SGD (sigma 1, p 1e-3, 10^4 steps)
  is 4e-4 wide, against 4e-3 by nearest point. Every label above the first point where Pr_Q[L > x]
  <= 2e-20 then goes to that point (:func:`fold_top`, one more map of the labels): a point
  of the row's own law, so a row's companion does not depend on its batch's shared length.

Neither map moves mass to an infinite atom: both atoms of a companion are 0.

Why dpax's analysis kernels stay valid on this pair
---------------------------------------------------

The kernels of :mod:`analyse` read a pair only through threshold tests "reject when the
label exceeds x_i" (and their randomised mixtures, Algorithm 1's gamma): a breakpoint is
(alpha_i, beta_i) = (Pr[X > x_i], Pr[Y <= x_i]) with the *stored* masses, never through the
ratio e^{x_i}. Every such test is a test of the post-processed pair, hence an achievable
(alpha, beta) for the mechanism: beta_i >= f(alpha_i) with f = T(P, Q); mixtures of two
tests are achievable too, so the interpolated curve stays on or above f. Nothing assumes
Pr[X = x] = e^-x Pr[Y = x]: the companion is built with ``exact_ratio=False``, so the
composition's rebuild of far tails from the other side (``use_exact_ratio``) is off.

* Labels and ratios: a label's mass comes from outputs with loss within r = h/2 (nearest
  point) or r = h (interpolation) of it, so its ratio lies in [e^{x - r}, e^{x + r}] (the
  end points excepted, see :class:`Slack`). Label order need not be ratio order: the
  threshold tests are achievable but not necessarily the Neyman-Pearson tests of
  (P', Q'); they are still on or above f, which is all that is needed.
* Composition: the FFT adds labels, i.e. merges the output tuples with equal label sums S,
  another post-processing of the composed mechanism; the ratio bound widens to T r. The
  tilted laws below are only another way to compute the same composed masses.
* Symmetrisation (Dong, Roth & Su, Def. F.1): g = C(min(f, f^-1)) is convex and symmetric.
  Outside the slope -1 piece the kernel reports min(beta_f, beta_f^-1) >= min(f, f^-1) >= g.
  Inside it reports the line a + b - alpha through (a, b) = (Pr[X > 0], Pr[Y <= 0]) and its
  mirror (b, a); (a, b) is achievable, so b >= f(a) >= g(a), and by the symmetry of g
  (b, a) lies above g as well; the epigraph of a convex g is convex, so the segment
  between them lies above g.
* Advantage 1 - Pr[X > 0] - Pr[Y <= 0] is 1 - alpha - beta of one test: at most the true
  total variation. delta(eps) = max_i Pr[Y > x_i] - e^eps Pr[X > x_i] is Q(E) - e^eps P(E)
  for threshold events E: at most the true hockey-stick divergence (both directions).
  epsilon(delta) = max_i log((Pr[Y > x_i] - delta) / Pr[X > x_i]) is a sup over events E
  of a quantity whose sup over all events is the true epsilon(delta). So advantage,
  delta, epsilon (and mu, from the curve) are on or below the truth.

Round-off, booked on the optimistic side: the tilted composition
----------------------------------------------------------------

The safe pair books missing mass on its infinite atoms (more privacy loss). A companion's
single step books nothing: its masses are the map's, cell by cell (their total is 1 up to
rounding). Its composition is exact for the post-processed pair up to the FFT's round-off,
which is absolute: ~T ulps of the law's largest mass at every point
(:func:`dpax._engine.roundoff.roundoff`), so far
tails are noise, and at 10^4 steps even the 1e-10 level of mu's box is 1% noise. Hence the
tilted composition (:func:`dpax._engine.composition.tilted_laws`): the FFT also composes
X e^(t0 x), Y e^(-t1 x) (the small sides: X above 0, Y below 0) and Y e^(t2 x), X e^(-t3 x)
(the big sides' far tails), in the same batched call. Tilting commutes with composition,

    (X e^(t x))^(*T)(s) = X^(*T)(s) e^(t s)   (exactly, in exact arithmetic),

so X^(*T)(s) = e^(-t s) X_t(s) with the round-off of X_t, relative to the tilted law's size
near s instead of X's size at its mode. Each rate is the row's Chernoff rate at the tail's
1e-10 point (:func:`dpax._engine.chernoff.tilt_rates`; for the big sides the grid rate
with the smallest error bound there, the circular wrap included): the tilted law peaks
where mu's box ends. Any rate is valid; the rate only moves the precision. Every read of
the stored masses is a head or tail sum: Pr[X > x], Pr[Y <= x] must not be under-estimated
(alpha, beta), Pr[Y > x], Pr[X <= x] (delta and epsilon, mu's complements, the reversed
curve's) must not be over-estimated. After the FFT, :func:`reclose`, inside the row's
window,

1. bounds each small-side mass from above by the smaller of its FFT value plus its
   round-off bound eta and e^(-t s) (X_t(s) + eta_t) (1 + 4.4e-16 (T + 4)) (the tilts' own
   rounding), both above the exact composed mass as the circular wrap only adds mass, and
   from below by its FFT value less eta;
2. bounds each big-side mass (:func:`_big_side`) from below by the larger of its FFT value
   less eta and its tilted law's less eta and less the most the wrap can have added
   (:func:`_wrapped`, Chernoff bounds from the log-MGFs), from above likewise;
3. books the mass the Chernoff window cut (at most 1e-18 per tail): X above the window,
   at most 1e-18 and at most e^-x_hi (e^R 1e-18 + tilted_p) (the tilted X_1 = X e^x is at
   most e^R Y plus the irregular tuples' tilted mass, :class:`Slack`), on the last point;
   Y below it on the first; X below and Y above it are dropped, which changes no
   alpha = Pr[X > x] and no beta = Pr[Y <= x] and lowers only hockey-stick terms;
4. makes one law of the bounds, of the FFT's total (at most 1; :func:`head_heavy`): Y
   takes its upper bounds from the bottom and its lower bounds from the top, the two
   meeting where the sum reaches that total, so every Pr[Y <= x] is at least the truth and every Pr[Y > x] at
   most; X the other way round (Pr[X > x] at least, Pr[X <= x] at most). Each bound taken
   everywhere (as the gap between them put back at the point 0 once was) puts the totals
   above 1 by the round-off, and an event reaching below the loss 0 then reads more
   Q-mass than the law has: delta(-1) of 10^6 steps of the Gaussian (noise 1e4, grid 1e-3)
   was 1.9e-9 above the truth;
5. sets the composition kernel's infinite atoms (its rounding of 1 - sum) to 0.

Nothing here uses a ratio bound inside the window. Over-estimating alpha or beta of an
achievable test keeps it on or above the non-increasing true curve, and lowers every delta
and epsilon read from it. Guarantee in words: exact for
the post-processed pair up to float64 round-off, whose bound has a margin of ~3 over what
is measured. Precision reached: epsilon(delta) of the composed Gaussian with
mu = 4 within 2e-5 of the truth at grid 1e-3 for delta from 1e-10 down to 1e-14 (a ratio
bound inside the window gives 28.3 for 32.85 at 1e-10), mu of that DP-SGD (sigma 1, p 1e-3,
10^4 steps) within 6.4e-4 at grid 1e-4.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import cache as _cache
from .chernoff import TAIL_MASS, TILT_RATES
from .construct import (
    _mass_between,
    inverse_subsampled_loss,
    laplace_log_cdfs,
    mixture_log_cdfs,
    subsampled_gaussian_substitution_log_cdfs,
)
from .grid import check_memory, loss_grid
from .pair import Pair
from .roundoff import roundoff
from .special import ndtr


def cell_masses(lf, ls):
    """Masses (rows, m + 1) of the cells (-inf, b_0], (b_0, b_1], ..., (b_{m-1}, +inf) of a
    loss law from its log CDF ``lf`` and log survival ``ls`` at the boundaries b (rows, m),
    each cell from the smaller tail (:func:`dpax._engine.construct._mass_between`)."""
    first = jnp.exp(lf[:, :1])
    last = jnp.exp(ls[:, -1:])
    mid = _mass_between(lf[:, :-1], lf[:, 1:], ls[:, :-1], ls[:, 1:])
    return jnp.concatenate([first, mid, last], -1)


class Slack(NamedTuple):
    """What a companion knows about its labels' likelihood ratios, per row (rows,).

    With X_1 = X e^x and Y_1 = Y e^-x (the tilted laws at rate 1): X_1 <= e^ratio Y + E_p
    and Y_1 <= e^ratio X + E_q label by label, where E_p, E_q are non-negative measures of
    total mass at most ``tilted_p`` and ``tilted_q``. A single step's label carries the
    mass of outputs with loss within ``ratio`` of it (half a step by nearest point, one by
    interpolation), hence ratio dQ/dP >= e^(x - ratio), except the first point of an
    unbounded law (or atoms clamped to it), whose P-mass m adds e^(x_0) m to ``tilted_p``,
    and likewise the last point (Q-mass m, e^(-x_last) m to ``tilted_q``). Composition adds
    the ratios and counts the steps (:func:`composed_slack`).
    """

    ratio: Any
    tilted_p: Any
    tilted_q: Any
    steps: Any  #: single steps composed (the FFT's round-off grows with it)

    def take(self, index) -> Slack:
        """The rows at ``index``."""
        return Slack(*(np.take(np.asarray(a), index, axis=0) for a in self))

    def widened(self, by: float) -> Slack:
        """The slack after every label moved by at most ``by`` (a regrid): e^x changes by at
        most e^by, so the ratio widens by ``by`` and the tilted masses grow by e^by."""
        grow = np.exp(by)
        return Slack(np.asarray(self.ratio) + by, np.asarray(self.tilted_p) * grow, np.asarray(self.tilted_q) * grow,
                     self.steps)

    def to_aux(self) -> tuple:
        """A hashable form (for the pytree's static data)."""
        return tuple(tuple(float(v) for v in np.reshape(a, -1)) for a in self)

    @classmethod
    def from_aux(cls, aux) -> Slack | None:
        """The inverse of :meth:`to_aux` (``None`` stays ``None``)."""
        return None if aux is None else cls(*(np.asarray(a, np.float64) for a in aux))


def composed_slack(slacks, counts) -> Slack:
    """Slack of the composition of ``counts[i]`` copies of factor i (rows,).

    Composing X_1,i <= e^(r_i) Y_i + E_i gives X_1 <= e^R (Y + cross terms), R = sum T_i r_i,
    the cross terms (each with some E_i) of total at most (1 + u)^T expm1(sum T_i t_i) when
    every Y_i has mass at most 1 + u; the factor 2 covers (1 + u)^T for u <= 0.69 / T."""
    c = [np.asarray(x, np.float64) for x in counts]
    total = lambda i: sum(ci * np.asarray(s[i], np.float64) for s, ci in zip(slacks, c))
    ratio = total(0)
    with np.errstate(over="ignore", invalid="ignore"):
        cross_p, cross_q = [np.where(total(i) > 0, 2.0 * np.exp(ratio) * np.expm1(total(i)), 0.0) for i in (1, 2)]
    return Slack(ratio, cross_p, cross_q, total(3))


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
    est_x = _tilted_back(tilted.pmf_x + eta(tilted.pmf_x), theta[:, :1] * jnp.maximum(x, 0.0)) * rel
    est_y = _tilted_back(tilted.pmf_y + eta(tilted.pmf_y), theta[:, 1:2] * jnp.maximum(-x, 0.0)) * rel
    eta_x, eta_y = eta(pair.pmf_x), eta(pair.pmf_y)
    up_x, up_y = pair.pmf_x + eta_x, pair.pmf_y + eta_y
    # the big sides' bounds both ways from their own tilts (X e^(-t3 x) below 0, Y e^(t2 x) above)
    back_x = lambda m: _tilted_back(m, theta[:, 3:] * jnp.maximum(-x, 0.0))
    back_y = lambda m: _tilted_back(m, theta[:, 2:3] * jnp.maximum(x, 0.0))
    # (lower bounds: less the mass the circular wrap may have added, see _wrapped)
    span = (length * grid_step)[:, None]
    log_mgfs, points = alias
    wrap_x = _wrapped(log_mgfs[:, 1], theta[:, 3:], -x + span, -x - span, span + points[:, 1:])
    wrap_y = _wrapped(log_mgfs[:, 0], theta[:, 2:3], x + span, x - span, span + points[:, :1])
    big_x = (back_x(big.pmf_x - eta(big.pmf_x) - wrap_x) * (2.0 - rel), back_x(big.pmf_x + eta(big.pmf_x)) * rel)
    big_y = (back_y(big.pmf_y - eta(big.pmf_y) - wrap_y) * (2.0 - rel), back_y(big.pmf_y + eta(big.pmf_y)) * rel)
    low_x, high_x = _big_side(pair.pmf_x, eta_x, big_x)
    low_y, high_y = _big_side(pair.pmf_y, eta_y, big_y)
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


def _wrapped(log_mgf, rate, far, near, aim):
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


def _big_side(pmf, eta, tilted):
    """Bounds (lower, upper) on a big side's masses (X at x <= 0, Y at x >= 0): the larger
    of its FFT value less its round-off ``eta`` and its tilted law's lower bound, and the
    smaller of the two upper bounds (``tilted`` = (lower, upper), relative precision in the
    far tail); :func:`head_heavy` makes the pair's masses of them."""
    ok = jnp.isfinite(tilted[0]) & jnp.isfinite(tilted[1])
    low = jnp.maximum(pmf - eta, jnp.where(ok, tilted[0], 0.0))
    high = jnp.where(ok, jnp.minimum(pmf + eta, tilted[1]), pmf + eta)
    return jnp.maximum(low, 0.0), jnp.maximum(high, 0.0)


def _tilted_back(mass, exponent):
    """mass e^-exponent (exponent >= 0), as two factors e^(-exponent / 2): no underflow of
    the factor while the product is above ~1e-308 (mass up to 1.8e308)."""
    half = jnp.exp(-0.5 * exponent)
    return (mass * half) * half


_reclose = _cache.kernel(_reclose, "opt_reclose")


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


def _boundary_cdfs(log_cdfs, offset, grid_step, n, *params):
    """Log CDFs ``log_cdfs(b, *params)`` at the boundaries b half-way between the grid
    points (rows, n - 1): the first compiled stage of a nearest-point companion. The
    boundaries are computed once: every law (P's and Q's) must see the same values, or an
    atom on a boundary could go to one cell under P and the next under Q."""
    bounds = jax.lax.optimization_barrier(loss_grid(offset, n - 1, grid_step) + 0.5 * grid_step)
    return log_cdfs(bounds, *(a[:, None] for a in params))


@jax.jit
def _cells(lf_y, ls_y, lf_x, ls_x, offset) -> Pair:
    """The second stage: companion masses (rows, n) from the boundary CDFs."""
    zero = jnp.zeros(offset.shape, lf_y.dtype)
    return Pair(cell_masses(lf_x, ls_x), cell_masses(lf_y, ls_y), offset, zero, zero)


_cells = _cache.kernel(_cells, "opt_cells")


@functools.partial(_cache.kernel, name="opt_cells_folded")
@jax.jit
def _folded_cells(lf_y, ls_y, lf_x, ls_x, offset) -> tuple[Pair, Any]:
    """:func:`_cells` ended by :func:`fold_top` at the Q-survival of the cells' upper
    boundaries (an unbounded law): (pair, index of its last point)."""
    survival = jnp.concatenate([jnp.exp(ls_y), jnp.zeros_like(ls_y[:, :1])], -1)
    # jax stubs: jit sets __wrapped__ (functools.wraps) but its JitWrapped type does not declare it
    return fold_top(_cells.__wrapped__(lf_y, ls_y, lf_x, ls_x, offset), survival)  # type: ignore[attr-defined]


def three_normal_tails(loss, sigma, p):
    """The arguments v_k = (o - k) / s and small tails Phi(-|v_k|) of N(k, s^2), k = 0, 1, 2,
    at the output o(loss) of the subsampled Gaussian pair
    (:func:`dpax._engine.construct.subsampled_gaussian_log_cdfs`): P, Q and R = Q^2 / P are
    mixtures of these laws (:func:`three_law_weights`), so their cell masses are mixtures
    of theirs (:func:`normal_cells`). One erfc per point and law, no logarithms: a cell's
    mass is a difference of the smaller tails, as precise as from log CDFs (10 times faster).

    L is increasing in the output o, so Pr[L <= g] = Pr[o <= o(g)]; with u = o / s,
    P = N(0, s^2), Q = (1 - p) N(0, s^2) + p N(1, s^2) and
    (Q/P)^2 P = (1 - p)^2 N(0, s^2) + 2 p (1 - p) N(1, s^2) + p^2 e^(1/s^2) N(2, s^2).
    Returns (v_0, v_1, v_2, tail_0, tail_1, tail_2).
    """
    t = inverse_subsampled_loss(loss, p)  # the base loss (2o - 1) / (2 s^2)
    u = jnp.where(t > -jnp.inf, (sigma**2 * t + 0.5) / sigma, -jnp.inf)
    v = tuple(u - k / sigma for k in range(3))
    return v + tuple(ndtr(-jnp.abs(a)) for a in v)


def normal_cells(v, tail):
    """Masses (rows, n - 1) of a normal law between consecutive arguments ``v`` (rows, n),
    from the smaller tails ``tail`` = Phi(-|v|), and the masses (rows, 1) below the first
    and above the last."""
    va, vb, ta, tb = v[:, :-1], v[:, 1:], tail[:, :-1], tail[:, 1:]
    mid = jnp.where(vb <= 0, tb - ta, jnp.where(va >= 0, ta - tb, 1.0 - ta - tb))
    first = jnp.where(v[:, :1] < 0, tail[:, :1], 1.0 - tail[:, :1])
    last = jnp.where(v[:, -1:] < 0, 1.0 - tail[:, -1:], tail[:, -1:])
    return jnp.maximum(mid, 0.0), first, last


def three_law_weights(sigma, p):
    """Log weights (rows, 1) of N(k, s^2), k = 0, 1, 2, in Q (two) and in (Q/P)^2 P (three)."""
    log1mp, logp = _log1mp(p), jnp.log(p)
    return (log1mp, logp), (2.0 * log1mp, jnp.log(2.0) + logp + log1mp, 2.0 * logp + 1.0 / sigma**2)


def _sg_cdfs(sigma, p, offset, grid_step, n):
    """The grid and the normal laws' tails there (the first of two compiled stages, as
    :func:`dpax._engine.construct.subsampled_gaussian_kernel`)."""
    grid = loss_grid(offset, n, grid_step)
    return (grid,) + three_normal_tails(grid, sigma[:, None], p[:, None])


def _sg_split(grid, v0, v1, v2, t0, t1, t2, sigma, p, offset, grid_step):
    """The masses of :func:`split_map` from the normal laws' cells c_k, mixed linearly.

    Each label's share of a cell [a, b] is a combination of the three laws' cell masses
    whose coefficients are formed in closed form (:func:`split_coefficients`), not as a
    difference of two mixed masses: at a small sample rate (p = 1e-12) the P-mass sent to
    b near the loss 0, (e^-a Q - P)(cell) / (e^h - 1) = (-p' c_0 + p c_1) / (e^h - 1), is
    a difference of two masses near 1/2 of which only ~p of each differs; formed as
    e^-a Q(cell) - P(cell) it kept ~1e-16 / h of absolute error (5e-10 at h = 1e-7, beside
    risks of 1e-12), here it keeps the relative precision of c_0 and c_1.

    A coefficient grows as e^-a (and the weight p^2 e^(1/s^2) of N(2, s^2) in R with the
    noise: e^400 at s = 0.05), beside cell masses that fall below float64's normal range
    (below ~2.2e-308 they keep no relative precision, and underflow to 0): in such cells
    (far below the loss 0 of a small noise: the Gaussian at mu ~ 20) a product is inf, NaN
    (inf x 0) or unrelated to the cell. Those cells go whole to their lower end under both
    P and Q (another map that depends on the output alone, still a post-processing), so
    the shares of P and Q always come from one map."""
    (c0, f0, l0), (c1, f1, l1), (c2, _, _) = (normal_cells(v, t) for v, t in ((v0, t0), (v1, t1), (v2, t2)))
    (lq0, lq1), (lr0, lr1, lr2) = three_law_weights(sigma[:, None], p[:, None])
    wq0, wq1 = jnp.exp(lq0), jnp.exp(lq1)
    a = grid[:, :-1]
    p_up, p_down, q_up, q_down = split_coefficients(a, grid_step, sigma[:, None], p[:, None])
    mix = lambda coef: sum(k * c for k, c in zip(coef, (c0, c1, c2)))
    q_cell = wq0 * c0 + wq1 * c1
    first, last = (f0, wq0 * f0 + wq1 * f1), (l0, wq0 * l0 + wq1 * l1)
    shares = [mix(coef) for coef in (p_up, p_down, q_up, q_down)]
    # a law's cell below the normal range beside a coefficient above 1 (its log: the law's
    # weight in Q or R, plus log 2, less a): the product has no precision left
    tiny = jnp.finfo(c0.dtype).tiny
    log_coef = (jnp.maximum(lq0, lr0), jnp.maximum(lq1, lr1), lr2)
    bad = functools.reduce(jnp.logical_or, [(c < tiny) & (w + _LOG2 - a > 0.0) for c, w in zip((c0, c1, c2), log_coef)])
    bad = functools.reduce(jnp.logical_or, [~jnp.isfinite(x) for x in shares], bad)
    shares = [jnp.where(bad, fill, x) for x, fill in zip(shares, (0.0, jnp.inf, 0.0, jnp.inf))]  # all to a
    pair = split_map(grid_step, (c0, q_cell), tuple(shares), first, last, offset)
    survival = lambda v, t: jnp.where(v < 0, 1.0 - t, t)
    return fold_top(pair, wq0 * survival(v0, t0) + wq1 * survival(v1, t1))


def split_coefficients(a, grid_step, sigma, p):
    """Coefficients of the cell masses (c_0, c_1, c_2) of N(k, s^2) in the four numerators
    of :func:`split_map` on the cells [a, b = a + h] (each a tuple of three arrays):

        P-mass to b:  (e^-a Q - P)(cell)      = alpha_0 c_0 + alpha_1 c_1
        P-mass to a:  (e^h P - e^-a Q)(cell)  = alpha'_0 c_0 - alpha_1 c_1
        Q-mass to b:  (e^-a R - Q)(cell)      = (1 - p) alpha_0 c_0 + beta_1 c_1 + beta_2 c_2
        Q-mass to a:  (e^h Q - e^-a R)(cell)  = (1 - p) alpha'_0 c_0 + beta'_1 c_1 - beta_2 c_2

    (times e^h - 1), with P = N(0, s^2), Q = (1 - p) P + p N(1, s^2), R = Q^2 / P =
    (1 - p)^2 N(0, s^2) + 2p(1 - p) N(1, s^2) + p^2 e^(1/s^2) N(2, s^2):
    alpha_0 = (1 - p) e^-a - 1 = expm1(log(1 - p) - a), alpha'_0 = e^h - (1 - p) e^-a =
    -e^h expm1(log(1 - p) - b), alpha_1 = p e^-a, beta_1 = p (2 (1 - p) e^-a - 1),
    beta'_1 = p (e^h - 2 (1 - p) e^-a), beta_2 = p^2 e^(1/s^2 - a). Each is formed with its
    relative precision (expm1 where it is a difference near 1), so a numerator loses digits
    only where its terms truly cancel. p = 1 (the Gaussian): alpha_0 = -1, alpha'_0 = e^h."""
    h = grid_step
    log1mp, logp = _log1mp(p), jnp.log(p)
    w0 = jnp.exp(log1mp)
    e_h = jnp.exp(h)
    alpha0 = jnp.expm1(log1mp - a)
    alpha0_down = -e_h * jnp.expm1(log1mp - (a + h))
    alpha1 = jnp.exp(logp - a)
    kept = jnp.exp(log1mp - a)  # (1 - p) e^-a
    beta2 = jnp.exp(2.0 * logp + 1.0 / sigma**2 - a)
    zero = jnp.zeros_like(a)
    return ((alpha0, alpha1, zero), (alpha0_down, -alpha1, zero),
            (w0 * alpha0, p * (alpha0 + kept), beta2), (w0 * alpha0_down, p * (alpha0_down - kept), -beta2))


_LOG2 = 0.6931471805599453

#: :func:`fold_top` ends a companion where the law's Q-survival first falls to this, below
#: the batch's shared length (the grid's end is where it is at most 1e-20).
FOLD_TAIL = 2e-20


def fold_top(pair: Pair, q_survival) -> tuple[Pair, Any]:
    """``pair`` with every label above the first point where ``q_survival`` (Pr_Q[L > x] at
    the grid points, rows x n) is at most :data:`FOLD_TAIL` moved to that point (one map
    for P and Q: a post-processing), and that point's index (rows,). The point depends on
    the row's own law only, so a row's companion does not depend on the length its batch
    shares (a longer grid would spread the tail that the end point absorbs)."""
    n = q_survival.shape[-1]
    below = q_survival <= FOLD_TAIL
    top = jnp.where(jnp.any(below, -1), jnp.argmax(below, -1), n - 1)
    idx = jnp.arange(n)[None, :]
    above, at = idx > top[:, None], idx == top[:, None]

    def fold(pmf):
        moved = jnp.sum(jnp.where(above, pmf, 0.0), -1, keepdims=True)
        return jnp.where(above, 0.0, pmf) + jnp.where(at, moved, 0.0)

    return Pair(fold(pair.pmf_x), fold(pair.pmf_y), *pair[2:]), top


def _sg(sigma, p, offset, grid_step, n):
    """The exponential-interpolation map of a subsampled Gaussian (see :func:`split_map`), ended
    by :func:`fold_top`: (pair, index of its last point)."""
    return _sg_split(*_sg_cdfs(sigma, p, offset, grid_step, n=n), sigma, p, offset, grid_step)


def split_map(grid_step, cells, shares, first, last, offset) -> Pair:
    """Masses (rows, n) of the randomised map that sends an output of loss L in the cell
    [a, b] = [x_j, x_{j+1}] to b with probability w = (e^L - e^a) / (e^b - e^a), else to a
    (the same kernel under P and Q: a post-processing), outputs below the first point to
    it and above the last to it.

    With dQ = e^L dP and dR = e^L dQ (R = Q^2 / P): the P-mass sent to b is
    (Q(cell) - e^a P(cell)) / (e^b - e^a), the connect-the-dots pair's own, and the Q-mass
    (R(cell) - e^a Q(cell)) / (e^b - e^a), at most e^b times the P-mass (the
    connect-the-dots pair's Q-mass, which makes that pair dominate this one); the masses
    kept at a are (e^b P(cell) - Q(cell)) / (e^b - e^a) and (e^b Q(cell) - R(cell)) /
    (e^b - e^a). ``cells``: the cells' (rows, n - 1) P-mass and Q-mass; ``shares``: the four
    numerators times e^-a, (e^-a Q - P, e^h P - e^-a Q, e^-a R - Q, e^h Q - e^-a R)(cell),
    each formed on its own (:func:`split_coefficients`) so that a share keeps its relative
    precision however small (a share taken as the cell's mass less the other would keep
    only the cell's absolute precision); each is clipped to [0, the cell's mass], the two
    shares of a cell summing to its mass up to rounding. ``first`` and ``last``: the (P, Q)
    masses (rows, 1) below the first point and above the last.
    """
    p_cell, q_cell = cells
    p_up, p_down, q_up, q_down = shares
    scale = 1.0 / jnp.expm1(grid_step)  # e^-a / (e^b - e^a) = 1 / (e^h - 1)
    share = lambda num, cell: jnp.clip(num * scale, 0.0, cell)
    zero = jnp.zeros_like(p_cell[:, :1])

    def assemble(lo, hi, lo_end, hi_end):
        pmf = jnp.concatenate([lo, zero], -1) + jnp.concatenate([zero, hi], -1)
        return pmf.at[:, :1].add(lo_end).at[:, -1:].add(hi_end)

    none = jnp.zeros(offset.shape, p_cell.dtype)
    pmf_x = assemble(share(p_down, p_cell), share(p_up, p_cell), first[0], last[0])
    pmf_y = assemble(share(q_down, q_cell), share(q_up, q_cell), first[1], last[1])
    return Pair(pmf_x, pmf_y, offset, none, none)


def _sg_sub_cdfs(sigma, p, offset, grid_step, n):
    return _boundary_cdfs(subsampled_gaussian_substitution_log_cdfs, offset, grid_step, n, sigma, p)


def _sg_sub(sigma, p, offset, grid_step, n):
    return _folded_cells(*_sg_sub_cdfs(sigma, p, offset, grid_step, n=n), offset)


def _logaddexp(a, b):
    """log(e^a + e^b) that is -inf, never NaN, where both are -inf (the mixtures below meet
    -inf + -inf at p = 1 and beyond atoms, where some XLA fusions of jnp.logaddexp gave NaN)."""
    m = jnp.maximum(a, b)
    fin = jnp.where(jnp.isfinite(m), m, 0.0)
    return jnp.where(m == -jnp.inf, -jnp.inf, fin + jnp.log(jnp.exp(a - fin) + jnp.exp(b - fin)))


def _subsampled_laplace_log_cdfs(loss, eps, p):
    """:func:`dpax._engine.construct.subsampled_laplace_log_cdfs` with :func:`_logaddexp`."""
    # the base loss once for both laws: XLA may evaluate log / expm1 to different ulps in
    # different fusions, which could put an atom on a cell boundary into two cells
    t = jax.lax.optimization_barrier(inverse_subsampled_loss(loss, p))
    lf_y, ls_y, lf_x, ls_x = laplace_log_cdfs(t, eps)
    log1mp, logp = _log1mp(p), jnp.log(p)
    whole = p >= 1.0  # no mixture (and no -inf arithmetic) for the plain Laplace mechanism
    lf_q = jnp.where(whole, lf_y, _logaddexp(log1mp + lf_x, logp + lf_y))
    ls_q = jnp.where(whole, ls_y, _logaddexp(log1mp + ls_x, logp + ls_y))
    return lf_q, ls_q, lf_x, ls_x


def _log1mp(p):
    """log(1 - p), exactly -inf at p = 1 (log1p(-1) is not -inf in every XLA code path)."""
    return jnp.where(p >= 1.0, -jnp.inf, jnp.log1p(-p))


def _laplace_cdfs(eps, p, offset, grid_step, n):
    return _boundary_cdfs(_subsampled_laplace_log_cdfs, offset, grid_step, n, eps, p)


def _laplace(eps, p, offset, grid_step, n):
    return _cells(*_laplace_cdfs(eps, p, offset, grid_step, n=n), offset)


_sg_cdfs = _cache.kernel(jax.jit(_sg_cdfs, static_argnames=("n",)), "opt_sg_cdfs")
_sg_split = _cache.kernel(jax.jit(_sg_split), "opt_sg_split")
_sg_sub_cdfs = _cache.kernel(jax.jit(_sg_sub_cdfs, static_argnames=("n",)), "opt_sg_sub_cdfs")
_laplace_cdfs = _cache.kernel(jax.jit(_laplace_cdfs, static_argnames=("n",)), "opt_laplace_cdfs")


def _with_slack(pair: Pair, grid_step: float, loss_min, loss_max, width: float = 0.5, top=None) -> tuple[Pair, Slack]:
    """``pair`` and its :class:`Slack`: a label's mass comes from losses within ``width``
    steps of it; the first point (which absorbs L below it) keeps the lower ratio bound
    only if the law's smallest loss ``loss_min`` is that close, else its P-mass is
    irregular; likewise the last point (index ``top``, rows, default the grid's end) and
    ``loss_max`` (its Q-mass)."""
    rows, n = pair.pmf_x.shape
    half = width * grid_step
    offset = np.asarray(pair.offset)
    top = np.full(rows, n - 1) if top is None else np.asarray(top)
    first, last = offset * grid_step, (offset + top) * grid_step
    low_ok = np.broadcast_to(np.asarray(loss_min, np.float64), (rows,)) >= first - half
    high_ok = np.broadcast_to(np.asarray(loss_max, np.float64), (rows,)) <= last + half
    q_top = np.take_along_axis(np.asarray(pair.pmf_y), top[:, None], -1)[:, 0]
    with np.errstate(over="ignore"):
        irr_p = np.where(low_ok, 0.0, np.exp(first) * np.asarray(pair.pmf_x[:, 0]))
        irr_q = np.where(high_ok, 0.0, np.exp(-last) * q_top)
    return pair, Slack(np.full(rows, half), irr_p, irr_q, np.ones(rows))


def _run(kernel, a, b, offset, grid_step, n):
    check_memory(int(np.size(offset)), int(n), "optimistic companion")
    return kernel(jnp.asarray(a), jnp.asarray(b), jnp.asarray(offset), np.float64(grid_step), n=int(n))


def subsampled_gaussian_kernel(sigma, p, offset, grid_step, n) -> tuple[Pair, Slack]:
    """Optimistic companion (rows, n) of the Poisson-subsampled Gaussian, add/remove
    (P = N(0, s^2), Q = (1 - p) N(0, s^2) + p N(1, s^2); p = 1: the Gaussian), by the
    randomised map of :func:`split_map`, and its :class:`Slack` (a label's mass comes from
    losses within one step of it; the end points, which absorb the unbounded tails, are
    irregular: L has no upper bound, and no lower bound when p = 1)."""
    with np.errstate(divide="ignore"):
        loss_min = np.log1p(-np.asarray(p, np.float64))  # L >= log(1 - p); -inf for p = 1
    pair, top = _run(_sg, sigma, p, offset, grid_step, n)
    return _with_slack(pair, grid_step, loss_min, np.inf, width=1.0, top=top)


def subsampled_gaussian_substitution_kernel(sigma, p, offset, grid_step, n) -> tuple[Pair, Slack]:
    """Optimistic companion (rows, n) of the Poisson-subsampled Gaussian, replace-one."""
    pair, top = _run(_sg_sub, sigma, p, offset, grid_step, n)
    return _with_slack(pair, grid_step, -np.inf, np.inf, top=top)


def laplace_kernel(eps, p, offset, grid_step, n) -> tuple[Pair, Slack]:
    """Optimistic companion (rows, n) of the (Poisson-subsampled) Laplace mechanism. Its
    loss is bounded and lies inside the grid, so every cell is regular."""
    eps, p = np.asarray(eps, np.float64), np.asarray(p, np.float64)
    with np.errstate(divide="ignore"):
        loss_min = np.logaddexp(np.log1p(-p), np.log(p) - eps)
        loss_max = np.logaddexp(np.log1p(-p), np.log(p) + eps)
    return _with_slack(_run(_laplace, eps, p, offset, grid_step, n), grid_step, loss_min, loss_max)


def _mixture_cdfs(log_p0, shifts, log_p, offset, grid_step, n):
    return _boundary_cdfs(mixture_log_cdfs, offset, grid_step, n, log_p0, shifts, log_p)


_mixture_cdfs = _cache.kernel(jax.jit(_mixture_cdfs, static_argnames=("n",)), "opt_mog_cdfs")


def mixture_of_gaussians_kernel(log_p0, shifts, log_p, offset, grid_step, n) -> tuple[Pair, Slack]:
    """Optimistic companion (rows, n) of the mixture-of-Gaussians mechanism
    (:func:`dpax._engine.construct.mixture_log_cdfs`; ``log_p0`` (rows,), ``shifts`` and
    ``log_p`` (rows, m)) by nearest point: each cell's masses from the exact loss CDFs at
    the half-way boundaries, ended by :func:`fold_top` (the loss has no upper bound), and
    its :class:`Slack` (the first point is regular when the loss is bounded below by
    log p_0 within half a step of it; a row without components is the identity: one atom
    at 0, regular)."""
    log_p0, shifts, log_p = (np.asarray(a, np.float64) for a in (log_p0, shifts, log_p))
    check_memory(int(np.size(offset)), int(n) * (1 + shifts.shape[-1]), "optimistic companion")
    cdfs = _mixture_cdfs(jnp.asarray(log_p0), jnp.asarray(shifts), jnp.asarray(log_p), jnp.asarray(offset),
                         np.float64(grid_step), n=int(n))
    pair, top = _folded_cells(*cdfs, jnp.asarray(offset))
    identity = ~np.any(log_p > -np.inf, -1)
    return _with_slack(pair, grid_step, np.where(identity, 0.0, log_p0), np.where(identity, 0.0, np.inf), top=top)


def _host_close(pmf_x, pmf_y) -> tuple:
    """Device arrays of host masses, with both infinite atoms 0."""
    zero = jnp.zeros(pmf_x.shape[0])
    return jnp.asarray(pmf_x), jnp.asarray(pmf_y), zero, zero


def merge_to_grid(loss, log_p, log_q, offset, grid_step, n) -> tuple[Pair, Slack]:
    """Optimistic companion (rows, n) of a loss law made of atoms (rows, m) on the grid of a
    pair with first index ``offset`` (rows,) and ``n`` points: every atom, with both its
    masses, goes to the grid point nearest its loss, clamped to the grid (atoms at -inf /
    +inf to the first / last point). One map for P and Q: a post-processing, exact. Returns
    the pair and its :class:`Slack` (clamped atoms are irregular).

    >>> import numpy as np
    >>> pair, slack = merge_to_grid(np.array([[-1.0, 1.0]]), np.log([[0.7, 0.3]]), np.log([[0.3, 0.7]]),
    ...                      np.array([-100]), 0.01, 256)
    >>> round(float(pair.pmf_y[0, 0]), 6), round(float(pair.pmf_y[0, 200]), 6)
    (0.3, 0.7)
    """
    loss = np.atleast_2d(np.asarray(loss, np.float64))
    rows = loss.shape[0]
    lp, lq = (np.broadcast_to(np.atleast_2d(np.asarray(a, np.float64)), loss.shape) for a in (log_p, log_q))
    offset = np.broadcast_to(np.asarray(offset, np.int64), (rows,))
    check_memory(rows, max(int(n), loss.shape[-1]), "optimistic companion")
    with np.errstate(invalid="ignore", over="ignore"):
        k = np.where(np.isfinite(loss), np.round(np.where(np.isfinite(loss), loss, 0.0) / grid_step), 0.0)
    k = np.where(loss == np.inf, np.inf, np.where(loss == -np.inf, -np.inf, k))
    rel = k - offset[:, None]
    idx = np.clip(rel, 0, n - 1).astype(np.int64)
    below, above = rel < idx, rel > idx  # clamped to the first / last point (or infinite)
    r = np.broadcast_to(np.arange(rows)[:, None], loss.shape)
    p, q = np.exp(lp), np.exp(lq)
    pmf_x = np.zeros((rows, n))
    pmf_y = np.zeros((rows, n))
    np.add.at(pmf_x, (r, idx), p)
    np.add.at(pmf_y, (r, idx), q)
    pmf_x, pmf_y, inf_y, neginf_x = _host_close(pmf_x, pmf_y)
    first, last = offset * grid_step, (offset + n - 1) * grid_step
    with np.errstate(over="ignore"):
        slack = Slack(np.full(rows, 0.5 * grid_step), np.exp(first) * np.sum(np.where(below, p, 0.0), -1),
                      np.exp(-last) * np.sum(np.where(above, q, 0.0), -1), np.ones(rows))
    return Pair(pmf_x, pmf_y, jnp.asarray(offset), inf_y, neginf_x), slack


def regrid(pair: Pair, slack: Slack, old_step: float, new_step: float, padded_length) -> tuple[Pair, Slack]:
    """A companion on the grid ``k * new_step``: each old grid point's masses move to the
    nearest new point (a post-processing, so still optimistic; every label moves by at most
    half the new step, which widens the :class:`Slack`). ``padded_length(n)`` picks the new
    support length."""
    pmf_x, pmf_y, offset, _, _ = (np.asarray(a) for a in pair)
    rows, n = pmf_x.shape
    loss = loss_grid(offset.astype(np.int64), n, old_step)
    k = np.round(loss / new_step).astype(np.int64)
    lo = k[:, 0]
    m = padded_length(int(np.max(k[:, -1] - lo)) + 1)
    idx = k - lo[:, None]
    r = np.broadcast_to(np.arange(rows)[:, None], idx.shape)
    new_x = np.zeros((rows, m))
    new_y = np.zeros((rows, m))
    np.add.at(new_x, (r, idx), pmf_x)
    np.add.at(new_y, (r, idx), pmf_y)
    px, py, inf_y, neginf_x = _host_close(new_x, new_y)
    return Pair(px, py, jnp.asarray(lo), inf_y, neginf_x), slack.widened(0.5 * new_step)
