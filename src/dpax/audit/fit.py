"""Goodness of fit of the parametric Epsilon* model (Appendix 8.2).

One-dimensional Gaussian mixtures fitted by expectation-maximisation (NumPy, no
scikit-learn), and the paper's two-sample Kolmogorov-Smirnov check: split a loss set into a
fitting set and an evaluation set of ``n_samples``, fit a mixture with 1..k components, draw
``n_samples`` from it, and test the draw against the evaluation set. A p-value above 0.05 for
one component says the Gaussian fit behind ``epsilon_star(method="parametric")`` is not
rejected; if only larger mixtures pass, prefer the empirical method or treat the parametric
number with care.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from .._engine import validation as _v
from .epsilon_star import _losses, loss_transform

__all__ = ["GaussianMixture", "fit_gaussian_mixture", "goodness_of_fit", "ks_pvalues"]

_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)


def _log_normal(x, mu, sd):
    """log N(x; mu, sd^2), broadcasting (plain NumPy: the EM loop's hot spot)."""
    z = (x - mu) / sd
    return -0.5 * z * z - np.log(sd) - _HALF_LOG_2PI


@dataclass(frozen=True)
class GaussianMixture:
    """A 1-D Gaussian mixture: ``weights``, ``means``, ``stds`` (each of length k)."""

    weights: np.ndarray
    means: np.ndarray
    stds: np.ndarray
    log_likelihood: float
    iterations: int
    converged: bool

    def logpdf(self, x):
        x = np.asarray(x, dtype=np.float64)[..., None]
        return special.logsumexp(np.log(self.weights) + _log_normal(x, self.means, self.stds), axis=-1)

    def cdf(self, x):
        x = np.asarray(x, dtype=np.float64)[..., None]
        return np.sum(self.weights * stats.norm.cdf(x, self.means, self.stds), axis=-1)

    def sample(self, size: int, rng) -> np.ndarray:
        rng = np.random.default_rng(rng)
        comp = rng.choice(self.weights.size, size=size, p=self.weights)
        return rng.normal(self.means[comp], self.stds[comp])


def fit_gaussian_mixture(x, n_components: int, *, max_iter: int = 500, tol: float = 1e-8) -> GaussianMixture:
    """Maximum-likelihood k-component Gaussian mixture of 1-D data by EM (Dempster, Laird &
    Rubin). Deterministic start: equal weights, means at the (i + 1/2)/k quantiles, each
    standard deviation the data's / k. A variance floor (1e-6 of the data's variance) keeps a
    component from collapsing onto one point. Stops when the mean log-likelihood gains less
    than ``tol``."""
    x = _v.real_array("x", x).reshape(-1)
    k = int(_v.positive_int_array("n_components", n_components))
    if x.size < 2 * k:
        raise ValueError(f"x must hold at least 2 * n_components = {2 * k} values, got {x.size}")
    var = float(x.var())
    if not var > 0:
        raise ValueError("x is constant: a Gaussian mixture cannot be fitted")
    floor = 1e-6 * var
    w = np.full(k, 1.0 / k)
    mu = np.quantile(x, (np.arange(k) + 0.5) / k)
    sd = np.full(k, np.sqrt(var) / k)
    xs = x[:, None]
    prev = -np.inf
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        logp = np.log(w) + _log_normal(xs, mu, sd)  # (n, k)
        top = logp.max(axis=1, keepdims=True)
        norm = top + np.log(np.exp(logp - top).sum(axis=1, keepdims=True))
        ll = float(norm.mean())
        r = np.exp(logp - norm)  # responsibilities
        nk = r.sum(axis=0) + 1e-300
        w = nk / x.size
        mu = (r * xs).sum(axis=0) / nk
        sd = np.sqrt(np.maximum((r * (xs - mu) ** 2).sum(axis=0) / nk, floor))
        if abs(ll - prev) < tol:
            converged = True
            break
        prev = ll
    logp = np.log(w) + _log_normal(xs, mu, sd)
    ll = float(special.logsumexp(logp, axis=1).sum())
    order = np.argsort(mu)
    return GaussianMixture(w[order], mu[order], sd[order], ll, it, converged)


def ks_pvalues(x, max_components: int = 5, n_samples: int = 1000, seed=0) -> np.ndarray:
    """Appendix 8.2 on one sample: p-values of the two-sample KS test between a held-out
    evaluation set of ``n_samples`` values and ``n_samples`` draws from the mixture with
    1..``max_components`` components fitted to the rest. Returns an array of length
    ``max_components``."""
    x = _v.real_array("x", x).reshape(-1)
    kmax = int(_v.positive_int_array("max_components", max_components))
    m = int(_v.positive_int_array("n_samples", n_samples, minimum=10))
    if x.size < m + 2 * kmax:
        raise ValueError(f"x must hold more than n_samples + 2 * max_components = {m + 2 * kmax} values, got {x.size}")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(x.size)
    evaluation, fitting = x[perm[:m]], x[perm[m:]]
    out = np.empty(kmax)
    for k in range(1, kmax + 1):
        gm = fit_gaussian_mixture(fitting, k)
        out[k - 1] = stats.ks_2samp(evaluation, gm.sample(m, rng)).pvalue
    return out


def goodness_of_fit(train_losses, test_losses, max_components: int = 5, n_samples: int = 1000, seed=0) -> dict:
    """KS p-values (Appendix 8.2) of Gaussian mixtures with 1..``max_components`` components
    fitted to each set of transformed losses (the transformation of the parametric Epsilon*).

    Returns ``{"components": [1..k], "train": p-values, "test": p-values}``; one component is
    the model ``epsilon_star(method="parametric")`` uses.
    """
    tr = _losses("train_losses", train_losses)
    te = _losses("test_losses", test_losses)
    ptr, pte, _ = loss_transform(tr, te)
    rng = np.random.default_rng(seed)
    s1, s2 = rng.integers(0, 2**63 - 1, size=2)
    return {
        "components": list(range(1, int(max_components) + 1)),
        "train": ks_pvalues(ptr, max_components, n_samples, s1),
        "test": ks_pvalues(pte, max_components, n_samples, s2),
    }
