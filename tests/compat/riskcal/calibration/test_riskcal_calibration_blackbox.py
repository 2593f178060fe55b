"""dpax.compat.riskcal.calibration.blackbox: calibration through an Opacus-style accountant
class, on accountants with closed-form answers (no kernels): the Gaussian mechanism's exact
epsilon(delta), against the exact noise and the real riskcal's evaluator and search; the
accountants it composes and keeps; its checks of the arguments."""

from __future__ import annotations

import math
import warnings

import pytest
from scipy.stats import norm

import dpax
import dpax.compat.riskcal as riskcal
from dpax.compat.riskcal import CalibrationError
from dpax.compat.riskcal.calibration import blackbox

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    rc_blackbox = pytest.importorskip("riskcal.calibration.blackbox")


class _GDPAccountant:
    """An accountant for the Gaussian mechanism with the exact epsilon(delta) of (1 / sigma)-GDP."""

    def step(self, *, noise_multiplier, sample_rate):
        self.mu = 1.0 / noise_multiplier

    def get_epsilon(self, delta):
        return dpax.gdp.epsilon(delta, self.mu)


def test_blackbox_calibration_on_an_exact_accountant():
    bb = riskcal.calibration.blackbox
    # epsilon-delta: the analytic Gaussian mechanism
    noise = bb.find_noise_multiplier_for_epsilon_delta(_GDPAccountant, 1.0, 1, epsilon=1.0, delta=1e-5,
                                                       eps_error=1e-6)
    exact = 1.0 / dpax.conversions.mu_from_epsilon_delta(1.0, 1e-5)
    assert exact <= noise <= exact + 1e-3
    # advantage via (0, eta): Corollary B.3
    noise = bb.find_noise_multiplier_for_advantage(_GDPAccountant, 0.2, 1.0, 1)
    assert 1 / (2 * norm.ppf(0.6)) <= noise <= 1 / (2 * norm.ppf(0.6)) + 1e-3
    # error rates: never below the exact noise, and the (epsilon, delta) returned implies the target
    res = bb.find_noise_multiplier_for_err_rates(_GDPAccountant, alpha=0.1, beta=0.5, sample_rate=1.0, num_steps=1)
    exact = 1.0 / (norm.ppf(0.9) - norm.ppf(0.5))
    assert exact <= res.noise_multiplier <= exact + 0.02
    assert dpax.gdp.epsilon(res.calibration_delta, 1 / res.noise_multiplier) <= res.calibration_epsilon
    assert riskcal.analysis.get_beta_from_adp(res.calibration_epsilon, res.calibration_delta, 0.1) >= 0.5 - 1e-9
    with pytest.raises(ValueError, match="vacuous"):
        bb.find_noise_multiplier_for_err_rates(_GDPAccountant, alpha=0.5, beta=0.5, sample_rate=1.0, num_steps=1)
    with pytest.raises(ValueError, match="method"):
        bb.find_noise_multiplier_for_err_rates(_GDPAccountant, 0.1, 0.5, 1.0, 1, method="golden")


class _CountingAccountant(_GDPAccountant):
    """The exact accountant, counting the instances, steps and queries (and the query's keyword arguments)."""

    made = steps = queries = 0
    kwargs: dict = {}
    shift = 0.0

    def __init__(self):
        type(self).made += 1

    def step(self, *, noise_multiplier, sample_rate):
        assert sample_rate == 0.5
        type(self).steps += 1
        super().step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)

    def get_epsilon(self, delta, **kwargs):
        type(self).queries += 1
        type(self).kwargs = kwargs
        return super().get_epsilon(delta) + self.shift


def _counting(shift=0.0):
    return type("Counting", (_CountingAccountant,), {"made": 0, "steps": 0, "queries": 0, "kwargs": {},
                                                     "shift": shift})


