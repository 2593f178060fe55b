"""riskcal's ``riskcal.calibration`` on the dpax engine: the generic calibration framework
(:mod:`.core`), DP-SGD calibration on :func:`dpax.calibrate_dpsgd` (:mod:`.dpsgd`) and
calibration through an accountant class (:mod:`.blackbox`), with riskcal 1.5.1's names
(the DP-SGD and accountant versions of ``find_noise_multiplier_for_*`` under the suffixes
``_dpsgd`` / ``_blackbox``, the accountant result as ``BlackboxCalibrationResult``)."""

from . import blackbox, core, dpsgd  # noqa: F401 (the submodules as attributes, as in riskcal)
from .blackbox import CalibrationResult as BlackboxCalibrationResult
from .blackbox import (
    create_accountant_evaluator,
    find_noise_multiplier_for_epsilon_delta,
)
from .blackbox import find_noise_multiplier_for_advantage as find_noise_multiplier_for_advantage_blackbox
from .blackbox import find_noise_multiplier_for_err_rates as find_noise_multiplier_for_err_rates_blackbox
from .core import (
    CalibrationConfig,
    CalibrationResult,
    CalibrationTarget,
    PrivacyEvaluator,
    PrivacyMetrics,
    calibrate_parameter,
)
from .dpsgd import (
    create_dpsgd_epsilon_evaluator,
    create_dpsgd_evaluator,
    get_advantage_for_dpsgd,
    get_beta_for_dpsgd,
)
from .dpsgd import find_noise_multiplier_for_advantage as find_noise_multiplier_for_advantage_dpsgd
from .dpsgd import find_noise_multiplier_for_err_rates as find_noise_multiplier_for_err_rates_dpsgd

__all__ = [
    "PrivacyEvaluator",
    "PrivacyMetrics",
    "CalibrationTarget",
    "CalibrationConfig",
    "CalibrationResult",
    "calibrate_parameter",
    "create_dpsgd_evaluator",
    "create_dpsgd_epsilon_evaluator",
    "find_noise_multiplier_for_advantage_dpsgd",
    "find_noise_multiplier_for_err_rates_dpsgd",
    "get_advantage_for_dpsgd",
    "get_beta_for_dpsgd",
    "create_accountant_evaluator",
    "find_noise_multiplier_for_epsilon_delta",
    "find_noise_multiplier_for_advantage_blackbox",
    "find_noise_multiplier_for_err_rates_blackbox",
    "BlackboxCalibrationResult",
]
