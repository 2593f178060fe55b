"""dpax.distributed.calibration: calibrate_dpsgd and calibrate with the rows divided among the
processes of a jax.distributed run. On two processes (tests/distributed/conftest.py's
``two_processes``, which also runs dpax.distributed.evaluate) the answers equal the one-process
answers row for row (bit for bit: each row is computed by the same code, only the rows'
division differs), an error in one process's rows is raised in both, and both exit in order;
options that would let processes disagree (``accuracy``) are refused."""

from __future__ import annotations

import numpy as np
import pytest

import dpax


def test_two_processes_calibrate_equal_one_process(tmp_path, two_processes):
    """Default test: calibrate_dpsgd, calibrate and evaluate on two processes, answers
    bit-identical; an error in one process's rows is raised in both; both exit in order."""
    codes, logs = two_processes(tmp_path)
    assert codes == [0, 0], logs
    # initialize turns on JAX's recoverable mode without its C++ notice (an experimental feature)
    assert not any("experimental" in log for log in logs), logs
    w = dpax.calibrate(lambda s: dpax.gaussian(s, grid_step=1e-2), dpax.targets.Advantage([0.2, 0.3, 0.4]))
    one = dpax.calibrate_dpsgd(sample_rate=[0.02, 0.05, 0.1], num_steps=10, target=dpax.targets.Advantage(0.25),
                               grid_step=1e-2, compare_standard=False)
    eps = dpax.gaussian(np.array([0.8, 1.0, 1.5]), grid_step=1e-2).epsilon(1e-5)
    for i in range(2):
        got = np.load(tmp_path / f"r.{i}.npz")
        np.testing.assert_array_equal(got["noise"], one.noise_multiplier)
        np.testing.assert_array_equal(got["adv"], one.achieved["advantage"])
        np.testing.assert_array_equal(got["status"], one.status)
        np.testing.assert_array_equal(got["eps"], eps)
        np.testing.assert_array_equal(got["w"], w)
        # the infeasible row is process 1's: its error is raised in both processes
        assert "process 1 of 2" in str(got["error"]) and "not met" in str(got["error"]), str(got["error"])


def test_accuracy_is_refused_with_a_message_naming_it():
    with pytest.raises(ValueError, match="accuracy is not supported.*grid_step"):
        dpax.distributed.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
                                         accuracy=1e-3)
