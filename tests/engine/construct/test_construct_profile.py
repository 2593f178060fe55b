"""dpax._engine.construct.profile: Algorithm 2 (connect the dots) from a privacy profile gives
the pair of the CDF construction, up to its second differences' round-off."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from scipy.stats import norm

import dpax
from dpax._engine import construct


def test_connect_the_dots_from_the_profile_agrees_with_the_cdf_construction():
    """Algorithm 2 from the Gaussian's privacy profile, on the grid of the CDF construction:
    the same pair up to second-difference round-off (~1e-16 / step^2)."""
    step, mu = 1e-2, 1.0
    grid = np.arange(0, 801) * step

    def profile(eps):  # delta(eps) of mu-GDP (Dong et al., Cor. 2.13), symmetric
        return norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2)

    with jax.enable_x64(True):
        d = jnp.asarray(profile(grid))
        px, py, iy, nx = (np.asarray(a) for a in construct.connect_the_dots(jnp.asarray(grid), d, d))
    assert abs(px.sum() + nx - 1) < 1e-12 and abs(py.sum() + iy - 1) < 1e-12
    losses = np.arange(-800, 801) * step
    native = dpax.gaussian(1.0 / mu, grid_step=step)
    x = native.loss_values()
    ours = dict(zip(np.round(losses / step).astype(int), py))
    theirs = dict(zip(np.round(x / step).astype(int), native.pmf_y))
    common = [k for k in theirs if k in ours and theirs[k] > 1e-6]
    assert len(common) > 400
    np.testing.assert_allclose([ours[k] for k in common], [theirs[k] for k in common], rtol=1e-6, atol=1e-12)
