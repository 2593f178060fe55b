"""Exact references and oracle helpers shared by the dpax tests (imported as a module).

Everything here is computed independently of dpax: closed forms from scipy.stats.norm, the
exact single-step Poisson-subsampled Gaussian trade-off curve, and the oracle libraries
(dp-accounting + riskcal, prv-accountant).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

# ---------------------------------------------------------------------------------------
# alpha grids
# ---------------------------------------------------------------------------------------

#: log-spaced from 1e-8 to 0.5 plus a linear grid over (0, 1): where the tests look at beta.
ALPHAS = np.unique(
    np.concatenate([np.logspace(-8, np.log10(0.5), 81), np.linspace(0.001, 0.999, 200), [0.0, 0.5, 1.0]])
)


# ---------------------------------------------------------------------------------------
# Gaussian DP closed forms (Dong, Roth & Su)
# ---------------------------------------------------------------------------------------


def gdp_beta(alpha, mu):
    """G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)."""
    return norm.cdf(norm.isf(np.asarray(alpha, float)) - mu)


def gdp_advantage(mu):
    return 2.0 * norm.cdf(mu / 2.0) - 1.0


def gdp_delta(epsilon, mu):
    """delta(epsilon) of mu-GDP (Corollary 2.13), with the second term in log space."""
    epsilon = np.asarray(epsilon, float)
    return norm.cdf(-epsilon / mu + mu / 2) - np.exp(epsilon + norm.logcdf(-epsilon / mu - mu / 2))


def gdp_epsilon(delta, mu):
    """Smallest epsilon >= 0 with delta(epsilon) <= delta for mu-GDP."""
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    return brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, 50.0 + 10 * mu * mu, xtol=1e-14, rtol=1e-14)


# ---------------------------------------------------------------------------------------
# Single-step Poisson-subsampled Gaussian (add/remove), exact
# ---------------------------------------------------------------------------------------


def subsampled_f(alpha, sigma, p):
    """f_p = T(P, Q) for P = N(0, s^2), Q = (1 - p) N(0, s^2) + p N(1, s^2)."""
    alpha = np.asarray(alpha, float)
    return (1 - p) * (1 - alpha) + p * norm.cdf(norm.isf(alpha) - 1.0 / sigma)


def subsampled_f_inv(beta, sigma, p, iters=200):
    """f_p^{-1}(beta): the alpha in [0, 1] with f_p(alpha) = beta (bisection; f_p decreasing)."""
    beta = np.asarray(beta, float)
    lo = np.zeros_like(beta)
    hi = np.ones_like(beta)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        above = subsampled_f(mid, sigma, p) > beta
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return 0.5 * (lo + hi)


def subsampled_fixed_point(sigma):
    """x* with f_p'(x*) = -1, i.e. G'(x*) = -1: the Gaussian fixed point Phi(-1/(2 sigma))."""
    return norm.cdf(-0.5 / sigma)


def subsampled_symmetrised_beta(alpha, sigma, p):
    """Exact symmetrised curve C (Dong et al., Def. F.1), piecewise: f_p on [0, x*], the
    slope -1 line between x* and f_p(x*), f_p^{-1} after f_p(x*)."""
    alpha = np.asarray(alpha, float)
    xs = subsampled_fixed_point(sigma)
    fx = subsampled_f(xs, sigma, p)
    return np.where(
        alpha <= xs,
        subsampled_f(alpha, sigma, p),
        np.where(alpha <= fx, xs + fx - alpha, subsampled_f_inv(alpha, sigma, p)),
    )


def lower_convex_hull_curve(x, y, at):
    """Evaluate at ``at`` the lower convex hull of the points (x, y) (x increasing)."""
    hull = []
    for px, py in zip(x, y):
        while len(hull) >= 2:
            (ax, ay), (bx, by) = hull[-2], hull[-1]
            # drop b if it lies on or above the segment a -> p
            if (bx - ax) * (py - ay) - (by - ay) * (px - ax) <= 0:
                hull.pop()
            else:
                break
        hull.append((px, py))
    hx, hy = np.array(hull).T
    return np.interp(at, hx, hy)


def subsampled_delta(epsilon, sigma, p):
    """Exact delta(epsilon) of the symmetrised single-step curve: the larger of the two
    directions' hockey-stick divergences (L = log(Q/P)(o) is increasing in o)."""
    epsilon = np.asarray(epsilon, float)
    # remove direction: Pr_Q[L > eps] - e^eps Pr_P[L > eps], L > eps iff o > o_e
    o_e = sigma**2 * np.log((np.exp(epsilon) - (1 - p)) / p) + 0.5
    fwd = p * norm.sf((o_e - 1) / sigma) - (np.exp(epsilon) - 1 + p) * norm.sf(o_e / sigma)
    # add direction: Pr_P[L < -eps] - e^eps Pr_Q[L < -eps], empty unless e^-eps > 1 - p
    with np.errstate(invalid="ignore", divide="ignore"):
        o_m = sigma**2 * np.log((np.exp(-epsilon) - (1 - p)) / p) + 0.5
    rev = norm.cdf(o_m / sigma) * (1 - np.exp(epsilon) * (1 - p)) - np.exp(epsilon) * p * norm.cdf((o_m - 1) / sigma)
    rev = np.where(np.exp(-epsilon) > 1 - p, rev, 0.0)
    return np.maximum(np.maximum(fwd, rev), 0.0)


