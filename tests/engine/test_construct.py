"""dpax._engine.construct: discrete dominating pairs keep their masses, the ratio
Pr[X = x] = e^-x Pr[Y = x], and lie on the safe side of the exact curve."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import erf
from scipy.stats import norm

import dpax
from dpax._engine import cache, construct
from dpax._engine.construct import cells, gaussian
from dpax._engine.grid import loss_grid
from exact_refs import gdp_beta

ALPHAS = np.array([1e-6, 1e-4, 1e-2, 0.1, 0.3, 0.5, 0.9])


@pytest.mark.parametrize("step", [1e-2, 1e-3])
def test_subsampled_gaussian_pair_keeps_masses_and_ratio(step):
    sigma, p = np.array([0.8, 2.0]), np.array([1.0, 0.05])
    offset = np.array([-700, -300]) * int(round(1e-2 / step))
    n = 2048 * int(round(1e-2 / step))
    with jax.enable_x64(True):
        pair = construct.subsampled_gaussian_kernel(jnp.asarray(sigma), jnp.asarray(p), offset, np.float64(step), n)
        px, py, off, iy, nx = (np.asarray(a) for a in pair)
    np.testing.assert_allclose(px.sum(-1) + nx, 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(py.sum(-1) + iy, 1.0, rtol=0, atol=1e-12)
    x = loss_grid(off, n, step)
    big = py > 1e-250
    np.testing.assert_allclose(px[big], np.exp(-x[big]) * py[big], rtol=1e-9)
    assert off.tolist() == offset.tolist()


# 1e-3 slow (a construction and beta kernel of its own); default siblings: 1e-2 here and
# tests/test_gaussian_exact.py::test_beta_matches_gdp_curve[s1-T1-h0.001] (the same Gaussian at
# 1e-3: never above the exact curve, below it by at most its second-order bound)
@pytest.mark.parametrize("step", [1e-2, pytest.param(1e-3, marks=pytest.mark.slow)])
def test_connect_the_dots_gaussian_is_pessimistic_and_close(step):
    mu = 1.0
    beta = dpax.gaussian(1.0 / mu, grid_step=step).beta(ALPHAS)
    exact = gdp_beta(ALPHAS, mu)
    assert np.all(beta <= exact + 1e-12)
    assert np.max(exact - beta) < 5 * step  # a wrong split of the cells is off by far more


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


def test_pair_from_atoms_puts_grid_atoms_whole_and_splits_others():
    step = 0.5
    loss = np.array([[-1.0, 0.25, 1.0]])
    q = np.array([[0.2, 0.5, 0.3]])
    p = q * np.exp(-loss)
    p = p / p.sum() * (1 - 1e-3)  # leave 1e-3 of P at loss -inf (kept at the -inf atom)
    with jax.enable_x64(True):
        pair = construct.pair_from_atoms(loss, np.log(p), np.log(q), step, tail=0.0, exact_ratio=False, what="t")
        px, py, off, iy, nx = (np.asarray(a) for a in pair)
    x = loss_grid(off, px.shape[-1], step)[0]
    at = {float(v): (a, b) for v, a, b in zip(x, px[0], py[0])}
    assert at[-1.0][1] == pytest.approx(0.2, abs=1e-15)  # on a grid point: whole
    assert at[1.0][1] == pytest.approx(0.3, abs=1e-15)  # 0.25 is split between 0 and 0.5 only
    assert at[0.0][1] + at[0.5][1] == pytest.approx(0.5, abs=1e-12)
    assert py.sum() + iy[0] == pytest.approx(1.0, abs=1e-12)
    assert px.sum() + nx[0] == pytest.approx(1.0, abs=1e-12)


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
