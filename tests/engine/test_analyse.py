"""The building blocks of the breakpoint tables: blocked running sums and the level search."""

import math

import numpy as np
import pytest

from dpax._engine import analyse

jax = pytest.importorskip("jax")
jnp = jax.numpy


@pytest.mark.parametrize("n", [1, 8, 9, 65, 4097])
def test_prefix_sum_forward_and_reverse(n):
    rng = np.random.default_rng(n)
    a = rng.random((3, n)) ** 6
    a[1, ::3] = 0.0
    with jax.enable_x64(True):
        fwd = np.asarray(analyse.prefix_sum(jnp.asarray(a)))
        rev = np.asarray(analyse.prefix_sum(jnp.asarray(a), reverse=True))
        head = np.asarray(analyse.head_sums(jnp.asarray(a)))
        tail = np.asarray(analyse.tail_sums(jnp.asarray(a)))
    want_fwd = np.array([[math.fsum(row[: k + 1]) for k in range(n)] for row in a])
    want_rev = np.array([[math.fsum(row[k:]) for k in range(n)] for row in a])
    np.testing.assert_allclose(fwd, want_fwd, rtol=1e-14, atol=0)
    np.testing.assert_allclose(rev, want_rev, rtol=1e-14, atol=0)
    assert head.shape == tail.shape == (3, n + 1)
    np.testing.assert_array_equal(head[:, 0], 0.0)
    np.testing.assert_array_equal(tail[:, -1], 0.0)
    np.testing.assert_array_equal(head[:, 1:], fwd)
    np.testing.assert_array_equal(tail[:, :-1], rev)


def test_tail_sums_keep_relative_precision_far_out():
    """Masses falling over 300 orders of magnitude: every tail sum (a tiny alpha) is right to
    a few ulps relative, which a sum formed as total - head sum would lose entirely."""
    n = 3000
    a = np.exp(-np.linspace(0.0, 690.0, n))
    with jax.enable_x64(True):
        tail = np.asarray(analyse.tail_sums(jnp.asarray(a[None, :])))[0, :-1]
    want = np.array([math.fsum(a[k:]) for k in range(n)])
    np.testing.assert_allclose(tail, want, rtol=1e-14, atol=0)
    assert want[-1] < 1e-298


@pytest.mark.parametrize("n,queries", [(1, 40), (3, 40), (9, 40), (69, 40), (70, 40), (4097, 40), (327681, 40),
                                       (5, 600), (4097, 600)])
def test_first_true_is_a_search(n, queries):
    """Both strategies: the level search (few queries) and bisection (many)."""
    rng = np.random.default_rng(n)
    table = np.sort(rng.random(n))
    keys = np.concatenate([rng.random(queries), [-1.0, 2.0], table[:3], table[-3:]])
    with jax.enable_x64(True):
        t = jnp.asarray(table)
        q = jnp.asarray(keys)
        got = np.asarray(analyse.first_true(lambda k: t[k] >= q[..., None], n, q.shape))
    np.testing.assert_array_equal(got, np.searchsorted(table, keys, side="left"))
