"""Drop-in modules with the function names and arguments of other accounting libraries.

Switching backend is one import line::

    # from riskcal.analysis import get_beta_from_pld
    # from riskcal.calibration.dpsgd import find_noise_multiplier_for_err_rates
    from dpax.compat.riskcal import get_beta_from_pld, find_noise_multiplier_for_err_rates
    # from gdpnum import get_mu_and_regret_for_dpsgd, PLDConverter
    from dpax.compat.gdpnum import get_mu_and_regret_for_dpsgd, PLDConverter

Functions that take a dp-accounting ``PrivacyLossDistribution`` also take a
:class:`dpax.PrivacyLoss`. The answers are dpax's: exact construction from the mechanism's
loss CDFs, pessimistic at the requested grid step (see the README's Accuracy section), so they can differ from the
originals by those libraries' own discretisation error (riskcal/gdpnum overstate beta at fine
grids). Neither riskcal nor gdpnum is imported; dp-accounting is imported only by the
functions that receive its objects.
"""

from . import gdpnum, riskcal

__all__ = ["gdpnum", "riskcal"]
