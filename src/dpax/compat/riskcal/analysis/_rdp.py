"""Trade-off curves of Rényi-DP guarantees for many orders at once (rho-zCDP).

For one order t and budget e, the smallest FNR at FPR alpha consistent with (t, e)-RDP is,
by data processing onto the test's decision (Balle et al. 2020; Zhu et al. 2022, App. F.1;
Appendix A.6 of Gomez, Kulynych, Kaissis, Hayes, Balle and Honkela, "(epsilon, delta)
considered harmful: best practices for reporting differential privacy guarantees", 2025), the
smallest b with D_t(Bern(alpha) || Bern(1 - b)) <= e and
D_t(Bern(1 - b) || Bern(alpha)) <= e: :func:`dpax.conversions.rdp_tradeoff`, found by
bisection on b. rho-zCDP is (t, rho t)-RDP for every order t >= 1, so its curve is the
largest of these over the orders. dpax's ``zcdp_tradeoff`` bisects one order at a time;
riskcal's ``get_beta_from_zcdp`` takes up to a thousand orders, so here the same bisection
runs on an (orders x alphas) array, in chunks. Every bisection returns its infeasible end:
each order's curve errs low, and so does their maximum (pessimistic).

The advantage of rho-zCDP needs no curve: each order's curve is convex and symmetric, so
its largest advantage 1 - alpha - f(alpha) is at its fixed point a = f(a), where
D_t(Bern(a) || Bern(1 - a)) = e; the fixed point of the maximum over orders is the largest
of the orders' fixed points (the bisection again errs on the pessimistic side).
"""

from __future__ import annotations

import math

import numpy as np

#: elements of one (orders x alphas) chunk
CHUNK = 1 << 16


def renyi_bernoulli(t, p, q):
    """D_t(Bern(p) || Bern(q)) elementwise (t > 0; t = 1: KL divergence), inf where unbounded."""
    t, p, q = np.broadcast_arrays(np.asarray(t, float), np.asarray(p, float), np.asarray(q, float))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lp, lq, lp1, lq1 = np.log(p), np.log(q), np.log1p(-p), np.log1p(-q)
        first = np.where(p > 0, t * lp + (1.0 - t) * lq, -np.inf)
        second = np.where(p < 1, t * lp1 + (1.0 - t) * lq1, -np.inf)
        renyi = np.logaddexp(first, second) / (t - 1.0)
        kl = np.where(p > 0, p * (lp - lq), 0.0) + np.where(p < 1, (1.0 - p) * (lp1 - lq1), 0.0)
        out = np.where(t == 1.0, kl, renyi)
    return np.where(np.isnan(out), np.inf, out)


def iterations(tol: float) -> int:
    """Bisection steps that bring a bracket of width <= 1 under ``tol`` / 4 (20 to 64)."""
    tol = float(tol)
    if not (tol > 0 and math.isfinite(tol)):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    return int(min(64, max(20, math.ceil(math.log2(1.0 / tol)) + 2)))


def _feasible(t, e, a, b):
    """(t, e)-RDP allows FNR b at FPR a (both directions of data processing)."""
    return (renyi_bernoulli(t, a, 1.0 - b) <= e) & (renyi_bernoulli(t, 1.0 - b, a) <= e)


def _bisect_beta(t, e, a, lo, steps):
    """Smallest feasible b in [lo, 1 - a] for each element (lo infeasible or 0), from below."""
    lo = np.array(lo, float)
    hi = 1.0 - a  # b = 1 - alpha: both divergences 0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        ok = _feasible(t, e, a, mid)
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return np.where(_feasible(t, e, a, np.zeros(lo.shape)), 0.0, lo)


#: every how many orders the first pass of :func:`max_rdp_tradeoff` bisects
STRIDE = 16


def max_rdp_tradeoff(orders, epsilons, alpha, tol=1e-9):
    """max over i of the (orders[i], epsilons[i])-RDP curve at each ``alpha`` (1-D arrays).

    Exact over all the orders, in two passes: bisect every STRIDE-th order, whose maximum L
    is a lower bound; an order whose curve lies at or below L at this alpha (L is
    feasible for it) cannot raise the maximum, so only the orders for which L is
    infeasible are bisected, above L."""
    t = np.asarray(orders, float).reshape(-1)
    e = np.asarray(epsilons, float).reshape(-1)
    a = np.asarray(alpha, float).reshape(-1)
    steps = iterations(tol)
    out = np.zeros(a.size)
    width = max(1, CHUNK // max(1, t.size))
    first = np.unique(np.concatenate([np.arange(0, t.size, STRIDE), [t.size - 1]]))
    for start in range(0, a.size, width):
        cols = a[start:start + width]
        ts, es = t[first][:, None], e[first][:, None]
        low = _bisect_beta(ts, es, cols[None, :], np.zeros((first.size, cols.size)), steps).max(axis=0)
        rows, idx = np.nonzero(~_feasible(t[:, None], e[:, None], cols[None, :], low[None, :]))
        best = low.copy()
        if rows.size:
            vals = _bisect_beta(t[rows], e[rows], cols[idx], low[idx], steps)
            np.maximum.at(best, idx, vals)
        out[start:start + width] = best
    return out


def zcdp_orders(min_order: float, max_order: float, grid_size: int) -> np.ndarray:
    """riskcal's grid of Rényi orders for rho-zCDP: ``grid_size // 3`` each on [min_order, 2],
    [2, 16] (linear) and [16, max_order] (logarithmic), the shared ends once."""
    n = int(grid_size) // 3
    if n < 2:
        raise ValueError(f"grid_size must be >= 6, got {grid_size!r}")
    for name, v in (("min_order", min_order), ("max_order", max_order)):
        if not (math.isfinite(v) and v >= 1.0):  # rho-zCDP bounds the orders t > 1 (KL at t = 1)
            raise ValueError(f"{name} must be a finite order >= 1, got {v!r}")
    return np.concatenate([
        np.linspace(min_order, 2.0, n)[:-1],
        np.linspace(2.0, 16.0, n)[:-1],
        np.logspace(np.log10(16.0), np.log10(max_order), n),
    ])


def zcdp_fixed_point(rho: float, orders, tol=1e-9) -> float:
    """Largest fixed point a = f_t(a) over the orders of the (t, rho t)-RDP curves, from
    below (a in [0, 1/2])."""
    t = np.asarray(orders, float).reshape(-1)
    e = rho * t
    lo, hi = np.zeros(t.size), np.full(t.size, 0.5)
    for _ in range(iterations(tol)):
        mid = 0.5 * (lo + hi)
        far = renyi_bernoulli(t, mid, 1.0 - mid) > e  # mid is left of the fixed point
        lo = np.where(far, mid, lo)
        hi = np.where(far, hi, mid)
    return float(np.max(lo))
