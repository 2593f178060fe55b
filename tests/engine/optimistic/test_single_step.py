"""A single step's optimistic companion (dpax._engine.optimistic.single_step): the
exponential-interpolation map of a Gaussian with little noise keeps finite masses of total 1,
and its brackets stay on their sides of the truth."""

from __future__ import annotations

import numpy as np
import pytest

import dpax
from exact_refs import gdp_epsilon


@pytest.mark.slow  # ~4 s; default siblings: tests/test_bounds_interval.py::
# test_beta_at_zero_beyond_745_nats_keeps_the_optimistic_side_above_the_truth (the companion of a Gaussian with less
# noise, 0.0376: its beta near alpha 0 and its trade-off points on their side of the truth) and
# tests/mechanisms/test_gaussian_family.py::test_the_least_noise_stays_exact_on_a_grid_padded_past_709_nats
# (noise 0.0377 to 0.0385: epsilon brackets around the closed form)
def test_companion_of_a_gaussian_with_little_noise_is_finite():
    """Noise 0.05 (mu 20) at grid 0.1: the exponential-interpolation map's coefficient of
    N(2, s^2) in R = Q^2 / P, p^2 e^(1/s^2 - a), overflowed beside that law's cell masses,
    which underflow far below the loss 0: inf x 0 put NaN in Y's masses at losses -385 to
    -310, and the advantage's optimistic side was NaN. Such cells now go whole to their
    lower end (another post-processing): finite masses of total 1, an optimistic side at or
    below the safe one and the truth, also with a sample rate below 1."""
    from scipy.stats import norm

    for p in (1.0, 0.5):
        pl = dpax.subsampled_gaussian(0.05, p, grid_step=0.1)
        comp = pl.optimistic_companion()
        for law in (comp.pmf_x, comp.pmf_y):
            assert np.all(np.isfinite(law)) and abs(np.sum(law) - 1.0) < 1e-12
        adv = pl.advantage(bounds=True)
        assert np.isfinite(adv.optimistic) and adv.optimistic <= adv.safe
    truth = 1.0 - 2.0 * norm.sf(10.0)  # the Gaussian's 2 Phi(mu / 2) - 1 (1.0 in float64)
    assert dpax.gaussian(0.05, grid_step=0.1).advantage(bounds=True).optimistic <= truth
    eps = dpax.gaussian(0.05, grid_step=0.1).epsilon([1e-5, 1e-10], bounds=True)
    exact = np.array([gdp_epsilon(d, 20.0) for d in (1e-5, 1e-10)])
    assert np.all(eps.optimistic <= exact) and np.all(exact <= eps.safe)

