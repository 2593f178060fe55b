"""dpax.compat.riskcal.utils: riskcal's ``_ensure_array`` and ``inverse_monotone_function``,
against the real riskcal.utils on the same calls (closed-form functions, no kernels)."""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest

from dpax.compat.riskcal import CalibrationError, utils

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    rc_utils = pytest.importorskip("riskcal.utils")


def test_ensure_array_as_riskcal():
    for x in (0.5, 3, np.float64(0.25), [0.1, 0.2], (0.3,), np.array([0.4, 0.5]), np.array(0.6)):
        ours, ours_scalar = utils._ensure_array(x)
        ref, ref_scalar = rc_utils._ensure_array(x)
        assert ours_scalar == ref_scalar and isinstance(ours, np.ndarray)
        np.testing.assert_array_equal(ours, ref)
        assert ours.shape == ref.shape
    assert utils._ensure_array(0.5)[0].shape == (1,)


def test_inverse_monotone_function_signature_is_riskcals():
    ours = inspect.signature(utils.inverse_monotone_function).parameters
    ref = inspect.signature(rc_utils.inverse_monotone_function).parameters
    assert [(p.name, p.default) for p in ours.values()] == [(p.name, p.default) for p in ref.values()]
    assert utils.__all__ == ["inverse_monotone_function"]


@pytest.mark.parametrize("f,target,bounds,increasing,exact", [
    (lambda x: 1.0 / x, 0.5, (0.1, 10.0), False, 2.0),
    (lambda x: x**2, 2.0, (0.0, 4.0), True, math.sqrt(2)),
    (lambda x: math.exp(-x), 0.1, (0.0, 20.0), False, math.log(10)),
])
def test_inverse_monotone_function_against_riskcal(f, target, bounds, increasing, exact):
    for tol in (1e-3, 1e-7):
        ours = utils.inverse_monotone_function(f, target, bounds, tol, tol, increasing=increasing)
        ref = rc_utils.inverse_monotone_function(f, target, bounds, tol, tol, increasing=increasing)
        assert isinstance(ours, float)
        # both on the side where f <= target (the smallest such x for a decreasing f, the largest for an
        # increasing one), within the thresholds of the crossing
        assert f(ours) <= target and f(ref) <= target
        assert abs(ours - exact) <= tol and abs(f(ours) - target) <= tol
        assert abs(ours - ref) <= 2 * tol
        assert (ours <= exact) if increasing else (ours >= exact)


def test_inverse_monotone_function_raises_where_riskcal_does():
    f = lambda x: x
    with pytest.raises(RuntimeError):
        rc_utils.inverse_monotone_function(f, 5.0, (0.0, 1.0), increasing=True, max_iter=20)
    # the same target: a CalibrationError, which is riskcal's RuntimeError (and dpax's ValueError)
    with pytest.raises(CalibrationError, match="inverse_monotone_function"):
        utils.inverse_monotone_function(f, 5.0, (0.0, 1.0), increasing=True, max_iter=20)
    # the search never evaluates the end that fails: here 0, where f is undefined
    x = utils.inverse_monotone_function(lambda v: 1.0 / v, 0.5, (0.0, 10.0), 1e-6, 1e-6)
    assert 2.0 <= x <= 2.0 + 1e-6
