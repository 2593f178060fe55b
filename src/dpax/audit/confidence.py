"""Statistically valid audit bounds from attack outcomes.

An audit runs a membership-inference attack ``negatives`` times on the world without the
target record and ``positives`` times on the world with it, and counts ``false_positives``
(attack said "member" on a negative) and ``false_negatives`` (attack said "non-member" on a
positive). Clopper-Pearson intervals turn the counts into upper confidence limits on the
attack's FPR and FNR; a privacy claim whose trade-off curve f has ``f(FPR+) > FNR+`` is then
contradicted at the stated confidence, and the same limits give lower bounds on epsilon
(Kairouz, Oh and Viswanath, "The composition theorem for differential privacy", ICML 2015)
and on the GDP mu.

Confidence: ``confidence`` is the joint level. The two one-sided limits are each taken at
level ``1 - (1 - confidence) / 2`` (union bound), so with probability at least
``confidence`` both true rates lie below their limits and every reported lower bound is
below the truth (and a "contradicted" verdict is wrong with probability at most
``1 - confidence``).

Example: the audit in Tramèr, Terzis, Steinke, Song, Jagielski and Carlini, "Debugging
differential privacy: a case study for privacy auditing" (2022): 174 false positives in
100,000 negatives and 95,078 false negatives in 100,000 positives contradict a claimed
(0.21, 1e-5)-DP guarantee.

>>> from dpax.audit import audit
>>> result = audit(174, 100_000, 95_078, 100_000, claim_epsilon=0.21, claim_delta=1e-5)
>>> result.contradicted, round(result.epsilon_lower, 4)
(True, 3.1664)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .. import conversions as _conversions
from .._engine import validation as _v
from .._engine.x64 import as_result
from ..gdp import tradeoff as _gdp_tradeoff
from ..privacy_loss import PrivacyLoss

__all__ = [
    "AuditResult",
    "audit",
    "clopper_pearson",
    "epsilon_delta_tradeoff",
    "epsilon_lower_bound",
    "gdp_tradeoff",
    "mu_lower_bound",
    "rate_upper_limits",
]

_ALTERNATIVES = ("two-sided", "upper", "lower")


def _counts(k: ArrayLike, n: ArrayLike, k_name: str, n_name: str) -> tuple[np.ndarray, np.ndarray]:
    n_arr = _v.positive_int_array(n_name, n, minimum=1)
    k_arr = _v.positive_int_array(k_name, k, minimum=0)
    k_arr, n_arr = _v.broadcast_arrays((k_name, k_arr), (n_name, n_arr))
    if np.any(k_arr > n_arr):
        i = np.flatnonzero(k_arr > n_arr)[0]
        raise ValueError(f"{k_name} must lie in [0, {n_name}], got {k_arr.ravel()[i]} > {n_arr.ravel()[i]}")
    return k_arr, n_arr


def _level(name: str, value: ArrayLike) -> np.ndarray:
    return _v.real_array(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def clopper_pearson(successes: ArrayLike, trials: ArrayLike, confidence: ArrayLike = 0.95,
                    alternative: str = "two-sided") -> tuple[float | np.ndarray, float | np.ndarray]:
    """Clopper-Pearson ("exact") interval for a binomial proportion.

    With k successes in n trials and significance a = 1 - confidence, the limits are the
    Beta quantiles  lower = B^-1(a', k, n - k + 1),  upper = B^-1(1 - a', k + 1, n - k),
    where a' = a / 2 for ``alternative="two-sided"`` and a' = a for a one-sided interval
    (``"upper"``: [0, upper]; ``"lower"``: [lower, 1]); lower = 0 at k = 0 and upper = 1 at
    k = n. Vectorised: every argument broadcasts. Upper limits use the Beta survival
    function, so they stay accurate at significance levels like 1e-10.

    Args:
        successes: counts k, integers in [0, trials].
        trials: counts n, integers in [1, 2**53] (float64 counts exactly up to 2**53).
        confidence: the interval's level, in (0, 1).
        alternative: ``"two-sided"``, ``"upper"`` or ``"lower"``.

    Returns:
        ``(lower, upper)``: floats for scalar input, else arrays of the broadcast shape.

    >>> from dpax.audit import clopper_pearson
    >>> tuple(round(x, 4) for x in clopper_pearson(5, 100))
    (0.0164, 0.1128)
    """
    k, n = _counts(successes, trials, "successes", "trials")
    conf = _level("confidence", confidence)
    _v.choice("alternative", alternative, _ALTERNATIVES)
    k, n, conf = _v.broadcast_arrays(("successes", k), ("trials", n), ("confidence", conf))
    a = 1.0 - conf
    a_side = a / 2.0 if alternative == "two-sided" else a
    kf, nf = k.astype(np.float64), n.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(k == 0, 0.0, special.betaincinv(np.maximum(kf, 1.0), nf - kf + 1.0, a_side))
        # upper = B^-1(1 - a', k + 1, n - k), via the complement for accuracy at tiny a'
        hi = np.where(k == n, 1.0, 1.0 - special.betaincinv(np.maximum(nf - kf, 1.0), kf + 1.0, a_side))
    if alternative == "upper":
        lo = np.zeros_like(lo)
    elif alternative == "lower":
        hi = np.ones_like(hi)
    return as_result(lo), as_result(hi)


def rate_upper_limits(false_positives: ArrayLike, negatives: ArrayLike, false_negatives: ArrayLike,
                      positives: ArrayLike, confidence: ArrayLike = 0.95
                      ) -> tuple[float | np.ndarray, float | np.ndarray]:
    """One-sided Clopper-Pearson upper limits ``(fpr_upper, fnr_upper)``, jointly at ``confidence``.

    Each limit is taken at level 1 - (1 - confidence) / 2 (union bound over the two rates).

    Args:
        false_positives: attack said "member" on a negative, integers in [0, negatives].
        negatives: runs without the target record, integers >= 1.
        false_negatives: attack said "non-member" on a positive, in [0, positives].
        positives: runs with the target record, integers >= 1.
        confidence: the joint level, in (0, 1).

    Returns:
        ``(fpr_upper, fnr_upper)``: floats for scalar counts, else arrays.

    >>> from dpax.audit import rate_upper_limits
    >>> tuple(round(x, 6) for x in rate_upper_limits(174, 100_000, 95_078, 100_000))
    (0.002018, 0.952113)
    """
    conf = _level("confidence", confidence)
    each = 1.0 - (1.0 - conf) / 2.0
    fp, n_neg = _counts(false_positives, negatives, "false_positives", "negatives")
    fn, n_pos = _counts(false_negatives, positives, "false_negatives", "positives")
    _v.broadcast_shapes(("false_positives", fp), ("false_negatives", fn), ("confidence", conf))
    _, fpr_hi = clopper_pearson(fp, n_neg, each, alternative="upper")
    _, fnr_hi = clopper_pearson(fn, n_pos, each, alternative="upper")
    return as_result(fpr_hi), as_result(fnr_hi)


def epsilon_delta_tradeoff(alpha: ArrayLike, epsilon: ArrayLike, delta: ArrayLike = 0.0) -> float | np.ndarray:
    """Trade-off curve of (epsilon, delta)-DP (Kairouz, Oh and Viswanath 2015):
    f(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)).

    :func:`dpax.conversions.epsilon_delta_tradeoff` with the FPR first.

    Args:
        alpha: false-positive rates in [0, 1].
        epsilon: the guarantee's epsilon, >= 0.
        delta: the guarantee's delta, in [0, 1].

    Returns:
        The least FNR the guarantee allows at ``alpha``; arguments broadcast.

    >>> from dpax.audit import epsilon_delta_tradeoff
    >>> epsilon_delta_tradeoff([0.01, 0.1], 1.0).round(4)
    array([0.9728, 0.7282])
    """
    return _conversions.epsilon_delta_tradeoff(epsilon, delta, alpha)


def gdp_tradeoff(alpha: ArrayLike, mu: ArrayLike) -> float | np.ndarray:
    """Trade-off curve of mu-GDP (Dong, Roth & Su): G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu).

    :func:`dpax.gdp.tradeoff` with the FPR first.

    Args:
        alpha: false-positive rates in [0, 1].
        mu: the GDP parameter, >= 0.

    Returns:
        The least FNR mu-GDP allows at ``alpha``; arguments broadcast.

    >>> from dpax.audit import gdp_tradeoff
    >>> gdp_tradeoff([0.01, 0.1], 1.0).round(4)
    array([0.9076, 0.6109])
    """
    return _gdp_tradeoff(mu, alpha)


def _eps_from_limits(fpr_hi: float | np.ndarray, fnr_hi: float | np.ndarray, delta: float | np.ndarray) -> np.ndarray:
    """max(0, log((1 - delta - FNR+) / FPR+), log((1 - delta - FPR+) / FNR+)): the smallest
    epsilon whose (epsilon, delta) curve lies below the point (FPR+, FNR+)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(1.0 - delta - fnr_hi > 0,
                     np.log(np.maximum(1.0 - delta - fnr_hi, 1e-300)) - np.log(fpr_hi), -np.inf)
        b = np.where(1.0 - delta - fpr_hi > 0,
                     np.log(np.maximum(1.0 - delta - fpr_hi, 1e-300)) - np.log(fnr_hi), -np.inf)
    return np.maximum(0.0, np.maximum(a, b))


