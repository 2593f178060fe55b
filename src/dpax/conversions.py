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
from scipy.special import expit, ndtri

from ._engine import validation as _v
from .gdp import closed_form as _closed
from .gdp.curves import GDPCurve, PiecewiseLinearCurve, TradeoffCurve
from .gdp.divergence import PrivacyLossCurve, delta_divergence, symmetric_delta_divergence

# -- scalar conversions ---------------------------------------------------------------------


def mu_from_epsilon_dp(epsilon):
    """mu such that every epsilon-DP mechanism is mu-GDP: -2 Phi^-1(1 / (e^eps + 1))
    (Proposition 6.1). Randomized response with this epsilon attains it at FPR = FNR.
    ``inf`` where 1 / (e^eps + 1) leaves float64's normal range (epsilon above about 708).

    >>> round(mu_from_epsilon_dp(1.0), 4)
    1.232
    """
    e = _v.real_array("epsilon", epsilon, low=0.0)
    with np.errstate(over="ignore"):  # e^eps overflows beyond ~709: expit(-eps) is exact there
        q = np.where(e > 700.0, expit(-e), 1.0 / (np.exp(e) + 1.0))
    with np.errstate(divide="ignore"):
        out = -2.0 * ndtri(q)  # inf where q underflows to 0 (epsilon above ~745)
    return out if out.ndim else float(out)


def mu_from_epsilon_delta(epsilon, delta):
    """mu of the Gaussian mechanism that is exactly (epsilon, delta)-DP (the paper's Table 3):
    the root of delta_mu(epsilon) = delta, Dong et al. Cor. 2.13, by bisection on mu.

    Never above the root (the mu-GDP mechanism returned is (epsilon, delta)-DP: on the safe
    side of a calibration) and within about 1e-11 relative of it, for every epsilon >= 0 and
    delta in (0, 1); always finite (about sqrt(2 epsilon) for a huge epsilon, about 16.7 at
    epsilon 0 and delta 1 - 2**-53).

    >>> round(mu_from_epsilon_delta(1.0, 1e-5), 4)
    0.2681
    """
    e = _v.real_array("epsilon", epsilon, low=0.0)
    d = _v.probabilities("delta", delta, low_open=True, high_open=True)
    e, d = _v.broadcast_arrays(("epsilon", e), ("delta", d))
    out = _closed._mu_of_epsilon_delta(np.asarray(e, float), np.asarray(d, float))
    return out if out.ndim else float(out)


# -- trade-off curves -------------------------------------------------------------------------


def gdp_curve(mu) -> GDPCurve:
    """Trade-off curve of mu-GDP; ``mu`` >= 0 is one number (a curve object is one curve).

    >>> round(gdp_curve(1.0).beta(0.1), 4)
    0.6109
    """
    return GDPCurve(mu)


def epsilon_delta_tradeoff(epsilon, delta, alpha):
    """f_{eps,delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))
    (Appendix A.6; Dong et al.). Arguments broadcast.

    >>> round(epsilon_delta_tradeoff(1.0, 1e-5, 0.1), 4)
    0.7282
    """
    e = _v.real_array("epsilon", epsilon, low=0.0)
    d = _v.probabilities("delta", delta)
    a = _v.probabilities("alpha", alpha)
    _v.broadcast_shapes(("epsilon", e), ("delta", d), ("alpha", a))
    with np.errstate(over="ignore", invalid="ignore"):  # e^eps alpha = inf beyond eps ~709 (alpha > 0): below 0
        steep = np.where(a > 0, np.exp(e) * a, 0.0)  # not inf * 0 = NaN at alpha = 0
    out = np.maximum(0.0, np.maximum(1.0 - d - steep, np.exp(-e) * (1.0 - d - a)))
    return out if out.ndim else float(out)


def epsilon_delta_curve(epsilon, delta) -> PiecewiseLinearCurve:
    """The curve of (epsilon, delta)-DP: vertices (0, 1 - delta), (c, c), (1 - delta, 0),
    c = (1 - delta) / (1 + e^eps). ``epsilon`` and ``delta`` are single numbers.

    >>> epsilon_delta_curve(1.0, 1e-5)
    PiecewiseLinearCurve((1, 1e-05)-DP)
    """
    e = _v.scalar("epsilon", epsilon, low=0.0)
    d = _v.scalar("delta", delta, low=0.0, high=1.0)
    with np.errstate(over="ignore"):
        c = (1.0 - d) / (1.0 + np.exp(e))
    return PiecewiseLinearCurve([0.0, c, 1.0 - d], [1.0 - d, c, 0.0], f"({e:g}, {d:g})-DP")


