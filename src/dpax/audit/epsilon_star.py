"""Epsilon*: empirical privacy of one trained model from its losses (Negoescu et al. 2024).

The attack (Section 3) calls a point a training member when its loss is <= a threshold tau.
FPR t = Pr_population[loss <= tau] (Eq. 5), FNR eta = Pr_train[loss > tau] (Eq. 6), and

    Epsilon* = log max_i max((1 - delta - eta_i) / t_i, (1 - delta - t_i) / eta_i,
                             (eta_i - delta) / (1 - t_i), (t_i - delta) / (1 - eta_i), 1)   (Eq. 7)

a lower bound on the epsilon of the model's empirical (epsilon, delta)-privacy (Def. 1,
Theorem 3). Every term is evaluated in log space, so rates near 0 and 1 neither overflow nor
lose their digits.

Two estimators of the rates, with different errors (measured on the paper's Appendix 8.1
simulation, train losses Gamma(2, 5), held-out Gamma(2 + d, 5), delta = 1e-5, 10 runs; see
``tests/audit/test_epsilon_star.py``). Two exact references: Epsilon* over all thresholds (5.55,
11.92, 18.64 at d = 1, 2, 3) and over thresholds with both rates in [delta, 1 - delta] (4.32,
6.62, 8.04), the window the parametric method searches.

* ``method="empirical"``: empirical CDFs at every observed loss, rates kept inside
  (0.001, 0.999) as in the paper. The window caps what it can see: when the loss
  distributions differ it errs LOW, well below both references (2.6-2.8, 3.9-4.3, 4.8-5.2 at
  d = 1, 2, 3, for n = 1e3..1e5), and more samples do not fix it; when they are identical,
  sampling noise makes it positive (1.06, 0.57, 0.19 at n = 1e3, 1e4, 1e5). Prefer it when a
  model-free number is wanted for a model that clearly leaks (it then understates, never
  overstates) and with large samples; distrust small values from small samples.
* ``method="parametric"`` (Section 3.1, Appendix B): losses are normalised to [0, 1] over
  both sets, shifted by 1, mapped through p = exp(-x) and logit(p), and one Gaussian is fitted
  to each set; the supremum over thresholds is taken with rates inside [delta, 1 - delta].
  Much less noisy, and near 0 when the distributions agree (0.40, 0.14, 0.04), but it is an
  estimator with a fixed transformation: when the transformed losses are not Gaussian its
  answer is biased in either direction and does not converge to the truth. Gamma losses:
  ABOVE the windowed reference (4.9-5.1, 7.4-7.5, 8.8-8.9), below the unrestricted one; two
  unit Gaussians a distance mu = 2 apart, delta = 1e-5: about 7.5 against the exact 10.0.
  Prefer it for small leaks and small samples, when :func:`dpax.audit.goodness_of_fit`
  does not reject one Gaussian; otherwise report both numbers.

With the exact CDFs of the two loss distributions on a fine threshold grid,
:func:`epsilon_star_from_rates` is the exact Epsilon*: for two unit Gaussians a distance mu
apart it equals epsilon(delta) of mu-GDP (the supremum in Eq. 7 is the convex conjugate that
defines the privacy profile).

>>> import numpy as np
>>> from dpax.audit import epsilon_star
>>> rng = np.random.default_rng(0)
>>> train, held_out = rng.gamma(2.0, 5.0, 1000), rng.gamma(3.0, 5.0, 1000)
>>> round(float(epsilon_star(train, held_out, delta=1e-5)), 4)
5.2375
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .._engine import validation as _v

__all__ = [
    "EpsilonStar",
    "epsilon_star",
    "epsilon_star_from_rates",
    "loss_transform",
    "mechanism_bound",
]

_TERMS = (
    "(1 - delta - FNR) / FPR",
    "(1 - delta - FPR) / FNR",
    "(FNR - delta) / (1 - FPR)",
    "(FPR - delta) / (1 - FNR)",
)

#: Rate window of the empirical method (Appendix 8.1: "remove FNR and FPR values outside
#: the interval (0.001, 0.999)").
EMPIRICAL_RATE_RANGE = (1e-3, 1.0 - 1e-3)


@dataclass(frozen=True)
class EpsilonStar:
    """Epsilon* and what attained it.

    ``fpr``, ``fnr`` (and ``thresholds``, losses at which the attack switches, when the rates
    come from losses) are the pairs the maximum ran over, after the rate window; ``index``
    picks the maximising pair (-1 when no pair beats the constant 1); ``term`` is which of
    the four fractions of Eq. 7 attained it (1-4; 0 when Epsilon* = 0), ``term_name`` says it.

    Built by :func:`epsilon_star` and :func:`epsilon_star_from_rates`; each argument is kept
    as the attribute of its name.

    Args:
        value: Epsilon* (``float(result)`` gives it too).
        term: which fraction of Eq. 7 attained it (1-4; 0: none beats 1).
        index: the maximising pair (-1: none).
        fpr, fnr: the rate pairs the maximum ran over.
        thresholds: the losses at which the attack switches (``None`` for bare rates).
        delta: the delta of Eq. 7.
        method: ``"parametric"``, ``"empirical"`` or ``"rates"``.
        extra: method details (the Gaussian fits, the rate window).

    >>> from dpax.audit import epsilon_star_from_rates
    >>> result = epsilon_star_from_rates([0.01, 0.1], [0.5, 0.2])
    >>> round(result.value, 4), result.term_name, result.index
    (3.912, '(1 - delta - FNR) / FPR', 0)
    """

    value: float
    term: int
    index: int
    fpr: np.ndarray
    fnr: np.ndarray
    thresholds: np.ndarray | None
    delta: float
    method: str
    extra: dict[str, Any] = field(default_factory=dict)

    def __float__(self) -> float:
        """Epsilon* itself.

        >>> from dpax.audit import epsilon_star_from_rates
        >>> round(float(epsilon_star_from_rates([0.01], [0.5])), 4)
        3.912
        """
        return self.value

    @property
    def term_name(self) -> str:
        """The fraction of Eq. 7 that attained the maximum, written out.

        Returns:
            One of the four fractions of Eq. 7, e.g. ``"(1 - delta - FNR) / FPR"``, or
            ``"1 (no pair beats it)"`` when Epsilon* = 0.

        >>> from dpax.audit import epsilon_star_from_rates
        >>> epsilon_star_from_rates([0.5], [0.5]).term_name
        '1 (no pair beats it)'
        """
        return "1 (no pair beats it)" if self.term == 0 else _TERMS[self.term - 1]

    @property
    def threshold(self) -> float | None:
        """The loss threshold of the maximising pair (``None`` for bare rates or no pair).

        Returns:
            The loss at which the maximising attack switches (it calls a loss <= it a
            member), or ``None`` when the rates came without thresholds or no pair beats 1.

        >>> from dpax.audit import epsilon_star
        >>> result = epsilon_star([1.0, 2.0, 3.0], [2.5, 3.5, 4.5], method="empirical", rate_range=(0, 1))
        >>> result.threshold
        2.5
        """
        if self.thresholds is None or self.index < 0:
            return None
        return float(self.thresholds[self.index])


def _log_minus(log_x: np.ndarray, delta: float) -> np.ndarray:
    """log(x - delta) from log x, -inf where x <= delta (no cancellation for x near delta)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if delta == 0.0:
            return log_x
        r = np.exp(np.log(delta) - log_x)  # delta / x
        return np.where(r < 1.0, log_x + np.log1p(-np.minimum(r, 1.0)), -np.inf)


