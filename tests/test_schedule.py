"""dpax.dpsgd_schedule: DP-SGD in epochs (sample rate batch_size / dataset_size, steps epochs *
ceil(dataset_size / batch_size), Opacus' count of batches per epoch), its input errors, and the
hint of the "num_steps must be a whole number" error. Nothing here computes a privacy loss."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpax


def test_sixty_epochs_of_256_out_of_60000():
    s = dpax.dpsgd_schedule(60_000, 256, 60)
    assert isinstance(s, dpax.DPSGDSchedule)
    assert s.sample_rate == 256 / 60_000 and s.steps_per_epoch == 235 and s.num_steps == 60 * 235 == 14_100
    assert (s.dataset_size, s.batch_size, s.epochs) == (60_000, 256, 60)
    assert type(s.num_steps) is int and type(s.sample_rate) is float
    assert s.accounting() == {"sample_rate": 256 / 60_000, "num_steps": 14_100}
    # the steps are rounded up: never fewer than epochs * dataset_size / batch_size
    assert s.num_steps >= 60 * 60_000 / 256 and s.num_steps * s.sample_rate >= 60


@pytest.mark.parametrize("n, b, e, per_epoch", [(1000, 100, 3, 10), (1000, 1000, 2, 1), (1001, 100, 1, 11),
                                                 (7, 1, 5, 7), (10, 3, 4, 4)])
def test_steps_per_epoch_is_the_number_of_batches(n, b, e, per_epoch):
    s = dpax.dpsgd_schedule(n, b, e)
    assert s.steps_per_epoch == per_epoch == math.ceil(n / b) == len(range(0, n, b))  # a DataLoader's batches
    assert s.num_steps == e * per_epoch and s.sample_rate == b / n


def test_arguments_broadcast():
    s = dpax.dpsgd_schedule(60_000, [[128], [256]], [1, 60])
    assert s.sample_rate.shape == s.num_steps.shape == (2, 2) and s.num_steps.dtype == np.int64
    np.testing.assert_array_equal(s.num_steps, [[469, 469 * 60], [235, 235 * 60]])
    np.testing.assert_array_equal(s.epochs, [[1, 60], [1, 60]])
    assert dpax.dpsgd_schedule(1000.0, 100.0, 2.0).num_steps == 20  # whole floats are accepted


@pytest.mark.parametrize("args, error, message", [
    ((100, 200, 1), ValueError, r"batch_size must lie in \[1, dataset_size\].*batch_size 200 with dataset_size 100"),
    ((100, 20, 0.5), ValueError, r"epochs must be a whole number >= 1, got 0.5"),
    ((100, 20, 0), ValueError, r"epochs must be an integer >= 1, got 0"),
    ((100, 0, 1), ValueError, r"batch_size must be an integer >= 1"),
    ((100.5, 20, 1), ValueError, r"dataset_size must be a whole number"),
    ((100, 20, True), TypeError, r"epochs must be a real number .* not a boolean"),
    (("100", 20, 1), TypeError, r"dataset_size .* not a string"),
    ((100, [10, 20], [1, 2, 3]), ValueError,
     r"batch_size \(shape \(2,\)\) and epochs \(shape \(3,\)\) do not broadcast"),
    ((2**40, 1, 2**20), ValueError, r"the number of steps\) must be at most 2\*\*53"),
])
def test_bad_input_names_the_argument(args, error, message):
    with pytest.raises(error, match=message):
        dpax.dpsgd_schedule(*args)


def test_a_fractional_number_of_steps_points_to_the_schedule():
    steps = 60 * 60_000 / 256  # 14062.5: epochs times the exact dataset_size / batch_size
    for call in (lambda: dpax.dpsgd(1.0, 256 / 60_000, steps),
                 lambda: dpax.calibrate_dpsgd(sample_rate=256 / 60_000, num_steps=steps,
                                              target=dpax.targets.Advantage(0.1))):
        with pytest.raises(ValueError) as err:
            call()
        msg = str(err.value)
        assert msg.startswith("num_steps must be a whole number >= 1, got 14062.5")
        assert "dpax.dpsgd_schedule(dataset_size, batch_size, epochs)" in msg
    with pytest.raises(ValueError) as err:  # other integer arguments get no hint
        dpax.randomized_response(1.0, k=2.5)
    assert "dpsgd_schedule" not in str(err.value)


# slow suite: importing torch and Opacus takes ~3 s; the arithmetic above runs by default
@pytest.mark.slow
def test_opacus_draws_the_same_batches_per_epoch():
    torch = pytest.importorskip("torch")
    pytest.importorskip("opacus")
    from opacus.data_loader import DPDataLoader
    from torch.utils.data import DataLoader, TensorDataset

    for n, b in ((60_000, 256), (1000, 100), (1001, 100)):
        loader = DataLoader(TensorDataset(torch.zeros(n, 1)), batch_size=b)
        dp_loader = DPDataLoader.from_data_loader(loader)
        s = dpax.dpsgd_schedule(n, b, 3)
        assert len(loader) == s.steps_per_epoch
        assert len(dp_loader) <= s.steps_per_epoch  # int(1 / rate): one fewer where floating point rounds down
        assert dp_loader.sample_rate == pytest.approx(1 / s.steps_per_epoch, rel=1e-15)
        assert dp_loader.sample_rate <= s.sample_rate  # Opacus' rate: never above dpax's
        assert (dp_loader.sample_rate == s.sample_rate) == (n % b == 0)
