"""The loss grid and its sizes (dpax._engine.grid): the length ladder, sharing lengths
within a search, the grid's losses, and the memory budget's checks."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from dpax._engine import grid


def test_padded_length_is_the_smallest_rung_at_or_above_n():
    rungs = sorted({b * m // 4 for b in (2**k for k in range(8, 24)) for m in (4, 5, 6, 7)})
    for n in list(range(1, 5000, 7)) + [2**20 - 1, 2**20, 2**20 + 1, 3 * 2**19 + 1]:
        got = grid.padded_length(n)
        assert got == next(r for r in rungs if r >= max(n, grid.MIN_LENGTH)), n
        assert got <= max(grid.MIN_LENGTH, 1.25 * n)  # at most 25% padding


def test_power_of_two_is_the_smallest_power_at_or_above_n_and_min_length():
    for n in (0, 1, 255, 256, 257, 4096, 4097):
        p = grid.power_of_two(n)
        assert p >= max(n, grid.MIN_LENGTH) and p & (p - 1) == 0 and (p // 2 < max(n, grid.MIN_LENGTH))


def test_shared_lengths_reuse_a_longer_length_within_the_padding_and_own_lengths_suspend_it():
    grid.forget_repeats()
    with grid.shared_lengths({}) as used:
        first = grid.padded_length(20_000, "compose")
        assert grid.padded_length(5_000, "compose") == first  # within SHARED_PADDING: reused
        assert grid.padded_length(1_000, "compose") == grid.padded_length(1_000)  # beyond it: its own
        assert grid.padded_length(5_000, "construct") == grid.padded_length(5_000)  # another site
        with grid.own_lengths():
            assert not grid.sharing() and grid.padded_length(5_000, "compose") == grid.padded_length(5_000)
        assert grid.sharing() and first in used["compose"]
    assert not grid.sharing()
    assert grid.padded_length(5_000, "compose") == grid.padded_length(5_000)  # outside: always its own


def test_a_repeated_workload_gets_its_own_lengths():
    grid.forget_repeats()
    sizes = []
    for _ in range(grid.REPEATS_BEFORE_OWN + 1):
        with grid.shared_lengths({"compose": {20_480}}, workload=("same call",)):
            sizes.append(grid.padded_length(5_000, "compose"))
    assert sizes[:grid.REPEATS_BEFORE_OWN] == [20_480] * grid.REPEATS_BEFORE_OWN
    assert sizes[-1] == grid.padded_length(5_000)
    grid.forget_repeats()


def test_loss_grid_is_offset_plus_index_times_step_in_numpy_and_jax():
    offset = np.array([-3, 5])
    want = (offset[:, None] + np.arange(4)[None, :]) * 0.5
    got = grid.loss_grid(offset, 4, 0.5)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(grid.loss_grid(jnp.asarray(offset), 4, 0.5)), want)


def test_the_budget_checks_name_what_needs_the_memory_and_how_to_lower_it():
    over = grid.MEMORY_LIMIT_BYTES + 1
    with pytest.raises(grid.MemoryBudgetError, match=r"^beta: 3 rows need about .* over the .* budget; use "
                       r"a smaller alpha array, or raise DPAX_MEMORY_LIMIT_GB$"):
        grid.check_bytes(over, "beta", "3 rows", hint="a smaller alpha array")
    assert issubclass(grid.MemoryBudgetError, ValueError)
    grid.check_bytes(grid.MEMORY_LIMIT_BYTES, "beta", "3 rows")  # at the budget: allowed
    with pytest.raises(grid.MemoryBudgetError, match="1 row"):
        grid.rows_per_chunk(5, over, 0, "compose", "1 row")
    per_row = grid.MEMORY_LIMIT_BYTES // 10
    assert grid.rows_per_chunk(100, per_row, 0, "compose", "x") == 10
    assert grid.rows_per_chunk(100, per_row, 5 * per_row, "compose", "x") == 5  # the fixed part counts
    assert grid.rows_per_chunk(3, per_row, 0, "compose", "x") == 3
