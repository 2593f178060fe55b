"""dpax.compat.riskcal.calibration.core: riskcal's generic calibration. Its dataclasses and
target checks as the real riskcal's; ``calibrate_parameter`` on the Gaussian mechanism
(closed forms: noise s is (1 / s)-GDP) for the three kinds of target, against the exact
answers and the real riskcal's (dpax's answer always meets the target)."""

from __future__ import annotations

import dataclasses
import warnings

import pytest
from scipy.stats import norm

import dpax
from dpax.compat.riskcal.calibration import core

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    rc_core = pytest.importorskip("riskcal.calibration.core")


class _Gaussian:
    """noise -> every metric of (1 / noise)-GDP, counting the calls."""

    def __init__(self, metrics, alpha=0.1, delta=1e-5):
        self.metrics, self.alpha, self.delta, self.calls = metrics, alpha, delta, 0

    def __call__(self, noise):
        self.calls += 1
        mu = 1.0 / noise
        values = {"advantage": float(dpax.gdp.advantage(mu)), "alpha": self.alpha,
                  "beta": float(dpax.gdp.tradeoff(mu, self.alpha)), "epsilon": float(dpax.gdp.epsilon(self.delta, mu)),
                  "delta": self.delta}
        return core.PrivacyMetrics(**{k: values[k] for k in self.metrics})


def test_dataclasses_as_riskcals():
    for name in ("PrivacyMetrics", "CalibrationTarget", "CalibrationConfig", "CalibrationResult"):
        ours, ref = dataclasses.fields(getattr(core, name)), dataclasses.fields(getattr(rc_core, name))
        assert [(f.name, f.default) for f in ours] == [(f.name, f.default) for f in ref], name
    # metadata: a dict of each instance's own
    a, b = core.PrivacyMetrics(), core.PrivacyMetrics()
    assert a.metadata == {} and a.metadata is not b.metadata
    result = core.CalibrationResult(parameter_value=1.5)
    assert result.noise_multiplier == 1.5 and result.metadata == {}


@pytest.mark.parametrize("target", [
    core.CalibrationTarget(kind="advantage"),
    core.CalibrationTarget(kind="advantage", advantage=1.5),
    core.CalibrationTarget(kind="err_rates", alpha=0.1),
    core.CalibrationTarget(kind="err_rates", alpha=-0.1, beta=0.5),
    core.CalibrationTarget(kind="err_rates", alpha=0.1, beta=2.0),
    core.CalibrationTarget(kind="err_rates", alpha=0.5, beta=0.5),
    core.CalibrationTarget(kind="epsilon_delta", epsilon=1.0),
    core.CalibrationTarget(kind="epsilon_delta", epsilon=-1.0, delta=1e-5),
    core.CalibrationTarget(kind="epsilon_delta", epsilon=1.0, delta=1.5),
])
def test_invalid_targets_are_refused_in_riskcals_words(target):
    evaluator = _Gaussian(("advantage", "alpha", "beta", "epsilon", "delta"))
    with pytest.raises(ValueError) as ours:
        core.calibrate_parameter(evaluator, target)
    with pytest.raises(ValueError) as ref:
        rc_core.calibrate_parameter(evaluator, rc_core.CalibrationTarget(**dataclasses.asdict(target)))
    assert str(ours.value) == str(ref.value)
    assert evaluator.calls == 0


def test_what_riskcal_does_not_check():
    evaluator = _Gaussian(("advantage",))
    with pytest.raises(ValueError, match="Unknown target kind: 'auc'"):
        core.calibrate_parameter(evaluator, core.CalibrationTarget(kind="auc"))
    with pytest.raises(TypeError, match="target must be a CalibrationTarget"):
        core.calibrate_parameter(evaluator, {"kind": "advantage", "advantage": 0.1})
    with pytest.raises(TypeError, match="config must be a CalibrationConfig or None"):
        core.calibrate_parameter(evaluator, core.CalibrationTarget(kind="advantage", advantage=0.1),
                                 config={"increasing": False})
    # an evaluator without the target's metric: riskcal's message
    with pytest.raises(ValueError, match="^Evaluator must return beta for err_rates target$"):
        core.calibrate_parameter(evaluator, core.CalibrationTarget(kind="err_rates", alpha=0.1, beta=0.5))


CONFIG = dict(param_min=0.05, param_max=50.0, target_tol=1e-4, param_tol=1e-4)


@pytest.mark.parametrize("kind,increasing,exact", [
    ("advantage", False, 1 / (2 * norm.ppf(0.6))),               # advantage 0.2: mu = 2 Phi^-1(0.6)
    ("err_rates", True, 1 / (norm.ppf(0.9) - norm.ppf(0.5))),    # FNR 0.5 at FPR 0.1: mu = Phi^-1(0.9) - Phi^-1(0.5)
    ("epsilon_delta", False, 1 / dpax.conversions.mu_from_epsilon_delta(1.0, 1e-5)),
])
def test_calibrate_parameter_meets_each_kind_of_target(kind, increasing, exact):
    # increasing: whether the metric grows with the noise (the FNR does; the advantage and epsilon fall)
    values = {"advantage": dict(advantage=0.2), "err_rates": dict(alpha=0.1, beta=0.5),
              "epsilon_delta": dict(epsilon=1.0, delta=1e-5)}[kind]
    everything = ("advantage", "alpha", "beta", "epsilon", "delta")
    evaluator, rc_evaluator = _Gaussian(everything), _Gaussian(everything)
    result = core.calibrate_parameter(evaluator, core.CalibrationTarget(kind=kind, **values),
                                      core.CalibrationConfig(increasing=increasing, **CONFIG), parameter_name="sigma")
    ref = rc_core.calibrate_parameter(rc_evaluator, rc_core.CalibrationTarget(kind=kind, **values),
                                      rc_core.CalibrationConfig(increasing=increasing, **CONFIG),
                                      parameter_name="sigma")
    # the least noise that meets the target, within param_tol above it, as riskcal finds it (whose search takes
    # the config's target_tol but its default param_tol, 1e-3)
    assert exact - 1e-9 <= result.parameter_value <= exact + 1e-4
    assert result.parameter_value == pytest.approx(ref.parameter_value, abs=2e-3)
    assert (result.parameter_name, result.method, result.converged) == ("sigma", "binary_search", True)
    # one evaluation per step, counted, and none after the search (riskcal evaluates more)
    assert result.iterations == evaluator.calls < rc_evaluator.calls
    at = evaluator(result.parameter_value)
    if kind == "advantage":
        assert result.achieved_advantage <= 0.2 and result.achieved_advantage == pytest.approx(0.2, abs=1e-4)
        assert (result.achieved_epsilon, result.achieved_delta) == (at.epsilon, at.delta)
        assert result.achieved_alpha is None and result.achieved_beta is None
    elif kind == "err_rates":
        assert result.achieved_beta >= 0.5 and result.achieved_beta == pytest.approx(0.5, abs=1e-4)
        assert (result.achieved_alpha, result.achieved_advantage) == (0.1, at.advantage)
    else:
        assert result.achieved_epsilon <= 1.0 and result.achieved_delta == 1e-5
        assert result.achieved_advantage is None and result.achieved_beta is None
