"""Running a query kernel in pieces (dpax._engine.queries): under a memory budget that a
single call exceeds, rows and queries are split, and the answers are those of one call."""

from __future__ import annotations

import numpy as np
import pytest

import dpax
from dpax._engine import analyse, grid, queries
from dpax._engine.x64 import float64


def test_query_width_keeps_the_search_method():
    assert [queries.query_width(1, m) for m in (0, 1, 3, 5, 200, 300)] == [1, 1, 4, 8, 256, 512]
    assert queries.query_width(10, 20) == 25  # 10 x 32 would cross to bisection: 25 keeps 250 <= 256


@float64
def test_per_query_split_gives_the_answers_of_one_call(monkeypatch):
    pl = dpax.gaussian([0.5, 1.0, 2.0], grid_step=1e-2)
    pair = pl.pair
    rng = np.random.default_rng(0)
    alpha = rng.random((3, 40))
    whole = np.asarray(queries.per_query(analyse.beta_kernel, pair, alpha, "alpha"))
    n = pair.support_length
    # room for one row's tables and a few queries, not for the batch
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", n * grid.BYTES_PER_POINT + 3 * 40 * 8 + 16 * 88)
    plan = queries.query_plan(analyse.beta_kernel, pair, 3, 40, "alpha")
    assert plan is not None and plan.rows < 3
    split = np.asarray(queries.per_query(analyse.beta_kernel, pair, alpha, "alpha"))
    np.testing.assert_array_equal(split, whole)


def test_a_budget_below_one_query_is_refused_naming_the_argument(monkeypatch):
    pair = dpax.gaussian(1.0, grid_step=1e-2).pair
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", 1000)
    with pytest.raises(grid.MemoryBudgetError, match="alpha"):
        queries.query_plan(analyse.beta_kernel, pair, 1, 10**6, "alpha")
