"""Calibration: the smallest noise that meets a risk target (Kulynych et al. 2024, Eq. 9, 14, 18).

* :mod:`.result` -- :class:`CalibrationResult` (as a table, records, CSV, a DataFrame) and
  the reporting of rows that miss the target;
* :mod:`.search` -- the vectorised bracketing search on batches of privacy losses (coarse
  grids first, the answer verified at the requested grid) and :func:`calibrate`, for any
  monotone family of mechanisms;
* :mod:`.dpsgd` -- :func:`calibrate_dpsgd`: batched DP-SGD configurations, the standard
  (epsilon, delta) comparison and the risks achieved;
* :mod:`.quantities` -- DP-SGD's quantities for it (leak probability, CLT noise guess,
  support width, the risks re-evaluated at the answer and without noise);
* :mod:`.accuracy` -- ``calibrate_dpsgd(accuracy=...)``: the grid refined to the accuracy
  asked for, and the noise interval;
* :mod:`.gaussian` -- :func:`calibrate_gaussian`, the plain Gaussian mechanism's exact noise;
* :mod:`.blackbox` -- :func:`calibrate_blackbox`, through an (epsilon, delta) accountant.
"""

from .._engine.grid import DEFAULT_GRID_STEP
from .accuracy import ACCURACY_TARGETS
from .blackbox import calibrate_blackbox
from .dpsgd import DEFAULT_STANDARD_DELTA, calibrate_dpsgd
from .gaussian import calibrate_gaussian
from .quantities import ACHIEVED_GROUP_MIN_ROWS
from .result import CalibrationResult
from .search import ANCHOR_MARGIN, COARSE_PHASES, DEFAULT_CANDIDATES, DEFAULT_RTOL, calibrate

__all__ = [
    "ACCURACY_TARGETS",
    "ACHIEVED_GROUP_MIN_ROWS",
    "ANCHOR_MARGIN",
    "COARSE_PHASES",
    "DEFAULT_CANDIDATES",
    "DEFAULT_GRID_STEP",
    "DEFAULT_RTOL",
    "DEFAULT_STANDARD_DELTA",
    "CalibrationResult",
    "calibrate",
    "calibrate_blackbox",
    "calibrate_dpsgd",
    "calibrate_gaussian",
]
