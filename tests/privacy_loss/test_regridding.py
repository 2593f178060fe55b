"""dpax.privacy_loss.regridding: connect-the-dots onto another grid dominates the pair (its
risks on the safe side), exact on a refinement; a companion stays optimistic."""

from __future__ import annotations

import numpy as np
import pytest

import dpax
from dpax.privacy_loss.fields import gdp_bound_rows
from dpax.privacy_loss.regridding import regrid
from exact_refs import gdp_advantage, gdp_beta


def test_regrid_dominates_and_a_refinement_is_exact():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    coarse = regrid(pl, 4e-2)
    assert coarse.grid_step == 4e-2 and regrid(pl, 1e-2) is pl
    alphas = np.array([0.01, 0.1, 0.5])
    assert np.all(coarse.beta(alphas) <= pl.beta(alphas) + 1e-12)  # dominates: curve on or below
    assert coarse.advantage() >= pl.advantage() - 1e-12
    fine = regrid(pl, 5e-3)  # its points include the old ones
    assert fine.advantage() == pytest.approx(pl.advantage(), abs=1e-12)
    np.testing.assert_array_equal(gdp_bound_rows(coarse), gdp_bound_rows(pl))


def test_a_regridded_companion_stays_optimistic():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    comp = regrid(pl.optimistic_companion(), 4e-2)
    assert comp.optimistic and comp.description == pl.optimistic_companion().description
    assert comp.advantage() <= gdp_advantage(1.0) <= regrid(pl, 4e-2).advantage()
    assert np.all(comp.beta([0.01, 0.1]) >= gdp_beta(np.array([0.01, 0.1]), 1.0) - 1e-12)
    assert regrid(pl, 4e-2).optimistic_companion().advantage() <= gdp_advantage(1.0)  # the regridded pair's companion
