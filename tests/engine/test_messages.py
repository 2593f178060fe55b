"""How error messages quote values (dpax._engine.messages.brief): one line, at most the
limit, never a whole array, and never an exception from a hostile __repr__."""

from __future__ import annotations

import numpy as np
import pytest

from dpax._engine import messages


class Hostile:
    def __repr__(self):
        raise RuntimeError("no repr")


class Long:
    def __repr__(self):
        return "line one\nline two " + "x" * 500


@pytest.mark.parametrize("value", [
    np.arange(10**6), np.ones((1000, 1000)), list(range(10**5)), "s" * 10**5, {i: i for i in range(100)},
    np.ma.masked_array(np.arange(100), mask=np.arange(100) % 2), Long(), (1, (2, (3, (4, (5,))))), b"\x00" * 1000,
])
def test_brief_is_one_short_line(value):
    text = messages.brief(value)
    assert "\n" not in text and len(text) <= messages.BRIEF_CHARS
    assert messages.brief(value, limit=20) == text or len(messages.brief(value, limit=20)) <= 20


def test_brief_keeps_small_values_whole_and_shows_a_large_arrays_shape():
    assert messages.brief(0.1) == "0.1" and messages.brief([1, 2]) == "[1, 2]" and messages.brief("a") == "'a'"
    assert messages.brief(np.array([1.5, 2.0])) == "array([1.5, 2. ])"
    assert messages.brief(np.zeros(10**4)).endswith("shape=(10000,))")


def test_brief_survives_a_hostile_repr():
    assert messages.brief(Hostile()).startswith("<Hostile")
