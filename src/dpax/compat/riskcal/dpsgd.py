"""Deprecated, as ``riskcal.dpsgd`` is: use :mod:`dpax.compat.riskcal.calibration.dpsgd`
and :mod:`dpax.compat.riskcal.accountants`. Importing it warns (DeprecationWarning)."""

import warnings

from ._core import DEPRECATED_MODULES

warnings.warn(DEPRECATED_MODULES["dpsgd"], DeprecationWarning, stacklevel=2)

from .accountants.ctd import CTDAccountant  # noqa: E402
from .calibration.dpsgd import (  # noqa: E402
    find_noise_multiplier_for_advantage,
    find_noise_multiplier_for_err_rates,
    get_advantage_for_dpsgd,
    get_beta_for_dpsgd,
)
from .utils import inverse_monotone_function  # noqa: E402

__all__ = [
    "find_noise_multiplier_for_advantage",
    "find_noise_multiplier_for_err_rates",
    "get_advantage_for_dpsgd",
    "get_beta_for_dpsgd",
    "CTDAccountant",
    "inverse_monotone_function",
]