def _log_terms(log_t: np.ndarray, log_1mt: np.ndarray, log_eta: np.ndarray, log_1meta: np.ndarray,
               delta: float) -> np.ndarray:
    """The four fractions of Eq. 7 in log space, shape (4, n); -inf where a numerator is <= 0
    (a 0/0 pair such as t = 0, eta = 1 carries no evidence), +inf for a positive numerator
    over a zero rate."""
    num = (_log_minus(log_1meta, delta), _log_minus(log_1mt, delta), _log_minus(log_eta, delta),
           _log_minus(log_t, delta))
    den = (log_t, log_eta, log_1mt, log_1meta)
    out = np.empty((4,) + np.shape(log_t))
    with np.errstate(invalid="ignore"):
        for i in range(4):
            out[i] = np.where(np.isneginf(num[i]), -np.inf, num[i] - den[i])
    return out


def _maximise(terms: np.ndarray) -> tuple[float, int, int]:
    """(log value, term 1..4 or 0, index) of the largest log term, floored at log 1 = 0."""
    if terms.shape[1] == 0:
        return 0.0, 0, -1
    flat = int(np.argmax(terms))
    term, idx = divmod(flat, terms.shape[1])
    best = float(terms[term, idx])
    if not best > 0.0:
        return 0.0, 0, -1
    return best, term + 1, idx


