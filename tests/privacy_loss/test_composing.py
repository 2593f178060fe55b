"""dpax.privacy_loss.composing: compositions of Gaussians against the closed form (GDP
composes exactly: mu = sqrt(sum of count mu_i^2)), their GDP bounds and companions."""

from __future__ import annotations

import numpy as np
import pytest

import dpax
from dpax.privacy_loss.composing import compose, compose_with, self_compose
from dpax.privacy_loss.fields import gdp_bound_rows
from exact_refs import gdp_advantage, gdp_delta


def test_counted_composition_is_the_composed_gaussian():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    c = compose((pl, 2), (pl, 2))  # mu = 2
    a = c.advantage(bounds=True)
    assert a.optimistic <= gdp_advantage(2.0) <= a.safe and a.width < 1e-4
    d = c.delta(1.0, bounds=True)
    assert d.optimistic <= gdp_delta(1.0, 2.0) <= d.safe
    np.testing.assert_allclose(gdp_bound_rows(c), [2.0], rtol=1e-14)
    assert gdp_bound_rows(c)[0] > 2.0  # raised, never rounded below the closed form
    assert compose(pl) is pl


# ~4 s (kernels of its own); default siblings: test_counted_composition_is_the_composed_gaussian (a composed
# Gaussian's bracket and GDP bound), tests/engine/test_companion_tails.py::test_far_tail_epsilon_brackets_the_truth
# (self_compose(16)'s companion bracket), tests/privacy_loss/test_tails.py::test_views_are_tightened_as_the_composition
# (array num_steps broadcast: each row as alone) and tests/gdp/test_gdp_mu_regret.py::test_tail_zero_and_infinite_atoms
# (DP-SGD's sqrt(T) / sigma bound through self_compose)
@pytest.mark.slow
def test_self_compose_broadcasts_steps_and_carries_the_companion():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    c = self_compose(pl, [1, 4])
    assert c.batch_shape == (2,) and c.description.endswith(" x num_steps")
    truth = [gdp_advantage(1.0), gdp_advantage(2.0)]
    a = c.advantage(bounds=True)
    assert np.all(a.optimistic <= truth) and np.all(np.array(truth) <= a.safe)
    np.testing.assert_allclose(gdp_bound_rows(c), [1.0, 2.0], rtol=1e-14)
    assert self_compose(pl, 1) is pl


def test_compose_refuses_what_it_cannot_compose():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    with pytest.raises(TypeError, match=r"other must be a PrivacyLoss .*self_compose\(3\)"):
        compose_with(pl, 3)
    with pytest.raises(ValueError, match="cannot mix optimistic companions"):
        compose(pl, pl.optimistic_companion())
    profile = dpax.approximate_dp(1.0, 1e-5, grid_step=1e-2)
    with pytest.raises(ValueError, match="compose argument 1 has none: approximate_dp"):
        compose(pl, profile).optimistic_companion()
