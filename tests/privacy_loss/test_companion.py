"""dpax.privacy_loss.companion: the optimistic companion is built once per value, kept
outside it (weakly), and never changes the value."""

from __future__ import annotations

import gc
import weakref

import pytest

import dpax
from dpax.privacy_loss import companion
from dpax.privacy_loss.fields import NO_COMPANION, replaced
from exact_refs import gdp_advantage, gdp_delta


def _counting(pl):
    """``pl`` with a companion recipe that counts its calls (the mechanism's own recipe)."""
    calls = []
    recipe = pl._companion

    def counted():
        calls.append(1)
        return recipe()

    return replaced(pl, companion=counted), calls


def test_a_second_bounded_query_reuses_the_companion():
    pl, calls = _counting(dpax.gaussian(1.0, grid_step=1e-2))
    first = pl.delta(1.0, bounds=True)
    second = pl.delta(1.0, bounds=True)
    assert calls == [1]  # built once, for both queries
    assert first == second
    truth = gdp_delta(1.0, 1.0)
    assert first.optimistic <= truth <= first.safe
    assert pl.optimistic_companion() is pl.optimistic_companion() is companion.optimistic_companion(pl)


def test_the_value_is_unchanged_by_its_companion():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    before = dict(vars(pl))
    adv = pl.advantage(bounds=True)
    assert adv.optimistic <= gdp_advantage(1.0) <= adv.safe
    after = vars(pl)
    assert after.keys() == before.keys() and all(after[k] is before[k] for k in before)
    comp = pl.optimistic_companion()
    assert comp.description == f"{pl.description} (optimistic)" and comp.optimistic


def test_bounds_is_a_deprecated_name_of_the_companion():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    with pytest.warns(DeprecationWarning, match="optimistic_companion"):
        assert pl.bounds() is pl.optimistic_companion()


def test_the_memo_does_not_keep_a_value_alive():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    pl.optimistic_companion()
    ref = weakref.ref(pl)
    size = len(companion._MEMO)
    del pl
    gc.collect()
    assert ref() is None and len(companion._MEMO) == size - 1


def test_no_companion_names_the_reason():
    pl = dpax.approximate_dp(1.0, 1e-5, grid_step=1e-2)
    with pytest.raises(ValueError, match="no optimistic companion exists for approximate_dp.*worst case"):
        pl.optimistic_companion()
    rebuilt = dpax.PrivacyLoss(pl.pmf_x, pl.pmf_y, pl.offset, pl.inf_mass_y, pl.neginf_mass_x, pl.grid_step)
    with pytest.raises(ValueError, match="bounded from the safe side only"):
        rebuilt.advantage(bounds=True)
    assert rebuilt._companion == NO_COMPANION


def test_derived_rows_of_a_companion_keep_their_slack():
    comp = dpax.gaussian([1.0, 2.0], grid_step=1e-2).optimistic_companion()
    row = comp[1]
    assert row.optimistic and companion.need_slack(row) is not None
    # the slack lets the row compose as a companion: on or below the truth (mu = 0.5 sqrt 2)
    assert row.self_compose(2).advantage() <= gdp_advantage(0.5 * 2**0.5) + 1e-12
    lost = dpax.PrivacyLoss(row.pmf_x, row.pmf_y, row.offset, row.inf_mass_y, row.neginf_mass_x, row.grid_step,
                            optimistic=True)
    with pytest.raises(ValueError, match="lost its ratio bounds"):
        companion.need_slack(lost)