def _delta(delta: ArrayLike, *, positive: bool = False) -> float:
    d = _v.real_array("delta", delta, low=0.0, high=1.0, low_open=positive, high_open=True)
    if d.ndim != 0:
        raise ValueError(f"delta must be a single number, got shape {d.shape}")
    return float(d)


def _rate_range(rate_range: ArrayLike | None) -> tuple[float, float] | None:
    if rate_range is None:
        return None
    rr = _v.probabilities("rate_range", rate_range).reshape(-1)
    if rr.size != 2 or not rr[0] < rr[1]:
        raise ValueError(f"rate_range must be (low, high) with 0 <= low < high <= 1, got {_v.brief(rate_range)}")
    return float(rr[0]), float(rr[1])


def epsilon_star_from_rates(fpr: ArrayLike, fnr: ArrayLike, delta: float = 0.0, *,
                            rate_range: tuple[float, float] | None = None, thresholds: ArrayLike | None = None,
                            method: str = "rates") -> EpsilonStar:
    """Epsilon* (Eq. 7) over any set of (FPR, FNR) pairs: empirical, parametric, or exact CDFs
    on a threshold grid.

    A pair with a zero rate and a positive numerator gives ``inf`` (perfect separation).

    Args:
        fpr: false-positive rates in [0, 1] (flattened).
        fnr: false-negative rates in [0, 1], the shape of ``fpr``.
        delta: the delta of Eq. 7, in [0, 1).
        rate_range: ``(low, high)``: keep only the pairs with both rates strictly inside
            it (the paper's noise guard); ``None`` keeps every pair.
        thresholds: the loss threshold of each pair, recorded in the result.
        method: the label stored in the result (default ``"rates"``).

    Returns:
        An :class:`EpsilonStar`: the maximum of Eq. 7 over the pairs kept (in log space, up
        to float64 rounding; ``inf`` for perfect separation), the exact Epsilon* when the
        pairs are exact CDFs; from estimated rates it is an estimate (see the module
        docstring).

    Raises:
        ValueError: a rate outside [0, 1], NaN, infinite or empty; ``fpr`` and ``fnr`` of
            different shapes; ``delta`` outside [0, 1) or not one number; ``thresholds``
            not finite or not one per pair; ``rate_range`` not (low, high) with
            0 <= low < high <= 1.
        TypeError: a rate, ``delta``, ``rate_range`` or ``thresholds`` not real, or
            ``method`` not a string.

    >>> from dpax.audit import epsilon_star_from_rates
    >>> round(epsilon_star_from_rates([0.01, 0.1], [0.5, 0.2], delta=1e-5).value, 4)
    3.912
    """
    t = _v.probabilities("fpr", fpr)
    e = _v.probabilities("fnr", fnr)
    if t.shape != e.shape:
        raise ValueError(f"fpr and fnr must have the same shape, got {t.shape} and {e.shape}")
    t, e = t.reshape(-1), e.reshape(-1)
    if not isinstance(method, str):
        raise TypeError(f"method must be a string (the label stored in the result), got {type(method).__name__}")
    d = _delta(delta)
    thr = None
    if thresholds is not None:
        thr = _v.real_array("thresholds", thresholds).reshape(-1)
        if thr.size != t.size:
            raise ValueError(f"thresholds must have one entry per rate pair ({t.size}), got {thr.size}")
    rr = _rate_range(rate_range)
    if rr is not None:
        keep = (t > rr[0]) & (t < rr[1]) & (e > rr[0]) & (e < rr[1])
        t, e = t[keep], e[keep]
        thr = None if thr is None else thr[keep]
    with np.errstate(divide="ignore"):
        terms = _log_terms(np.log(t), np.log1p(-t), np.log(e), np.log1p(-e), d)
    value, term, idx = _maximise(terms)
    return EpsilonStar(value=value, term=term, index=idx, fpr=t, fnr=e, thresholds=thr, delta=d, method=method,
                       extra={"rate_range": rr})