def _mu_from_limits(fpr_hi: ArrayLike, fnr_hi: ArrayLike) -> np.ndarray:
    """max(0, Phi^-1(1 - FPR+) - Phi^-1(FNR+)): the smallest mu with G_mu(FPR+) <= FNR+."""
    return np.maximum(0.0, -special.ndtri(fpr_hi) - special.ndtri(fnr_hi))


def epsilon_lower_bound(false_positives: ArrayLike, negatives: ArrayLike, false_negatives: ArrayLike,
                        positives: ArrayLike, delta: ArrayLike = 0.0, confidence: ArrayLike = 0.95
                        ) -> float | np.ndarray:
    """Lower confidence bound on epsilon at ``delta`` from attack counts.

    (epsilon, delta)-DP forces FPR + e^eps FNR >= 1 - delta and FNR + e^eps FPR >= 1 - delta
    (Kairouz, Oh and Viswanath 2015); evaluated at the joint upper limits
    (FPR+, FNR+) this gives an epsilon that the true one exceeds with probability >=
    ``confidence``. 0 when the counts show nothing. Broadcasts over all arguments.

    Args:
        false_positives: attack said "member" on a negative, integers in [0, negatives].
        negatives: runs without the target record, integers >= 1.
        false_negatives: attack said "non-member" on a positive, in [0, positives].
        positives: runs with the target record, integers >= 1.
        delta: the delta at which epsilon is bounded, in [0, 1].
        confidence: the joint level, in (0, 1).

    Returns:
        The lower bound: a float for scalar arguments, else an array.

    >>> from dpax.audit import epsilon_lower_bound
    >>> round(epsilon_lower_bound(174, 100_000, 95_078, 100_000, delta=1e-5), 4)
    3.1664
    """
    d = _v.probabilities("delta", delta)
    fpr_hi, fnr_hi = rate_upper_limits(false_positives, negatives, false_negatives, positives, confidence)
    _v.broadcast_shapes(("the counts", np.shape(fpr_hi)), ("delta", d))
    return as_result(_eps_from_limits(np.asarray(fpr_hi), np.asarray(fnr_hi), d))


