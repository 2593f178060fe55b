"""riskcal's generic calibration (``riskcal.calibration.core``): the parameter of any
mechanism at which a monotone privacy metric meets a target (Eq. 9 of Kulynych, Gomez,
Kaissis, du Pin Calmon and Troncoso, "Attack-aware noise calibration for differential
privacy", NeurIPS 2024), given an
evaluator ``parameter -> PrivacyMetrics``.

Targets (:class:`CalibrationTarget`): ``'advantage'`` (advantage <= target, Eq. 14),
``'err_rates'`` (beta at the target alpha >= target beta, Eq. 18), ``'epsilon_delta'``
(epsilon at the target delta <= target epsilon). ``CalibrationConfig.increasing`` says
whether the metric grows with the parameter. The search is a bisection with riskcal's two
tolerances (``target_tol`` on the metric, ``param_tol`` on the parameter); unlike riskcal,
the parameter returned always meets the target (riskcal's err_rates answer can be
``target_tol`` short of it), it is evaluated once per bisection step (riskcal twice), and
dpax kernels called by the evaluator share compiled shapes across the steps. A target not
met at the most private end of the bounds, or a tolerance not reached, raises
:class:`~dpax.compat.riskcal.CalibrationError` (a RuntimeError, as riskcal raises, and a
ValueError, as dpax does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ...._engine import grid as _grid
from .._core import bisect

__all__ = [
    "CalibrationConfig",
    "CalibrationResult",
    "CalibrationTarget",
    "PrivacyEvaluator",
    "PrivacyMetrics",
    "calibrate_parameter",
]


class PrivacyEvaluator(Protocol):
    """A function ``parameter_value -> PrivacyMetrics``."""

    def __call__(self, parameter_value: float, /) -> PrivacyMetrics:
        ...


@dataclass
class PrivacyMetrics:
    """Privacy metrics of one parameter value (fields not computed are None)."""

    advantage: float | None = None
    alpha: float | None = None
    beta: float | None = None
    epsilon: float | None = None
    delta: float | None = None
    metadata: dict | None = None

    def __post_init__(self):
        if self.metadata is None:
            self.metadata = {}


@dataclass
class CalibrationTarget:
    """The target: ``kind`` 'advantage' (``advantage``), 'err_rates' (``alpha``, ``beta``) or
    'epsilon_delta' (``epsilon``, ``delta``)."""

    kind: Literal["advantage", "err_rates", "epsilon_delta"]
    advantage: float | None = None
    alpha: float | None = None
    beta: float | None = None
    epsilon: float | None = None
    delta: float | None = None


@dataclass
class CalibrationConfig:
    """Search settings: whether the metric increases with the parameter, the bounds, the
    tolerances on the metric and on the parameter, and the most bisection steps."""

    increasing: bool = True
    param_min: float = 0.0
    param_max: float = 100.0
    target_tol: float = 1e-3
    param_tol: float = 1e-3
    max_iterations: int = 100


@dataclass
class CalibrationResult:
    """A calibrated parameter and the metrics there (``noise_multiplier`` is
    ``parameter_value``, for code written against the DP-SGD functions)."""

    parameter_value: float
    parameter_name: str = "noise_multiplier"
    achieved_advantage: float | None = None
    achieved_alpha: float | None = None
    achieved_beta: float | None = None
    achieved_epsilon: float | None = None
    achieved_delta: float | None = None
    converged: bool = True
    iterations: int = 0
    method: str = "generic"
    metadata: dict | None = None

    def __post_init__(self):
        if self.metadata is None:
            self.metadata = {}

    @property
    def noise_multiplier(self) -> float:
        """The calibrated parameter (riskcal's name for it in DP-SGD calibration)."""
        return self.parameter_value


def _check_probability(name, v):
    if not 0 <= v <= 1:
        raise ValueError(f"{name} must be in [0,1], got {v}")


def _validate_target(target: CalibrationTarget) -> None:
    if not isinstance(target, CalibrationTarget):
        raise TypeError(f"target must be a CalibrationTarget, got {type(target).__name__}")
    if target.kind == "advantage":
        if target.advantage is None:
            raise ValueError("advantage target requires advantage value")
        _check_probability("advantage", target.advantage)
    elif target.kind == "err_rates":
        if target.alpha is None or target.beta is None:
            raise ValueError("err_rates target requires both alpha and beta")
        _check_probability("alpha", target.alpha)
        _check_probability("beta", target.beta)
        if target.alpha + target.beta >= 1:
            raise ValueError(f"Invalid trade-off: alpha + beta = {target.alpha + target.beta} >= 1")
    elif target.kind == "epsilon_delta":
        if target.epsilon is None or target.delta is None:
            raise ValueError("epsilon_delta target requires both epsilon and delta")
        if not target.epsilon >= 0:
            raise ValueError(f"epsilon must be non-negative, got {target.epsilon}")
        _check_probability("delta", target.delta)
    else:
        raise ValueError(f"Unknown target kind: {target.kind!r} (use 'advantage', 'err_rates' or 'epsilon_delta')")


#: per target kind: (the PrivacyMetrics field searched, its target field, met when at most the target)
_METRIC = {
    "advantage": ("advantage", "advantage", True),
    "err_rates": ("beta", "beta", False),
    "epsilon_delta": ("epsilon", "epsilon", True),
}


def calibrate_parameter(
    evaluator: PrivacyEvaluator,
    target: CalibrationTarget,
    config: CalibrationConfig | None = None,
    parameter_name: str = "noise_multiplier",
) -> CalibrationResult:
    """The parameter in [config.param_min, config.param_max] at which ``evaluator``'s metric
    meets ``target`` with the least privacy (Eq. 9): the boundary of the target, within
    ``config.param_tol``, with the metric within ``config.target_tol`` of the target, on
    the side that meets it. Raises ValueError for an invalid target and
    :class:`~dpax.compat.riskcal.CalibrationError` when the target cannot be reached."""
    config = config or CalibrationConfig()
    if not isinstance(config, CalibrationConfig):
        raise TypeError(f"config must be a CalibrationConfig or None, got {type(config).__name__}")
    _validate_target(target)
    field, target_field, meet_below = _METRIC[target.kind]
    goal = float(getattr(target, target_field))

    def evaluate(x):
        metrics = evaluator(x)
        value = getattr(metrics, field, None)
        if value is None:
            raise ValueError(f"Evaluator must return {field} for {target.kind} target")
        return float(value), metrics

    with _grid.shared_lengths():  # dpax kernels reuse compiled shapes across the steps
        x, _, metrics, evaluations = bisect(
            evaluate, goal, (config.param_min, config.param_max), func_tol=float(config.target_tol),
            param_tol=float(config.param_tol), max_iter=int(config.max_iterations), increasing=bool(config.increasing),
            meet_below=meet_below, what=f"calibrate_parameter ({target.kind} target)",
        )
    result = CalibrationResult(parameter_value=x, parameter_name=parameter_name, converged=True,
                               iterations=evaluations, method="binary_search")
    if target.kind == "advantage":
        result.achieved_advantage, result.achieved_epsilon = metrics.advantage, metrics.epsilon
        result.achieved_delta = metrics.delta
    elif target.kind == "err_rates":
        result.achieved_alpha, result.achieved_beta = target.alpha, metrics.beta
        result.achieved_advantage = metrics.advantage
    else:
        result.achieved_epsilon, result.achieved_delta = metrics.epsilon, target.delta
    return result
