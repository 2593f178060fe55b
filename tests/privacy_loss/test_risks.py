"""dpax.privacy_loss.risks: the risk functions against the Gaussian's closed forms (mu-GDP,
Dong, Roth & Su 2022), their brackets, and a crossed bracket's fallback and warning."""

from __future__ import annotations

import numpy as np
import pytest

import dpax
from dpax.privacy_loss import risks
from dpax.privacy_loss.companion import optimistic_companion
from dpax.privacy_loss.fields import replaced
from exact_refs import gdp_advantage, gdp_beta, gdp_delta, gdp_epsilon

#: the grid's cost at grid_step 1e-2 for mu = 1 (measured widths are ~1e-5)
GRID = 1e-4


def test_risks_bracket_the_gaussian_truth():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    alphas, eps, deltas = np.array([1e-3, 0.1, 0.5]), np.array([0.0, 1.0, 3.0]), np.array([1e-5, 1e-3])
    b = risks.beta(pl, alphas, bounds=True)
    assert np.all(b.safe <= gdp_beta(alphas, 1.0)) and np.all(gdp_beta(alphas, 1.0) <= b.optimistic)
    assert np.all(b.width < GRID)
    d = risks.delta(pl, eps, bounds=True)
    assert np.all(d.optimistic <= gdp_delta(eps, 1.0)) and np.all(gdp_delta(eps, 1.0) <= d.safe)
    e = risks.epsilon(pl, deltas, bounds=True)
    truth = np.array([gdp_epsilon(x, 1.0) for x in deltas])
    assert np.all(e.optimistic <= truth) and np.all(truth <= e.safe) and np.all(e.width < 1e-2)
    a = risks.advantage(pl, bounds=True)
    assert a.optimistic <= gdp_advantage(1.0) <= a.safe and a.width < GRID
    assert risks.beta(pl, 0.1) == pl.beta(0.1) and risks.advantage(pl) == pl.advantage()


def test_delta_beyond_the_float64_range_is_answered_at_the_largest_epsilon():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    assert risks.delta(pl, 1e6) == risks.delta(pl, risks.DELTA_EPSILON_MAX) == pl.delta(1e300)
    assert np.shape(risks.epsilon(pl, np.zeros((0, 3)))) == (0, 3)


def test_a_crossed_bracket_falls_back_and_warns_at_the_caller():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    # a wrong companion: the optimistic pair of a less private Gaussian lies beyond the safe side
    wrong = replaced(pl, companion=lambda: optimistic_companion(dpax.gaussian(0.5, grid_step=1e-2)))
    with pytest.warns(RuntimeWarning, match="advantage: the optimistic companion's answer crossed") as record:
        a = wrong.advantage(bounds=True)
    assert record[0].filename == __file__  # the user's line, not dpax's
    assert a.safe == pl.advantage() and a.optimistic == 0.0  # the trivial bound
    with pytest.warns(RuntimeWarning, match="beta") as record:
        b = wrong.beta(0.1, bounds=True)
    assert record[0].filename == __file__ and b.optimistic == pytest.approx(0.9)  # 1 - alpha


def test_tradeoff_points_are_the_curve():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    alpha, beta = risks.tradeoff_points(pl, symmetric=True)
    assert np.all(np.diff(alpha) >= 0) and np.all(np.diff(beta) <= 0)
    inside = (alpha > 1e-3) & (alpha < 0.999)
    assert np.all(np.abs(beta[inside] - gdp_beta(alpha[inside], 1.0)) < GRID)
