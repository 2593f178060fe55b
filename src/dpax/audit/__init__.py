"""Auditing and empirical privacy: what an attack actually achieved, beside what accounting allows.

* :mod:`dpax.audit.confidence`: Clopper-Pearson intervals, lower confidence bounds on epsilon and
  mu from attack counts, and verdicts on claimed guarantees.
* :mod:`dpax.audit.epsilon_star`: Epsilon* of one trained model from its train / held-out
  losses (Negoescu et al.: Eq. 7, Section 3.1, Appendix B, Theorem 2).
* :mod:`dpax.audit.fit`: Gaussian-mixture goodness of fit of the parametric model
  (Appendix 8.2).
* :mod:`dpax.audit.io`: losses from .npy / .npz / .csv / .parquet files (pyarrow optional).

Everything here is NumPy / SciPy; only a claimed :class:`dpax.PrivacyLoss` goes through the
engine (its ``beta``).

>>> from dpax import audit
>>> round(audit.mu_lower_bound(174, 100_000, 95_078, 100_000, confidence=0.95), 4)
1.2096
"""

from .confidence import (
    AuditResult,
    audit,
    clopper_pearson,
    epsilon_delta_tradeoff,
    epsilon_lower_bound,
    gdp_tradeoff,
    mu_lower_bound,
    rate_upper_limits,
)
from .epsilon_star import (
    EMPIRICAL_RATE_RANGE,
    EpsilonStar,
    epsilon_star,
    epsilon_star_from_rates,
    loss_transform,
    mechanism_bound,
)
from .fit import GaussianMixture, fit_gaussian_mixture, goodness_of_fit, ks_pvalues
from .io import read_losses

__all__ = [
    "AuditResult",
    "EMPIRICAL_RATE_RANGE",
    "EpsilonStar",
    "GaussianMixture",
    "audit",
    "clopper_pearson",
    "epsilon_delta_tradeoff",
    "epsilon_lower_bound",
    "epsilon_star",
    "epsilon_star_from_rates",
    "fit_gaussian_mixture",
    "gdp_tradeoff",
    "goodness_of_fit",
    "ks_pvalues",
    "loss_transform",
    "mechanism_bound",
    "mu_lower_bound",
    "rate_upper_limits",
    "read_losses",
]