def subsampled_epsilon(delta, sigma, p):
    if subsampled_delta(0.0, sigma, p) <= delta:
        return 0.0
    return brentq(lambda e: subsampled_delta(e, sigma, p) - delta, 0.0, 200.0, xtol=1e-14, rtol=1e-14)


# ---------------------------------------------------------------------------------------
# oracles
# ---------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=32)
def oracle_pld(sigma, p, num_steps, grid_step):
    """dp-accounting's connect-the-dots PLD of DP-SGD (the pair riskcal analyses)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_module

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pld_module.from_gaussian_mechanism(
            standard_deviation=sigma,
            sampling_prob=p,
            use_connect_dots=True,
            value_discretization_interval=grid_step,
        ).self_compose(num_steps)


def oracle_beta(sigma, p, num_steps, grid_step, alpha):
    from riskcal.analysis import get_beta_from_pld

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(get_beta_from_pld(oracle_pld(sigma, p, num_steps, grid_step), np.asarray(alpha, float)))


def oracle_advantage(sigma, p, num_steps, grid_step):
    from riskcal.analysis import get_advantage_from_pld

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(get_advantage_from_pld(oracle_pld(sigma, p, num_steps, grid_step)))


def oracle_epsilon(sigma, p, num_steps, grid_step, delta):
    return float(oracle_pld(sigma, p, num_steps, grid_step).get_epsilon_for_delta(delta))


def mp_gdp_beta(alpha, mu):
    """f_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) to ~40 digits (mpmath, 50-digit arithmetic;
    independent of dpax): Phi^-1 of the smaller of alpha and 1 - alpha by Newton's method from
    SciPy's guess. Needs mpmath (callers skip without it)."""
    import mpmath

    with mpmath.workdps(50):
        a, m = mpmath.mpf(float(alpha)), mpmath.mpf(float(mu))
        if a == 0 or a == 1:
            return 1 - a
        small = min(a, 1 - a)  # Phi^-1(1 - a) = -Phi^-1(a)
        z = mpmath.mpf(norm.ppf(float(small)))
        for _ in range(60):
            step = (mpmath.ncdf(z) - small) / mpmath.npdf(z)
            z -= step
            if abs(step) < mpmath.mpf(10) ** -40 * (1 + abs(z)):
                break
        return mpmath.ncdf((-z if a == small else z) - m)
