"""Certified brackets of mu and of the regret: ``gdp.mu_and_regret(pl, bounds=True)``.

mu's bracket is [mu(companion), mu(pl)]; the regret's is [Delta(h_s, f_{mu_o}),
upper bound of Delta(h_o, f_{mu_s})] (:func:`dpax.gdp.mu_regret.regret_bracket`). Truths:
the composed Gaussian is exactly mu-GDP (regret 0); one subsampled Gaussian step has an exact
symmetrised curve (tests/exact_refs.py), whose mu and regret are computed here by brute force
(dense FPRs, each point's kappa by bisection), independently of dpax's kernels.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtr, ndtri

import dpax
from dpax.gdp import mu_regret as _mu_regret
from exact_refs import subsampled_symmetrised_beta

TAIL = dpax.gdp.DEFAULT_TAIL


def _kappa(alpha, beta, mu):
    """Each point's largest shift kappa along (-1, -1) onto f_mu (bisection, 64 steps: the
    bracket starts at most 2 wide, so it ends below 2^-63, far under the tests' 1e-8)."""
    lo, hi = np.full_like(alpha, -1.0), np.minimum(alpha, beta)
    for _ in range(64):
        k = (lo + hi) / 2
        on_or_below = ndtr(ndtri(1 - np.clip(alpha - k, 0, 1)) - mu) <= beta - k
        lo, hi = np.where(on_or_below, k, lo), np.where(on_or_below, hi, k)
    return lo


def _truth(curve):
    """(mu, regret) of the symmetrised curve ``curve`` (a function of alpha), by brute force."""
    alpha = np.unique(np.concatenate([np.logspace(-10, -1, 40_000), np.linspace(0.1, 1.0, 40_000)]))
    beta = curve(alpha)
    box = (alpha >= TAIL) & (alpha <= 1 - TAIL) & (beta >= TAIL) & (beta <= 1 - TAIL)
    mu = float(np.max(ndtri(1 - alpha[box]) - ndtri(beta[box])))
    return mu, max(0.0, float(np.max(_kappa(alpha, beta, mu))))


def _check(pl, mu_true, regret_true, tol):
    mu, regret = dpax.gdp.mu_and_regret(pl, bounds=True)
    point_mu, point_regret = dpax.gdp.mu_and_regret(pl)
    # oriented: mu's safe end is its upper end, the regret's too; the point regret inside
    assert mu.safe == point_mu and mu.optimistic <= mu_true + tol <= mu.safe + 2 * tol
    assert regret.optimistic - tol <= regret_true <= regret.safe + tol
    assert regret.optimistic <= point_regret <= regret.safe
    return mu, regret


# (1.0, 4, 1e-2) is slow (~12 kernels of its own: the Gaussian's and the companion's construction
# and composition, the mu and regret kernels at 4096 points); default sibling: the (1.0, 1, 2e-3)
# case, the same checks on one Gaussian step (exactly 1-GDP, regret 0), whose support (10240 points)
# is test_subsampled_step_truth_inside[0.8-0.1-0.001]'s: the same construction, companion, mu and
# regret kernels. Composed Gaussians' companions and mu brackets stay in the default run in
# tests/engine/test_companion_tails.py::test_mu_bracket_holds_the_truth_and_is_narrow (16 steps).
@pytest.mark.parametrize("sigma,steps,step", [(1.0, 1, 2e-3), pytest.param(1.0, 4, 1e-2, marks=pytest.mark.slow)])
def test_composed_gaussian_regret_is_zero(sigma, steps, step):
    """sigma 1, 4 steps: exactly 2-GDP, regret 0 (one step: 1-GDP); a bracket that swapped its
    regret ends, or whose upper end ignored the grid, fails."""
    pl = dpax.gaussian(sigma, grid_step=step)
    if steps > 1:
        pl = pl.self_compose(steps)
    mu, regret = _check(pl, np.sqrt(steps) / sigma, 0.0, 1e-12)
    assert mu.width < 1e-3 and regret.optimistic == 0.0 and 0.0 < regret.safe < 1e-5


# (1.0, 0.01, 1e-2) is slow (kernels of its own): the default (1.0, 0.3, 1e-2) and (0.8, 0.1, 1e-3) keep both grids
@pytest.mark.parametrize("sigma,p,step", [pytest.param(1.0, 0.01, 1e-2, marks=pytest.mark.slow), (1.0, 0.3, 1e-2),
                                          (0.8, 0.1, 1e-3)])
