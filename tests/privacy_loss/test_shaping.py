"""dpax.privacy_loss.shaping: selected and broadcast rows keep their arrays, GDP bounds
and companions (the same rows of the companion)."""

from __future__ import annotations

import numpy as np
import pytest

import dpax
from dpax.privacy_loss.fields import gdp_bound_rows
from dpax.privacy_loss.shaping import broadcast_to, select
from exact_refs import gdp_advantage


def test_selected_rows_are_the_rows_with_their_companion():
    pl = dpax.gaussian([1.0, 2.0, 4.0], grid_step=1e-2)
    row = select(pl, 1)
    assert row.batch_shape == () and row.description.endswith("[1]")
    np.testing.assert_array_equal(row.pmf_y, pl.pmf_y[1])
    np.testing.assert_allclose(gdp_bound_rows(row), [0.5], rtol=1e-14)
    assert row.optimistic_companion().advantage() == pl.optimistic_companion().advantage()[1]
    assert row.optimistic_companion().advantage() <= gdp_advantage(0.5) <= row.advantage()
    two = select(pl, [2, 0])
    assert two.batch_shape == (2,) and two.description.endswith("[2 of 3 rows]")
    np.testing.assert_array_equal(two.advantage(bounds=True).optimistic, pl.optimistic_companion().advantage()[[2, 0]])
    with pytest.raises(IndexError, match="single PrivacyLoss"):
        select(row, 0)


def test_broadcast_rows_repeat_the_batch():
    pl = dpax.gaussian([1.0, 2.0], grid_step=1e-2)
    wide = broadcast_to(pl, (3, 2))
    assert wide.batch_shape == (3, 2) and broadcast_to(pl, (2,)) is pl
    np.testing.assert_array_equal(wide.advantage(), np.tile(pl.advantage(), (3, 1)))
    np.testing.assert_array_equal(wide.optimistic_companion().advantage(),
                                  np.tile(pl.optimistic_companion().advantage(), (3, 1)))
    np.testing.assert_array_equal(gdp_bound_rows(wide), np.tile(gdp_bound_rows(pl), 3))
    with pytest.raises(ValueError, match="not one that batch_shape"):
        broadcast_to(pl, (3,))
