"""Goodness of fit of the parametric Epsilon* model (Appendix 8.2).

One-dimensional Gaussian mixtures fitted by expectation-maximisation (NumPy, no
scikit-learn), and the paper's two-sample Kolmogorov-Smirnov check: split a loss set into a
fitting set and an evaluation set of ``n_samples``, fit a mixture with 1..k components, draw
``n_samples`` from it, and test the draw against the evaluation set. A p-value above 0.05 for
one component says the Gaussian fit behind ``epsilon_star(method="parametric")`` is not
rejected; if only larger mixtures pass, prefer the empirical method or treat the parametric
number with care.

>>> import numpy as np
>>> from dpax.audit import ks_pvalues
>>> x = np.random.default_rng(0).normal(3.0, 2.0, 1000)
>>> ks_pvalues(x, max_components=2, n_samples=200).round(3)
array([0.793, 0.016])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .._engine import validation as _v
from .epsilon_star import _losses, loss_transform

__all__ = ["GaussianMixture", "fit_gaussian_mixture", "goodness_of_fit", "ks_pvalues"]

_HALF_LOG_2PI = 0.5 * np.log(2.0 * np.pi)


def _log_normal(x: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """log N(x; mu, sd^2), broadcasting (plain NumPy: the EM loop's hot spot)."""
    z = (x - mu) / sd
    return -0.5 * z * z - np.log(sd) - _HALF_LOG_2PI


@dataclass(frozen=True)
class GaussianMixture:
    """A 1-D Gaussian mixture: ``weights``, ``means``, ``stds`` (each of length k).

    Built by :func:`fit_gaussian_mixture` (or by hand, as in :meth:`logpdf`'s example); each
    argument is kept as the attribute of its name.

    Args:
        weights: the components' weights (sum 1).
        means: the components' means, ascending.
        stds: the components' standard deviations.
        log_likelihood: the fitted data's total log-likelihood.
        iterations: EM iterations run.
        converged: whether EM met its tolerance.

    >>> import numpy as np
    >>> from dpax.audit import fit_gaussian_mixture
    >>> gm = fit_gaussian_mixture(np.random.default_rng(0).normal(3.0, 2.0, 1000), 1)
    >>> gm.means.round(3), gm.stds.round(3), gm.converged
    (array([2.904]), array([1.954]), True)
    """

    weights: np.ndarray
    means: np.ndarray
    stds: np.ndarray
    log_likelihood: float
    iterations: int
    converged: bool

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        """Log density of the mixture at ``x``.

        Args:
            x: points, any shape.

        Returns:
            log p(x), the shape of ``x``.

        >>> import numpy as np
        >>> from dpax.audit import GaussianMixture
        >>> gm = GaussianMixture(np.array([1.0]), np.array([0.0]), np.array([1.0]), 0.0, 0, True)
        >>> round(float(gm.logpdf(0.0)), 4)
        -0.9189
        """
        x = _v.real_array("x", x, infinite_ok=True)[..., None]
        return special.logsumexp(np.log(self.weights) + _log_normal(x, self.means, self.stds), axis=-1)

    def cdf(self, x: ArrayLike) -> np.ndarray:
        """Cumulative distribution function of the mixture at ``x``.

        Args:
            x: points, any shape.

        Returns:
            Pr[Z <= x], the shape of ``x``.

        >>> import numpy as np
        >>> from dpax.audit import GaussianMixture
        >>> gm = GaussianMixture(np.array([0.5, 0.5]), np.array([-1.0, 1.0]), np.array([1.0, 1.0]), 0.0, 0, True)
        >>> round(float(gm.cdf(0.0)), 4)
        0.5
        """
        x = _v.real_array("x", x, infinite_ok=True)[..., None]
        return np.sum(self.weights * special.ndtr((x - self.means) / self.stds), axis=-1)

    def sample(self, size: int, rng: int | np.random.Generator | None) -> np.ndarray:
        """``size`` draws from the mixture.

        Args:
            size: the number of draws, an integer >= 0.
            rng: a seed or a ``numpy.random.Generator`` (``numpy.random.default_rng``).

        Returns:
            A 1-D float64 array of length ``size``.

        >>> import numpy as np
        >>> from dpax.audit import GaussianMixture
        >>> gm = GaussianMixture(np.array([1.0]), np.array([0.0]), np.array([1.0]), 0.0, 0, True)
        >>> gm.sample(3, rng=0).shape
        (3,)
        """
        size = _v.one_integer("size", size, minimum=0)
        _check_seed(rng, "rng")
        rng = np.random.default_rng(rng)
        comp = rng.choice(self.weights.size, size=size, p=self.weights)
        return rng.normal(self.means[comp], self.stds[comp])


def fit_gaussian_mixture(x: ArrayLike, n_components: int, *, max_iter: int = 500,
                         tol: float = 1e-8) -> GaussianMixture:
    """Maximum-likelihood k-component Gaussian mixture of 1-D data by EM (Dempster, Laird &
    Rubin).

    Deterministic start: equal weights, means at the (i + 1/2)/k quantiles, each standard
    deviation the data's / k. A variance floor (1e-6 of the data's variance) keeps a
    component from collapsing onto one point. Stops when the mean log-likelihood gains less
    than ``tol``.

    Args:
        x: the data (flattened), finite, at least 2 * ``n_components`` values, not constant.
        n_components: k, an integer >= 1.
        max_iter: the most EM iterations.
        tol: the stopping tolerance on the mean log-likelihood.

    Returns:
        A :class:`GaussianMixture`, components sorted by mean.

    Raises:
        ValueError: ``x`` empty, holding NaN or infinite values, fewer than 2 * ``n_components``
            values or a constant; ``n_components`` or ``max_iter`` not one integer >= 1;
            ``tol`` negative, NaN or infinite (the message names the argument).
        TypeError: an argument not real.

    >>> import numpy as np
    >>> from dpax.audit import fit_gaussian_mixture
    >>> x = np.concatenate([np.random.default_rng(0).normal(-3, 1, 500), np.random.default_rng(1).normal(3, 1, 500)])
    >>> fit_gaussian_mixture(x, 2).means.round(1)
    array([-3.,  3.])
    """
    x = _v.real_array("x", x).reshape(-1)
    k = _v.one_integer("n_components", n_components)
    max_iter = _v.one_integer("max_iter", max_iter)
    tol = _v.scalar("tol", tol, low=0.0)
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
    for it in range(1, max_iter + 1):  # noqa: B007 (its last value, the iterations run, is returned)
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


def ks_pvalues(x: ArrayLike, max_components: int = 5, n_samples: int = 1000,
               seed: int | np.random.Generator | None = 0) -> np.ndarray:
    """Appendix 8.2 on one sample: p-values of the two-sample KS test between a held-out
    evaluation set of ``n_samples`` values and ``n_samples`` draws from the mixture with
    1..``max_components`` components fitted to the rest.

    Args:
        x: the data (flattened), more than ``n_samples + 2 * max_components`` values.
        max_components: the largest mixture tried, >= 1.
        n_samples: the evaluation set's size and the number of draws, >= 10.
        seed: seed of the split and the draws (``numpy.random.default_rng``).

    Returns:
        An array of ``max_components`` p-values (entry k - 1 for k components).

    Raises:
        ValueError: ``x`` holding NaN or infinite values, or not more than
            ``n_samples + 2 * max_components`` of them; ``max_components`` not one integer
            >= 1, ``n_samples`` not one integer >= 10; ``seed`` negative.
        TypeError: ``x`` not real; ``seed`` not None, a non-negative integer (or a sequence
            of them) or a NumPy Generator, BitGenerator or SeedSequence.

    >>> import numpy as np
    >>> from dpax.audit import ks_pvalues
    >>> x = np.random.default_rng(0).normal(3.0, 2.0, 1000)
    >>> bool(ks_pvalues(x, max_components=1, n_samples=200)[0] > 0.05)
    True
    """
    x = _v.real_array("x", x).reshape(-1)
    kmax = _v.one_integer("max_components", max_components)
    m = _v.one_integer("n_samples", n_samples, minimum=10)
    _check_seed(seed)
    if x.size < m + 2 * kmax:
        raise ValueError(f"x must hold more than n_samples + 2 * max_components = {m + 2 * kmax} values, got {x.size}")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(x.size)
    evaluation, fitting = x[perm[:m]], x[perm[m:]]
    from scipy import stats  # ~0.5 s to import, only needed here

    out = np.empty(kmax)
    for k in range(1, kmax + 1):
        gm = fit_gaussian_mixture(fitting, k)
        out[k - 1] = stats.ks_2samp(evaluation, gm.sample(m, rng)).pvalue
    return out


def _check_seed(seed: object, name: str = "seed") -> None:
    """A seed numpy.random.default_rng takes (None, a non-negative integer or a sequence of
    them, a Generator, BitGenerator or SeedSequence), else a TypeError / ValueError naming
    ``name``."""
    if seed is None or isinstance(seed, (np.random.Generator, np.random.SeedSequence, np.random.BitGenerator)):
        return
    if isinstance(seed, (list, tuple, np.ndarray)):
        _v.positive_int_array(name, seed, minimum=0)
        return
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{name} must be None, a non-negative integer or a numpy.random.Generator, "
                        f"got {_v.brief(seed)}")
    if seed < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {int(seed)}")


