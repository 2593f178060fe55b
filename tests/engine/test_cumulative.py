"""The building blocks of the breakpoint tables: blocked running sums and the level search."""

from fractions import Fraction

import numpy as np
import pytest

from dpax._engine import cumulative

jax = pytest.importorskip("jax")
jnp = jax.numpy

_ULP = 2**1074  # every double is an integer multiple of 2^-1074


def _running_sums(values):
    """The running sums of ``values``, each exact and then correctly rounded (what
    ``math.fsum(values[: k + 1])`` gives, in one pass: exact integer sums in units of
    2^-1074 instead of n sums of up to n terms)."""
    acc, out = 0, []
    for v in values:
        num, den = float(v).as_integer_ratio()  # den is a power of two <= 2^1074
        acc += num * (_ULP // den)
        out.append(float(Fraction(acc, _ULP)))  # correctly rounded, as fsum
    return np.array(out)


@pytest.mark.parametrize("n", [1, 8, 9, 65, 4097])
def test_prefix_sum_forward_and_reverse(n):
    rng = np.random.default_rng(n)
    a = rng.random((3, n)) ** 6
    a[1, ::3] = 0.0
    with jax.enable_x64(True):
        fwd = np.asarray(cumulative.prefix_sum(jnp.asarray(a)))
        rev = np.asarray(cumulative.prefix_sum(jnp.asarray(a), reverse=True))
        head = np.asarray(cumulative.head_sums(jnp.asarray(a)))
        tail = np.asarray(cumulative.tail_sums(jnp.asarray(a)))
    want_fwd = np.array([_running_sums(row) for row in a])
    want_rev = np.array([_running_sums(row[::-1])[::-1] for row in a])
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
    n = 4097  # three rows of n: the shapes test_prefix_sum_forward_and_reverse[4097] compiled
    a = np.exp(-np.linspace(0.0, 690.0, n))
    with jax.enable_x64(True):
        tail = np.asarray(cumulative.tail_sums(jnp.asarray(np.stack([a] * 3))))[0, :-1]
    want = _running_sums(a[::-1])[::-1]
    np.testing.assert_allclose(tail, want, rtol=1e-14, atol=0)
    assert want[-1] < 1e-298


# slow: (3, 40) and (9, 40), ranges shorter than the search's S^3 keys; the default run
# keeps (1, 40) (a single key) and the others of the level search
@pytest.mark.parametrize("n,queries", [(1, 40), pytest.param(3, 40, marks=pytest.mark.slow),
                                       pytest.param(9, 40, marks=pytest.mark.slow), (69, 40), (70, 40),
                                       (4097, 40), (327681, 40), (5, 600), (4097, 600)])
def test_first_true_is_a_search(n, queries):
    """Both strategies: the level search (few queries) and bisection (many)."""
    rng = np.random.default_rng(n)
    table = np.sort(rng.random(n))
    keys = np.concatenate([rng.random(queries), [-1.0, 2.0], table[:3], table[-3:]])
    with jax.enable_x64(True):
        t = jnp.asarray(table)
        q = jnp.asarray(keys)
        got = np.asarray(cumulative.first_true(lambda k: t[k] >= q[..., None], n, q.shape))
    np.testing.assert_array_equal(got, np.searchsorted(table, keys, side="left"))


def test_first_max_index_is_argmax():
    """first_max_index: the first index of the largest entry per row, NaN counting as the
    largest, as jnp.argmax (ties, -inf rows, NaN, one entry)."""
    rows = np.array([[0.0, 3.0, 1.0, 3.0], [-np.inf] * 4, [1.0, np.nan, 5.0, np.nan], [2.0, 2.0, 2.0, 2.0],
                     [-1.0, -5.0, -0.5, -0.5]])
    rng = np.random.default_rng(3)
    rows = np.concatenate([rows, rng.integers(0, 4, (20, 4)).astype(float)])
    got = np.asarray(cumulative.first_max_index(jnp.asarray(rows)))
    np.testing.assert_array_equal(got, np.asarray(jnp.argmax(jnp.asarray(rows), -1)))
    np.testing.assert_array_equal(got[:5], [1, 0, 1, 0, 2])
    wide = rng.random((2, 327680))
    np.testing.assert_array_equal(np.asarray(cumulative.first_max_index(jnp.asarray(wide))), np.argmax(wide, -1))
