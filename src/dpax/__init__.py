"""dpax: JAX-accelerated numerical privacy accounting.

Exact trade-off curves of the best membership-inference attack from privacy loss random
variables, calibration of noise to attack risk, for whole batches of configurations.

The layout follows the pipeline: construct (``construct``, ``mechanisms``), compose
(``composition``), analyse (``analyse``, ``gdp``), calibrate (``targets``, ``calibration``),
use (``audit``, ``cli``, interop).
"""

from . import targets
from .calibration import CalibrationResult, calibrate, calibrate_blackbox, calibrate_dpsgd, calibrate_gaussian
from .mechanisms import dpsgd, from_privacy_profile, gaussian, subsampled_gaussian
from .privacy_loss import PrivacyLoss, compose

# -- mechanism library and interop --------------------------------------------------------
from .interop import from_dp_accounting, to_dp_accounting  # noqa: E402
from .mechanisms import (  # noqa: E402
    approximate_dp,
    discrete_gaussian,
    discrete_laplace,
    laplace,
    randomized_response,
    subsampled_laplace,
)

# -- Gaussian-DP reporting ----------------------------------------------------------------
from . import gdp  # noqa: E402  (dpax.gdp: mu-GDP, regret, reports, conversions)

# -- auditing -----------------------------------------------------------------------------
from . import audit  # noqa: E402  (dpax.audit: Clopper-Pearson audits, Epsilon*)

# -- backends, sweeps and plots -------------------------------------------------------------
from . import accountants, compat, plot, sweep  # noqa: E402  (Opacus accountant, riskcal/gdpnum drop-ins; matplotlib on use)

__version__ = "0.1.0"

__all__ = [
    "PrivacyLoss",
    "CalibrationResult",
    "calibrate",
    "calibrate_dpsgd",
    "compose",
    "dpsgd",
    "from_privacy_profile",
    "gaussian",
    "subsampled_gaussian",
    "targets",
]
