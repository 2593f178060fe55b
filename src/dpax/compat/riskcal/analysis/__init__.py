"""riskcal's ``riskcal.analysis`` on the dpax engine: privacy risk from PLDs, Gaussian DP,
(epsilon, delta)-DP, Rényi DP and zCDP (:mod:`.conversions`), and the PLRV representation
(:class:`PLRVs`, :func:`get_beta_from_plrvs`), with riskcal 1.5.1's names.

    import dpax.compat.riskcal as riskcal
    pld = ...                                   # a dp-accounting PLD or a dpax.PrivacyLoss
    riskcal.analysis.get_beta_from_pld(pld, alpha=0.01), riskcal.analysis.get_advantage_from_pld(pld)
"""

from . import conversions  # noqa: F401 (the submodule as an attribute, as in riskcal)
from ._plrv import PLRVs
from ._plrv import get_beta as get_beta_from_plrvs
from .conversions import (
    get_advantage_for_epsilon_delta,
    get_advantage_for_mu,
    get_advantage_from_adp,
    get_advantage_from_gdp,
    get_advantage_from_pld,
    get_advantage_from_zcdp,
    get_advantage_from_zcdp_approx,
    get_bayes_risk_for_mu,
    get_bayes_risk_from_gdp,
    get_bayes_risk_from_pld,
    get_beta_for_epsilon_delta,
    get_beta_for_mu,
    get_beta_from_adp,
    get_beta_from_gdp,
    get_beta_from_pld,
    get_beta_from_rdp,
    get_beta_from_zcdp,
    get_beta_from_zcdp_approx,
    get_epsilon_for_err_rates,
    get_epsilon_from_err_rates,
    get_mu_from_zcdp_approx,
    pld_to_plrvs,
    plrvs_from_pld,
)

__all__ = [
    "PLRVs",
    "plrvs_from_pld",
    "pld_to_plrvs",
    "get_beta_from_pld",
    "get_beta_from_gdp",
    "get_beta_from_adp",
    "get_beta_from_rdp",
    "get_beta_from_zcdp",
    "get_beta_for_mu",
    "get_beta_for_epsilon_delta",
    "get_beta_from_plrvs",
    "get_advantage_from_pld",
    "get_advantage_from_gdp",
    "get_advantage_from_adp",
    "get_advantage_from_zcdp",
    "get_mu_from_zcdp_approx",
    "get_beta_from_zcdp_approx",
    "get_advantage_from_zcdp_approx",
    "get_advantage_for_mu",
    "get_advantage_for_epsilon_delta",
    "get_bayes_risk_from_pld",
    "get_bayes_risk_from_gdp",
    "get_bayes_risk_for_mu",
    "get_epsilon_from_err_rates",
    "get_epsilon_for_err_rates",
]
