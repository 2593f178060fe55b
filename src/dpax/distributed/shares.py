"""A batch's rows divided among the processes of a ``jax.distributed`` run and the answers
gathered in process order: each process's share (:func:`share`), the call counter that keys
the barriers (:func:`next_call`) and :func:`evaluate`. Joining, heartbeats and barriers are
in :mod:`dpax.distributed.processes`.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import cast

import numpy as np
from jax.experimental import multihost_utils
from numpy.typing import ArrayLike

from . import processes as _processes
from .processes import DistributedError, Process


def share(n_rows: int, proc: Process | None = None) -> range:
    """This process's contiguous share of ``n_rows`` rows: ``[i * n // P, (i + 1) * n // P)``.

    Args:
        n_rows: the number of rows of the batch, an integer >= 0.
        proc: the process whose share is asked for (None: this one, :func:`dpax.distributed.process`).

    Returns:
        The share's row numbers as a ``range`` (empty where ``n_rows`` < the process count
        leaves it none).

    >>> share(10, Process(1, 3))
    range(3, 6)
    """
    p = _processes.process() if proc is None else proc
    return range(p.index * n_rows // p.count, (p.index + 1) * n_rows // p.count)


def _gather(local: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    """Every process's dict of arrays, in process order: their ``.npz`` bytes (no pickle)
    exchanged with ``process_allgather`` (a byte count, then the bytes padded to the longest)."""
    if _processes.process().count < 2:
        return [local]
    buf = io.BytesIO()
    np.savez(buf, **local)  # type: ignore[arg-type]  # numpy stub: mypy matches **dict[str, ...] against allow_pickle
    blob = np.frombuffer(buf.getvalue(), np.uint8)
    if blob.size >= 2**31:
        raise DistributedError(f"one process's answers take {blob.size:,} bytes, more than 2 GiB: divide the batch")
    sizes = np.asarray(multihost_utils.process_allgather(np.array([blob.size], np.int32))).reshape(-1)
    padded = np.zeros(int(sizes.max()), np.uint8)
    padded[: blob.size] = blob
    everything = np.asarray(multihost_utils.process_allgather(padded)).reshape(len(sizes), -1)
    out = []
    for i, size in enumerate(sizes):
        with np.load(io.BytesIO(everything[i, :size].tobytes()), allow_pickle=False) as z:
            out.append({k: z[k] for k in z.files})
    return out


def next_call() -> int:
    """A number for the next collective step: the same on every process, which make the same calls.

    Returns:
        The count of calls of this function in this process, from 1.

    >>> n = next_call(); next_call() == n + 1
    True
    """
    _processes._state["calls"] += 1
    return _processes._state["calls"]


def _run_shares(fn: Callable[[np.ndarray], dict], n_rows: int, what: str) -> dict[str, np.ndarray]:
    """``fn(rows)`` on this process's share of ``range(n_rows)`` (skipped when empty), errors
    raised everywhere, the answers concatenated in row order (keys starting with '+' summed)."""
    call = next_call()
    if _processes.process().count > 1:
        _processes._join_in()  # the heartbeat runs while this process computes its share
    rows = np.arange(n_rows)[share(n_rows)]
    local, error, status = {}, None, "ok"
    try:
        if rows.size:
            local = fn(rows)
    except Exception as exc:  # noqa: BLE001 - raised in every process below
        error, status = exc, f"error\n{type(exc).__name__}\n{exc}"
    statuses = _processes.wait_for_all(f"{what}/{call}", status)
    for i, s in sorted(statuses.items()):
        if s != "ok":
            _, kind, message = s.split("\n", 2)
            cls = {"ValueError": ValueError, "TypeError": TypeError}.get(kind, DistributedError)
            mine = share(n_rows, Process(i, len(statuses)))
            raise cls(f"{what}: process {i} of {len(statuses)} (rows {mine.start}..{mine.stop - 1} of the batch, "
                      f"numbered from 0 within them below): {message}") from error
    parts = [p for p in _gather(local) if p]
    keys = parts[0].keys() if parts else ()
    # parts is not empty when there are keys: the sum is an array, never sum()'s start 0
    return {k: (cast(np.ndarray, sum(p[k] for p in parts)) if k.startswith("+")
                else np.concatenate([p[k] for p in parts]))
            for k in keys}


def evaluate(
    fn: Callable[..., ArrayLike | tuple[ArrayLike, ...] | dict[str, ArrayLike]],
    *arrays: ArrayLike,
) -> np.ndarray | tuple[np.ndarray, ...] | dict[str, np.ndarray]:
    """``fn(*arrays)`` for a batch, its rows divided among the processes and gathered.

    Args:
        fn: takes 1-D arrays (this process's rows of each of ``arrays``, broadcast and
            flattened) and returns an array, a tuple of arrays or a dict of arrays whose
            leading axis is the row.
        arrays: configuration arrays (broadcast together).

    Returns:
        What ``fn`` returns for the whole batch, each array shaped (broadcast shape, ...),
        on every process: an array, a tuple of arrays or a dict of arrays, as ``fn``
        returns (a tuple stays a tuple, a dict a dict; anything else becomes one array).

    Raises:
        ValueError: ``arrays`` do not broadcast together (NumPy's message).
        ValueError, TypeError: ``fn`` raised one in some process: raised in every process,
            naming the process and its rows.
        DistributedError: ``fn`` raised another exception in some process (the same
            message), a process died or left, or one process's answers exceed 2 GiB.

    >>> import dpax, numpy as np
    >>> eps = dpax.distributed.evaluate(lambda s: dpax.gaussian(s, grid_step=1e-2).epsilon(1e-5), [0.8, 1.0, 1.5])
    >>> eps.shape
    (3,)
    """
    flat = [np.asarray(a) for a in arrays]
    shape = np.broadcast_shapes(*(a.shape for a in flat))
    rows = [np.broadcast_to(a, shape).reshape(-1) for a in flat]

    def run(idx: np.ndarray) -> dict[str, np.ndarray]:
        out = fn(*(r[idx] for r in rows))
        if isinstance(out, dict):
            return {f"d:{k}": np.asarray(v) for k, v in out.items()}
        if isinstance(out, tuple):
            return {f"t:{i}": np.asarray(v) for i, v in enumerate(out)}
        return {"a": np.asarray(out)}

    got = _run_shares(run, int(np.prod(shape, dtype=int)), "evaluate")
    shaped = {k: v.reshape(shape + v.shape[1:]) for k, v in got.items()}
    if "a" in shaped:
        return shaped["a"]
    if any(k.startswith("t:") for k in shaped):
        return tuple(shaped[f"t:{i}"] for i in range(len(shaped)))
    return {k[2:]: v for k, v in shaped.items()}
