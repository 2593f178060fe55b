"""Conversions between privacy notions and the trade-off curves they imply.

From "(epsilon, delta) considered harmful: report Gaussian DP" (Gomez et al.):

* :func:`mu_from_epsilon_dp` -- an epsilon-DP mechanism is mu-GDP with
  mu = -2 Phi^-1(1 / (e^eps + 1)) (Proposition 6.1), tight at the point closest to the origin;
* :func:`mu_from_epsilon_delta` -- the mu of the Gaussian mechanism that is exactly
  (epsilon, delta)-DP (Table 3), i.e. the root of mu-GDP's delta(epsilon) = delta;
* trade-off curves implied by each notion (Appendix A.6): (epsilon, delta)-DP, an RDP
  guarantee (order, epsilon), rho-zCDP, and mu-GDP, as curve objects with ``beta(alpha)``;
* the Delta-divergence between any two curves, :func:`delta_divergence` (Eq. 8) and
  :func:`symmetric_delta_divergence` (Eq. 9), defined with the curve objects in
  :mod:`dpax.gdp.curves` and importable from here as well.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._engine import validation as _v
from ._engine.host_special import erfinv, expit, ndtri
from .gdp import closed_form as _closed
from .gdp.curves import GDPCurve, PiecewiseLinearCurve, TradeoffCurve
from .gdp.divergence import PrivacyLossCurve, delta_divergence, symmetric_delta_divergence

# -- scalar conversions ---------------------------------------------------------------------


#: Relative rounding up of :func:`mu_from_epsilon_dp`: twice the largest error measured
#: against 400-digit mpmath (4.7e-16, epsilon from 1e-300 to 709), so that mu is never below
#: the exact value.
MU_PURE_DP_ROUNDING = 1e-15


def mu_from_epsilon_dp(epsilon: ArrayLike) -> float | np.ndarray:
    """mu such that every epsilon-DP mechanism is mu-GDP: -2 Phi^-1(1 / (e^eps + 1))
    (Proposition 6.1). Randomized response with this epsilon attains it at FPR = FNR.
    ``inf`` where 1 / (e^eps + 1) leaves float64's normal range (epsilon above about 708).

    Args:
        epsilon: the pure-DP epsilon, finite and >= 0 (any shape).

    Returns:
        mu, a float for one number, else an array of the shape of ``epsilon``, at or above
        the exact value (a privacy bound rounded on the safe side): below epsilon = 1 as
        2 sqrt(2) erfinv(tanh(eps / 2)) (the same number without the cancellation of
        1 / (e^eps + 1) next to 1/2), above it from Phi^-1; measured against 400-digit
        mpmath for epsilon from 1e-300 to 709, within 4.7e-16 relative before the rounding
        up by :data:`MU_PURE_DP_ROUNDING`.

    Raises:
        ValueError: ``epsilon`` negative, NaN, infinite or empty.
        TypeError: ``epsilon`` not real (a boolean, a string, complex, a masked array).

    >>> round(mu_from_epsilon_dp(1.0), 4)
    1.232
    >>> mu_from_epsilon_dp([0.5, 1.0, 8.0]).round(4)
    array([0.6239, 1.232 , 6.8026])
    """
    e = _v.real_array("epsilon", epsilon, low=0.0)
    with np.errstate(over="ignore"):  # e^eps overflows beyond ~709: expit(-eps) is exact there
        q = np.where(e > 700.0, expit(-e), 1.0 / (np.exp(e) + 1.0))
    with np.errstate(divide="ignore"):
        far = -2.0 * ndtri(q)  # inf where q underflows to 0 (epsilon above ~745)
    near = 2.0 * np.sqrt(2.0) * erfinv(np.tanh(np.minimum(e, 1.0) / 2.0))  # Phi^-1(1/2 + t/2) = sqrt(2) erfinv(t)
    out = np.asarray(np.where(e < 1.0, near, far) * (1.0 + MU_PURE_DP_ROUNDING))
    return out if out.ndim else float(out)


def mu_from_epsilon_delta(epsilon: ArrayLike, delta: ArrayLike) -> float | np.ndarray:
    """mu of the Gaussian mechanism that is exactly (epsilon, delta)-DP (the paper's Table 3):
    the root of delta_mu(epsilon) = delta, Dong et al. Cor. 2.13, by bisection on mu.

    Args:
        epsilon: finite and >= 0.
        delta: in (0, 1); broadcasts with ``epsilon``.

    Returns:
        mu, a float for two numbers, else an array of the broadcast shape. Never above the
        root (the mu-GDP mechanism returned is (epsilon, delta)-DP: on the safe side of a
        calibration) and within about 1e-11 relative of it, for every epsilon >= 0 and delta
        in (0, 1); always finite (about sqrt(2 epsilon) for a huge epsilon, about 16.7 at
        epsilon 0 and delta 1 - 2**-53).

    Raises:
        ValueError: ``epsilon`` negative, ``delta`` outside (0, 1), either NaN, infinite or
            empty, or shapes that do not broadcast (the message names the arguments).
        TypeError: an argument not real.

    >>> round(mu_from_epsilon_delta(1.0, 1e-5), 4)
    0.2681
    >>> mu_from_epsilon_delta([1.0, 8.0], [[1e-5], [1e-9]]).round(2)
    array([[0.27, 1.67],
           [0.18, 1.26]])
    """
    e = _v.real_array("epsilon", epsilon, low=0.0)
    d = _v.probabilities("delta", delta, low_open=True, high_open=True)
    e, d = _v.broadcast_arrays(("epsilon", e), ("delta", d))
    out = _closed._mu_of_epsilon_delta(np.asarray(e, float), np.asarray(d, float))
    return out if out.ndim else float(out)


# -- trade-off curves -------------------------------------------------------------------------


def gdp_curve(mu: float) -> GDPCurve:
    """Trade-off curve of mu-GDP; ``mu`` >= 0 is one number (a curve object is one curve).

    Args:
        mu: the GDP parameter, one finite number >= 0.

    Returns:
        ``GDPCurve(mu)``, the exact curve f_mu (its ``beta`` rounds down: never above f_mu).

    Raises:
        ValueError: ``mu`` negative, NaN, infinite or more than one number.
        TypeError: ``mu`` not real.

    >>> gdp_curve(1.0), round(gdp_curve(1.0).beta(0.1), 4)
    (GDPCurve(1-GDP), 0.6109)
    """
    return GDPCurve(mu)


def epsilon_delta_tradeoff(epsilon: ArrayLike, delta: ArrayLike, alpha: ArrayLike) -> float | np.ndarray:
    """f_{eps,delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))
    (Appendix A.6; Dong et al.). Arguments broadcast.

    Args:
        epsilon: finite and >= 0.
        delta: in [0, 1].
        alpha: the attack's FPR, in [0, 1].

    Returns:
        The smallest FNR an (epsilon, delta)-DP mechanism allows at FPR ``alpha``: a float
        for three numbers, else an array of the broadcast shape. The formula in float64,
        not rounded outward (within ~3e-14 relative of 50-digit mpmath, either side).

    Raises:
        ValueError: an argument outside its range, NaN, infinite or empty, or shapes that do
            not broadcast (the message names the arguments).
        TypeError: an argument not real.

    >>> round(epsilon_delta_tradeoff(1.0, 1e-5, 0.1), 4)
    0.7282
    >>> epsilon_delta_tradeoff(1.0, 0.0, [0.0, 0.5, 1.0]).round(4)
    array([1.    , 0.1839, 0.    ])
    """
    e = _v.real_array("epsilon", epsilon, low=0.0)
    d = _v.probabilities("delta", delta)
    a = _v.probabilities("alpha", alpha)
    _v.broadcast_shapes(("epsilon", e), ("delta", d), ("alpha", a))
    with np.errstate(over="ignore", invalid="ignore"):  # e^eps alpha = inf beyond eps ~709 (alpha > 0): below 0
        steep = np.where(a > 0, np.exp(e) * a, 0.0)  # not inf * 0 = NaN at alpha = 0
    out = np.maximum(0.0, np.maximum(1.0 - d - steep, np.exp(-e) * (1.0 - d - a)))
    return out if out.ndim else float(out)


def epsilon_delta_curve(epsilon: float, delta: float) -> PiecewiseLinearCurve:
    """The curve of (epsilon, delta)-DP: vertices (0, 1 - delta), (c, c), (1 - delta, 0),
    c = (1 - delta) / (1 + e^eps). ``epsilon`` and ``delta`` are single numbers.

    Args:
        epsilon: one finite number >= 0.
        delta: one number in [0, 1].

    Returns:
        The curve (:func:`epsilon_delta_tradeoff` as a curve object, for
        :func:`delta_divergence`), labelled ``"(epsilon, delta)-DP"``.

    Raises:
        ValueError: an argument outside its range, NaN, infinite or more than one number.
        TypeError: an argument not real.

    >>> epsilon_delta_curve(1.0, 1e-5)
    PiecewiseLinearCurve((1, 1e-05)-DP)
    """
    e = _v.scalar("epsilon", epsilon, low=0.0)
    d = _v.scalar("delta", delta, low=0.0, high=1.0)
    with np.errstate(over="ignore"):
        c = (1.0 - d) / (1.0 + np.exp(e))
    return PiecewiseLinearCurve([0.0, c, 1.0 - d], [1.0 - d, c, 0.0], f"({e:g}, {d:g})-DP")


def _renyi_binary(t: float | np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """D_t(Bern(p) || Bern(q)) (t = 1: KL), elementwise (``t`` a number or an array that
    broadcasts), inf where unbounded."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        def kl() -> np.ndarray:
            def term(x: np.ndarray, y: np.ndarray) -> np.ndarray:
                return np.where(x > 0, x * (np.log(x) - np.log(y)), 0.0)

            return term(p, q) + term(1.0 - p, 1.0 - q)

        def renyi() -> np.ndarray:
            def lterm(x: np.ndarray, y: np.ndarray) -> np.ndarray:
                return np.where(x > 0, t * np.log(x) + (1.0 - t) * np.log(y), -np.inf)

            return np.logaddexp(lterm(p, q), lterm(1.0 - p, 1.0 - q)) / (t - 1.0)

        if np.ndim(t) == 0:
            out = kl() if t == 1.0 else renyi()
        else:  # the same operations entry by entry
            out = np.where(t == 1.0, kl(), renyi())
    return np.where(np.isnan(out), np.inf, out)


