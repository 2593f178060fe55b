"""A batch's rows divided among processes (dpax.distributed.shares): the shares cover every row
once, in order, contiguous; one process evaluates everything itself. (Two processes evaluating
one batch: tests/distributed/test_distributed_calibration.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from dpax import distributed
from dpax.distributed import Process, evaluate, next_call, share


@pytest.mark.parametrize("n_rows", [0, 1, 2, 7, 64, 1001])
@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_shares_cover_every_row_once_in_order(n_rows, count):
    rows = [r for i in range(count) for r in share(n_rows, Process(i, count))]
    assert rows == list(range(n_rows))
    sizes = [len(share(n_rows, Process(i, count))) for i in range(count)]
    assert max(sizes) - min(sizes) <= 1


def test_one_process_evaluates_every_row_and_counts_its_calls():
    first = next_call()
    assert next_call() == first + 1
    out = evaluate(lambda x: x * 2.0, np.arange(5.0))
    np.testing.assert_array_equal(out, np.arange(5.0) * 2.0)


def test_shares_are_contiguous_and_cover_every_row():
    for n in (0, 1, 5, 7, 100):
        for count in (1, 2, 3, 8):
            got = [list(distributed.share(n, distributed.Process(i, count))) for i in range(count)]
            assert sum(got, []) == list(range(n))
    assert distributed.process() == distributed.Process(0, 1)