def goodness_of_fit(train_losses: ArrayLike, test_losses: ArrayLike, max_components: int = 5,
                    n_samples: int = 1000, seed: int | np.random.Generator | None = 0) -> dict[str, Any]:
    """KS p-values (Appendix 8.2) of Gaussian mixtures with 1..``max_components`` components
    fitted to each set of transformed losses (the transformation of the parametric Epsilon*).

    Args:
        train_losses: losses on training data, 1-D.
        test_losses: losses on held-out data, 1-D.
        max_components: the largest mixture tried, >= 1.
        n_samples: each evaluation set's size and number of draws, >= 10.
        seed: seed of the splits and draws.

    Returns:
        ``{"components": [1..k], "train": p-values, "test": p-values}``; one component is
        the model ``epsilon_star(method="parametric")`` uses.

    Raises:
        ValueError: a loss set not 1-D, holding NaN or infinite values, or not more than
            ``n_samples + 2 * max_components`` losses; ``max_components`` not one integer
            >= 1, ``n_samples`` not one integer >= 10; ``seed`` negative.
        TypeError: losses not real (or ragged); ``seed`` not None, a non-negative integer
            (or a sequence of them) or a NumPy Generator, BitGenerator or SeedSequence.

    >>> import numpy as np
    >>> from dpax.audit import goodness_of_fit
    >>> rng = np.random.default_rng(0)
    >>> fit = goodness_of_fit(rng.gamma(2.0, 5.0, 500), rng.gamma(3.0, 5.0, 500), max_components=2, n_samples=200)
    >>> fit["components"], fit["train"].round(3)
    ([1, 2], array([0.009, 0.112]))
    """
    tr = _losses("train_losses", train_losses)
    te = _losses("test_losses", test_losses)
    kmax = _v.one_integer("max_components", max_components)
    m = _v.one_integer("n_samples", n_samples, minimum=10)
    _check_seed(seed)
    for name, losses in (("train_losses", tr), ("test_losses", te)):
        if losses.size < m + 2 * kmax:
            raise ValueError(f"{name} must hold more than n_samples + 2 * max_components = {m + 2 * kmax} values, "
                             f"got {losses.size}")
    ptr, pte, _ = loss_transform(tr, te)
    rng = np.random.default_rng(seed)
    s1, s2 = rng.integers(0, 2**63 - 1, size=2)
    return {
        "components": list(range(1, kmax + 1)),
        "train": ks_pvalues(ptr, max_components, n_samples, s1),
        "test": ks_pvalues(pte, max_components, n_samples, s2),
    }
