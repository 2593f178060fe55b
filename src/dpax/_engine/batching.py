"""Grouping the rows of a batch into kernel calls of few distinct shapes.

A batch shares one padded support length, so rows of very different support width (a
small noise composed many times beside a large one) are split into groups whose widths lie
within a factor 4 (:func:`width_class`, :func:`merge_groups`), and each group's row count is
padded to one of a few sizes (:func:`group_size`): every distinct shape is one more
compilation. Rows are independent, so the grouping changes the cost, never the answers.
"""

from __future__ import annotations

import numpy as np

from . import sharding as _sharding

#: fewest rows worth a kernel call of their own (see :func:`merge_groups`)
GROUP_MIN_ROWS = 32


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
