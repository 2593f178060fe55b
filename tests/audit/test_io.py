"""dpax.audit.io: a loss file that cannot be what the call asks for is refused naming the file."""

from __future__ import annotations

import numpy as np
import pytest

from dpax.audit import read_losses


def test_a_npy_file_takes_no_column_and_is_never_unpickled(tmp_path):
    """A .npy holds one array: a column name would be ignored, so it is refused; a file that is
    not an array of numbers gets dpax's message, not NumPy's advice to allow unpickling."""
    good = tmp_path / "losses.npy"
    np.save(good, np.array([0.5, 1.5]))
    np.testing.assert_array_equal(read_losses(good), [0.5, 1.5])
    with pytest.raises(ValueError, match=r"losses\.npy: a \.npy file holds one array, so column 'x' does not apply"):
        read_losses(good, column="x")
    bad = tmp_path / "garbage.npy"
    bad.write_bytes(b"not an array" * 8)
    with pytest.raises(ValueError, match=r"garbage\.npy: cannot read losses: not a NumPy array") as info:
        read_losses(bad)
    assert "allow_pickle" not in str(info.value)


def test_boolean_losses_are_refused_as_epsilon_star_refuses_them(tmp_path):
    """A boolean array (a mask saved by mistake) is not read as losses 1.0 / 0.0."""
    path = tmp_path / "mask.npy"
    np.save(path, np.array([True, False, True]))
    with pytest.raises(ValueError, match=r"mask\.npy: losses must be numbers, not booleans"):
        read_losses(path)
