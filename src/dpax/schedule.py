"""DP-SGD in epochs: from (dataset size, batch size, epochs) to (sample rate, number of steps).

Training scripts count epochs of batches; DP-SGD's accounting (:func:`dpax.dpsgd`,
:func:`dpax.calibrate_dpsgd`) takes the Poisson sampling rate and a whole number of steps.
:func:`dpsgd_schedule` converts the one into the other with Opacus' count of steps:

* ``sample_rate = batch_size / dataset_size``: each record joins a step's batch with this
  probability, so the expected batch size is ``batch_size``;
* ``steps_per_epoch = ceil(dataset_size / batch_size)``: the length of a PyTorch
  ``DataLoader(dataset, batch_size)`` (``drop_last=False``), which is the number of batches
  Opacus' Poisson-sampling ``DPDataLoader`` draws per epoch;
* ``num_steps = epochs * steps_per_epoch``.

Opacus derives its sample rate from the same loader as ``1 / len(data_loader)`` =
``1 / ceil(dataset_size / batch_size)``. The two rates agree when ``batch_size`` divides
``dataset_size``; otherwise Opacus' is a little smaller (60,000 records in batches of 256:
1/235 = 0.0042553 against 256/60,000 = 0.0042667). dpax takes ``batch_size / dataset_size``,
the rate that gives the batch size asked for: the privacy loss grows with the sample rate,
so an accounting at this rate also covers a run at Opacus' rate with the same steps, and the
steps are rounded up, never down. ``1 / steps_per_epoch`` gives Opacus' rate exactly.

>>> import dpax
>>> s = dpax.dpsgd_schedule(dataset_size=60_000, batch_size=256, epochs=60)
>>> round(s.sample_rate, 7), s.steps_per_epoch, s.num_steps
(0.0042667, 235, 14100)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._engine import validation as _v
from ._engine.x64 import as_result


@dataclass(frozen=True)
class DPSGDSchedule:
    """A DP-SGD training schedule in the terms of the accounting (see :func:`dpsgd_schedule`).

    Fields are Python numbers for one schedule, else arrays of the broadcast shape of the
    arguments. ``sample_rate`` and ``num_steps`` are what :func:`dpax.dpsgd` and
    :func:`dpax.calibrate_dpsgd` take; :meth:`accounting` gives them as keyword arguments.
    Built by :func:`dpsgd_schedule`, which checks the numbers; each argument is kept as the
    attribute of its name.

    Args:
        sample_rate: the Poisson sampling rate ``batch_size / dataset_size``, in (0, 1].
        num_steps: the number of steps ``epochs * steps_per_epoch``.
        steps_per_epoch: ``ceil(dataset_size / batch_size)``, the batches of one epoch.
        dataset_size: the number of records.
        batch_size: the expected batch size.
        epochs: the number of epochs.

    >>> import dpax
    >>> s = dpax.dpsgd_schedule(dataset_size=1000, batch_size=300, epochs=2)
    >>> s
    DPSGDSchedule(sample_rate=0.3, num_steps=8, steps_per_epoch=4, dataset_size=1000, batch_size=300, epochs=2)
    """

    sample_rate: float | np.ndarray
    """Poisson sampling rate ``batch_size / dataset_size``, in (0, 1]."""
    num_steps: int | np.ndarray
    """Number of steps ``epochs * steps_per_epoch``."""
    steps_per_epoch: int | np.ndarray
    """``ceil(dataset_size / batch_size)``: the batches of one epoch."""
    dataset_size: int | np.ndarray
    """Number of records."""
    batch_size: int | np.ndarray
    """Expected batch size."""
    epochs: int | np.ndarray
    """Number of epochs."""

    def accounting(self) -> dict[str, float | int | np.ndarray]:
        """``{"sample_rate": ..., "num_steps": ...}``, the keyword arguments of the accounting.

        Returns:
            A dict to pass as ``**kwargs`` to :func:`dpax.calibrate_dpsgd` (or :func:`dpax.dpsgd`).

        >>> import dpax
        >>> dpax.dpsgd_schedule(1000, 100, 3).accounting()
        {'sample_rate': 0.1, 'num_steps': 30}
        """
        return {"sample_rate": self.sample_rate, "num_steps": self.num_steps}


def dpsgd_schedule(dataset_size: ArrayLike, batch_size: ArrayLike, epochs: ArrayLike) -> DPSGDSchedule:
    """The sample rate and number of steps of DP-SGD trained for ``epochs`` epochs of batches of
    ``batch_size`` out of ``dataset_size`` records, with Poisson sampling.

    ``sample_rate = batch_size / dataset_size`` (the expected batch size is ``batch_size``),
    ``steps_per_epoch = ceil(dataset_size / batch_size)`` (the length of a PyTorch
    ``DataLoader``, the batches Opacus' ``DPDataLoader`` draws per epoch) and ``num_steps =
    epochs * steps_per_epoch``: the steps are rounded up, never down. Opacus' own sample rate
    ``1 / steps_per_epoch`` is at most this one (equal when ``batch_size`` divides
    ``dataset_size``), so an accounting with this schedule also covers an Opacus run (the
    module docstring says why). The arguments broadcast like NumPy.

    Args:
        dataset_size: number of records, integers >= 1.
        batch_size: expected batch size, integers in [1, dataset_size].
        epochs: number of epochs, integers >= 1.

    Returns:
        A :class:`DPSGDSchedule` (``sample_rate``, ``num_steps``, ``steps_per_epoch`` and the
        arguments).

    Raises:
        TypeError, ValueError: an argument that is not a whole number in its range (the
            message names it), or arguments that do not broadcast together.

    >>> import dpax
    >>> s = dpax.dpsgd_schedule(60_000, batch_size=[250, 256], epochs=60)
    >>> s.sample_rate.round(7), s.num_steps
    (array([0.0041667, 0.0042667]), array([14400, 14100]))
    >>> r = dpax.calibrate_dpsgd(**dpax.dpsgd_schedule(1000, 100, 1).accounting(),
    ...                          target=dpax.targets.Advantage(0.3), grid_step=1e-2, compare_standard=False)
    >>> round(r.noise_multiplier, 3)
    0.538
    """
    n = _v.positive_int_array("dataset_size", dataset_size)
    b = _v.positive_int_array("batch_size", batch_size)
    e = _v.positive_int_array("epochs", epochs)
    shape = _v.broadcast_shapes(("dataset_size", n), ("batch_size", b), ("epochs", e))
    n, b, e = (np.broadcast_to(a, shape) for a in (n, b, e))
    if np.any(b > n):
        i = np.flatnonzero((b > n).reshape(-1))[0]
        raise ValueError(f"batch_size must lie in [1, dataset_size] (a sample rate above 1 is no sampling), got "
                         f"batch_size {int(b.reshape(-1)[i])} with dataset_size {int(n.reshape(-1)[i])}")
    per_epoch = -(-n // b)  # ceil, in integers
    too_many = e.astype(np.float64) * per_epoch > 2**53
    if np.any(too_many):
        i = np.flatnonzero(too_many.reshape(-1))[0]
        raise ValueError(f"epochs * steps_per_epoch (the number of steps) must be at most 2**53, got epochs "
                         f"{int(e.reshape(-1)[i])} with {int(per_epoch.reshape(-1)[i])} steps per epoch")
    steps = e * per_epoch
    out = lambda a, dtype=None: as_result(a, shape, dtype)
    return DPSGDSchedule(sample_rate=out(b / n, np.float64), num_steps=out(steps), steps_per_epoch=out(per_epoch),
                         dataset_size=out(n), batch_size=out(b), epochs=out(e))
