"""dpax.targets.base: the Target interface's row selection (take): an index that selects no row
is refused with the index and the rows it could select, one out of range as an IndexError, and
fields broadcast to the rows before they are taken."""

from __future__ import annotations

import numpy as np
import pytest

from dpax.targets import GDP, Advantage, All, ErrRates


@pytest.mark.parametrize("index", [[], np.array([], int), slice(1, 1), np.zeros(2, bool)])
def test_take_of_no_rows_says_so(index):
    """An index that selects no row was refused as "advantage must not be empty" (the rebuilt
    target's own check): the message now names the index and the rows it could select."""
    for target in (Advantage([0.1, 0.2]), All(Advantage([0.1, 0.2]), GDP(1.0)).flat((2,))):
        with pytest.raises(ValueError, match=r"index .* selects none of the 2 rows of the target; select at least one"):
            target.take(index)
    with pytest.raises(IndexError, match=r"index .* is not an index into a batch of shape \(2,\)"):
        Advantage([0.1, 0.2]).take([5])
    assert Advantage([0.1, 0.2]).take(np.array([True, False])).advantage.tolist() == [0.1]
    assert ErrRates([0.01, 0.1], 0.5).take([1]).alpha.tolist() == [0.1]  # beta broadcast to the rows