def rdp_tradeoff(order: ArrayLike, epsilon: ArrayLike, alpha: ArrayLike) -> float | np.ndarray:
    """Smallest beta consistent with (order, epsilon)-RDP at FPR ``alpha`` (Appendix A.6;
    Balle et al. 2020, Zhu et al. 2022): by data processing, D_t(Bern(alpha) || Bern(1 - beta))
    and D_t(Bern(1 - beta) || Bern(alpha)) are both <= epsilon. ``order`` >= 1/2 (1: KL);
    the arguments broadcast.

    Args:
        order: the Rényi order t, finite and >= 1/2 (1: the KL divergence).
        epsilon: the RDP epsilon at that order, finite and >= 0.
        alpha: the attack's FPR, in [0, 1].

    Returns:
        beta, a float for three numbers, else an array of the broadcast shape. Bisection on
        beta to 1e-13 (64 halvings of [0, 1 - alpha]), returning the infeasible end: the
        result errs low, pessimistic.

    Raises:
        ValueError: an argument outside its range, NaN, infinite or empty, or shapes that do
            not broadcast (the message names the arguments).
        TypeError: an argument not real.

    >>> round(rdp_tradeoff(2.0, 0.5, 0.1), 4)
    0.6584
    >>> rdp_tradeoff([2.0, 4.0], 0.5, 0.1).round(4)
    array([0.6584, 0.7477])
    """
    t = _v.real_array("order", order, low=0.5)
    e = _v.real_array("epsilon", epsilon, low=0.0)
    a = _v.probabilities("alpha", alpha)
    shape = _v.broadcast_shapes(("order", t), ("epsilon", e), ("alpha", a))
    # one order and one epsilon: Python floats, exactly the scalar path of before
    tb: float | np.ndarray = float(t) if t.ndim == 0 else np.broadcast_to(t, shape)
    eb: float | np.ndarray = float(e) if e.ndim == 0 else np.broadcast_to(e, shape)
    a = np.broadcast_to(a, shape)
    lo = np.zeros(a.shape)  # infeasible side (or 0)
    hi = 1.0 - a  # beta = 1 - alpha: both divergences 0, feasible
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        ok = (_renyi_binary(tb, a, 1.0 - mid) <= eb) & (_renyi_binary(tb, 1.0 - mid, a) <= eb)
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    out = np.maximum(lo, 0.0)
    out = np.where(_feasible(tb, eb, a, np.zeros(a.shape)), 0.0, out)
    return out if out.ndim else float(out)


