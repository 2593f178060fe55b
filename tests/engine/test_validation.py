"""dpax._engine.validation: every check accepts valid input as float64 / int64 arrays and
rejects bad input with an error that names the argument and the allowed range."""

from __future__ import annotations

import numpy as np
import pytest

import dpax
from dpax._engine import validation as v


def test_real_array_accepts_and_converts():
    out = v.real_array("x", [1, 2.5])
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.5]
    assert v.real_array("x", 3).shape == ()
    assert v.real_array("x", 0.0, low=0.0).item() == 0.0  # closed end


@pytest.mark.parametrize("kwargs, value, range_text", [
    (dict(low=0.0, low_open=True), 0.0, "(0, inf)"),
    (dict(low=0.0, high=1.0), 1.5, "[0, 1]"),
    (dict(high=1.0, high_open=True), 1.0, "(-inf, 1)"),
])
def test_real_array_names_the_interval(kwargs, value, range_text):
    with pytest.raises(ValueError) as err:
        v.real_array("noise", [0.5, value], **kwargs)
    assert "noise" in str(err.value) and range_text in str(err.value) and f"{value:g}" in str(err.value)


@pytest.mark.parametrize("value, exc", [
    (np.nan, ValueError), (np.inf, ValueError), ([], ValueError), ("abc", TypeError), ([object()], TypeError),
])
def test_real_array_rejects_non_numbers(value, exc):
    with pytest.raises(exc, match="delta"):
        v.real_array("delta", value)


def test_positive_int_array():
    out = v.positive_int_array("num_steps", [1, 2.0, 1e4])
    assert out.dtype == np.int64 and out.tolist() == [1, 2, 10000]
    assert v.positive_int_array("k", 0, minimum=0).item() == 0
    for bad, exc in ((0, ValueError), (2.5, ValueError), (True, TypeError), (np.array([True]), TypeError),
                     (2.0**60, ValueError), (-3, ValueError)):
        with pytest.raises(exc, match="num_steps"):
            v.positive_int_array("num_steps", bad)


def test_grid_step():
    assert v.grid_step(1e-3) == 1e-3 and isinstance(v.grid_step(np.float64(0.5)), float)
    for bad, exc, text in ((0.0, ValueError, "(0, 1]"), (2.0, ValueError, "(0, 1]"), (1e-9, ValueError, ">= 1e-7"),
                           ([1e-3, 1e-2], TypeError, "one number"), (np.nan, ValueError, "finite")):
        with pytest.raises(exc) as err:
            v.grid_step(bad)
        assert "grid_step" in str(err.value) and text in str(err.value)


def test_probabilities():
    assert v.probabilities("alpha", [0.0, 1.0]).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match=r"alpha must lie in \[0, 1\]"):
        v.probabilities("alpha", 1.01)
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\]"):
        v.probabilities("delta", 0.0, low_open=True)


def test_real_array_takes_the_infinities_its_interval_allows():
    np.testing.assert_array_equal(v.real_array("s", [0.5, np.inf], low=0.0, infinite_ok=True), [0.5, np.inf])
    np.testing.assert_array_equal(v.real_array("x", [-np.inf, np.inf], infinite_ok=True), [-np.inf, np.inf])
    for bad in ([-np.inf], [np.nan]):  # below the interval's finite end; NaN never
        with pytest.raises(ValueError, match="s must"):
            v.real_array("s", bad, low=0.0, infinite_ok=True)
    with pytest.raises(ValueError, match="x must"):
        v.real_array("x", [np.inf])  # infinities only when asked for


@pytest.mark.parametrize("value", [(True, 2.0), [1.0, [2.0, np.bool_(False)]], [[0.5], [True]]])
def test_a_boolean_inside_a_list_is_refused(value):
    # mixed with numbers, NumPy reads True as 1.0: a noise_bounds=(True, 2.0) searched from 1
    with pytest.raises(TypeError, match="noise_bounds .*booleans"):
        v.real_array("noise_bounds", value, low=0.0, low_open=True)


def test_a_boolean_inside_noise_bounds_is_refused_by_calibration():
    with pytest.raises(TypeError, match="noise_bounds"):
        dpax.calibrate_dpsgd(sample_rate=0.5, num_steps=2, target=dpax.targets.Advantage(0.3), grid_step=0.1,
                             noise_bounds=(True, 2.0), compare_standard=False)


MASKED = [np.ma.masked_array([1.0, -5.0], mask=[False, True]), np.ma.masked_array(2.0), [1.0, np.ma.masked],
          (0.5, [np.ma.masked_array([1.0])])]


@pytest.mark.parametrize("value", MASKED)
def test_a_masked_array_is_refused(value):
    # NumPy drops the mask: a masked noise entry of -5 was read (and refused as negative), a
    # masked 2.0 accepted as 2.0
    for check in (lambda: v.real_array("noise_multiplier", value, low=0.0, low_open=True),
                  lambda: v.real_array("noise_multiplier", value, low=0.0, infinite_ok=True),
                  lambda: v.positive_int_array("noise_multiplier", value),
                  lambda: v.grid_step(value, "noise_multiplier")):
        with pytest.raises(TypeError, match="noise_multiplier .*not a masked array"):
            check()
    with pytest.raises(TypeError, match="f\\(x\\) must return .*not a masked array"):
        v.returned("f(x)", value, 2)


def test_a_masked_noise_multiplier_is_refused_by_the_mechanisms():
    noise = np.ma.masked_array([1.0, 2.0], mask=[False, True])
    with pytest.raises(TypeError, match="noise_multiplier .*masked array.*masked_array\\(\\[1.0 --\\]\\)"):
        dpax.dpsgd(noise, 0.5, 2, grid_step=0.1)
    with pytest.raises(TypeError, match="delta .*masked array"):
        dpax.gdp.epsilon(np.ma.masked_array([1e-5, 0.5], mask=[True, False]), 1.0)


@pytest.mark.parametrize("shape, error", [("ab", TypeError), ((True,), TypeError), ((1.5,), TypeError),
                                          ((2, -1), ValueError)])
def test_shape_tuple_names_shape(shape, error):
    from dpax._engine.shapes import shape_tuple

    with pytest.raises(error, match="shape must"):
        shape_tuple(shape)
    assert shape_tuple([2, np.int64(3)]) == (2, 3) and shape_tuple(()) == ()


@pytest.mark.parametrize("key", [None, True, np.False_, (0, None), (Ellipsis, True)])
def test_batch_rows_refuses_an_index_that_adds_an_axis(key):
    """A PrivacyLoss or a target indexed with None or a bare boolean got a new batch axis
    (found by an independent fuzz); a boolean mask and Ellipsis still select rows."""
    from dpax._engine.shapes import batch_rows

    with pytest.raises(TypeError, match="key .* would add an axis"):
        batch_rows("key", key, (2, 3), "PrivacyLoss")
    assert batch_rows("key", np.array([True, False]), (2, 3), "PrivacyLoss").shape == (1, 3)
    assert batch_rows("key", Ellipsis, (2, 3), "PrivacyLoss").shape == (2, 3)
    with pytest.raises(TypeError, match="would add an axis"):
        dpax.gaussian([1.0, 2.0], grid_step=1e-2)[None]
