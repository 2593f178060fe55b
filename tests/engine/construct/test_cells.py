"""dpax._engine.construct.cells: the cells' split keeps the safe side where it cancels (the
Gaussian, the subsampled Gaussian, DP-SGD and Laplace at or above their closed forms at tiny
losses), close_mass books a deficit on the safe atoms and scales an excess, and the split gives
the same bits with either of XLA's emitters."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import erf

import dpax
from dpax._engine import cache, construct
from dpax._engine.construct import cells, gaussian
from dpax._engine.grid import loss_grid


def gaussian_advantage(mu):
    """erf(mu / (2 sqrt 2)): the advantage of mu-GDP, exact to a few ulps at any mu."""
    return erf(np.asarray(mu) / (2.0 * np.sqrt(2.0)))


# A tiny loss lies in the two cells beside 0: the mass of (0, h] at its upper end is
# (Q(cell) - P(cell)) / (1 - e^-h), a difference of two masses near 1/2, and at the loss 0
# (a grid point) the split is exact, so that difference's rounding alone decides the side.
# Solved as it is rounded, the safe advantages below fell under the truth (3.9894227921e-09
# < 3.9894228040e-09 at mu 1e-8, 0 at mu 1e-16); split_cells_open raises it by a bound.


def test_safe_gaussian_not_below_its_closed_form_at_tiny_mu():
    for mu in (1e-8, 1e-16):  # sensitivity over noise 10
        got = dpax.gaussian(10.0, sensitivity=10.0 * mu, grid_step=0.1).advantage()
        exact = gaussian_advantage(mu)
        assert exact <= got <= exact + 1e-14, (mu, got, exact)


def test_safe_subsampled_gaussian_and_dpsgd_not_below_the_truth_at_huge_noise():
    # one step: Q = (1 - p) P + p N(1, s^2), so TV(P, Q) = p TV(N(0, s^2), N(1, s^2))
    noise = np.array([1e8, 1e12, 1e16, 1e16])
    rate = np.array([0.5, 1.0, 0.5, 1e-3])
    got = dpax.subsampled_gaussian(noise, rate, grid_step=0.1).advantage()
    exact = rate * gaussian_advantage(1.0 / noise)
    assert np.all(exact <= got) and np.all(got <= exact + 1e-14), (got, exact)
    # composing never lowers the advantage: 4 steps are at least one step's (0 before); the
    # FFT's round-off bound (booked on the safe side) adds ~1e-14
    one_step = 0.5 * gaussian_advantage(1e-16)
    assert one_step <= dpax.dpsgd(1e16, 0.5, 4, grid_step=0.1).advantage() <= 3e-14


def test_safe_laplace_not_below_its_closed_form_at_tiny_epsilon():
    eps = 1e-14  # advantage 1 - e^(-eps / 2); the unbiased split gave 4.98e-15 < 5e-15
    got = dpax.laplace(1.0, sensitivity=eps, grid_step=0.1).advantage()
    assert -np.expm1(-eps / 2) <= got <= 1e-14


def test_close_mass_books_a_deficit_on_the_safe_atoms_and_scales_an_excess():
    with jax.enable_x64(True):
        px = jnp.array([[0.5, 0.4]])
        py = jnp.array([[0.3, 0.8]])  # excess 0.1: scaled down
        x, y, iy, nx = (np.asarray(a) for a in construct.close_mass(px, py, jnp.array([0.0]), jnp.array([0.0])))
    assert nx[0] == pytest.approx(0.1)  # missing X mass -> X = -inf
    assert iy[0] == 0.0 and y.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(x, [[0.5, 0.4]])


def test_split_cells_gives_the_same_bits_with_either_emitter():
    """The cells' split compiles with XLA's classic emitters on CPU (faster to compile):
    the same masses and atoms bit for bit as its fusion emitters give, on Poisson-subsampled
    Gaussian CDFs of three unlike rows (noise, sample rate, offset)."""
    rng = np.random.default_rng(5)
    rows, n, step = 3, 1000, 1e-3
    sigma, p = rng.uniform(0.3, 10.0, (rows, 1)), rng.uniform(1e-4, 1.0, (rows, 1))
    with jax.enable_x64(True):
        grid = loss_grid(jnp.asarray(-(n // 2) + rng.integers(-n // 4, n // 4 + 1, rows)), n, step)
        args = (grid, step, *jax.jit(gaussian.subsampled_gaussian_log_cdfs)(grid, sigma, p))
        lowered = jax.jit(cells.split_cells).lower(*args)
        fusion, classic = (lowered.compile(cache.compile_options(emitters))(*args) for emitters in (True, False))
    assert np.mean(np.asarray(fusion[0]) > 0.0) > 0.5  # real laws, not empty ones
    for a, b in zip(fusion, classic):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
