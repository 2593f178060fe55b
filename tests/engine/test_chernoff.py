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


@float64
def test_the_host_window_is_the_kernels():
    """window_host (NumPy, for the CPU's small batches) gives the kernel's window: the same
    [lo, hi], and the cut's bounds and the means within the sums' round-off (1e-9 relative
    measured at most 8e-11), for one and several factors, batches and a lattice law."""
    cases = [((dpax.dpsgd(9.4, 0.33, 1, grid_step=1e-4).pair,), (np.array([2000]),), 1e-4),
             ((dpax.dpsgd(np.linspace(0.5, 3.0, 16), 1e-3, 1, grid_step=1e-3).pair,), (np.full(16, 1000),), 1e-3),
             ((dpax.gaussian(2.0, grid_step=1e-3).pair, dpax.laplace(1.0, grid_step=1e-3).pair,
               dpax.gaussian(3.0, grid_step=1e-3).pair), (np.array([10]), np.array([3]), np.array([0])), 1e-3),
             ((dpax.randomized_response(1.0, grid_step=1e-2).pair,), (np.array([50]),), 1e-2)]
    for factors, counts, step in cases:
        kernel = chernoff.Window(*(np.asarray(a) for a in chernoff.window_kernel(factors, counts, np.float64(step))))
        host = chernoff.window_host(factors, counts, step)
        np.testing.assert_array_equal(host.lo, kernel.lo)
        np.testing.assert_array_equal(host.hi, kernel.hi)
        for a, b in zip(host[2:], kernel[2:]):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=0.0)
        assert all(isinstance(a, np.ndarray) for a in host)
