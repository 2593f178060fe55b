"""Shape checks (dpax._engine.shapes): broadcasting named arguments, selecting rows of a
batch, and shapes given as arguments; every error names the argument."""

from __future__ import annotations

import numpy as np
import pytest

from dpax._engine import shapes


def test_broadcast_shapes_names_the_pair_that_does_not_broadcast():
    named = (("noise_multiplier", np.ones(2)), ("num_steps", np.ones((4, 1))), ("sample_rate", np.ones(3)))
    with pytest.raises(ValueError, match=r"noise_multiplier \(shape \(2,\)\) and sample_rate \(shape \(3,\)\)"):
        shapes.broadcast_shapes(*named)
    assert shapes.broadcast_shapes(named[0], named[1], ("delta", (1,))) == (4, 2)


def test_broadcast_arrays_gives_views_of_the_broadcast_shape():
    a, b = shapes.broadcast_arrays(("epsilon", np.arange(3.0)), ("delta", np.ones((2, 1))))
    assert a.shape == b.shape == (2, 3)
    np.testing.assert_array_equal(a[1], np.arange(3.0))


@pytest.mark.parametrize("key, expected", [
    (1, 1), ([0, 2], [0, 2]), (slice(1, None), [1, 2]), (np.array([True, False, True]), [0, 2]), (-1, 2),
])
def test_batch_rows_selects_like_numpy(key, expected):
    np.testing.assert_array_equal(shapes.batch_rows("index", key, (3,), "batch"), expected)


def test_batch_rows_of_a_two_dimensional_batch_are_flat_row_numbers():
    np.testing.assert_array_equal(shapes.batch_rows("index", (1, slice(None)), (2, 3), "batch"), [3, 4, 5])
    np.testing.assert_array_equal(shapes.batch_rows("index", (slice(None), 0), (2, 3), "batch"), [0, 3])


@pytest.mark.parametrize("key, error, text", [
    (None, TypeError, "would add an axis"),
    (True, TypeError, "would add an axis"),
    ((0, None), TypeError, "would add an axis"),
    (5, IndexError, "is not an index into a batch of shape"),
    (1.5, IndexError, "is not an index into a batch of shape"),
    ([], ValueError, "selects none of the 3 rows"),
    (np.zeros(3, bool), ValueError, "selects none of the 3 rows"),
])
def test_batch_rows_refuses_with_the_arguments_name(key, error, text):
    with pytest.raises(error, match=text) as info:
        shapes.batch_rows("my_index", key, (3,), "PrivacyLoss")
    assert str(info.value).startswith("my_index")


@pytest.mark.parametrize("value, expected", [([2, 3], (2, 3)), ((), ()), (np.array([4]), (4,)), ((np.int64(2),), (2,))])
def test_shape_tuple_takes_sequences_of_integers(value, expected):
    assert shapes.shape_tuple(value) == expected


@pytest.mark.parametrize("value, error", [
    ("23", TypeError), ((2.0,), TypeError), ((True, 2), TypeError), (3, TypeError), ((-1,), ValueError),
])
def test_shape_tuple_refuses_with_the_arguments_name(value, error):
    with pytest.raises(error, match=r"^batch_shape must"):
        shapes.shape_tuple(value, name="batch_shape")
    with pytest.raises(ValueError, match=r"integers >= 1 \(rows\), got \(0, 2\)"):
        shapes.shape_tuple((0, 2), low=1, what="rows")
