"""dpax: JAX-accelerated numerical privacy accounting.

Exact trade-off curves of the best membership-inference attack from privacy loss random
variables, calibration of noise to attack risk, for whole batches of configurations.

The layout follows the pipeline: construct (``construct``, ``mechanisms``), compose
(``composition``, ``privacy_loss``), analyse (``analyse``, ``gdp``, ``conversions``),
calibrate (``targets``, ``calibration``, ``sharding``), use (``audit``, ``accountants``,
``compat``, ``interop``, ``sweep``, ``plot``, ``cli``).
"""

# construct and compose
from .mechanisms import (
    approximate_dp,
    discrete_gaussian,
    discrete_laplace,
    dpsgd,
    from_privacy_profile,
    gaussian,
    laplace,
    randomized_response,
    subsampled_gaussian,
    subsampled_laplace,
)
from .privacy_loss import PrivacyLoss, compose

# calibrate
from . import targets
from .calibration import CalibrationResult, calibrate, calibrate_blackbox, calibrate_dpsgd, calibrate_gaussian

# analyse and use: Gaussian-DP reporting, auditing, dp-accounting interop, Opacus-style
# accountant, riskcal / gdpnum drop-ins, sweeps, plots (matplotlib is imported on use)
from . import accountants, audit, compat, conversions, gdp, plot, sweep
from .interop import from_dp_accounting, to_dp_accounting

__version__ = "0.1.0"

__all__ = [
    "PrivacyLoss",
    "CalibrationResult",
    "accountants",
    "approximate_dp",
    "audit",
    "calibrate",
    "calibrate_blackbox",
    "calibrate_dpsgd",
    "calibrate_gaussian",
    "compat",
    "compose",
    "conversions",
    "discrete_gaussian",
    "discrete_laplace",
    "dpsgd",
    "from_dp_accounting",
    "from_privacy_profile",
    "gaussian",
    "gdp",
    "laplace",
    "plot",
    "randomized_response",
    "subsampled_gaussian",
    "subsampled_laplace",
    "sweep",
    "targets",
    "to_dp_accounting",
]
