"""riskcal 1.5.1's API on the dpax engine: ``import dpax.compat.riskcal as riskcal`` wherever
``import riskcal`` was.

Module for module as riskcal: :mod:`.analysis` (with :mod:`.analysis.conversions`: risk from
PLDs, GDP, (epsilon, delta)-DP, RDP, zCDP; ``PLRVs``), :mod:`.calibration`
(:mod:`.calibration.core`: the generic ``calibrate_parameter``; :mod:`.calibration.dpsgd`:
DP-SGD on :func:`dpax.calibrate_dpsgd`; :mod:`.calibration.blackbox`: calibration through
an accountant class), :mod:`.accountants` (``CTDAccountant``), :mod:`.utils`, and the
deprecated :mod:`.dpsgd`, :mod:`.conversions`, :mod:`.blackbox`, :mod:`.plrv`, which warn
when imported (or first reached as attributes of this package), as riskcal's do.

The quantities are those of Kulynych, Gomez, Kaissis, du Pin Calmon and Troncoso, "Attack-aware
noise calibration for differential privacy" (NeurIPS 2024): beta at alpha (Algorithm 1),
advantage (Algorithm 3), calibration to advantage (Eq. 14) and to error rates (Eq. 18),
computed by dpax: DP-SGD from the exact loss CDFs, every answer on the safe side, calibrated
noise always meeting its target. Where riskcal raises ``RuntimeError`` for an unreachable
target this package raises :class:`CalibrationError`, a ``RuntimeError`` and a ``ValueError``.
Functions that take a dp-accounting ``PrivacyLossDistribution`` also take a
:class:`dpax.PrivacyLoss`.

For code written against earlier dpax releases, the functions of the former flat module
stay importable from here without a warning (``from dpax.compat.riskcal import
get_beta_for_dpsgd``); riskcal itself keeps only the names it deprecates at its top level.

    import dpax.compat.riskcal as riskcal
    noise = riskcal.calibration.dpsgd.find_noise_multiplier_for_err_rates(
        alpha=0.01, beta=0.95, sample_rate=0.002, num_steps=10000, grid_step=1e-2)
"""

import importlib as _importlib
import warnings as _warnings

from . import accountants, analysis, calibration, utils  # noqa: F401 (utils: the submodule as an attribute)
from ._core import DEPRECATED_MODULES as _DEPRECATED_MODULES
from ._core import CalibrationError
from .accountants import CTDAccountant
from .analysis import (
    get_advantage_from_adp,
    get_advantage_from_gdp,
    get_advantage_from_pld,
    get_bayes_risk_from_gdp,
    get_bayes_risk_from_pld,
    get_beta_from_adp,
    get_beta_from_gdp,
    get_beta_from_pld,
    get_beta_from_rdp,
    get_beta_from_zcdp,
    get_epsilon_from_err_rates,
)
from .calibration.dpsgd import (
    find_noise_multiplier_for_advantage,
    find_noise_multiplier_for_err_rates,
    get_advantage_for_dpsgd,
    get_beta_for_dpsgd,
)


def __getattr__(name):
    """riskcal's deprecated modules, imported when first reached, warning the caller."""
    if name in _DEPRECATED_MODULES:
        _warnings.warn(_DEPRECATED_MODULES[name], DeprecationWarning, stacklevel=2)
        with _warnings.catch_warnings():  # the module's own warning would repeat it
            _warnings.simplefilter("ignore", DeprecationWarning)
            return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_DEPRECATED_MODULES))


__all__ = [
    "analysis",
    "calibration",
    "accountants",
    "dpsgd",
    "conversions",
    "blackbox",
    "plrv",
    "get_advantage_from_pld",
    "get_beta_from_pld",
    "get_advantage_for_dpsgd",
    "get_beta_for_dpsgd",
    "find_noise_multiplier_for_advantage",
    "find_noise_multiplier_for_err_rates",
    "CTDAccountant",
    "CalibrationError",
    "get_advantage_from_adp",
    "get_advantage_from_gdp",
    "get_bayes_risk_from_gdp",
    "get_bayes_risk_from_pld",
    "get_beta_from_adp",
    "get_beta_from_gdp",
    "get_beta_from_rdp",
    "get_beta_from_zcdp",
    "get_epsilon_from_err_rates",
]
