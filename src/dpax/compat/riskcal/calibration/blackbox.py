"""riskcal's ``riskcal.calibration.blackbox``: calibration through any Opacus-style
accountant class (``acct = accountant(); acct.step(noise_multiplier=, sample_rate=)``
``num_steps`` times; ``acct.get_epsilon(delta=, **accountant_kwargs)``), Appendix A of
Kulynych, Gomez, Kaissis, du Pin Calmon and Troncoso, "Attack-aware noise calibration for
differential privacy" (NeurIPS 2024), for mechanisms known only through (epsilon, delta).

* (epsilon, delta): the smallest noise in [mu_min, mu_max] whose epsilon at ``delta`` is at
  most ``epsilon`` (bisection to within ``eps_error`` of it and 1e-3 in the noise, or
  ``mu_error`` if finer);
* advantage eta: the same with (0, eta), since the advantage is delta(0) (Prop. 2.6);
* error rates (alpha, beta): (epsilon, delta)-DP implies FNR >= beta at FPR alpha when
  epsilon <= eps(delta) = :func:`~dpax.compat.riskcal.analysis.get_epsilon_from_err_rates`
  (Eq. 20 / Dong et al. Eq. 5), so the noise is minimised over delta in
  [delta_error, 1 - alpha - beta] (bounded Brent search, to ``delta_error``) of the
  (eps(delta), delta) calibration. Every candidate meets the target, so the answer does
  whatever the minimisation finds; it returns :class:`CalibrationResult` with the delta
  used and its epsilon.

Negative epsilons reported by an accountant are taken as 0 (pessimistic). One accountant
per noise value is composed and kept for the whole search (the deltas share it), and dpax
accountants reuse compiled kernel shapes across the search. Unreachable targets raise
:class:`~dpax.compat.riskcal.CalibrationError` (RuntimeError and ValueError).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

from .... import conversions as _conv
from ...._engine import grid as _grid
from ...._engine import validation as _v
from .._core import CalibrationError, bisect
from ..analysis.conversions import get_epsilon_from_err_rates
from .core import CalibrationConfig, CalibrationTarget, PrivacyEvaluator, PrivacyMetrics, calibrate_parameter

__all__ = [
    "CalibrationConfig",
    "CalibrationResult",
    "CalibrationTarget",
    "PrivacyEvaluator",
    "PrivacyMetrics",
    "calibrate_parameter",
    "create_accountant_evaluator",
    "find_noise_multiplier_for_advantage",
    "find_noise_multiplier_for_epsilon_delta",
    "find_noise_multiplier_for_err_rates",
]

#: composed accountants kept per search (one per noise value)
KEEP = 256
#: riskcal's tolerance on the noise in accountant calibration (its ``mu_error`` is not used)
NOISE_TOL = 1e-3


@dataclass
class CalibrationResult:
    """Outcome of error-rate calibration through an accountant: the noise, and the
    (epsilon, delta) it was calibrated to."""

    noise_multiplier: float
    calibration_epsilon: float
    calibration_delta: float


class _Accountants:
    """``accountant`` composed for ``num_steps`` steps at each noise value asked for
    (the last KEEP kept)."""

    def __init__(self, accountant, sample_rate, num_steps, accountant_kwargs) -> None:
        if not callable(accountant):
            raise TypeError(f"accountant must be an accountant class (called with no arguments), got {accountant!r}")
        self.accountant = accountant
        self.sample_rate = _v.one_number("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
        self.num_steps = _v.one_integer("num_steps", num_steps)
        self.kwargs = accountant_kwargs
        self.kept: OrderedDict = OrderedDict()

    def composed(self, noise_multiplier: float):
        acct = self.kept.get(noise_multiplier)
        if acct is None:
            acct = self.accountant()
            for _ in range(self.num_steps):
                acct.step(noise_multiplier=noise_multiplier, sample_rate=self.sample_rate)
            self.kept[noise_multiplier] = acct
            if len(self.kept) > KEEP:
                self.kept.popitem(last=False)
        else:
            self.kept.move_to_end(noise_multiplier)
        return acct

    def epsilon(self, noise_multiplier: float, delta: float) -> float:
        eps = float(self.composed(noise_multiplier).get_epsilon(delta=delta, **self.kwargs))
        if math.isnan(eps):
            raise ValueError(f"the accountant returned epsilon NaN at noise_multiplier={noise_multiplier:g}, "
                             f"delta={delta:g}")
        return max(eps, 0.0)

    def calibrate(self, epsilon, delta, eps_error, param_tol, bounds, what):
        """Smallest noise in ``bounds`` with epsilon(delta) <= ``epsilon`` (see module docstring)."""
        x, _, _, _ = bisect(lambda w: (self.epsilon(w, delta), None), epsilon, bounds, func_tol=eps_error,
                            param_tol=param_tol, max_iter=100, increasing=False, meet_below=True, what=what)
        return x


def _search_settings(eps_error, mu_error, mu_min, mu_max):
    eps_error = _v.one_number("eps_error", eps_error, low=0.0)
    mu_error = _v.one_number("mu_error", mu_error, low=0.0, low_open=True)
    lo = _v.one_number("mu_min", mu_min, low=0.0)
    hi = _v.one_number("mu_max", mu_max, low=0.0, low_open=True)
    if lo >= hi:
        raise ValueError(f"mu_min must be below mu_max, got {_v.shown(lo)} and {_v.shown(hi)}")
    return eps_error, min(mu_error, NOISE_TOL), (lo, hi)


def create_accountant_evaluator(accountant_class, sample_rate, num_steps, target_delta=None, target_alpha=None,
                                **accountant_kwargs) -> PrivacyEvaluator:
    """noise_multiplier -> PrivacyMetrics from an accountant class: epsilon at
    ``target_delta``, and with ``target_alpha`` too the FNR bound of that (epsilon, delta)
    at it (Dong et al. Eq. 5). ``accountant_kwargs`` go to ``get_epsilon``."""
    accountants = _Accountants(accountant_class, sample_rate, num_steps, accountant_kwargs)
    delta = None if target_delta is None else _v.one_number("target_delta", target_delta, low=0.0, high=1.0)
    alpha = None if target_alpha is None else _v.one_number("target_alpha", target_alpha, low=0.0, high=1.0)

    def evaluator(noise_multiplier: float) -> PrivacyMetrics:
        metrics = PrivacyMetrics()
        if delta is not None:
            eps = accountants.epsilon(noise_multiplier, delta)
            metrics.epsilon, metrics.delta = eps, delta
            if alpha is not None:
                metrics.alpha, metrics.beta = alpha, float(_conv.epsilon_delta_tradeoff(eps, delta, alpha))
        return metrics

    return evaluator


def find_noise_multiplier_for_epsilon_delta(accountant, sample_rate, num_steps, epsilon, delta, eps_error=0.001,
                                            mu_error=0.1, mu_min=0.05, mu_max=100.0, **accountant_kwargs) -> float:
    """Smallest noise multiplier in [mu_min, mu_max] that the accountant finds
    (``epsilon``, ``delta``)-DP after ``num_steps`` steps at ``sample_rate``."""
    e = _v.one_number("epsilon", epsilon, low=0.0)
    d = _v.one_number("delta", delta, low=0.0, high=1.0)
    eps_error, param_tol, bounds = _search_settings(eps_error, mu_error, mu_min, mu_max)
    accountants = _Accountants(accountant, sample_rate, num_steps, accountant_kwargs)
    with _grid.shared_lengths():
        return accountants.calibrate(e, d, eps_error, param_tol, bounds, "find_noise_multiplier_for_epsilon_delta")


def find_noise_multiplier_for_advantage(accountant, advantage, sample_rate, num_steps, eps_error=0.001, mu_error=0.1,
                                        mu_min=0.05, mu_max=100.0, **accountant_kwargs) -> float:
    """Smallest noise multiplier in [mu_min, mu_max] with attack advantage at most
    ``advantage``: (0, advantage)-DP (Prop. 2.6)."""
    a = _v.one_number("advantage", advantage, low=0.0, high=1.0)
    return find_noise_multiplier_for_epsilon_delta(accountant, sample_rate, num_steps, 0.0, a, eps_error=eps_error,
                                                   mu_error=mu_error, mu_min=mu_min, mu_max=mu_max, **accountant_kwargs)


def find_noise_multiplier_for_err_rates(accountant, alpha, beta, sample_rate, num_steps, delta_error=0.01,
                                        eps_error=0.001, mu_min=0.05, mu_max=100.0, method="bounded",
                                        **accountant_kwargs) -> CalibrationResult:
    """Smallest noise multiplier found such that every attack has FNR >= ``beta`` at FPR
    ``alpha``, through (eps(delta), delta)-DP minimised over delta (module docstring).
    ``method``: 'bounded' (the only one, as in riskcal)."""
    a = _v.one_number("alpha", alpha, low=0.0, high=1.0)
    b = _v.one_number("beta", beta, low=0.0, high=1.0)
    if a + b >= 1:
        raise ValueError(f"The guarantees are vacuous when alpha + beta >= 1. Got alpha={a!r}, beta={b!r}")
    delta_error = _v.one_number("delta_error", delta_error, low=0.0, low_open=True)
    max_delta = 1.0 - a - b
    if max_delta < delta_error:
        raise ValueError(f"delta_error={delta_error:g} is above 1 - alpha - beta = {max_delta:g}, the largest delta "
                         f"that can give these error rates; lower delta_error")
    if method != "bounded":
        raise ValueError(f"Unknown optimization method: {method!r} (only 'bounded' is supported)")
    eps_error, param_tol, bounds = _search_settings(eps_error, 0.1, mu_min, mu_max)
    accountants = _Accountants(accountant, sample_rate, num_steps, accountant_kwargs)
    found = {}

    def noise_for(delta):
        eps = float(get_epsilon_from_err_rates(delta, a, b))
        try:
            noise = accountants.calibrate(eps, delta, eps_error, param_tol, bounds,
                                          "find_noise_multiplier_for_err_rates")
        except CalibrationError:
            noise = math.inf
        found[float(delta)] = noise
        return noise

    with _grid.shared_lengths():
        _minimize_scalar()(noise_for, bounds=(delta_error, max_delta), method="bounded", options={"xatol": delta_error})
    delta, noise = min(found.items(), key=lambda kv: (kv[1], kv[0]))
    if not math.isfinite(noise):
        raise CalibrationError(
            f"find_noise_multiplier_for_err_rates: no noise in [{bounds[0]:g}, {bounds[1]:g}] gives FNR >= {b:g} at "
            f"FPR {a:g} through (epsilon, delta)-DP for any delta tried in [{delta_error:g}, {max_delta:g}]; raise "
            f"mu_max or relax the target"
        )
    return CalibrationResult(noise_multiplier=noise, calibration_epsilon=float(get_epsilon_from_err_rates(delta, a, b)),
                             calibration_delta=delta)


def _minimize_scalar():
    """scipy.optimize.minimize_scalar, imported on use (``import dpax`` stays light)."""
    from scipy.optimize import minimize_scalar

    return minimize_scalar