def _losses(name: str, value: ArrayLike) -> np.ndarray:
    try:
        arr = np.asarray(value)
    except Exception:  # ragged nested lists
        raise TypeError(f"{name} must be a 1-D array of losses, got {_v.brief(value)}") from None
    if arr.ndim != 1:
        if arr.ndim == 2 and 1 in arr.shape:
            arr = arr.reshape(-1)
        else:
            raise ValueError(f"{name} must be a 1-D array of losses, got shape {arr.shape}")
    if arr.size < 2:
        raise ValueError(f"{name} must hold at least 2 losses, got {arr.size}")
    return _v.real_array(name, arr)


def loss_transform(train_losses: ArrayLike, test_losses: ArrayLike
                   ) -> tuple[np.ndarray, np.ndarray, tuple[float, float]]:
    """Appendix B transformation of both loss sets: normalise to [0, 1] over both sets, add 1,
    p = exp(-x), phi = log p - log(1 - p). phi decreases with the loss.

    Args:
        train_losses: losses on training data, 1-D, at least 2 finite values.
        test_losses: losses on held-out data, 1-D, at least 2 finite values.

    Returns:
        ``(phi_train, phi_test, (low, high))``, with ``(low, high)`` the loss range used to
        normalise.

    Raises:
        ValueError: a loss set not 1-D (an (n, 1) or (1, n) array is flattened), with fewer
            than 2 losses or a NaN or infinite loss; all losses of both sets equal.
        TypeError: a loss set not an array of real numbers (a ragged list, strings).

    >>> from dpax.audit import loss_transform
    >>> phi_train, phi_test, loss_range = loss_transform([1.0, 2.0], [2.0, 3.0])
    >>> phi_train.round(3), loss_range
    (array([-0.541, -1.248]), (1.0, 3.0))
    """
    tr = _losses("train_losses", train_losses)
    te = _losses("test_losses", test_losses)
    lo = min(tr.min(), te.min())
    hi = max(tr.max(), te.max())
    if not hi > lo:
        raise ValueError("train_losses and test_losses are all equal: there is nothing to transform or fit")

    def phi(x: np.ndarray) -> np.ndarray:
        x = (x - lo) / (hi - lo) + 1.0
        return -x - np.log(-np.expm1(-x))

    return phi(tr), phi(te), (float(lo), float(hi))


def _phi_to_loss(phi: np.ndarray, lo: float, hi: float) -> np.ndarray:
    x = np.logaddexp(0.0, -phi)  # -log(sigmoid(phi))
    return (x - 1.0) * (hi - lo) + lo


