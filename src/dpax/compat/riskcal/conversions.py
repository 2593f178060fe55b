"""Deprecated, as ``riskcal.conversions`` is: use :mod:`dpax.compat.riskcal.analysis`.
Importing it warns (DeprecationWarning)."""

import warnings

from ._core import DEPRECATED_MODULES

warnings.warn(DEPRECATED_MODULES["conversions"], DeprecationWarning, stacklevel=2)

from .analysis.conversions import (  # noqa: E402
    get_advantage_for_epsilon_delta,
    get_advantage_for_mu,
    get_advantage_from_pld,
    get_bayes_risk_for_mu,
    get_bayes_risk_from_pld,
    get_beta_for_epsilon_delta,
    get_beta_for_mu,
    get_beta_from_pld,
    get_epsilon_for_err_rates,
    plrvs_from_pld,
)

__all__ = [
    "plrvs_from_pld",
    "get_epsilon_for_err_rates",
    "get_beta_from_pld",
    "get_beta_for_mu",
    "get_beta_for_epsilon_delta",
    "get_advantage_from_pld",
    "get_advantage_for_mu",
    "get_advantage_for_epsilon_delta",
    "get_bayes_risk_from_pld",
    "get_bayes_risk_for_mu",
]
