"""dpax.privacy_loss.checks: a hand-built pair's arrays and the risk queries are refused
with a message naming the argument."""

from __future__ import annotations

import numpy as np
import pytest

from dpax._engine import validation as _v
from dpax.privacy_loss.checks import MASS_TOLERANCE, checked_arrays, query_values


def test_checked_arrays_name_the_argument():
    ok = ([0.5, 0.5], [0.5, 0.5], 0, 0.0, 0.0, 1.0)
    px, py, off, iy, nx, step = checked_arrays(*ok)
    assert off.dtype == np.int64 and step == 1.0 and iy.shape == ()
    with pytest.raises(ValueError, match="pmf_x .* and pmf_y .* must have the same shape"):
        checked_arrays([0.5, 0.5], [1.0], 0, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="offset must hold whole numbers"):
        checked_arrays(*ok[:2], 0.5, *ok[3:])
    with pytest.raises(ValueError, match="pmf_y with inf_mass_y must have a total mass of 1"):
        checked_arrays([0.5, 0.5], [0.5, 0.5 + 2 * MASS_TOLERANCE], 0, 0.0, 0.0, 1.0)
    checked_arrays([0.5, 0.5], [0.5, 0.5 + MASS_TOLERANCE / 2], 0, 0.0, 0.0, 1.0)  # within the tolerance
    with pytest.raises(ValueError, match="grid_step"):
        checked_arrays(*ok[:5], 0.0)


def test_query_values_keep_empty_shapes_and_refuse_bad_dtypes():
    assert query_values(_v.probabilities, "alpha", np.zeros((2, 0))).shape == (2, 0)
    np.testing.assert_array_equal(query_values(_v.probabilities, "alpha", [0.1, 1.0]), [0.1, 1.0])
    with pytest.raises(TypeError, match="alpha"):
        query_values(_v.probabilities, "alpha", np.array([], dtype=bool))
    with pytest.raises(ValueError, match="alpha"):
        query_values(_v.probabilities, "alpha", [1.5])
