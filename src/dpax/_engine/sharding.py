"""Device placement and chunking of row batches (JAX's own machinery, no process pools).

A batch of configurations is a set of independent rows. With several local devices
(``jax.local_devices()``: the GPUs or TPU cores of this process) the row arrays
entering a kernel are placed with a :class:`jax.sharding.NamedSharding` over a 1-D mesh on
the row axis, and jit runs each device's rows there; results are row-for-row those of the
single-device path. Callers that control the row count pad it to a multiple of the device
count (:func:`pad_rows`); arrays whose rows do not divide evenly stay where they are.

Under ``jax.distributed`` (several processes, possibly on several hosts) each process shards
only over its own devices: :mod:`dpax.distributed` divides the rows among the processes and
gathers the answers, so no array here ever spans processes.

A batch larger than the working-memory budget (:mod:`dpax._engine.grid`) is split into chunks that
fit (:func:`map_chunks`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from . import grid as _grid

_state: dict[str, list[Any] | None] = {"devices": None}


def use_devices(devices: Sequence[jax.Device] | None = None) -> None:
    """Choose the devices a batch of configurations is sharded over (``dpax.use_devices``).

    Rows of a batch are independent: with two or more devices, the row arrays entering a
    kernel are split over them and the answers are row for row those of one device.

    Args:
        devices: the devices to use; ``None`` (the default) means all of this process's
            devices (``jax.local_devices()``, which is ``jax.devices()`` in one process),
            ``[]`` or a single device turns sharding off. ``DPAX_SHARDING=0`` in the
            environment turns it off as well.

    Returns:
        None; the choice holds for later calls in this process.

    >>> import jax, dpax
    >>> dpax.use_devices(jax.devices()[:1])   # one device: no sharding
    >>> dpax.use_devices()                    # back to every device
    """
    if devices is not None:
        if isinstance(devices, (str, bytes)) or not (isinstance(devices, Sequence) or hasattr(devices, "__iter__")):
            raise TypeError(f"devices must be None or a sequence of jax devices, got {type(devices).__name__}")
        devices = list(devices)
        known = set(jax.local_devices())
        stray = [d for d in devices if d not in known]
        if stray:
            raise TypeError(f"devices must be None or a sequence of this process's jax devices "
                            f"(jax.local_devices()), got {stray[0]!r:.60}")
    _state["devices"] = devices
    _mesh.cache_clear()


def devices() -> list:
    """Devices a batch is sharded across (one device: no sharding)."""
    if os.environ.get("DPAX_SHARDING", "1") == "0":
        return jax.local_devices()[:1]
    return list(jax.local_devices()) if _state["devices"] is None else _state["devices"]


def device_count() -> int:
    return max(1, len(devices()))


@functools.lru_cache(maxsize=8)
def _mesh(ids: tuple):
    by_id = {d.id: d for d in jax.local_devices()}
    return jax.sharding.Mesh(np.array([by_id[i] for i in ids]), ("rows",))


def row_sharding(ndim: int = 1):
    """NamedSharding splitting axis 0 over the devices (None with a single device)."""
    devs = devices()
    if len(devs) < 2:
        return None
    spec = jax.sharding.PartitionSpec("rows", *([None] * (ndim - 1)))
    return jax.sharding.NamedSharding(_mesh(tuple(d.id for d in devs)), spec)


def place_rows(*arrays):
    """Put row arrays (equal leading length) on the devices, split on the row axis.

    No-op with one device, or when the row count does not divide evenly. (Sharded calls run
    through plain ``jit``; the kernel cache stores single-device executables only.)
    """
    n = device_count()
    rows = np.shape(arrays[0])[0] if arrays and np.ndim(arrays[0]) else 0
    if n < 2 or rows == 0 or rows % n:
        return arrays
    return tuple(jax.device_put(a, row_sharding(np.ndim(a))) for a in arrays)


def pad_rows(rows: int, multiple: int | None = None) -> int:
    """Smallest row count >= ``rows`` that is a multiple of the device count."""
    m = device_count() if multiple is None else multiple
    return -(-rows // m) * m


def map_chunks(fn, n_rows: int, chunk: int | None = None):
    """``fn(start, stop)`` over row ranges, concatenated on axis 0.

    Starts with the whole batch (or ``chunk`` rows); whenever a kernel reports that a chunk
    would exceed the memory budget (:class:`dpax._engine.grid.MemoryBudgetError`) the chunk is
    halved (kept a multiple of the device count where possible) and retried. Rows are
    independent, so the result does not depend on the chunking. Returns (result, chunk used).
    """
    chunk = n_rows if chunk is None else max(1, min(chunk, n_rows))
    parts = []
    start = 0
    while start < n_rows:
        stop = min(n_rows, start + chunk)
        try:
            parts.append(np.asarray(fn(start, stop)))
        except _grid.MemoryBudgetError:
            if chunk == 1:
                raise
            half = max(1, chunk // 2)
            n = device_count()
            chunk = half - half % n if half >= n else half
            continue
        start = stop
    return np.concatenate(parts, axis=0), chunk
