"""Risk targets for calibration (Sections 2-3 and Table 1 of Kulynych, Gomez, Kaissis, du Pin
Calmon and Troncoso, "Attack-aware noise calibration for differential privacy", NeurIPS 2024;
"Kulynych et al. 2024" below).

A target says what the calibrated mechanism must guarantee. Each one knows

* how far a batch of privacy losses is inside it (``margin``: >= 0 where met),
* the mu of the Gaussian-DP mechanism that just meets it (a starting point for the search),
* the epsilon that *standard* calibration at a given delta would need to guarantee the same
  bound (Eq. 2 with Proposition 2.5 / 2.6), for the comparison a user wants to see,
* what subsampling alone guarantees: with no noise, T Poisson-subsampled steps at rate p
  leak membership with probability q = 1 - (1 - p)^T and are otherwise perfectly private,
  so the trade-off curve is (1 - q)(1 - alpha).

Fields may be arrays; they broadcast against the configuration arguments. Pass a target to
:func:`dpax.calibrate`; a list of targets means "meet all of them" (:class:`All`).

>>> import dpax
>>> from dpax.targets import Advantage
>>> margin, achieved = Advantage(0.4).margin(dpax.gaussian(1.0, grid_step=1e-2).pair)
>>> margin.round(4), achieved["advantage"].round(4)
(array([0.0171]), array([0.3829]))

Modules: :mod:`.base` (the :class:`Target` interface), :mod:`.error_rates` (``ErrRates``,
``Advantage``, ``Epsilon``), :mod:`.derived` (``Accuracy``, ``PPV``, ``Reconstruction``),
:mod:`.gdp` (``GDP``) and :mod:`.combined` (``All``, :func:`as_target`).
"""

from .._engine.mu_regret import GDP_SLACK
from .base import Target
from .combined import All, as_target
from .derived import PPV, Accuracy, Reconstruction, _ViaErrRates  # noqa: F401  (the calibration reads it)
from .error_rates import Advantage, Epsilon, ErrRates
from .gdp import GDP

__all__ = ["GDP", "GDP_SLACK", "PPV", "Accuracy", "Advantage", "All", "Epsilon", "ErrRates", "Reconstruction", "Target",
           "as_target"]