def mu_lower_bound(false_positives: ArrayLike, negatives: ArrayLike, false_negatives: ArrayLike,
                   positives: ArrayLike, confidence: ArrayLike = 0.95) -> float | np.ndarray:
    """Lower confidence bound on the Gaussian-DP mu from attack counts.

    mu-GDP forces FNR >= Phi(Phi^-1(1 - FPR) - mu); at the joint upper limits this gives
    mu >= Phi^-1(1 - FPR+) - Phi^-1(FNR+), with probability >= ``confidence``.

    Args:
        false_positives: attack said "member" on a negative, integers in [0, negatives].
        negatives: runs without the target record, integers >= 1.
        false_negatives: attack said "non-member" on a positive, in [0, positives].
        positives: runs with the target record, integers >= 1.
        confidence: the joint level, in (0, 1).

    Returns:
        The lower bound: a float for scalar arguments, else an array.

    >>> from dpax.audit import mu_lower_bound
    >>> round(mu_lower_bound(174, 100_000, 95_078, 100_000), 4)
    1.2096
    """
    fpr_hi, fnr_hi = rate_upper_limits(false_positives, negatives, false_negatives, positives, confidence)
    return as_result(_mu_from_limits(np.asarray(fpr_hi), np.asarray(fnr_hi)))


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`. Rates are FPR = false_positives / negatives and FNR =
    false_negatives / positives; ``*_upper`` are the joint one-sided limits at ``confidence``.

    ``required_fnr`` is the claimed curve at FPR+ (the least FNR the claim allows there),
    ``required_fpr`` the claimed curve at FNR+ (the roles of FPR and FNR swapped);
    the claim is ``contradicted`` when FNR+ < required_fnr or FPR+ < required_fpr. Every
    claim dpax checks has a symmetric curve ((epsilon, delta), mu-GDP, and
    ``PrivacyLoss.beta``, which is symmetrised), so the two tests are the same test.

    Built by :func:`audit`; each argument is kept as the attribute of its name.

    Args:
        fpr, fnr: the observed rates.
        fpr_upper, fnr_upper: their joint one-sided upper limits.
        confidence: the joint level.
        delta: the delta of ``epsilon_lower``.
        epsilon_lower: lower confidence bound on epsilon at ``delta``.
        mu_lower: lower confidence bound on the GDP mu.
        claim: the claim checked (``None``: none).
        required_fnr, required_fpr: the claimed curve at FPR+ and at FNR+.
        contradicted: the verdict (``None`` without a claim).
        extra: room for more details.

    >>> from dpax.audit import audit
    >>> audit(174, 100_000, 95_078, 100_000, claim_mu=0.3).contradicted
    True
    """

    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    confidence: float
    delta: float
    epsilon_lower: float
    mu_lower: float
    claim: str | None = None
    required_fnr: float | None = None
    required_fpr: float | None = None
    contradicted: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def audit(false_positives: int, negatives: int, false_negatives: int, positives: int, *,
          confidence: float = 0.95, delta: float | None = None, claim_epsilon: float | None = None,
          claim_delta: float | None = None, claim_mu: float | None = None,
          claim: PrivacyLoss | None = None) -> AuditResult:
    """Audit one attack: confidence limits on its error rates, lower bounds on epsilon (at
    ``delta``, default ``claim_delta`` or 0) and mu, and a verdict on a claimed guarantee.

    The claim is one of: ``claim_epsilon`` with ``claim_delta`` (an (epsilon, delta)-DP
    claim; ``claim_delta`` 0 unless given), ``claim_mu`` (mu-GDP), or ``claim`` (any
    :class:`dpax.PrivacyLoss`; its ``beta`` is the claimed curve). The claim is contradicted,
    at ``confidence``, when the point (FPR+, FNR+) lies strictly below its trade-off curve
    (the audit of Tramèr et al. 2022: claimed (0.21, 1e-5), TPR 4.922%, FPR 0.174% over 100k
    trials each is contradicted).
    A claimed ``PrivacyLoss`` is read through its ``beta``, which is never above the true
    curve, so grid error can only make a "contradicted" verdict rarer, never wrong.
    Scalar counts only; use the vectorised bound functions for batches.

    Args:
        false_positives: attack said "member" on a negative, in [0, negatives].
        negatives: runs without the target record, >= 1.
        false_negatives: attack said "non-member" on a positive, in [0, positives].
        positives: runs with the target record, >= 1.
        confidence: the joint level, in (0, 1).
        delta: the delta of the epsilon lower bound, in [0, 1] (default ``claim_delta`` or 0).
        claim_epsilon: epsilon of an (epsilon, delta)-DP claim, >= 0.
        claim_delta: delta of that claim, in [0, 1] (default 0: an epsilon-DP claim); only
            with ``claim_epsilon``.
        claim_mu: mu of a mu-GDP claim, >= 0.
        claim: a claimed single-mechanism :class:`dpax.PrivacyLoss`.

    Returns:
        An :class:`AuditResult`.

    >>> import dpax
    >>> from dpax.audit import audit
    >>> audit(174, 100_000, 95_078, 100_000, claim=dpax.gaussian(4.0, grid_step=1e-2)).contradicted
    True
    """
    fp, n_neg = _counts(false_positives, negatives, "false_positives", "negatives")
    fn, n_pos = _counts(false_negatives, positives, "false_negatives", "positives")
    if fp.ndim or fn.ndim:
        which = "false_positives" if fp.ndim else "false_negatives"
        raise ValueError(f"audit takes single counts ({which} and the others); use epsilon_lower_bound / "
                         "mu_lower_bound for arrays")
    conf = _v.scalar("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    given = [x is not None for x in (claim_epsilon, claim_mu, claim)]
    if sum(given) > 1:
        raise ValueError("give at most one claim: claim_epsilon (with claim_delta), claim_mu, or claim")
    if claim_delta is not None and claim_epsilon is None:
        raise ValueError("claim_delta needs claim_epsilon (an (epsilon, delta)-DP claim)")
    if claim_epsilon is not None:  # each claimed number checked under its own name, first
        e = _v.scalar("claim_epsilon", claim_epsilon, low=0.0)
        cd = _v.scalar("claim_delta", 0.0 if claim_delta is None else claim_delta, low=0.0, high=1.0)
    d = _v.scalar("delta", (cd if claim_epsilon is not None else 0.0) if delta is None else delta, low=0.0, high=1.0)
    fpr_hi, fnr_hi = rate_upper_limits(fp, n_neg, fn, n_pos, conf)
    eps_lo = float(_eps_from_limits(fpr_hi, fnr_hi, d))
    mu_lo = float(_mu_from_limits(fpr_hi, fnr_hi))
    label = req_fnr = req_fpr = verdict = None
    if claim_epsilon is not None:
        label = f"({e:g}, {cd:g})-DP"
        req_fnr = float(epsilon_delta_tradeoff(fpr_hi, e, cd))
        req_fpr = float(epsilon_delta_tradeoff(fnr_hi, e, cd))
    elif claim_mu is not None:
        m = _v.scalar("claim_mu", claim_mu, low=0.0)
        label = f"{m:g}-GDP"
        req_fnr = float(gdp_tradeoff(fpr_hi, m))
        req_fpr = float(gdp_tradeoff(fnr_hi, m))
    elif claim is not None:
        if not isinstance(claim, PrivacyLoss):
            raise TypeError(f"claim must be a dpax.PrivacyLoss, got {type(claim).__name__}")
        if claim.batch_shape not in ((), (1,)):
            raise ValueError(f"claim must be a single mechanism, got batch shape {claim.batch_shape}")
        label = getattr(claim, "description", "privacy loss")
        req = np.asarray(claim.beta(np.array([fpr_hi, fnr_hi]))).reshape(-1)
        req_fnr, req_fpr = float(req[0]), float(req[1])
    if label is not None:
        assert req_fnr is not None and req_fpr is not None  # every claim above sets them with its label
        verdict = bool(fnr_hi < req_fnr or fpr_hi < req_fpr)
    return AuditResult(
        fpr=float(fp) / float(n_neg), fnr=float(fn) / float(n_pos), fpr_upper=float(fpr_hi),
        fnr_upper=float(fnr_hi), confidence=conf, delta=d, epsilon_lower=eps_lo, mu_lower=mu_lo,
        claim=label, required_fnr=req_fnr, required_fpr=req_fpr, contradicted=verdict,
    )
