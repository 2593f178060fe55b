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
2. bounds each big-side mass (:func:`big_side_bounds`) from below by the larger of its FFT value
   less eta and its tilted law's less eta and less the most the wrap can have added
   (:func:`wrapped_mass`, Chernoff bounds from the log-MGFs), from above likewise;
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
bound inside the window gives 28.3 for 32.85 at 1e-10); mu of that DP-SGD (sigma 1, p 1e-3,
10^4 steps) 0.158344 at grid 1e-4, where the dominating pair, which books the FFT's
round-off bound point by point, gives 0.174582 and its far tails tightened the same way as
here (:mod:`dpax._engine.tail_bounds`) 0.159824.

Modules: :mod:`.slack` (what a companion knows of its likelihood ratios), :mod:`.single_step`
(a single step's companion, per mechanism), :mod:`.reclose` (a composed companion closed)
and :mod:`.regrid` (atoms merged to the grid, another grid step).
"""

from .reclose import ROUNDOFF_STEPS_MAX, head_heavy, reclose
from .regrid import merge_to_grid, regrid
from .single_step import (
    FOLD_TAIL,
    cell_masses,
    fold_top,
    laplace_kernel,
    mixture_of_gaussians_kernel,
    split_coefficients,
    split_map,
    subsampled_gaussian_kernel,
    subsampled_gaussian_substitution_kernel,
)
from .slack import Slack, composed_slack, with_slack

__all__ = [
    "FOLD_TAIL",
    "ROUNDOFF_STEPS_MAX",
    "Slack",
    "cell_masses",
    "composed_slack",
    "fold_top",
    "head_heavy",
    "laplace_kernel",
    "merge_to_grid",
    "mixture_of_gaussians_kernel",
    "reclose",
    "regrid",
    "split_coefficients",
    "split_map",
    "subsampled_gaussian_kernel",
    "subsampled_gaussian_substitution_kernel",
    "with_slack",
]
