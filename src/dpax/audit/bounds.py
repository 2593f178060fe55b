"""Statistically valid audit bounds from attack outcomes (lecture: "Privacy Auditing").

An audit runs a membership-inference attack ``negatives`` times on the world without the
target record and ``positives`` times on the world with it, and counts ``false_positives``
(attack said "member" on a negative) and ``false_negatives`` (attack said "non-member" on a
positive). Clopper-Pearson intervals turn the counts into upper confidence limits on the
attack's FPR and FNR; a privacy claim whose trade-off curve f has ``f(FPR+) > FNR+`` is then
contradicted at the stated confidence, and the same limits give lower bounds on epsilon
(Kairouz-Oh-Viswanath, lecture Theorem) and on the GDP mu.

Confidence: ``confidence`` is the joint level. The two one-sided limits are each taken at
level ``1 - (1 - confidence) / 2`` (union bound), so with probability at least
``confidence`` both true rates lie below their limits and every reported lower bound is
below the truth (and a "contradicted" verdict is wrong with probability at most
``1 - confidence``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import special, stats

from .._engine import validation as _v

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


def _scalar_or_array(x):
    x = np.asarray(x, dtype=np.float64)
    return float(x) if x.ndim == 0 else x


def _counts(k, n, k_name: str, n_name: str):
    n_arr = _v.positive_int_array(n_name, n, minimum=1)
    k_arr = _v.positive_int_array(k_name, k, minimum=0)
    try:
        k_arr, n_arr = np.broadcast_arrays(k_arr, n_arr)
    except ValueError as exc:
        raise ValueError(f"{k_name} and {n_name} must broadcast together: shapes "
                         f"{np.shape(k)} and {np.shape(n)}") from exc
    if np.any(k_arr > n_arr):
        i = np.flatnonzero(k_arr > n_arr)[0]
        raise ValueError(f"{k_name} must lie in [0, {n_name}], got {k_arr.ravel()[i]} > {n_arr.ravel()[i]}")
    return k_arr, n_arr


def _level(name: str, value) -> np.ndarray:
    return _v.real_array(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def clopper_pearson(successes, trials, confidence=0.95, alternative="two-sided"):
    """Clopper-Pearson ("exact") interval for a binomial proportion (lecture, "Aside").

    With k successes in n trials and significance a = 1 - confidence, the limits are the
    Beta quantiles  lower = B^-1(a', k, n - k + 1),  upper = B^-1(1 - a', k + 1, n - k),
    where a' = a / 2 for ``alternative="two-sided"`` and a' = a for a one-sided interval
    (``"upper"``: [0, upper]; ``"lower"``: [lower, 1]); lower = 0 at k = 0 and upper = 1 at
    k = n. Vectorised: every argument broadcasts. Returns ``(lower, upper)`` (floats for
    scalar input). Upper limits use the Beta survival function, so they stay accurate at
    significance levels like 1e-10.
    """
    k, n = _counts(successes, trials, "successes", "trials")
    conf = _level("confidence", confidence)
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    k, n, conf = np.broadcast_arrays(k, n, conf)
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
    return _scalar_or_array(lo), _scalar_or_array(hi)


def rate_upper_limits(false_positives, negatives, false_negatives, positives, confidence=0.95):
    """One-sided Clopper-Pearson upper limits ``(fpr_upper, fnr_upper)``, jointly at ``confidence``.

    Each limit is taken at level 1 - (1 - confidence) / 2 (union bound over the two rates).
    """
    conf = _level("confidence", confidence)
    each = 1.0 - (1.0 - conf) / 2.0
    fp, n_neg = _counts(false_positives, negatives, "false_positives", "negatives")
    fn, n_pos = _counts(false_negatives, positives, "false_negatives", "positives")
    _, fpr_hi = clopper_pearson(fp, n_neg, each, alternative="upper")
    _, fnr_hi = clopper_pearson(fn, n_pos, each, alternative="upper")
    return _scalar_or_array(fpr_hi), _scalar_or_array(fnr_hi)


def epsilon_delta_tradeoff(alpha, epsilon, delta=0.0):
    """Trade-off curve of (epsilon, delta)-DP (Kairouz-Oh-Viswanath; lecture):
    f(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)). Broadcasts."""
    from ..conversions import epsilon_delta_tradeoff as curve

    return curve(epsilon, delta, alpha)


def gdp_tradeoff(alpha, mu):
    """Trade-off curve of mu-GDP (Dong, Roth & Su): G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)."""
    from ..gdp import tradeoff

    return tradeoff(mu, alpha)


def _eps_from_limits(fpr_hi, fnr_hi, delta):
    """max(0, log((1 - delta - FNR+) / FPR+), log((1 - delta - FPR+) / FNR+)): the smallest
    epsilon whose (epsilon, delta) curve lies below the point (FPR+, FNR+)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(1.0 - delta - fnr_hi > 0, np.log(np.maximum(1.0 - delta - fnr_hi, 1e-300)) - np.log(fpr_hi), -np.inf)
        b = np.where(1.0 - delta - fpr_hi > 0, np.log(np.maximum(1.0 - delta - fpr_hi, 1e-300)) - np.log(fnr_hi), -np.inf)
    return np.maximum(0.0, np.maximum(a, b))


