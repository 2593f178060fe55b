"""riskcal's ``riskcal.calibration.dpsgd`` on the dpax engine: risk of DP-SGD and the noise
multiplier that meets an advantage (Eq. 14) or error-rate (Eq. 18) target.

DP-SGD (Poisson-subsampled Gaussian, ``num_steps`` steps, symmetrised add/remove curve) is
:func:`dpax.dpsgd`, built from the exact loss CDFs rather than dp-accounting's second
differences, so at fine grids beta is lower than riskcal's by riskcal's own discretisation
error. The two ``find_noise_multiplier_*`` functions run :func:`dpax.calibrate_dpsgd`
(relative tolerance 1e-4 on the noise, verified at ``grid_step``): the answer always meets
the target (riskcal's error-rate answer can fall ``beta_tol`` short of it), and
``advantage_tol`` / ``beta_tol`` bound how far inside the target it may be. A target not met
at ``noise_max``, or met already at ``noise_min`` beyond that tolerance, raises
:class:`~dpax.compat.riskcal.CalibrationError`. Arguments may be arrays (one batched search).
"""

from __future__ import annotations

from typing import cast

import numpy as np

from .... import targets as _targets
from ...._engine import validation as _v
from ....calibration import calibrate_dpsgd
from ....mechanisms import dpsgd as _dpsgd
from ....privacy_loss import Interval
from .._core import CalibrationError, scalar_or_array, warn_deprecated_param
from .core import (
    CalibrationConfig,
    CalibrationResult,
    CalibrationTarget,
    PrivacyEvaluator,
    PrivacyMetrics,
    calibrate_parameter,
)

__all__ = [
    "CalibrationConfig",
    "CalibrationResult",
    "CalibrationTarget",
    "PrivacyEvaluator",
    "PrivacyMetrics",
    "calibrate_parameter",
    "create_dpsgd_epsilon_evaluator",
    "create_dpsgd_evaluator",
    "find_noise_multiplier_for_advantage",
    "find_noise_multiplier_for_err_rates",
    "get_advantage_for_dpsgd",
    "get_beta_for_dpsgd",
]


def _one(value: float | np.ndarray | Interval) -> float:
    """A single mechanism's risk value, asked without ``bounds`` (so never an Interval), as a float."""
    return float(cast("float | np.ndarray", value))


