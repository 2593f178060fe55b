"""dpax.privacy_loss.interval: the bracket's ends and membership, and the round-off rule of
:func:`uncrossed` (sides within CROSSING_ROUNDOFF are one number)."""

from __future__ import annotations

import numpy as np
import pytest

from dpax.privacy_loss.interval import CROSSING_ROUNDOFF, Interval, real_or_infinite, uncrossed


def test_ends_and_membership():
    b = Interval(np.array([0.2, 0.5]), np.array([0.1, 0.7]))
    np.testing.assert_array_equal(b.lower, [0.1, 0.5])
    np.testing.assert_array_equal(b.upper, [0.2, 0.7])
    np.testing.assert_allclose(b.width, [0.1, 0.2])
    np.testing.assert_array_equal(b.contains([0.15, 0.8]), [True, False])
    assert Interval(1.0, np.inf).contains(np.inf) and not Interval(1.0, 2.0).contains(2.5, tol=0.4)
    with pytest.raises(ValueError, match="value"):
        real_or_infinite("value", [np.nan])


def test_round_off_is_merged_and_a_crossing_is_not():
    s = 0.25
    near = uncrossed(s, s * (1 + CROSSING_ROUNDOFF / 2), True, 0.0, "delta")
    assert near.optimistic == s  # round-off of two equal numbers: the safe one
    with pytest.warns(RuntimeWarning, match="delta: the optimistic companion's answer crossed"):
        far = uncrossed(s, s * (1 + 4 * CROSSING_ROUNDOFF), True, 0.0, "delta")
    assert far.optimistic == 0.0 and far.safe == s
    kept = uncrossed(0.5, 0.4, True, 0.0, "delta")  # on its side: unchanged
    assert kept == (0.5, 0.4)


@pytest.mark.parametrize("sides, name", [(("a", 1.0), "safe"), ((1.0, 2j), "optimistic"), ((True, 0.5), "safe")])
def test_a_hand_built_bracket_with_sides_that_are_not_real_numbers_names_the_side(sides, name):
    for end in ("lower", "upper", "width"):
        with pytest.raises(TypeError, match=f"Interval's {name} side must be real numbers"):
            getattr(Interval(*sides), end)