def _empirical(tr: np.ndarray, te: np.ndarray, d: float, rate_range: tuple[float, float]) -> EpsilonStar:
    thr = np.unique(np.concatenate([tr, te]))
    fpr = np.searchsorted(np.sort(te), thr, side="right") / te.size  # Pr_test[loss <= tau]
    fnr = (tr.size - np.searchsorted(np.sort(tr), thr, side="right")) / tr.size  # Pr_train[loss > tau]
    return epsilon_star_from_rates(fpr, fnr, d, rate_range=rate_range, thresholds=thr, method="empirical")


def _parametric(tr: np.ndarray, te: np.ndarray, d: float, grid_points: int) -> EpsilonStar:
    """Section 3.1 / Appendix B: Gaussian fits to the transformed losses, supremum of each term
    over thresholds with both rates in [delta, 1 - delta] (a grid, then Brent's method on the
    bracket around the best grid point)."""
    ptr, pte, (lo, hi) = loss_transform(tr, te)
    m_tr, s_tr = float(ptr.mean()), float(ptr.std())
    m_te, s_te = float(pte.mean()), float(pte.std())
    for name, s in (("train_losses", s_tr), ("test_losses", s_te)):
        if not s > 0:
            raise ValueError(f"{name} are all equal: a Gaussian cannot be fitted to them")
    # attack: member iff loss <= tau  <=>  phi >= c.  FPR = Pr_test[phi >= c], FNR = Pr_train[phi < c]
    z = float(-special.ndtri(d))
    c_lo = max(m_te - z * s_te, m_tr - z * s_tr)
    c_hi = min(m_te + z * s_te, m_tr + z * s_tr)
    fits = {"train_mean": m_tr, "train_std": s_tr, "test_mean": m_te, "test_std": s_te,
            "loss_range": (lo, hi), "threshold_range_phi": (c_lo, c_hi)}

    def logs(c: float | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        zt, zr = (c - m_te) / s_te, (c - m_tr) / s_tr
        return special.log_ndtr(-zt), special.log_ndtr(zt), special.log_ndtr(zr), special.log_ndtr(-zr)

    if not c_lo < c_hi:  # no threshold keeps both rates inside [delta, 1 - delta]
        empty = np.zeros(0)
        return EpsilonStar(0.0, 0, -1, empty, empty, empty, d, "parametric", extra=fits)
    c = np.linspace(c_lo, c_hi, grid_points)
    terms = _log_terms(*logs(c), d)
    from scipy import optimize  # ~0.1 s to import, only needed here

    extra_c = []
    for k in range(4):
        i = int(np.argmax(terms[k]))
        if not np.isfinite(terms[k, i]):
            continue
        a, b = c[max(i - 1, 0)], c[min(i + 1, c.size - 1)]

        def neg_term(x: float, k: int = k) -> float:
            lt, l1t, le, l1e = (np.atleast_1d(v) for v in logs(x))
            return -_log_terms(lt, l1t, le, l1e, d)[k, 0]

        res = optimize.minimize_scalar(neg_term, bounds=(a, b), method="bounded",
                                       options={"xatol": 1e-12 * max(1.0, abs(a))})
        if res.success:
            extra_c.append(float(res.x))
    c = np.sort(np.concatenate([c, extra_c]))
    log_t, log_1mt, log_eta, log_1meta = logs(c)
    terms = _log_terms(log_t, log_1mt, log_eta, log_1meta, d)
    value, term, idx = _maximise(terms)
    return EpsilonStar(value=value, term=term, index=idx, fpr=np.exp(log_t), fnr=np.exp(log_eta),
                       thresholds=_phi_to_loss(c, lo, hi), delta=d, method="parametric", extra=fits)


def epsilon_star(train_losses: ArrayLike, test_losses: ArrayLike, delta: float = 1e-5,
                 method: str = "parametric", *, rate_range: tuple[float, float] | None = None,
                 grid_points: int = 20001) -> EpsilonStar:
    """Epsilon* of one trained model from its losses on training and held-out data.

    ``method="empirical"``: empirical CDFs at every observed loss (Eq. 7), pairs kept with both
    rates inside ``rate_range`` (default (0.001, 0.999), Appendix 8.1). ``method="parametric"``
    (default; Section 3.1, Appendix B): Gaussian fits to the transformed losses, the supremum
    over thresholds with both rates inside [delta, 1 - delta] (``delta`` must be > 0). See the
    module docstring for which way each estimator errs.

    Args:
        train_losses: the model's losses on training data, 1-D, at least 2 finite values.
        test_losses: its losses on held-out data, 1-D, at least 2 finite values.
        delta: the delta of Eq. 7, in [0, 1) (> 0 for the parametric method; default 1e-5).
        method: ``"parametric"`` (default) or ``"empirical"``.
        rate_range: the empirical method's rate window, ``(low, high)`` with
            0 <= low < high <= 1 (default ``None``: :data:`EMPIRICAL_RATE_RANGE`); only with
            ``method="empirical"``.
        grid_points: thresholds on the parametric method's grid, an integer >= 3 (default
            20001).

    Returns:
        An :class:`EpsilonStar` (``float(result)`` is the value; thresholds are in loss units).
        An estimate, on neither side of the exact Epsilon* for certain: the module docstring
        gives which way each method errs, as measured.

    Raises:
        ValueError: a loss set not 1-D, with fewer than 2 losses or a NaN or infinite loss;
            all losses equal (both sets, or one set under the parametric method's fit);
            ``method`` not ``"parametric"`` or ``"empirical"``; ``delta`` outside its range
            or not one number; ``rate_range`` given to the parametric method or not
            (low, high) with 0 <= low < high <= 1; ``grid_points`` not an integer >= 3.
        TypeError: a loss set, ``delta`` or ``grid_points`` not real, or ``method`` not a
            string.

    >>> import numpy as np
    >>> from dpax.audit import epsilon_star
    >>> rng = np.random.default_rng(0)
    >>> train, held_out = rng.gamma(2.0, 5.0, 1000), rng.gamma(3.0, 5.0, 1000)
    >>> result = epsilon_star(train, held_out, method="empirical")
    >>> round(result.value, 4), result.term_name
    (3.0908, '(1 - delta - FNR) / FPR')
    """
    tr = _losses("train_losses", train_losses)
    te = _losses("test_losses", test_losses)
    _v.choice("method", method, ("parametric", "empirical"))
    if method == "empirical":
        d = _delta(delta)
        return _empirical(tr, te, d, EMPIRICAL_RATE_RANGE if rate_range is None else rate_range)
    if method == "parametric":
        d = _delta(delta, positive=True)
        if rate_range is not None:
            raise ValueError("rate_range applies to method='empirical'; the parametric method uses [delta, 1 - delta]")
        n = _v.one_integer("grid_points", grid_points, minimum=3)
        return _parametric(tr, te, d, n)
    raise ValueError(f"method must be 'parametric' or 'empirical', got {_v.brief(method)}")


def mechanism_bound(epsilon_stars: ArrayLike) -> float:
    """Theorem 2: log of the mean of exp(Epsilon*) over models trained by one mechanism.

    The mechanism-level lower bound epsilon-bar (Eq. 19, rates averaged over training runs)
    is at most this number (Jensen's inequality), so it caps what a mechanism-level audit with
    the same thresholds can certify. Computed with logsumexp (no overflow).

    Args:
        epsilon_stars: Epsilon* of each trained model, finite and >= 0 (flattened).

    Returns:
        log(mean(exp(epsilon_stars))), a float, at least the mean of the Epsilon* values.

    Raises:
        ValueError: an entry negative, NaN or infinite, or no entry.
        TypeError: ``epsilon_stars`` not real.

    >>> from dpax.audit import mechanism_bound
    >>> round(mechanism_bound([1.0, 2.0]), 4)
    1.6201
    """
    e = _v.real_array("epsilon_stars", epsilon_stars, low=0.0).reshape(-1)
    return float(special.logsumexp(e) - np.log(e.size))
