"""The command line's store of compiled kernels (dpax._engine.cache) gives the library's numbers."""

import os

import numpy as np
import pytest

import dpax
from dpax._engine import cache as _aot


@pytest.fixture
def aot_dir(tmp_path):
    _aot.enable(str(tmp_path))
    yield tmp_path
    _aot.enable(None)


def _numbers():
    pl = dpax.dpsgd([0.9, 1.1], 0.01, 200, grid_step=1e-3)
    return np.concatenate([pl.beta([0.01, 0.1]).ravel(), pl.advantage(), pl.epsilon(1e-5), pl.delta(1.0)])


def test_stored_kernels_match_and_reload(aot_dir):
    _aot.enable(None)
    reference = _numbers()
    _aot.enable(str(aot_dir))
    first = _numbers()  # compiles and stores
    stored = [f for f in os.listdir(aot_dir) if f.endswith(".bin")]
    assert len(stored) >= 5  # construct (2), window, fft, beta, advantage, epsilon, delta
    _aot.enable(str(aot_dir))  # forget the loaded executables: the next run reads the files
    second = _numbers()
    np.testing.assert_array_equal(first, reference)
    np.testing.assert_array_equal(second, reference)


def test_corrupt_file_is_recompiled(aot_dir):
    _numbers()
    for f in os.listdir(aot_dir):
        with open(aot_dir / f, "wb") as fh:
            fh.write(b"not an executable")
    _aot.enable(str(aot_dir))
    _aot.enable(None)
    reference = _numbers()
    _aot.enable(str(aot_dir))
    np.testing.assert_array_equal(_numbers(), reference)


def test_off_by_default():
    assert not _aot.enabled()
