"""A composed optimistic companion closed (dpax._engine.optimistic.reclose): head_heavy makes one
law of point-by-point bounds, of the law's total, whose head sums are at least and whose tail
sums are at most those of every law of that total between the bounds (the composed companion's
masses, known only between its round-off bounds). reclose's booking of a composed companion's
far tails is tested in tests/engine/test_companion_tails.py
(test_small_sides_over_estimate_the_exact_composition: its kernels are those of that file)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from dpax._engine.optimistic import head_heavy
from dpax._engine.x64 import float64


def _laws_between(lower, upper, total, rng, count):
    """Laws between ``lower`` and ``upper`` (one row) of the given total: the gap to the total
    poured onto the points in random orders, each filled to its upper bound in turn."""
    out = []
    for _ in range(count):
        law, rest = lower.copy(), total - lower.sum()
        for k in rng.permutation(lower.size):
            add = min(upper[k] - lower[k], rest)
            law[k] += add
            rest -= add
        out.append(law)
    return np.array(out)


@float64
def test_head_heavy_is_a_law_of_the_bounds_with_the_largest_heads_and_smallest_tails():
    """Rows with the total between the bounds' sums (one where two bounds cross by rounding),
    and one whose upper bounds sum below the total (every point keeps its upper bound): the
    masses lie between the bounds, sum to min(sum upper, total), and their head sums are
    min(sum_{j <= k} upper_j, total - sum_{j > k} lower_j), at or above every such law's."""
    rng = np.random.default_rng(11)
    rows, n = 5, 30
    lower = rng.uniform(0.0, 1.0, (rows, n)) ** 3
    upper = lower + rng.uniform(0.0, 0.2, (rows, n)) * (rng.uniform(size=(rows, n)) < 0.7)
    lower[1, 7] = np.nextafter(upper[1, 7], 2.0)  # crossed by rounding: clipped to the upper bound
    share = np.array([0.1, 0.5, 0.9, 0.999, 1.5])  # where the total lies between sum lower and sum upper
    total = lower.sum(-1) + share * (upper - np.minimum(lower, upper)).sum(-1)
    got = np.asarray(head_heavy(jnp.asarray(lower), jnp.asarray(upper), jnp.asarray(total[:, None])))
    low = np.minimum(lower, upper)
    assert np.all(got >= low) and np.all(got <= upper)
    np.testing.assert_allclose(got.sum(-1), np.minimum(upper.sum(-1), total), rtol=1e-14)
    np.testing.assert_array_equal(got[4], upper[4])  # the upper bounds sum below the total
    suffix_lower = np.cumsum(low[:, ::-1], -1)[:, ::-1] - low  # sum_{j > k} lower_j
    heads = np.cumsum(got, -1)
    np.testing.assert_allclose(heads, np.minimum(np.cumsum(upper, -1), total[:, None] - suffix_lower),
                               rtol=1e-13, atol=1e-14)
    for r in range(4):
        laws = _laws_between(low[r], upper[r], total[r], rng, 200)
        np.testing.assert_allclose(laws.sum(-1), total[r], rtol=1e-13)
        assert np.all(heads[r] >= np.cumsum(laws, -1) - 1e-13), r  # Pr[Y <= x]: at least any law's
        tails = got[r].sum() - heads[r]
        assert np.all(tails <= laws.sum(-1, keepdims=True) - np.cumsum(laws, -1) + 1e-13), r  # Pr[Y > x]: at most
