"""Reading dp-accounting event trees (dpax.events.tally): counts multiply through nested
self-compositions and add up over equal mechanisms, no-ops vanish, a non-private mechanism
is flagged, and relations and unsupported events are named."""

from __future__ import annotations

import pytest

dp_accounting = pytest.importorskip("dp_accounting")

from dp_accounting import NeighboringRelation, dp_event  # noqa: E402

from dpax.events.tally import Leaf, UnsupportedEvent, relation, tally  # noqa: E402


def test_counts_multiply_through_nesting_and_add_over_equal_mechanisms():
    g, lap = dp_event.GaussianDpEvent(2.0), dp_event.LaplaceDpEvent(1.0)
    tree = dp_event.ComposedDpEvent([
        dp_event.SelfComposedDpEvent(dp_event.ComposedDpEvent([g, dp_event.SelfComposedDpEvent(lap, 3)]), 5),
        g, dp_event.NoOpDpEvent(),
    ])
    got = tally(tree, count=2)
    assert got.counts == {Leaf("gaussian", (0.5,)): 2 * (5 + 1), Leaf("laplace", (1.0,)): 2 * 5 * 3}
    assert not got.non_private
    assert not any(tally(tree, count=0).counts.values())  # run zero times: every count 0


def test_a_subevent_composed_zero_times_runs_nothing_but_must_be_readable():
    assert tally(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(1.0), 0)).counts == {}
    with pytest.raises(UnsupportedEvent):
        tally(dp_event.SelfComposedDpEvent(dp_event.UnsupportedDpEvent(), 0))


def test_a_non_private_mechanism_is_flagged():
    tree = dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(1.0), dp_event.NonPrivateDpEvent()])
    assert tally(tree).non_private


@pytest.mark.parametrize("given, name", [
    ("add_remove", "add_remove"), ("ADD_OR_REMOVE_ONE", "add_remove"), ("REPLACE_ONE", "substitution"),
    (NeighboringRelation.REPLACE_ONE, "substitution"), (NeighboringRelation.REPLACE_SPECIAL, "replace_special"),
])
def test_relation_takes_dpax_and_dp_accounting_names(given, name):
    assert relation(given) == name


def test_an_unknown_relation_is_refused_by_the_arguments_name():
    with pytest.raises(ValueError, match=r"^neighboring_relation must be one of .*got 'sideways'"):
        relation("sideways", name="neighboring_relation")
