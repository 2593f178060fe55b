"""A composition's far tails bounded through tilted laws (dpax._engine.tail_bounds): the
tightened pair is on the safe side of the closed form wherever the plain one is, much closer
to it far in the tails, and a closed law; DP-SGD's mu from it lies between the companion's
and the plain pair's."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import dpax
from dpax.privacy_loss.tails import tight_tails
from exact_refs import gdp_delta, gdp_epsilon

DELTAS = np.array([1e-14, 1e-12, 1e-10, 1e-6, 1e-3])


# mu4.34 is slow (kernels of its own at grid 3e-3); default sibling: mu4, the same checks
@pytest.mark.parametrize("noise, steps, grid", [(1.0, 16, 1e-2), pytest.param(0.5155, 5, 3e-3, marks=pytest.mark.slow)],
                         ids=["mu4", "mu4.34"])
def test_the_tightened_pair_is_on_the_safe_side_and_closer(noise, steps, grid):
    """Composed Gaussians (exactly mu-GDP, mu = sqrt(T) / noise): epsilon(delta) from 1e-14 to
    1e-3 and delta(epsilon) from 0 to 20 of the tightened pair at or above the closed form,
    and at delta 1e-14 at least four times closer to it than the plain pair's (measured: 5.0
    and 7,600 times; the second case once read epsilon(1e-18) 1.7% below the truth, before
    the round-off was booked). Away from the tails the two agree to 1e-6."""
    pl = dpax.gaussian(noise, grid_step=grid).self_compose(steps)
    tight = tight_tails(pl)
    plain = dpax.PrivacyLoss.from_pair(pl.pair, pl.grid_step, "plain", (), True)  # the arrays alone: no recipe
    mu = np.sqrt(steps) / noise
    truth = np.array([gdp_epsilon(d, mu) for d in DELTAS])
    plain_eps, tight_eps = plain.epsilon(DELTAS), tight.epsilon(DELTAS)
    near = (DELTAS < 1e-6) & (DELTAS < 1e3 * dpax.privacy_loss.tails.booked_roundoff(pl.pair)[0])
    np.testing.assert_array_equal(pl.epsilon(DELTAS), np.minimum(plain_eps, np.where(near, tight_eps, np.inf)))
    assert np.all(tight_eps >= truth * (1 - 1e-12))
    assert tight_eps[0] - truth[0] < (plain_eps[0] - truth[0]) / 4
    np.testing.assert_allclose(tight_eps[3:], plain_eps[3:], rtol=1e-6)
    eps = np.array([0.0, 1.0, 5.0, 20.0])
    assert np.all(tight.delta(eps) >= np.array([gdp_delta(e, mu) for e in eps]) * (1 - 1e-12))


def test_the_tightened_pair_is_a_closed_law_of_the_same_shape():
    """Nonnegative masses whose totals with the atoms are 1 to 1e-14, on the plain pair's grid
    and offsets; the same mu as the plain pair where its Eq. 29 terms are flat (a Gaussian's).
    (The first case above: its kernels.)"""
    pl = dpax.gaussian(1.0, grid_step=1e-2).self_compose(16)
    tight = tight_tails(pl)
    assert tight.batch_shape == pl.batch_shape and tight.support_length == pl.support_length
    assert np.array_equal(np.asarray(tight.offset), np.asarray(pl.offset))
    for pmf, atom in ((tight.pmf_y, tight.inf_mass_y), (tight.pmf_x, tight.neginf_mass_x)):
        pmf = np.asarray(pmf)
        assert np.all(pmf >= 0)
        np.testing.assert_allclose(pmf.sum(-1) + np.asarray(atom), 1.0, atol=1e-14)
    np.testing.assert_allclose(dpax.gdp.mu_and_regret(tight)[0], 4.0, rtol=1e-4)


# slow (the companion's kernels of its own); default sibling:
# tests/gdp/test_gdp_mu_regret.py::test_mu_reads_tightened_tails_where_the_booking_could_move_it
# (the same DP-SGD's mu against the companion's value)
@pytest.mark.slow
def test_dpsgd_mu_from_the_tightened_pair_lies_in_the_bracket():
    """DP-SGD (noise 1, sample rate 1e-3, 10 steps, grid 1e-3): mu is set at the box's corner
    (FPR 1e-10), where the plain pair's booked round-off gives 0.0923; the tightened pair's
    0.070379 lies 4.6e-5 above the companion's 0.070332 (measured)."""
    pl = dpax.dpsgd(1.0, 1e-3, 10, grid_step=1e-3)
    optimistic = dpax.gdp.mu_and_regret(pl.optimistic_companion())[0]
    tight = dpax.gdp.mu_and_regret(tight_tails(pl))[0]
    # the same arrays without the recipe: the plain pair's mu
    plain = dpax.gdp.mu_and_regret(dpax.PrivacyLoss.from_pair(pl.pair, pl.grid_step, "plain", (), True))[0]
    assert optimistic <= tight < optimistic + 1e-4 and tight < plain - 0.02


def test_the_tightening_is_refused_up_front_over_the_budget(monkeypatch):
    """Under a budget the composition fits but the tightening does not, it is refused with
    the budget's error before its kernel runs (and mu keeps the plain pair's answer)."""
    from dpax._engine import composition as compose
    from dpax._engine import grid, tail_bounds
    one = dpax.gaussian(1.0, grid_step=1e-2)
    with jax.enable_x64(True):
        comp = compose.compose_arrays((one.pair,), (np.array([16]),), np.float64(1e-2), True, tilted=True,
                                      closed=False)
        rows, n = comp.pair.pmf_x.shape
        monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", tail_bounds.TIGHTEN_BYTES_PER_POINT * rows * n - 1)
        with pytest.raises(grid.MemoryBudgetError, match="far-tail bounds"):
            tail_bounds.tighten(comp, np.array([16.0]), 1e-2)
