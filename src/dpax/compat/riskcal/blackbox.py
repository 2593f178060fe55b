"""Deprecated, as ``riskcal.blackbox`` is: use :mod:`dpax.compat.riskcal.calibration.blackbox`.
Importing it warns (DeprecationWarning)."""

import warnings

from ._core import DEPRECATED_MODULES

warnings.warn(DEPRECATED_MODULES["blackbox"], DeprecationWarning, stacklevel=2)

from .calibration.blackbox import (  # noqa: E402
    CalibrationResult,
    find_noise_multiplier_for_advantage,
    find_noise_multiplier_for_epsilon_delta,
    find_noise_multiplier_for_err_rates,
)

__all__ = [
    "find_noise_multiplier_for_epsilon_delta",
    "find_noise_multiplier_for_advantage",
    "find_noise_multiplier_for_err_rates",
    "CalibrationResult",
]
