"""Shared pieces of :mod:`dpax.compat.riskcal`: the error class, argument helpers, and the
scalar bisection behind riskcal's generic calibration.

:class:`CalibrationError` is raised wherever riskcal raises ``RuntimeError`` for a target
it cannot reach, and dpax raises ``ValueError``: it subclasses both, so code written for
either library catches it.

:func:`bisect` is the search of riskcal's ``inverse_monotone_function`` and
``calibrate_parameter`` (a monotone metric of one parameter, a target, a tolerance on the
metric and one on the parameter), written on the calibration contract of Kulynych, Gomez,
Kaissis, du Pin Calmon and Troncoso, "Attack-aware noise calibration for differential
privacy" (NeurIPS 2024, Eq. 9): the answer is always an evaluated parameter that meets the target; the bracket
end that fails is never returned.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ...interop import from_dp_accounting
from ...privacy_loss import PrivacyLoss

#: the warning of each deprecated module (riskcal's words, dpax's module names)
DEPRECATED_MODULES = {
    "dpsgd": "The 'riskcal.dpsgd' module is deprecated and will be removed in v2.0.0 (dpax.compat.riskcal.dpsgd "
             "with it). Use 'dpax.compat.riskcal.calibration.dpsgd' for calibration functions and "
             "'dpax.compat.riskcal.accountants' for CTDAccountant instead.",
    "conversions": "The 'riskcal.conversions' module is deprecated and will be removed in v2.0.0 "
                   "(dpax.compat.riskcal.conversions with it). Use 'dpax.compat.riskcal.analysis' instead.",
    "blackbox": "The 'riskcal.blackbox' module is deprecated and will be removed in v2.0.0 "
                "(dpax.compat.riskcal.blackbox with it). Use 'dpax.compat.riskcal.calibration.blackbox' instead.",
    "plrv": "The 'riskcal.plrv' module is deprecated and will be removed in v2.0.0 (dpax.compat.riskcal.plrv "
            "with it). Use 'dpax.compat.riskcal.analysis' instead.",
}


class CalibrationError(RuntimeError, ValueError):
    """A target that cannot be reached in the given bounds (or tolerance).

    riskcal raises ``RuntimeError`` here and dpax ``ValueError``; this is both."""


def as_loss(pld: Any, name: str = "pld", single: bool = True) -> PrivacyLoss:
    """A :class:`dpax.PrivacyLoss` from a dp-accounting PLD or a PrivacyLoss (a batch of
    them only where ``single`` is False)."""
    if isinstance(pld, PrivacyLoss):
        pl = pld
    elif hasattr(pld, "_pmf_remove") and hasattr(pld, "_pmf_add"):
        pl = from_dp_accounting(pld)
    else:
        raise TypeError(f"{name} must be a dp_accounting PrivacyLossDistribution or a dpax.PrivacyLoss, "
                        f"got {type(pld).__name__}")
    if single and pl.batch_shape:
        raise ValueError(f"{name} must be a single privacy loss, got a batch of shape {pl.batch_shape}")
    return pl


def scalar_or_array(a):
    """A Python float for a 0-d result, else a float64 array."""
    a = np.asarray(a, dtype=np.float64)
    return float(a) if a.ndim == 0 else a


def is_python_scalar(x) -> bool:
    """riskcal's notion of a scalar argument (``_ensure_array``): an int or a float."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def warn_deprecated_param(old: str, new: str, stacklevel: int = 3) -> None:
    """riskcal's warning for a renamed keyword argument."""
    warnings.warn(f"Parameter '{old}' is deprecated and will be removed in v2.0.0. Use '{new}' instead.",
                  DeprecationWarning, stacklevel=stacklevel)


def alpha_argument(alpha, alphas, stacklevel: int = 4):
    """``alpha``, or riskcal's deprecated ``alphas`` (with its warning); exactly one."""
    if alpha is None and alphas is None:
        raise ValueError("Must specify alpha.")
    if alpha is not None and alphas is not None:
        raise ValueError("Must pass either alpha or alphas.")
    if alphas is not None:
        warnings.warn("Parameter 'alphas' is deprecated and will be removed in v2.0.0. Use 'alpha' instead.",
                      DeprecationWarning, stacklevel=stacklevel)
        return alphas
    return alpha


#: a bracket this much narrower than ``param_tol`` that still misses the metric tolerance
#: will not meet it: the metric jumps at the crossing, or the target is met at a bound
COLLAPSE = 1e-6


def bisect(f: Callable[[float], tuple[float, Any]], target: float, bounds, *, func_tol: float, param_tol: float,
           max_iter: int, increasing: bool, meet_below: bool, what: str) -> tuple[float, float, Any, int]:
    """Bisection for the boundary of a monotone target, returning the end that meets it.

    ``f(x) -> (metric, payload)``; the target is met where ``metric <= target``
    (``meet_below``) or ``metric >= target``. ``increasing`` says how the metric moves
    with x, so the meeting end of ``bounds`` is known; it is evaluated first, and if it
    fails the target cannot be met in ``bounds``. The other end is never evaluated (a
    parameter bound like 0 need not be valid input). Stops, as riskcal's search does, once
    the bracket is within ``param_tol`` and the metric at its meeting end within
    ``func_tol`` of the target; raises :class:`CalibrationError` if that does not happen
    within ``max_iter`` bisections. Returns (x, metric, payload, evaluations).
    """
    lo, hi = float(bounds[0]), float(bounds[1])
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"{what}: bounds must be finite with lower < upper, got ({lo:g}, {hi:g})")
    for name, v in (("target_tol", func_tol), ("param_tol", param_tol)):
        if not (v >= 0 and math.isfinite(v)):
            raise ValueError(f"{what}: {name} must be a finite number >= 0, got {v!r}")
    if int(max_iter) < 0:
        raise ValueError(f"{what}: max_iterations must be >= 0, got {max_iter!r}")

    def meets(v):
        return bool(v <= target) if meet_below else bool(v >= target)

    good_high = meet_below != increasing
    x_good, x_bad = (hi, lo) if good_high else (lo, hi)
    v_good, p_good = f(x_good)
    evaluations = 1
    sense = "<=" if meet_below else ">="
    if not meets(v_good):
        raise CalibrationError(
            f"{what}: the target (metric {sense} {target:g}) is not met even at {x_good:g}, the most private end of "
            f"the bounds (metric {v_good:g} there); widen the bounds or relax the target"
        )
    for _ in range(int(max_iter) + 1):
        width = abs(x_good - x_bad)
        if width <= param_tol and abs(v_good - target) <= func_tol:
            return x_good, v_good, p_good, evaluations
        if evaluations > max_iter or width <= COLLAPSE * max(param_tol, 1e-300):
            break
        x_mid = 0.5 * (x_good + x_bad)
        v_mid, p_mid = f(x_mid)
        evaluations += 1
        if meets(v_mid):
            x_good, v_good, p_good = x_mid, v_mid, p_mid
        else:
            x_bad = x_mid
    side = "lower" if good_high else "upper"
    raise CalibrationError(
        f"{what}: could not reach the tolerance: metric {v_good:g} at {x_good:g} (target {sense} {target:g}, "
        f"tolerance {func_tol:g}), bracket [{min(x_good, x_bad):g}, {max(x_good, x_bad):g}] after {evaluations} "
        f"evaluations. The target may already be met at the {side} bound, or the metric jumps at the crossing: "
        f"move the {side} bound or increase the tolerance"
    )
