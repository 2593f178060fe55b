"""dpax.calibration.result: CalibrationResult's noise reduction (a float for one configuration,
an array for several, NaN where the standard comparison did not run), result fields as Python
scalars for one configuration, and the reporting every calibration shares for rows that miss
the target (on_infeasible's default by shape, the error naming the first infeasible row). The
table, records, CSV and DataFrame views are tests/test_result_table.py's."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpax
from dpax.calibration.result import CalibrationResult, _on_infeasible, _out, _raise_infeasible
from dpax.targets import Advantage


def _result(noise, standard, status="calibrated"):
    nan = np.full(np.shape(noise), np.nan)
    return CalibrationResult(noise_multiplier=noise, noise_multiplier_failing=noise, achieved={}, delta=nan,
                             standard_epsilon=nan, standard_noise_multiplier=standard, status=status,
                             target=Advantage(0.2), grid_step=1e-2, rtol=1e-4)


def test_it_is_the_packages_calibration_result():
    assert dpax.CalibrationResult is CalibrationResult is dpax.calibration.CalibrationResult


def test_noise_reduction_is_the_share_of_the_standard_noise_saved():
    one = _result(0.6, 0.8).noise_reduction
    assert type(one) is float and one == pytest.approx(0.25, rel=1e-15)
    many = _result(np.array([[0.5, 0.9], [0.0, 1.0]]), np.array([[1.0, 1.0], [2.0, np.nan]])).noise_reduction
    assert isinstance(many, np.ndarray) and many.shape == (2, 2) and many.dtype == np.float64
    np.testing.assert_allclose(many[0], [0.5, 0.1], rtol=1e-15)
    assert many[1, 0] == 1.0  # met without noise: all the standard noise saved
    assert math.isnan(many[1, 1])  # no standard comparison
    assert math.isnan(_result(0.6, float("nan")).noise_reduction)


def test_fields_are_python_scalars_for_one_configuration():
    assert _out(np.array(0.5)) == 0.5 and type(_out(np.array(0.5))) is float
    assert _out(np.array(["met_at_bound"]), ()) == "met_at_bound"  # any dtype: a status stays a string
    status = _out(np.array(["calibrated", "infeasible"]), (2, 1))
    assert status.shape == (2, 1) and status[1, 0] == "infeasible"
    np.testing.assert_array_equal(_out([1, 2], (2,)), [1, 2])
    assert _out([1, 2], (2,)).dtype.kind == "i"  # the values' own dtype, not float64


def test_on_infeasible_defaults_to_raise_for_one_configuration_and_mark_for_a_batch():
    assert _on_infeasible(None, ()) == "raise"
    assert _on_infeasible(None, (1,)) == "mark" and _on_infeasible(None, (2, 3)) == "mark"
    assert _on_infeasible("raise", (2,)) == "raise" and _on_infeasible("mark", ()) == "mark"
    for bad in ("ignore", "Raise", 1, True):
        with pytest.raises(ValueError, match="on_infeasible must be 'raise', 'mark' or None"):
            _on_infeasible(bad, ())


def test_an_infeasible_row_is_named_with_its_reason_and_the_count():
    status = np.array(["calibrated", "infeasible", "met_at_bound", "calibrated", "infeasible", "calibrated"])
    reason = np.array(["", "too little noise", "", "", "also too little", ""])
    with pytest.raises(ValueError) as info:
        _raise_infeasible("calibrate_x", status, reason, (2, 3))
    assert str(info.value) == "calibrate_x: row [0, 1]: too little noise (2 rows in all)"
    with pytest.raises(ValueError) as info:  # one row, one configuration: "the target", no count
        _raise_infeasible("calibrate_x", np.array(["infeasible"]), np.array(["out of bounds"]), ())
    assert str(info.value) == "calibrate_x: the target: out of bounds"
    with pytest.raises(ValueError, match=r"^calibrate_x: row \[4\]: also too little$"):
        _raise_infeasible("calibrate_x", np.array(["calibrated"] * 4 + ["infeasible"]),
                          np.array([""] * 4 + ["also too little"]), (5,))
    # nothing infeasible: nothing raised
    assert _raise_infeasible("calibrate_x", status[[0, 2, 3]], reason[[0, 2, 3]], (3,)) is None
