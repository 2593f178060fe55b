"""dpax: JAX-accelerated numerical privacy accounting.

Exact trade-off curves of the best membership-inference attack from privacy loss random
variables, calibration of noise to attack risk, for whole batches of configurations.

The modules follow the pipeline:

* construct and compose: :mod:`dpax.mechanisms` (Gaussian, DP-SGD, Laplace, randomized
  response, ... as :class:`PrivacyLoss` values), :mod:`dpax.events` (dp-accounting's
  ``DpEvent`` trees as :class:`PrivacyLoss` values), :mod:`dpax.privacy_loss` (the
  ``PrivacyLoss`` pytree, its risks, and :func:`compose`); the kernels behind them are in
  the private engine (:mod:`dpax._engine.construct`, :mod:`dpax._engine.composition`,
  :mod:`dpax._engine.analyse`).
* analyse: :mod:`dpax.gdp` (Gaussian-DP reporting), :mod:`dpax.conversions` (between
  epsilon/delta, mu, advantage and error rates).
* calibrate: :mod:`dpax.targets` (risk bounds), :mod:`dpax.calibration` (the least noise
  that meets them), :mod:`dpax.schedule` (DP-SGD in epochs: :func:`dpsgd_schedule`),
  :mod:`dpax.result_table` (a batch result as a table, CSV or DataFrame).
* use: :mod:`dpax.audit` (empirical privacy), :mod:`dpax.accountants` (an Opacus-style
  accountant and dp-accounting's ``PrivacyAccountant`` for DpEvents), :mod:`dpax.compat`
  (riskcal / gdpnum drop-ins), :mod:`dpax.interop` (dp-accounting), :mod:`dpax.sweep`,
  :mod:`dpax.plot`, :mod:`dpax.cli` (the ``dpax`` command).

Every parameter broadcasts like NumPy: a batch of configurations is one compiled kernel
call, sharded over the devices chosen by :func:`use_devices` (default: all of this
process's devices); :mod:`dpax.distributed` divides a batch among the processes of a
``jax.distributed`` job. dpax computes in float64 without changing the user's JAX configuration.

>>> import dpax
>>> pl = dpax.dpsgd(noise_multiplier=[1.0, 2.0], sample_rate=0.01, num_steps=100, grid_step=1e-3)
>>> pl.epsilon(1e-5).round(3), pl.beta(0.1).round(4)
(array([0.718, 0.19 ]), array([0.8729, 0.89  ]))
"""

# ruff: noqa: I001 - the imports follow the pipeline, section by section

import importlib as _importlib
import typing as _typing

# construct and compose
from .mechanisms import (
    approximate_dp,
    discrete_gaussian,
    discrete_laplace,
    dpsgd,
    from_privacy_profile,
    gaussian,
    laplace,
    mixture_of_gaussians,
    randomized_response,
    subsampled_gaussian,
    subsampled_laplace,
)
from .privacy_loss import Interval, PrivacyLoss, Refined, compose, refine
from .events import event_family, from_dp_event
from .schedule import DPSGDSchedule, dpsgd_schedule

# calibrate
from . import targets
from .calibration import CalibrationResult, calibrate, calibrate_blackbox, calibrate_dpsgd, calibrate_gaussian

# analyse and use: Gaussian-DP reporting, auditing, dp-accounting interop, Opacus-style
# accountant, riskcal / gdpnum drop-ins, sweeps, plots (matplotlib is imported on use)
from . import conversions, events, gdp
from .interop import from_dp_accounting, to_dp_accounting

# devices a batch is sharded over; the kernel cache
from ._engine.sharding import use_devices
from ._engine.cache import clear as clear_kernel_cache
from ._engine.cache import directory as kernel_cache_dir
from ._engine.cache import disable as disable_kernel_cache
from ._engine.cache import enable as enable_kernel_cache

#: Subpackages loaded on first use (``dpax.sweep``, ``import dpax.sweep`` or ``from dpax
#: import sweep``), not by ``import dpax``: a first answer in a fresh process does not wait
#: for the ~0.1 s of modules that only the use stage needs.
_ON_USE = frozenset({"accountants", "audit", "compat", "distributed", "plot", "sweep"})

if _typing.TYPE_CHECKING:
    from . import accountants, audit, compat, distributed, plot, sweep


def __getattr__(name: str) -> _typing.Any:
    """Load a subpackage of ``_ON_USE`` on first access (PEP 562)."""
    if name in _ON_USE:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names and the subpackages loaded on use, without its private helpers."""
    return sorted({n for n in globals() if not n.startswith("_") or n.startswith("__")} | _ON_USE)


__version__ = "0.1.0"

__all__ = [
    "PrivacyLoss",
    "CalibrationResult",
    "DPSGDSchedule",
    "Interval",
    "Refined",
    "accountants",
    "approximate_dp",
    "audit",
    "calibrate",
    "calibrate_blackbox",
    "calibrate_dpsgd",
    "calibrate_gaussian",
    "clear_kernel_cache",
    "compat",
    "compose",
    "conversions",
    "disable_kernel_cache",
    "discrete_gaussian",
    "discrete_laplace",
    "distributed",
    "events",
    "dpsgd",
    "dpsgd_schedule",
    "enable_kernel_cache",
    "event_family",
    "from_dp_accounting",
    "from_dp_event",
    "from_privacy_profile",
    "gaussian",
    "gdp",
    "kernel_cache_dir",
    "laplace",
    "mixture_of_gaussians",
    "plot",
    "randomized_response",
    "refine",
    "subsampled_gaussian",
    "subsampled_laplace",
    "sweep",
    "targets",
    "to_dp_accounting",
    "use_devices",
]
