"""dpax.privacy_loss.fields: what a value holds is fixed at construction; a changed field
is a new value sharing the arrays; the pytree carries the facts but not the recipe."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import dpax
from dpax.privacy_loss.fields import NO_COMPANION, gdp_bound_rows, gdp_rows, replaced


def test_gdp_rows_raise_the_closed_form_by_ulps():
    rows = gdp_rows(np.array([[0.5], [2.0]]), (2, 3))
    assert rows.shape == (6,)
    assert np.all(rows > np.repeat([0.5, 2.0], 3)) and np.all(rows < np.repeat([0.5, 2.0], 3) * (1 + 1e-14))
    assert np.array_equal(gdp_rows([0.5, 2.0], (2,)), np.array([0.5, 2.0]) * (1 + 1e-15))  # already rows
    assert gdp_rows(np.nan, ()).tolist() == [np.inf]  # unknown: no bound


def test_replaced_shares_the_arrays_and_leaves_the_original():
    pl = dpax.gaussian([1.0, 2.0], grid_step=1e-2)
    new = replaced(pl, description="renamed", gdp_mu=[3.0, 4.0])
    assert new.pair is pl.pair and new.batch_shape == pl.batch_shape and new.exact_ratio
    assert new.description == "renamed" and pl.description.startswith("gaussian(")
    np.testing.assert_allclose(gdp_bound_rows(new), [3.0, 4.0], rtol=1e-14)
    np.testing.assert_allclose(gdp_bound_rows(pl), [1.0, 0.5], rtol=1e-14)
    assert new._companion is pl._companion  # the same recipe


def test_the_pytree_carries_the_facts_but_not_the_recipe():
    pl = dpax.gaussian(2.0, grid_step=1e-2)
    copy = jax.tree_util.tree_map(lambda a: a, pl)
    assert type(copy) is dpax.PrivacyLoss and copy.description == pl.description
    np.testing.assert_array_equal(gdp_bound_rows(copy), gdp_bound_rows(pl))
    assert copy._companion == NO_COMPANION
    with pytest.raises(ValueError, match="no optimistic companion"):
        copy.optimistic_companion()
    comp = jax.tree_util.tree_map(lambda a: a, pl.optimistic_companion())
    assert comp.optimistic and comp._slack.to_aux() == pl.optimistic_companion()._slack.to_aux()
    assert comp.advantage() == pl.optimistic_companion().advantage()


def test_a_hand_built_value_is_checked_and_complete():
    with pytest.raises(ValueError, match="pmf_x with neginf_mass_x must have a total mass of 1"):
        dpax.PrivacyLoss([0.5, 0.4], [0.5, 0.5], 0, 0.0, 0.0, 1.0)
    pl = dpax.PrivacyLoss([0.5, 0.5], [0.5, 0.5], 0, 0.0, 0.0, 1.0)
    assert set(vars(pl)) == {"_pair", "_batch_shape", "grid_step", "description", "exact_ratio", "optimistic",
                             "_slack", "_gdp_bound", "_companion", "_tails"}
    assert gdp_bound_rows(pl) is None and pl.advantage() == 0.0
