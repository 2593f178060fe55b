"""Grouping the rows of a batch into kernel calls of few distinct shapes.

A batch shares one padded support length, so rows of very different support width (a
small noise composed many times beside a large one) are split into groups whose widths lie
within a factor 4 (:func:`width_class`, :func:`merge_groups`), and each group's row count is
padded to one of a few sizes (:func:`group_size`): every distinct shape is one more
compilation. Rows are independent, so the grouping changes the cost, never the answers.
"""

from __future__ import annotations

import jax
import numpy as np

from . import sharding as _sharding
from .pair import Pair

#: fewest rows worth a kernel call of their own (see :func:`merge_groups`)
GROUP_MIN_ROWS = 32
#: most rows a calibration search evaluates in one kernel call (a larger group is taken in
#: calls of this many rows; :class:`dpax.calibration.search._Evaluator`): a call over a hundred
#: DP-SGD rows of ~10^5 grid points sweeps arrays far larger than the processor's caches (the
#: 64-row table of the benchmarks, warm on a 2-core CPU, two runs of ``python -m benchmarks
#: compare``: 5.02 and 4.43 s in whole groups, 4.12 and 3.71 s in calls of at most 16 rows)
SEARCH_CALL_ROWS = 16
#: the same in a repeated workload (:func:`dpax._engine.grid.repeated`), whose group shapes
#: are compiled once: narrower groups, less padding to the widest row
REPEATED_GROUP_MIN_ROWS = 4


def width_class(width) -> np.ndarray:
    """Class of an estimated support width: floor(log4(width)), widths clipped to [1, 1e300]
    (NaN and inf count as the widest).

    >>> width_class(np.array([1.0, 3.9, 4.0, 100.0, np.nan])).tolist()
    [0, 0, 1, 3, 498]
    """
    w = np.clip(np.nan_to_num(np.asarray(width, float), nan=1e300, posinf=1e300), 1.0, 1e300)
    return np.floor(np.log2(w) / 2).astype(int)


def group_size(n: int) -> int:
    """Row count >= n of the form 2^k * {4, 5, 6, 7} / 4 (few distinct kernel shapes), then
    a multiple of the device count.

    >>> [group_size(n) for n in (3, 9, 33, 100)]
    [3, 10, 40, 112]
    """
    if n > 4:
        k = 2 ** (int(np.floor(np.log2(n))) - 2)
        n = next(k * m for m in (4, 5, 6, 7, 8) if k * m >= n)
    return _sharding.pad_rows(n)


def merge_groups(keys: np.ndarray, min_rows: int | None = None) -> list[list[int]]:
    """Lists of width classes, neighbouring classes merged (narrowest first) until each group
    has ``min_rows`` rows (default GROUP_MIN_ROWS): small batches stay one call. A group
    runs at its widest row's support, so the widest classes left over at the end form a
    group of their own: merged into the group before, they would make all of its rows run
    at a support 4 times longer.

    >>> merge_groups(np.array([0, 0, 1, 2, 2, 2]), min_rows=3)
    [[0, 1], [2]]
    """
    groups, current = [], []
    for key in np.unique(keys):
        current.append(int(key))
        if np.isin(keys, current).sum() >= (GROUP_MIN_ROWS if min_rows is None else min_rows):
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


def chunk_size(limit: int) -> int:
    """Largest row count <= ``limit`` (and >= 1) that :func:`group_size` leaves as it is
    (a multiple of the device count where ``limit`` allows): a chunk of a batch split for
    the memory budget is then a shape that other calls compile too.

    >>> [chunk_size(n) for n in (1, 3, 9, 33, 100)]
    [1, 3, 8, 32, 96]
    """
    limit = max(1, int(limit))
    if limit > 4:
        k = 2 ** (int(np.floor(np.log2(limit))) - 2)
        limit = k * (limit // k)
    devices = _sharding.device_count()
    return limit - limit % devices if limit >= devices else limit


def row_chunks(rows: int, chunk: int):
    """Row index arrays of at most ``chunk`` rows, each padded to ``chunk`` by repeating its
    last row (one kernel shape for every chunk); yields (index, number of real rows).

    >>> [(i.tolist(), r) for i, r in row_chunks(5, 2)]
    [([0, 1], 2), ([2, 3], 2), ([4, 4], 1)]
    """
    for start in range(0, rows, chunk):
        real = np.arange(start, min(rows, start + chunk))
        yield np.concatenate([real, np.full(chunk - real.size, real[-1])]), real.size


def _aligned_zeros(shape: tuple[int, ...]) -> np.ndarray:
    """Zeros (float64) in a 64-byte aligned buffer: on CPU ``jax.device_put`` then takes the
    array without a copy, so an assembled batch costs its size once, not twice."""
    size = int(np.prod(shape)) * 8
    buf = np.zeros(size + 64, np.uint8)
    start = -buf.ctypes.data % 64
    return buf[start:start + size].view(np.float64).reshape(shape)


class RowAssembly:
    """A batch's :class:`Pair` (rows, length) assembled on the host from kernel calls over
    subsets of its rows (row groups, chunks); a row shorter than ``length`` is zero beyond
    its own support (the same law)."""

    def __init__(self, rows: int, length: int):
        self.arrays = [_aligned_zeros((rows, length)), _aligned_zeros((rows, length)), np.zeros(rows, np.int64),
                       np.zeros(rows), np.zeros(rows)]
        self.nbytes = self.size(rows, length)

    @staticmethod
    def size(rows: int, length: int) -> int:
        """Bytes the assembled pmfs of ``rows`` rows of ``length`` points take (check it
        against the budget before building one)."""
        return 16 * rows * length

    def put(self, rows: np.ndarray, part: Pair, real: int) -> None:
        """Store the first ``real`` rows of ``part`` at the batch rows ``rows``."""
        for out, a in zip(self.arrays, part):
            a = np.asarray(a)[:real]
            if a.ndim == 2:
                out[rows, :a.shape[1]] = a
            else:
                out[rows] = a

    def pair(self) -> Pair:
        placed = _sharding.place_rows(*self.arrays)  # split over the devices where there are several
        return Pair(*(a if isinstance(a, jax.Array) else jax.device_put(a) for a in placed))  # no copy kernel