def test_evaluator_as_riskcals():
    ours = blackbox.create_accountant_evaluator(_GDPAccountant, 1.0, 1, target_delta=1e-5, target_alpha=0.1)
    ref = rc_blackbox.create_accountant_evaluator(_GDPAccountant, 1.0, 1, target_delta=1e-5, target_alpha=0.1)
    for noise in (0.5, 1.0, 3.0):
        m, r = ours(noise), ref(noise)
        assert m.epsilon == pytest.approx(r.epsilon, rel=1e-12) and m.delta == r.delta == 1e-5
        assert m.alpha == r.alpha == 0.1 and m.beta == pytest.approx(r.beta, abs=1e-12)
        assert m.advantage is None
    # without a delta there is nothing to ask the accountant
    m = blackbox.create_accountant_evaluator(_GDPAccountant, 1.0, 1, target_alpha=0.1)(1.0)
    assert (m.epsilon, m.delta, m.alpha, m.beta) == (None, None, None, None)


def test_accountants_composed_once_per_noise_and_given_the_kwargs():
    acct = _counting()
    evaluator = blackbox.create_accountant_evaluator(acct, 0.5, 3, target_delta=1e-5, target_alpha=0.1, extra=7)
    first = evaluator(2.0)
    again = evaluator(2.0)
    assert (acct.made, acct.steps) == (1, 3)  # one accountant for noise 2, stepped num_steps times, kept
    assert acct.queries == 2 and acct.kwargs == {"extra": 7}
    assert first == again
    evaluator(3.0)
    assert (acct.made, acct.steps) == (2, 6)


def test_negative_epsilon_is_zero_and_nan_is_refused():
    low = blackbox.create_accountant_evaluator(_counting(shift=-100.0), 0.5, 1, target_delta=1e-5)
    assert low(1.0).epsilon == 0.0  # pessimistic: an accountant's negative epsilon counts as 0
    nan = blackbox.create_accountant_evaluator(_counting(shift=math.nan), 0.5, 1, target_delta=1e-5)
    with pytest.raises(ValueError, match="epsilon NaN at noise_multiplier=1"):
        nan(1.0)


def test_the_search_against_riskcals():
    ours = blackbox.find_noise_multiplier_for_epsilon_delta(_GDPAccountant, 1.0, 1, epsilon=2.0, delta=1e-5)
    ref = rc_blackbox.find_noise_multiplier_for_epsilon_delta(_GDPAccountant, 1.0, 1, epsilon=2.0, delta=1e-5)
    exact = 1.0 / dpax.conversions.mu_from_epsilon_delta(2.0, 1e-5)
    assert exact <= ours <= exact + 1e-3  # dpax: never below; riskcal's is within its tolerances of it
    assert ours == pytest.approx(ref, abs=2e-3)
    ours = blackbox.find_noise_multiplier_for_advantage(_GDPAccountant, 0.3, 1.0, 1)
    ref = rc_blackbox.find_noise_multiplier_for_advantage(_GDPAccountant, 0.3, 1.0, 1)
    assert dpax.gdp.advantage(1 / ours) <= 0.3 and ours == pytest.approx(ref, abs=2e-3)


def test_arguments_and_unreachable_targets():
    with pytest.raises(TypeError, match="accountant must be an accountant class"):
        blackbox.find_noise_multiplier_for_epsilon_delta(_GDPAccountant(), 1.0, 1, epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="mu_min must be below mu_max"):
        blackbox.find_noise_multiplier_for_epsilon_delta(_GDPAccountant, 1.0, 1, epsilon=1.0, delta=1e-5, mu_min=5.0,
                                                         mu_max=2.0)
    with pytest.raises(ValueError, match="delta_error=0.3 is above 1 - alpha - beta"):
        blackbox.find_noise_multiplier_for_err_rates(_GDPAccountant, 0.4, 0.4, 1.0, 1, delta_error=0.3)
    with pytest.raises(CalibrationError, match="not met even at 2"):
        blackbox.find_noise_multiplier_for_epsilon_delta(_GDPAccountant, 1.0, 1, epsilon=0.1, delta=1e-5, mu_max=2.0)
    with pytest.raises(CalibrationError, match=r"no noise in \[0.05, 2\]"):
        blackbox.find_noise_multiplier_for_err_rates(_GDPAccountant, 0.1, 0.85, 1.0, 1, mu_max=2.0)
    # the result type, and riskcal's name for it in the calibration package
    assert riskcal.calibration.BlackboxCalibrationResult is blackbox.CalibrationResult
