"""Grouping rows into kernel calls of few shapes (dpax._engine.batching): the row counts a
group is padded to, the chunks of a batch split for memory, and the width groups, checked
against their definitions over ranges of inputs."""

from __future__ import annotations

import numpy as np
import pytest

from dpax._engine import batching, sharding


def _ladder(n: int) -> bool:
    """Whether n is of the form 2^k * {4, 5, 6, 7} / 4 (or below 4)."""
    if n <= 4:
        return True
    k = 2 ** (int(np.floor(np.log2(n))) - 2)
    return n % k == 0 and n // k in (4, 5, 6, 7)


def test_group_size_is_the_smallest_rung_of_the_ladder_at_or_above_n():
    devices = sharding.device_count()
    for n in range(1, 2049):
        g = batching.group_size(n)
        assert g >= n and g % devices == 0
        if devices == 1:
            assert _ladder(g) and not any(_ladder(m) for m in range(n, g)), (n, g)
            assert g <= max(4, int(np.ceil(1.25 * n)))  # at most 25% padding above 4 rows


def test_chunk_size_is_the_largest_rung_at_or_below_the_limit_and_kept_by_group_size():
    for limit in range(1, 2049):
        c = batching.chunk_size(limit)
        assert 1 <= c <= limit
        assert batching.group_size(c) == c, (limit, c)  # a chunk is a shape group_size keeps
        if sharding.device_count() == 1:
            assert not any(_ladder(m) for m in range(c + 1, limit + 1)), (limit, c)


@pytest.mark.parametrize("rows, chunk", [(1, 1), (5, 2), (8, 4), (9, 4), (7, 16)])
def test_row_chunks_cover_every_row_once_in_chunks_of_one_shape(rows, chunk):
    seen = []
    for index, real in batching.row_chunks(rows, chunk):
        assert index.shape == (chunk,) and 1 <= real <= chunk
        assert np.all(index[real:] == index[real - 1])  # padded by repeating the last real row
        seen += index[:real].tolist()
    assert seen == list(range(rows))


def test_width_class_is_floor_log4_and_counts_nan_and_inf_as_widest():
    w = np.array([0.0, 1.0, 3.99, 4.0, 15.9, 16.0, 1e6, np.inf, np.nan])
    got = batching.width_class(w)
    assert got[:7].tolist() == [0, 0, 0, 1, 1, 2, 9]
    assert got[7] == got[8] == got.max()


def test_merge_groups_partitions_the_classes_narrowest_first():
    rng = np.random.default_rng(3)
    for _ in range(200):
        keys = rng.integers(0, 8, rng.integers(1, 60))
        min_rows = int(rng.integers(1, 20))
        groups = batching.merge_groups(keys, min_rows=min_rows)
        flat = [k for g in groups for k in g]
        assert flat == sorted(set(keys.tolist()))  # every class once, in order
        counts = [int(np.isin(keys, g).sum()) for g in groups]
        # every group but the last (the widest left over) has at least min_rows rows, and
        # each is closed as soon as it has them
        assert all(c >= min_rows for c in counts[:-1])
        for g in groups[:-1]:
            assert np.isin(keys, g[:-1]).sum() < min_rows
