"""dpax.compat.riskcal._core: the error class, the argument helpers, the deprecation messages
(against the real riskcal's), and ``bisect``, the search behind riskcal's generic calibration
(the answer is an evaluated parameter that meets the target; the failing bracket end is never
evaluated). No kernels: closed-form metrics and a hand-made privacy loss."""

from __future__ import annotations

import importlib
import math
import re
import warnings

import numpy as np
import pytest

from dpax.compat.riskcal import _core
from dpax.compat.riskcal._core import (
    COLLAPSE,
    DEPRECATED_MODULES,
    CalibrationError,
    alpha_argument,
    as_loss,
    bisect,
    is_python_scalar,
    scalar_or_array,
    warn_deprecated_param,
)
from dpax.privacy_loss import PrivacyLoss


def _riskcal(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pytest.importorskip(module)


class _Recorder:
    """f(x) -> (metric(x), x), remembering every x evaluated."""

    def __init__(self, metric):
        self.metric, self.calls = metric, []

    def __call__(self, x):
        self.calls.append(x)
        return self.metric(x), ("payload", x)


# -- bisect ------------------------------------------------------------------------------------


@pytest.mark.parametrize("increasing,meet_below,metric,target,exact", [
    (True, True, lambda x: x * x, 2.0, math.sqrt(2)),       # met at x <= sqrt 2: the lower end meets
    (False, True, lambda x: 1.0 / x, 0.5, 2.0),             # met at x >= 2: the upper end meets
    (False, False, lambda x: 1.0 / x, 0.5, 2.0),            # met at x <= 2 (metric >= target)
    (True, False, lambda x: x * x, 2.0, math.sqrt(2)),      # met at x >= sqrt 2
])
def test_bisect_returns_the_evaluated_end_that_meets_the_target(increasing, meet_below, metric, target, exact):
    f = _Recorder(metric)
    bounds = (0.25, 4.0)
    x, value, payload, evaluations = bisect(f, target, bounds, func_tol=1e-9, param_tol=1e-9, max_iter=100,
                                            increasing=increasing, meet_below=meet_below, what="test")
    meets = value <= target if meet_below else value >= target
    assert meets and value == metric(x) and payload == ("payload", x)
    assert abs(x - exact) <= 1e-9 and abs(value - target) <= 1e-9
    # on the meeting side of the crossing
    good_high = meet_below != increasing
    assert (x >= exact) if good_high else (x <= exact)
    # the meeting end is evaluated first, the other end never; every evaluation counted
    assert f.calls[0] == (bounds[1] if good_high else bounds[0])
    assert (bounds[0] if good_high else bounds[1]) not in f.calls
    assert evaluations == len(f.calls)


def test_bisect_stops_once_both_tolerances_hold():
    f = _Recorder(lambda x: x)
    # the metric within 0.1 of 0.5 and the bracket within 0.25: a few evaluations, not 100
    x, value, _, evaluations = bisect(f, 0.5, (0.0, 1.0), func_tol=0.1, param_tol=0.25, max_iter=100,
                                      increasing=True, meet_below=True, what="test")
    assert value <= 0.5 and 0.5 - value <= 0.1 and evaluations == len(f.calls) <= 4
    # the good end already meets both tolerances: one evaluation
    x, value, _, evaluations = bisect(f, 0.5, (0.45, 0.5), func_tol=0.1, param_tol=0.1, max_iter=100,
                                      increasing=True, meet_below=True, what="test")
    assert (x, evaluations) == (0.45, 1)


def test_bisect_raises_calibration_error_when_the_target_cannot_be_met():
    # not met even at the most private end
    f = _Recorder(lambda x: x)
    with pytest.raises(CalibrationError, match="test: the target .* is not met even at 1"):
        bisect(f, 0.5, (1.0, 2.0), func_tol=1e-3, param_tol=1e-3, max_iter=100, increasing=True, meet_below=True,
               what="test")
    assert f.calls == [1.0]
    # a jump at the crossing: the metric tolerance is never reached; the search stops once the bracket
    # has collapsed (COLLAPSE * param_tol), far before max_iter
    f = _Recorder(lambda x: 0.0 if x < 0.3 else 10.0)
    with pytest.raises(CalibrationError, match="could not reach the tolerance"):
        bisect(f, 5.0, (0.0, 1.0), func_tol=1e-3, param_tol=1e-3, max_iter=1000, increasing=True, meet_below=True,
               what="test")
    assert len(f.calls) == 1 + math.ceil(math.log2(1.0 / (COLLAPSE * 1e-3)))  # the first end, then 30 halvings
    # max_iter bisections are not enough
    with pytest.raises(CalibrationError, match="after 3 evaluations"):
        bisect(lambda x: (x, None), 0.5, (0.0, 1.0), func_tol=1e-9, param_tol=1e-9, max_iter=2, increasing=True,
               meet_below=True, what="test")


def test_bisect_checks_its_settings():
    f = lambda x: (x, None)
    for bounds in [(1.0, 1.0), (2.0, 1.0), (0.0, math.inf), (math.nan, 1.0)]:
        with pytest.raises(ValueError, match="bounds must be finite"):
            bisect(f, 0.5, bounds, func_tol=1e-3, param_tol=1e-3, max_iter=10, increasing=True, meet_below=True,
                   what="test")
    with pytest.raises(ValueError, match="target_tol"):
        bisect(f, 0.5, (0, 1), func_tol=-1.0, param_tol=1e-3, max_iter=10, increasing=True, meet_below=True,
               what="test")
    with pytest.raises(ValueError, match="param_tol"):
        bisect(f, 0.5, (0, 1), func_tol=1e-3, param_tol=math.nan, max_iter=10, increasing=True, meet_below=True,
               what="test")
    with pytest.raises(ValueError, match="max_iterations"):
        bisect(f, 0.5, (0, 1), func_tol=1e-3, param_tol=1e-3, max_iter=-1, increasing=True, meet_below=True,
               what="test")


# -- the error class and the helpers ------------------------------------------------------------


def test_calibration_error_is_caught_as_either_library_raises():
    assert issubclass(CalibrationError, RuntimeError) and issubclass(CalibrationError, ValueError)
    for kind in (RuntimeError, ValueError):
        with pytest.raises(kind):
            raise CalibrationError("x")


def _randomized_response():
    e = math.e
    return PrivacyLoss(np.array([e / (1 + e), 0.0, 1 / (1 + e)]), np.array([1 / (1 + e), 0.0, e / (1 + e)]),
                       np.int64(-1), 0.0, 0.0, 1.0, "randomized response")


def test_as_loss_takes_a_privacy_loss_or_a_dp_accounting_pld():
    _riskcal("dp_accounting.pld.privacy_loss_distribution")
    pl = _randomized_response()
    assert as_loss(pl) is pl
    read = as_loss(pl.to_dp_accounting())
    assert isinstance(read, PrivacyLoss)
    np.testing.assert_allclose(np.asarray(read.pmf_y)[np.asarray(read.pmf_y) > 0], [1 / (1 + math.e),
                                                                                    math.e / (1 + math.e)], rtol=1e-12)
    with pytest.raises(TypeError, match="pld must be a dp_accounting PrivacyLossDistribution or a dpax.PrivacyLoss, "
                                        "got float"):
        as_loss(0.5)
    with pytest.raises(TypeError, match="^loss must"):
        as_loss("pld", name="loss")
    batch = PrivacyLoss(np.tile(pl.pmf_x, (2, 1)), np.tile(pl.pmf_y, (2, 1)), np.array([-1, -1]), np.zeros(2),
                        np.zeros(2), 1.0, "two", batch_shape=(2,))
    with pytest.raises(ValueError, match=r"single privacy loss, got a batch of shape \(2,\)"):
        as_loss(batch)
    assert as_loss(batch, single=False) is batch


def test_scalar_helpers_match_riskcal():
    assert type(scalar_or_array(np.float32(0.5))) is float and scalar_or_array(np.array(2)) == 2.0
    out = scalar_or_array([1, 2])
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.tolist() == [1.0, 2.0]
    # riskcal's scalar test (utils._ensure_array): an int or a float, NumPy floats included
    utils = _riskcal("riskcal.utils")
    for x in (1, 0.5, np.float64(0.5), np.int64(1), np.array(0.5), [0.5], (0.5,)):
        assert is_python_scalar(x) == utils._ensure_array(x)[1], x
    assert not is_python_scalar(True)  # riskcal counts a bool as an int; an alpha of True is no scalar FPR


def test_alpha_argument_and_renamed_parameters_warn_as_riskcal():
    assert alpha_argument(0.1, None) == 0.1
    with pytest.raises(ValueError, match=r"^Must specify alpha\.$"):
        alpha_argument(None, None)
    with pytest.raises(ValueError, match=r"^Must pass either alpha or alphas\.$"):
        alpha_argument(0.1, 0.2)
    with pytest.warns(DeprecationWarning, match=r"^Parameter 'alphas' is deprecated and will be removed in v2\.0\.0\. "
                                                r"Use 'alpha' instead\.$"):
        assert alpha_argument(None, 0.2) == 0.2
    with pytest.warns(DeprecationWarning) as record:
        warn_deprecated_param("mu_min", "noise_min", stacklevel=1)
    # riskcal.calibration.dpsgd's words
    assert str(record[0].message) == ("Parameter 'mu_min' is deprecated and will be removed in v2.0.0. "
                                      "Use 'noise_min' instead.")


def test_deprecated_module_messages_are_riskcals_with_dpax_names():
    rc = _riskcal("riskcal")
    assert set(DEPRECATED_MODULES) == set(rc._DEPRECATED_MODULES) == {"dpsgd", "conversions", "blackbox", "plrv"}
    for name, message in DEPRECATED_MODULES.items():
        head, tail = rc._DEPRECATED_MODULES[name].split("v2.0.0. ")
        assert message == (f"{head}v2.0.0 (dpax.compat.riskcal.{name} with it). "
                           + tail.replace("'riskcal.", "'dpax.compat.riskcal."))
        # every module a message points to exists
        for target in re.findall(r"'(dpax\.compat\.riskcal[.\w]*)'", message):
            importlib.import_module(target)
    assert _core.DEPRECATED_MODULES is DEPRECATED_MODULES