def _mu_from_limits(fpr_hi, fnr_hi):
    """max(0, Phi^-1(1 - FPR+) - Phi^-1(FNR+)): the smallest mu with G_mu(FPR+) <= FNR+."""
    return np.maximum(0.0, stats.norm.isf(fpr_hi) - stats.norm.ppf(fnr_hi))


def epsilon_lower_bound(false_positives, negatives, false_negatives, positives, delta=0.0, confidence=0.95):
    """Lower confidence bound on epsilon at ``delta`` from attack counts.

    (epsilon, delta)-DP forces FPR + e^eps FNR >= 1 - delta and FNR + e^eps FPR >= 1 - delta
    (Kairouz-Oh-Viswanath, lecture "Privacy Auditing"); evaluated at the joint upper limits
    (FPR+, FNR+) this gives an epsilon that the true one exceeds with probability >=
    ``confidence``. 0 when the counts show nothing. Broadcasts over all arguments.
    """
    d = _v.probabilities("delta", delta)
    fpr_hi, fnr_hi = rate_upper_limits(false_positives, negatives, false_negatives, positives, confidence)
    return _scalar_or_array(_eps_from_limits(np.asarray(fpr_hi), np.asarray(fnr_hi), d))


def mu_lower_bound(false_positives, negatives, false_negatives, positives, confidence=0.95):
    """Lower confidence bound on the Gaussian-DP mu from attack counts.

    mu-GDP forces FNR >= Phi(Phi^-1(1 - FPR) - mu); at the joint upper limits this gives
    mu >= Phi^-1(1 - FPR+) - Phi^-1(FNR+), with probability >= ``confidence``.
    """
    fpr_hi, fnr_hi = rate_upper_limits(false_positives, negatives, false_negatives, positives, confidence)
    return _scalar_or_array(_mu_from_limits(np.asarray(fpr_hi), np.asarray(fnr_hi)))


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`. Rates are FPR = false_positives / negatives and FNR =
    false_negatives / positives; ``*_upper`` are the joint one-sided limits at ``confidence``.

    ``required_fnr`` is the claimed curve at FPR+ (the least FNR the claim allows there),
    ``required_fpr`` the claimed curve at FNR+ (the roles swapped, as the lecture writes it);
    the claim is ``contradicted`` when FNR+ < required_fnr or FPR+ < required_fpr. Every
    claim dpax checks has a symmetric curve ((epsilon, delta), mu-GDP, and
    ``PrivacyLoss.beta``, which is symmetrised), so the two tests are the same test.
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
    extra: dict = field(default_factory=dict)


def audit(false_positives, negatives, false_negatives, positives, *, confidence=0.95, delta=None,
          claim_epsilon=None, claim_delta=None, claim_mu=None, claim=None) -> AuditResult:
    """Audit one attack: confidence limits on its error rates, lower bounds on epsilon (at
    ``delta``, default ``claim_delta`` or 0) and mu, and a verdict on a claimed guarantee.

    The claim is one of: ``claim_epsilon`` with ``claim_delta`` (an (epsilon, delta)-DP
    claim), ``claim_mu`` (mu-GDP), or ``claim`` (any :class:`dpax.PrivacyLoss`; its
    ``beta`` is the claimed curve). The claim is contradicted, at ``confidence``, when the
    point (FPR+, FNR+) lies strictly below its trade-off curve (lecture worked example:
    claimed (0.21, 1e-5), TPR 4.922%, FPR 0.174% over 100k trials each is contradicted).
    A claimed ``PrivacyLoss`` is read through its ``beta``, which is never above the true
    curve, so grid error can only make a "contradicted" verdict rarer, never wrong.
    Scalar counts only; use the vectorised bound functions for batches.
    """
    fp, n_neg = _counts(false_positives, negatives, "false_positives", "negatives")
    fn, n_pos = _counts(false_negatives, positives, "false_negatives", "positives")
    if fp.ndim or fn.ndim:
        raise ValueError("audit takes scalar counts; use epsilon_lower_bound / mu_lower_bound for arrays")
    conf = float(_level("confidence", confidence))
    given = [x is not None for x in (claim_epsilon, claim_mu, claim)]
    if sum(given) > 1:
        raise ValueError("give at most one claim: claim_epsilon (with claim_delta), claim_mu, or claim")
    if (claim_epsilon is None) != (claim_delta is None):
        raise ValueError("claim_epsilon and claim_delta go together (an (epsilon, delta)-DP claim)")
    if delta is None:
        delta = 0.0 if claim_delta is None else claim_delta
    d = float(_v.probabilities("delta", delta))
    fpr_hi, fnr_hi = rate_upper_limits(fp, n_neg, fn, n_pos, conf)
    eps_lo = float(_eps_from_limits(fpr_hi, fnr_hi, d))
    mu_lo = float(_mu_from_limits(fpr_hi, fnr_hi))
    label = req_fnr = req_fpr = verdict = None
    if claim_epsilon is not None:
        e = float(_v.real_array("claim_epsilon", claim_epsilon, low=0.0))
        cd = float(_v.probabilities("claim_delta", claim_delta))
        label = f"({e:g}, {cd:g})-DP"
        req_fnr = float(epsilon_delta_tradeoff(fpr_hi, e, cd))
        req_fpr = float(epsilon_delta_tradeoff(fnr_hi, e, cd))
    elif claim_mu is not None:
        m = float(_v.real_array("claim_mu", claim_mu, low=0.0))
        label = f"{m:g}-GDP"
        req_fnr = float(gdp_tradeoff(fpr_hi, m))
        req_fpr = float(gdp_tradeoff(fnr_hi, m))
    elif claim is not None:
        from ..privacy_loss import PrivacyLoss

        if not isinstance(claim, PrivacyLoss):
            raise TypeError(f"claim must be a dpax.PrivacyLoss, got {type(claim).__name__}")
        if claim.batch_shape not in ((), (1,)):
            raise ValueError(f"claim must be a single mechanism, got batch shape {claim.batch_shape}")
        label = getattr(claim, "description", "privacy loss")
        req = np.asarray(claim.beta(np.array([fpr_hi, fnr_hi]))).reshape(-1)
        req_fnr, req_fpr = float(req[0]), float(req[1])
    if label is not None:
        verdict = bool(fnr_hi < req_fnr or fpr_hi < req_fpr)
    return AuditResult(
        fpr=float(fp) / float(n_neg), fnr=float(fn) / float(n_pos), fpr_upper=float(fpr_hi),
        fnr_upper=float(fnr_hi), confidence=conf, delta=d, epsilon_lower=eps_lo, mu_lower=mu_lo,
        claim=label, required_fnr=req_fnr, required_fpr=req_fpr, contradicted=verdict,
    )
