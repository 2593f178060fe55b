"""dpax.events as a package: :func:`dpax.from_dp_event` and :func:`dpax.event_family` (a
family calibrated by dpax's batched search finds the noise dp-accounting's own search finds
with dpax as its accountant), ``import dpax`` without dp-accounting, and events or arguments
out of range refused loudly, by the event's field, with dp-accounting's UnsupportedEventError
for an event dpax does not read.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("dp_accounting")
from dp_accounting import dp_event as E  # noqa: E402
from dp_accounting import mechanism_calibration as mc  # noqa: E402
from dp_accounting.privacy_accountant import UnsupportedEventError  # noqa: E402

import dpax  # noqa: E402
from dpax.accountants import DpEventAccountant  # noqa: E402


def test_calibrate_dp_mechanism_with_dpax():
    """dp-accounting's own search, dpax as its accountant: the noise meets the target; dpax's
    batched search from the same event function finds the same noise."""
    make = lambda s: E.SelfComposedDpEvent(E.GaussianDpEvent(s), 10)
    fresh = lambda: DpEventAccountant(value_discretization_interval=5e-2)  # coarse: few kernel shapes
    noise = mc.calibrate_dp_mechanism(fresh, make, target_epsilon=2.0, target_delta=1e-5,
                                      bracket_interval=mc.ExplicitBracketInterval(2.0, 40.0), tol=1e-3)
    assert 1.99 <= fresh().compose(make(noise)).get_epsilon(1e-5) <= 2.0
    ours = dpax.calibrate(dpax.event_family(make, grid_step=5e-2), dpax.targets.Epsilon(2.0, 1e-5),
                          param_bounds=(2.0, 40.0))
    assert ours == pytest.approx(noise, rel=2e-3)
    assert fresh().compose(make(ours)).get_epsilon(1e-5) <= 2.0


def test_import_dpax_does_not_import_dp_accounting():
    code = "import sys, dpax; print('dp_accounting' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("event, error, words", [
    (E.GaussianDpEvent(-1.0), ValueError, "GaussianDpEvent.noise_multiplier"),
    (E.PoissonSampledDpEvent(1.5, E.GaussianDpEvent(1.0)), ValueError, "PoissonSampledDpEvent.sampling_probability"),
    (E.RandomizedResponseDpEvent(0.1, 0), ValueError, "RandomizedResponseDpEvent.num_buckets"),
    (E.DiscreteLaplaceDpEvent(1.0, 0.5), ValueError, "DiscreteLaplaceDpEvent.sensitivity"),
    (E.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [1.0]), ValueError, "same length"),
    (E.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.5, 0.6]), ValueError, "sum to 1"),
    (E.GaussianDpEvent("1.0"), TypeError, "GaussianDpEvent.noise_multiplier"),
    (E.SampledWithReplacementDpEvent(100, 10, E.GaussianDpEvent(1.0)), UnsupportedEventError,
     "SampledWithReplacementDpEvent"),
    (E.ComposedDpEvent([E.ZCDpEvent(0.1)]), UnsupportedEventError, "caused by subevent ZCDpEvent"),
])
def test_bad_events_fail_loudly(event, error, words):
    acct = DpEventAccountant()
    with pytest.raises(error, match=words):
        acct.compose(event)
    assert "runs=0" in repr(acct) and acct.ledger == E.NoOpDpEvent()  # nothing was counted
    with pytest.raises(error, match=words):
        dpax.from_dp_event(event)


def test_bad_arguments_fail_loudly():
    with pytest.raises(TypeError, match="event must be a dp_accounting DpEvent"):
        dpax.from_dp_event("GaussianDpEvent(1.0)")
    with pytest.raises(TypeError, match="make_event"):
        dpax.event_family(3.0)
    with pytest.raises(ValueError, match="empty list"):
        dpax.from_dp_event([])
