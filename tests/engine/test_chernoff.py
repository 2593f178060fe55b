"""The Chernoff window of a composition (dpax._engine.chernoff) against exact binomial
tails: randomized response composed k times is a lattice law whose composed masses are
binomial, so the mass each law leaves outside the window is known exactly."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

import dpax
from dpax._engine import chernoff
from dpax._engine.x64 import float64


@float64
def _window(pl, count):
    return chernoff.Window(*(np.asarray(a) for a in chernoff.window_kernel((pl.pair,), (np.array([count]),),
                                                                             np.float64(pl.grid_step))))


def _outside(window, pl, count, p):
    """Exact mass of the composed law outside [lo, hi] (grid indices): k of ``count`` steps
    land on +epsilon with probability ``p``, the sum's loss is (2k - count) epsilon."""
    eps_points = round(1.0 / pl.grid_step)  # epsilon 1 on the grid
    k = np.arange(count + 1)
    index = (2 * k - count) * eps_points
    pmf = stats.binom.pmf(k, count, p)
    return float(np.sum(pmf[(index < window.lo[0]) | (index > window.hi[0])]))


def test_window_cut_bounds_the_exact_mass_outside():
    count = 2000
    pl = dpax.randomized_response(1.0, grid_step=1e-2)
    w = _window(pl, count)
    q = math.e / (1.0 + math.e)
    out_y, out_x = _outside(w, pl, count, q), _outside(w, pl, count, 1.0 - q)
    # the window is narrower than the support (there is mass to bound) and its bounds hold
    assert w.hi[0] - w.lo[0] < 2 * count * 100
    assert 0.0 < out_y <= w.cut_y[0] <= 2.0 * chernoff.TAIL_MASS
    assert 0.0 < out_x <= w.cut_x[0] <= 2.0 * chernoff.TAIL_MASS
    # and it is not loose: each tail it cuts holds more than a millionth of its bound
    assert out_y > 1e-6 * w.cut_y[0] and out_x > 1e-6 * w.cut_x[0]


def test_window_reaching_the_support_cuts_nothing():
    pl = dpax.randomized_response(1.0, grid_step=1e-2)
    w = _window(pl, 5)  # five steps: the whole support is far inside the 1e-18 quantiles
    assert (w.lo[0], w.hi[0]) == (-500, 500)
    assert w.cut_y[0] == 0.0 and w.cut_x[0] == 0.0
    q = math.e / (1.0 + math.e)
    assert np.isclose(w.mean_y[0], 5 * (2 * q - 1), rtol=1e-12)
    assert np.isclose(w.mean_x[0], -5 * (2 * q - 1), rtol=1e-12)


@float64
def test_factor_groups_stack_equal_lengths_in_order():
    a = dpax.gaussian(1.0, grid_step=1e-2).pair
    b = dpax.gaussian(2.0, grid_step=1e-2).pair
    groups = chernoff.factor_groups((a, b, a), (np.array([1]), np.array([2]), np.array([3])))
    lengths = [g.pmf_x.shape for g, _ in groups]
    if a.support_length == b.support_length:
        assert lengths == [(3,) + a.pmf_x.shape]
    else:
        assert lengths == [(2,) + a.pmf_x.shape, (1,) + b.pmf_x.shape]
        np.testing.assert_array_equal(np.asarray(groups[0][1])[:, 0], [1, 3])