class _DPSGDEvaluator:
    """noise_multiplier -> PrivacyMetrics of DP-SGD (advantage; beta at ``target_alpha``;
    epsilon at ``target_delta``)."""

    def __init__(self, sample_rate, num_steps, grid_step, target_alpha=None, target_delta=None, advantage=True):
        self.sample_rate = _v.one_number("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
        self.num_steps = _v.one_integer("num_steps", num_steps)
        self.grid_step = _v.grid_step(grid_step)
        self.target_alpha = (None if target_alpha is None
                             else _v.one_number("target_alpha", target_alpha, low=0.0, high=1.0))
        self.target_delta = (None if target_delta is None
                             else _v.one_number("target_delta", target_delta, low=0.0, high=1.0))
        self.advantage = advantage

    def __call__(self, noise_multiplier) -> PrivacyMetrics:
        pl = _dpsgd(noise_multiplier, self.sample_rate, self.num_steps, grid_step=self.grid_step)
        metrics = PrivacyMetrics()
        if self.advantage:
            metrics.advantage = _one(pl.advantage())
        if self.target_alpha is not None:
            metrics.alpha, metrics.beta = self.target_alpha, _one(pl.beta(self.target_alpha))
        if self.target_delta is not None:
            metrics.epsilon, metrics.delta = _one(pl.epsilon(self.target_delta)), self.target_delta
        return metrics

    def __repr__(self):
        return (f"{type(self).__name__}(sample_rate={self.sample_rate:g}, num_steps={self.num_steps}, "
                f"grid_step={self.grid_step:g}, target_alpha={self.target_alpha}, target_delta={self.target_delta})")


def create_dpsgd_evaluator(sample_rate, num_steps, grid_step=1e-4, target_alpha=None) -> PrivacyEvaluator:
    """noise_multiplier -> PrivacyMetrics of DP-SGD: the advantage (Algorithm 3), and beta at
    ``target_alpha`` (Algorithm 1) when given (needed for an err_rates target)."""
    return _DPSGDEvaluator(sample_rate, num_steps, grid_step, target_alpha=target_alpha)


def create_dpsgd_epsilon_evaluator(sample_rate, num_steps, target_delta, grid_step=1e-4) -> PrivacyEvaluator:
    """noise_multiplier -> PrivacyMetrics of DP-SGD with epsilon at ``target_delta``."""
    return _DPSGDEvaluator(sample_rate, num_steps, grid_step, target_delta=target_delta, advantage=False)


def _tolerance(name, new, old_names, values):
    """riskcal's handling of a renamed tolerance: the first deprecated name given wins."""
    for old, value in zip(old_names, values):
        if value is not None:
            warn_deprecated_param(old, name, stacklevel=4)
            return value
    return 1e-3 if new is None else new


def _bounds(noise_min, noise_max, mu_min, mu_max):
    if mu_min is not None:
        warn_deprecated_param("mu_min", "noise_min", stacklevel=4)
        noise_min = mu_min
    if mu_max is not None:
        warn_deprecated_param("mu_max", "noise_max", stacklevel=4)
        noise_max = mu_max
    lo = _v.one_number("noise_min", noise_min, low=0.0, low_open=True)
    hi = _v.one_number("noise_max", noise_max, low=0.0, low_open=True)
    if lo >= hi:
        raise ValueError(f"noise_min must be below noise_max, got {_v.shown(lo)} and {_v.shown(hi)}")
    return lo, hi


def _calibrate(what, target, metric, goal, tol, sample_rate, num_steps, grid_step, bounds):
    """calibrate_dpsgd with riskcal's outcomes: the noise, or CalibrationError."""
    tol = _v.one_number(f"{metric}_tol", tol, low=0.0)
    with np.errstate(divide="ignore"):
        res = calibrate_dpsgd(sample_rate=sample_rate, num_steps=num_steps, target=target, grid_step=grid_step,
                              noise_bounds=bounds, compare_standard=False, on_infeasible="mark")
    noise = np.array(res.noise_multiplier, dtype=np.float64, ndmin=1)
    status = np.array(res.status, dtype=object, ndmin=1)
    reason = np.array(res.reason, dtype=object, ndmin=1)
    bad = np.flatnonzero(status == "infeasible")
    if bad.size:
        raise CalibrationError(f"{what}: {reason[bad[0]]}")
    at_floor = np.flatnonzero((status == "met_at_bound") | (status == "met_without_noise"))
    if at_floor.size:
        shape = noise.shape
        p = np.broadcast_to(np.asarray(sample_rate, float), shape)[at_floor]
        t = np.broadcast_to(np.asarray(num_steps), shape)[at_floor]
        pl = _dpsgd(np.full(at_floor.size, bounds[0]), p, t, grid_step=grid_step)
        if metric == "advantage":
            value = np.asarray(pl.advantage(), float).reshape(-1)
        else:
            alpha = np.broadcast_to(np.asarray(target.alpha, float), shape)[at_floor]
            value = np.diagonal(np.asarray(pl.beta(alpha), float).reshape(at_floor.size, at_floor.size))
        g = np.broadcast_to(np.asarray(goal, float), shape)[at_floor]
        far = np.abs(value - g) > tol
        if np.any(far):
            i = int(np.flatnonzero(far)[0])
            raise CalibrationError(
                f"{what}: the target ({metric} {'<=' if metric == 'advantage' else '>='} {g[i]:g}) is met already at "
                f"noise_min={bounds[0]:g} ({metric} {value[i]:g} there, beyond the tolerance {tol:g}); lower noise_min"
            )
        noise[at_floor] = bounds[0]
    return scalar_or_array(noise.reshape(np.shape(res.noise_multiplier)))


def find_noise_multiplier_for_advantage(
    advantage,
    sample_rate,
    num_steps,
    grid_step=1e-4,
    advantage_tol=1e-3,
    noise_min=0.1,
    noise_max=50.0,
    advantage_error=None,
    mu_error=None,
    mu_min=None,
    mu_max=None,
):
    """Smallest DP-SGD noise multiplier in [noise_min, noise_max] whose attack advantage is
    at most ``advantage`` (Eq. 14), verified at ``grid_step``. riskcal's deprecated names
    ``advantage_error`` / ``mu_error`` (for ``advantage_tol``), ``mu_min`` / ``mu_max``
    are accepted with riskcal's DeprecationWarning."""
    tol = _tolerance("advantage_tol", advantage_tol, ("advantage_error", "mu_error"), (advantage_error, mu_error))
    bounds = _bounds(noise_min, noise_max, mu_min, mu_max)
    return _calibrate("find_noise_multiplier_for_advantage", _targets.Advantage(advantage), "advantage", advantage,
                      tol, sample_rate, num_steps, grid_step, bounds)


def find_noise_multiplier_for_err_rates(
    alpha,
    beta,
    sample_rate,
    num_steps,
    grid_step=1e-4,
    beta_tol=1e-3,
    noise_min=0.1,
    noise_max=50.0,
    beta_error=None,
    mu_error=None,
    mu_min=None,
    mu_max=None,
):
    """Smallest DP-SGD noise multiplier in [noise_min, noise_max] such that every attack with
    FPR ``alpha`` has FNR at least ``beta`` (Eq. 18), verified at ``grid_step``. riskcal's
    deprecated names ``beta_error`` / ``mu_error`` (for ``beta_tol``), ``mu_min`` /
    ``mu_max`` are accepted with riskcal's DeprecationWarning."""
    tol = _tolerance("beta_tol", beta_tol, ("beta_error", "mu_error"), (beta_error, mu_error))
    bounds = _bounds(noise_min, noise_max, mu_min, mu_max)
    return _calibrate("find_noise_multiplier_for_err_rates", _targets.ErrRates(alpha, beta), "beta", beta, tol,
                      sample_rate, num_steps, grid_step, bounds)


def get_advantage_for_dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=1e-4):
    """Largest TPR - FPR of any attack on DP-SGD (Algorithm 3)."""
    return _dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=grid_step).advantage()


def get_beta_for_dpsgd(noise_multiplier, sample_rate, num_steps, alpha, grid_step=1e-4):
    """FNR at FPR ``alpha`` of the best attack on DP-SGD (Algorithm 1, symmetrised)."""
    return _dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=grid_step).beta(alpha)