def _feasible(t: float | np.ndarray, e: float | np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (_renyi_binary(t, a, 1.0 - b) <= e) & (_renyi_binary(t, 1.0 - b, a) <= e)


#: FPRs at which the RDP / zCDP curves are tabulated (then joined pessimistically).
CURVE_ALPHAS = np.unique(np.concatenate([np.logspace(-12, -1, 221), np.linspace(0.0, 1.0, 401)]))
#: Rényi orders whose curves are combined for rho-zCDP.
ZCDP_ORDERS = np.unique(np.concatenate([[1.0], 1.0 + np.logspace(-3, 4, 141)]))


def _tabulated(alpha: ArrayLike, beta: ArrayLike, description: str) -> PiecewiseLinearCurve:
    # the lower hull of points on a convex curve lies below it: never optimistic
    return PiecewiseLinearCurve(alpha, beta, description)


def rdp_curve(order: float, epsilon: float) -> PiecewiseLinearCurve:
    """Trade-off curve implied by (order, epsilon)-RDP, tabulated at :data:`CURVE_ALPHAS`;
    ``order`` and ``epsilon`` are single numbers.

    Args:
        order: the Rényi order, one finite number >= 1/2.
        epsilon: the RDP epsilon, one finite number >= 0.

    Returns:
        The lower convex hull of :func:`rdp_tradeoff` at :data:`CURVE_ALPHAS` (never above
        those points, which err low: pessimistic), labelled ``"(order, epsilon)-RDP"``.

    Raises:
        ValueError: an argument outside its range, NaN, infinite or more than one number.
        TypeError: an argument not real.

    >>> round(rdp_curve(2.0, 0.5).beta(0.1), 4)
    0.6584
    """
    t = _v.scalar("order", order, low=0.5)
    e = _v.scalar("epsilon", epsilon, low=0.0)
    a = CURVE_ALPHAS
    return _tabulated(a, rdp_tradeoff(t, e, a), f"({t:g}, {e:g})-RDP")


def zcdp_tradeoff(rho: ArrayLike, alpha: ArrayLike, orders: ArrayLike | None = None) -> float | np.ndarray:
    """Smallest beta consistent with rho-zCDP ((t, rho t)-RDP for every t >= 1) at ``alpha``:
    the largest of the RDP curves over ``orders`` (default :data:`ZCDP_ORDERS`). A finite set
    of orders gives a curve below the exact one (pessimistic); Appendix A.6 notes that the
    exact optimisation is numerically delicate. ``rho`` and ``alpha`` broadcast.

    Args:
        rho: the zCDP parameter, finite and >= 0.
        alpha: the attack's FPR, in [0, 1].
        orders: the Rényi orders t whose curves are combined, each finite and >= 1
            (flattened; default ``None``: :data:`ZCDP_ORDERS`, 142 orders from 1 to 10,001).

    Returns:
        beta, a float for two numbers, else an array of the broadcast shape of ``rho`` and
        ``alpha``; never above the exact rho-zCDP curve (each order's :func:`rdp_tradeoff`
        errs low, and finitely many orders give a lower maximum).

    Raises:
        ValueError: an argument outside its range, NaN, infinite or empty, or shapes that do
            not broadcast (the message names the arguments).
        TypeError: an argument not real.

    >>> round(zcdp_tradeoff(0.1, 0.1), 4)
    0.7692
    >>> zcdp_tradeoff(0.1, [0.01, 0.1]).round(4)
    array([0.9649, 0.7692])
    >>> zcdp_tradeoff(0.1, [0.01, 0.1], orders=[1.0, 2.0]).round(4)   # two orders: lower
    array([0.9432, 0.7588])
    """
    r = _v.real_array("rho", rho, low=0.0)
    a = _v.probabilities("alpha", alpha)
    shape = _v.broadcast_shapes(("rho", r), ("alpha", a))
    rb: float | np.ndarray = float(r) if r.ndim == 0 else np.broadcast_to(r, shape)
    a = np.broadcast_to(a, shape)
    ts = ZCDP_ORDERS if orders is None else _v.real_array("orders", orders, low=1.0).reshape(-1)
    out = np.zeros(a.shape)
    for t in ts:
        out = np.maximum(out, rdp_tradeoff(t, rb * t, a))
    return out if out.ndim else float(out)


def zcdp_curve(rho: float, orders: ArrayLike | None = None) -> PiecewiseLinearCurve:
    """Trade-off curve implied by rho-zCDP, tabulated at :data:`CURVE_ALPHAS`; ``rho`` is a
    single number.

    Args:
        rho: the zCDP parameter, one finite number >= 0.
        orders: the Rényi orders combined, each finite and >= 1 (default ``None``:
            :data:`ZCDP_ORDERS`); see :func:`zcdp_tradeoff`.

    Returns:
        The lower convex hull of :func:`zcdp_tradeoff` at :data:`CURVE_ALPHAS` (never above
        those points, which are never above the exact curve: pessimistic), labelled
        ``"rho-zCDP"``.

    Raises:
        ValueError: an argument outside its range, NaN, infinite or empty, or ``rho`` more
            than one number.
        TypeError: an argument not real.

    >>> round(zcdp_curve(0.1).beta(0.1), 4)
    0.7692
    """
    r = _v.scalar("rho", rho, low=0.0)
    a = CURVE_ALPHAS
    return _tabulated(a, zcdp_tradeoff(r, a, orders), f"{r:g}-zCDP")


def tabulated_curve(alpha: ArrayLike, beta: ArrayLike, description: str = "tabulated curve"
                    ) -> PiecewiseLinearCurve:
    """A curve from points (alpha_i, beta_i), joined by their lower convex hull.

    Args:
        alpha: FPRs of the points, in [0, 1] (flattened).
        beta: FNRs of the points, in [0, 1], as many as ``alpha``.
        description: a label shown by ``repr`` (default ``"tabulated curve"``).

    Returns:
        The :class:`PiecewiseLinearCurve` through the lower convex hull of the points and the
        corners (0, 1), (1, 0): never above the points (pessimistic).

    Raises:
        ValueError: an entry outside [0, 1], NaN or infinite, or ``alpha`` and ``beta`` of
            different lengths.
        TypeError: ``alpha`` or ``beta`` not real, or ``description`` not a string.

    >>> tabulated_curve([0.0, 0.2, 1.0], [1.0, 0.3, 0.0]).beta(0.1)
    0.65
    """
    return PiecewiseLinearCurve(alpha, beta, description)


__all__ = [
    "CURVE_ALPHAS",
    "GDPCurve",
    "PiecewiseLinearCurve",
    "PrivacyLossCurve",
    "TradeoffCurve",
    "ZCDP_ORDERS",
    "delta_divergence",
    "epsilon_delta_curve",
    "epsilon_delta_tradeoff",
    "gdp_curve",
    "mu_from_epsilon_delta",
    "mu_from_epsilon_dp",
    "rdp_curve",
    "rdp_tradeoff",
    "symmetric_delta_divergence",
    "tabulated_curve",
    "zcdp_curve",
    "zcdp_tradeoff",
]