def _renyi_binary(t, p, q):
    """D_t(Bern(p) || Bern(q)) (t = 1: KL), elementwise (``t`` a number or an array that
    broadcasts), inf where unbounded."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        def kl():
            def term(x, y):
                return np.where(x > 0, x * (np.log(x) - np.log(y)), 0.0)

            return term(p, q) + term(1.0 - p, 1.0 - q)

        def renyi():
            def lterm(x, y):
                return np.where(x > 0, t * np.log(x) + (1.0 - t) * np.log(y), -np.inf)

            return np.logaddexp(lterm(p, q), lterm(1.0 - p, 1.0 - q)) / (t - 1.0)

        if np.ndim(t) == 0:
            out = kl() if t == 1.0 else renyi()
        else:  # the same operations entry by entry
            out = np.where(t == 1.0, kl(), renyi())
    return np.where(np.isnan(out), np.inf, out)


def rdp_tradeoff(order, epsilon, alpha):
    """Smallest beta consistent with (order, epsilon)-RDP at FPR ``alpha`` (Appendix A.6;
    Balle et al. 2020, Zhu et al. 2022): by data processing, D_t(Bern(alpha) || Bern(1 - beta))
    and D_t(Bern(1 - beta) || Bern(alpha)) are both <= epsilon. Bisection on beta to 1e-13
    (the result errs low: pessimistic). ``order`` >= 1/2 (1: KL); the arguments broadcast.

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
    t = float(t) if t.ndim == 0 else np.broadcast_to(t, shape)
    e = float(e) if e.ndim == 0 else np.broadcast_to(e, shape)
    a = np.broadcast_to(a, shape)
    lo = np.zeros(a.shape)  # infeasible side (or 0)
    hi = 1.0 - a  # beta = 1 - alpha: both divergences 0, feasible
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        ok = (_renyi_binary(t, a, 1.0 - mid) <= e) & (_renyi_binary(t, 1.0 - mid, a) <= e)
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    out = np.maximum(lo, 0.0)
    out = np.where(_feasible(t, e, a, np.zeros(a.shape)), 0.0, out)
    return out if out.ndim else float(out)


def _feasible(t, e, a, b):
    return (_renyi_binary(t, a, 1.0 - b) <= e) & (_renyi_binary(t, 1.0 - b, a) <= e)


#: FPRs at which the RDP / zCDP curves are tabulated (then joined pessimistically).
CURVE_ALPHAS = np.unique(np.concatenate([np.logspace(-12, -1, 221), np.linspace(0.0, 1.0, 401)]))
#: Rényi orders whose curves are combined for rho-zCDP.
ZCDP_ORDERS = np.unique(np.concatenate([[1.0], 1.0 + np.logspace(-3, 4, 141)]))


def _tabulated(alpha, beta, description):
    # the lower hull of points on a convex curve lies below it: never optimistic
    return PiecewiseLinearCurve(alpha, beta, description)


def rdp_curve(order, epsilon) -> PiecewiseLinearCurve:
    """Trade-off curve implied by (order, epsilon)-RDP, tabulated at :data:`CURVE_ALPHAS`;
    ``order`` and ``epsilon`` are single numbers.

    >>> round(rdp_curve(2.0, 0.5).beta(0.1), 4)
    0.6584
    """
    t = _v.scalar("order", order, low=0.5)
    e = _v.scalar("epsilon", epsilon, low=0.0)
    a = CURVE_ALPHAS
    return _tabulated(a, rdp_tradeoff(t, e, a), f"({t:g}, {e:g})-RDP")


def zcdp_tradeoff(rho, alpha, orders=None):
    """Smallest beta consistent with rho-zCDP ((t, rho t)-RDP for every t >= 1) at ``alpha``:
    the largest of the RDP curves over ``orders`` (default :data:`ZCDP_ORDERS`). A finite set
    of orders gives a curve below the exact one (pessimistic); Appendix A.6 notes that the
    exact optimisation is numerically delicate. ``rho`` and ``alpha`` broadcast.

    >>> round(zcdp_tradeoff(0.1, 0.1), 4)
    0.7692
    """
    r = _v.real_array("rho", rho, low=0.0)
    a = _v.probabilities("alpha", alpha)
    shape = _v.broadcast_shapes(("rho", r), ("alpha", a))
    r = float(r) if r.ndim == 0 else np.broadcast_to(r, shape)
    a = np.broadcast_to(a, shape)
    ts = ZCDP_ORDERS if orders is None else _v.real_array("orders", orders, low=1.0).reshape(-1)
    out = np.zeros(a.shape)
    for t in ts:
        out = np.maximum(out, rdp_tradeoff(t, r * t, a))
    return out if out.ndim else float(out)


def zcdp_curve(rho, orders=None) -> PiecewiseLinearCurve:
    """Trade-off curve implied by rho-zCDP, tabulated at :data:`CURVE_ALPHAS`; ``rho`` is a
    single number.

    >>> round(zcdp_curve(0.1).beta(0.1), 4)
    0.7692
    """
    r = _v.scalar("rho", rho, low=0.0)
    a = CURVE_ALPHAS
    return _tabulated(a, zcdp_tradeoff(r, a, orders), f"{r:g}-zCDP")


def tabulated_curve(alpha, beta, description="tabulated curve") -> PiecewiseLinearCurve:
    """A curve from points (alpha_i, beta_i), joined by their lower convex hull.

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
