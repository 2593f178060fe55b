"""dpax._engine.pair.Pair and dpax._engine.grid: the PLRV arrays as one value, the loss grid,
padded lengths and the memory budget."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpax._engine import grid
from dpax._engine.pair import Pair


def _pair():
    rng = np.random.default_rng(0)
    px, py = rng.random((2, 5)), rng.random((2, 5))
    return Pair(px, py, np.array([-2, 3]), np.array([0.1, 0.0]), np.array([0.0, 0.2]))


def test_reversed_swaps_and_mirrors_and_is_an_involution():
    p = _pair()
    r = p.reversed()
    np.testing.assert_array_equal(r.pmf_x, np.flip(p.pmf_y, -1))
    np.testing.assert_array_equal(r.pmf_y, np.flip(p.pmf_x, -1))
    assert np.asarray(r.offset).tolist() == [-2, -7]  # -(offset + n - 1): the mirrored grid
    np.testing.assert_array_equal(r.inf_y, p.neginf_x)
    np.testing.assert_array_equal(r.neginf_x, p.inf_y)
    rr = r.reversed()
    for a, b in zip(rr, p):
        np.testing.assert_array_equal(np.asarray(a), b)
    # the losses of the reversed pair are the negated losses, reversed
    np.testing.assert_allclose(np.asarray(r.losses(0.5)), -np.flip(p.losses(0.5), -1))


def test_take_losses_and_jit():
    p = _pair()
    t = p.take(np.array([1, 1, 0]))
    assert np.asarray(t.offset).tolist() == [3, 3, -2] and t.support_length == 5
    x = p.losses(0.1)
    assert isinstance(x, np.ndarray)  # NumPy in, NumPy out
    np.testing.assert_allclose(x, (np.array([[-2], [3]]) + np.arange(5)) * 0.1)
    with jax.enable_x64(True):
        total = jax.jit(lambda q: q.pmf_x.sum(-1) + q.neginf_x)(Pair(*(jnp.asarray(a) for a in p)))
    np.testing.assert_allclose(np.asarray(total), p.pmf_x.sum(-1) + p.neginf_x)


def test_padded_length_and_memory_budget(monkeypatch):
    assert grid.padded_length(1) == grid.MIN_LENGTH
    for n in (257, 1000, 4097, 70001):
        m = grid.padded_length(n)
        assert m >= n and m < 1.26 * n + grid.MIN_LENGTH
        k = 2 ** int(np.floor(np.log2(m)))
        assert m * 4 % k == 0 and m * 4 // k in (4, 5, 6, 7)  # 2^k * {1, 5/4, 3/2, 7/4}
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", 2**30)
    grid.check_memory(10, 1000, "fine")
    with pytest.raises(grid.MemoryBudgetError) as err:
        grid.check_memory(1000, 10**6, "composition")
    assert isinstance(err.value, ValueError)
    assert ("composition" in str(err.value) and "149.0 GiB" in str(err.value)
            and "DPAX_MEMORY_LIMIT_GB" in str(err.value))