def test_subsampled_step_truth_inside(sigma, p, step):
    mu_true, regret_true = _truth(lambda a: subsampled_symmetrised_beta(a, sigma, p))
    assert regret_true > 1e-3  # a curve that is not GDP: the bracket has something to hold
    mu, regret = _check(dpax.subsampled_gaussian(sigma, p, grid_step=step), mu_true, regret_true, 1e-8)
    assert regret.width < (3e-4 if step == 1e-2 else 1e-6)


@pytest.mark.slow
def test_dpsgd_batch_brackets_overlap_across_grids():
    """A batch of DP-SGD rows: the truth lies in the brackets of both grids, so they overlap,
    and the finer one is narrower."""
    noise = np.array([0.8, 1.0, 2.0])
    coarse = dpax.gdp.mu_and_regret(dpax.dpsgd(noise, 0.01, 100, grid_step=1e-2), bounds=True)
    fine = dpax.gdp.mu_and_regret(dpax.dpsgd(noise, 0.01, 100, grid_step=1e-3), bounds=True)
    for c, f in zip(coarse, fine):
        assert c.safe.shape == (3,)
        assert np.all(np.maximum(c.lower, f.lower) <= np.minimum(c.upper, f.upper))
        assert np.all(f.width <= c.width)
    single = dpax.gdp.mu_and_regret(dpax.dpsgd(1.0, 0.01, 100, grid_step=1e-3), bounds=True)
    assert single[1].safe == pytest.approx(fine[1].safe[1], rel=1e-9)


def test_regret_upper_bound_reads_unsorted_labels():
    """The upper end's kernel sorts a pair's labels by likelihood ratio first: a subsampled
    Gaussian's labels shuffled (a threshold curve that is not convex) give the same bound as
    the pair itself, and on a pair whose curve is its steep side mirrored (h = W1) the bound
    is the regret kernel's own Delta(h, f_m), so it is tight, not merely an upper bound."""
    # the curve of test_subsampled_step_truth_inside[1.0-0.3-0.01]: its kernel shapes (no compilation of its own)
    pl = dpax.subsampled_gaussian(1.0, 0.3, grid_step=1e-2)
    x, y = (np.asarray(a)[0] for a in (pl.pair.pmf_x, pl.pair.pmf_y))
    perm = np.random.default_rng(3).permutation(x.size)
    shuffled = dpax.PrivacyLoss(x[perm], y[perm], 0, 0.0, 0.0, 1e-2)
    for m in (0.3, 0.8, 2.0):
        upper = _mu_regret.regret_upper_rows(pl, m)
        assert _mu_regret.regret_upper_rows(shuffled, m) == pytest.approx(upper, abs=1e-15)
        assert upper == pytest.approx(_mu_regret.mu_regret_rows(pl, TAIL, at_mu=m)[1], abs=1e-12)
        assert upper > 1e-3


def test_no_companion_is_a_value_error():
    pl = dpax.PrivacyLoss([0.6, 0.4], [0.4, 0.6], 0, 0.0, 0.0, 0.2)
    with pytest.raises(ValueError, match="no optimistic companion"):
        dpax.gdp.mu_and_regret(pl, bounds=True)


def test_mu_bracket_holds_a_vanishing_mu():
    """Invariant: mu's bracket holds the truth however small it is: for the Gaussian with noise
    1e300 (built as 1e154, the largest the kernels take: the same pair), mu = 1e-300, its
    companion is the identity (all mass at the loss 0) and its optimistic mu must be 0. It
    was 1.3e-8: f at the box's side alpha = 1 - tail was interpolated in Pr[X > x], whose
    ~1e-16 absolute error the probit's slope there (1 / phi(6.4) ~ 1.5e9 at tail 1e-10)
    turned into a term of ~1e-8. The side is now placed and interpolated in Pr[X <= x]."""
    for noise in (1e300, 1e154, 10.0):  # and a mu the grid resolves (0.1; the same kernels: 256 points)
        mu, regret = dpax.gdp.mu_and_regret(dpax.gaussian(noise, grid_step=1e-2), bounds=True)
        assert mu.optimistic <= 1.0 / noise <= mu.safe, (noise, mu)
        assert mu.optimistic == 0.0 if noise > 1e100 else mu.safe - mu.optimistic <= 2e-4, (noise, mu)
        assert regret.optimistic <= regret.safe
