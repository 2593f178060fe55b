"""dp-accounting interop: from_dp_accounting / to_dp_accounting.

Directions (dp_accounting.pld.privacy_loss_mechanism): _pmf_remove is the law of dpax's Y
with Pr[Y = +inf] as its infinity mass; _pmf_add is the law of -X with Pr[X = -inf]. The
import reads each where it holds the larger law, so round trips keep every number;
converted oracle PLDs are checked against exact references, which a swapped or
un-mirrored direction would fail, and dp-accounting's own default PLDs against closed forms
(deriving P from Q alone, as dpax once did, fails those by orders of magnitude).
"""

from __future__ import annotations

import numpy as np
import pytest
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as dpa_pld

import dpax
from exact_refs import gdp_beta, subsampled_symmetrised_beta

ALPHAS = np.unique(np.concatenate([np.logspace(-6, np.log10(0.5), 25), np.linspace(0.01, 0.99, 40)]))
EPSILONS = np.array([0.0, 0.3, 1.0, 2.0, 4.0])


def test_round_trip_dpax_dp_accounting_dpax_keeps_beta():
    # an asymmetric pair: dpax's own of test_directions_against_exact_curves (its kernels; 20 steps
    # of (0.9, 0.1) at grid 1e-3 until 2026-11-27; composed PLDs: the round trip test below)
    pl = dpax.subsampled_gaussian(1.0, 0.2, grid_step=1e-4)
    pld = pl.to_dp_accounting()
    assert isinstance(pld, dpa_pld.PrivacyLossDistribution)
    back = dpax.from_dp_accounting(pld)
    assert np.max(np.abs(back.beta(ALPHAS) - pl.beta(ALPHAS))) <= 1e-9
    assert np.max(np.abs(back.delta(EPSILONS) - pl.delta(EPSILONS))) <= 1e-12
    # dp-accounting computes the same profile from dpax's pair (both directions)
    theirs = np.array([pld.get_delta_for_epsilon(e) for e in EPSILONS])
    np.testing.assert_allclose(theirs, pl.delta(EPSILONS), rtol=1e-9, atol=1e-15)
    assert pld.get_epsilon_for_delta(1e-5) == pytest.approx(pl.epsilon(1e-5), rel=1e-6)


def test_round_trip_dp_accounting_dpax_dp_accounting():
    oracle = dpa_pld.from_gaussian_mechanism(1.0, sampling_prob=0.05,
                                             value_discretization_interval=1e-3).self_compose(50)
    pl = dpax.from_dp_accounting(oracle)
    again = pl.to_dp_accounting()
    for e in EPSILONS:
        # each direction comes back as dp-accounting computed it (its PMF's upper part read as
        # is, the lower part rebuilt from the other PMF: the same numbers up to its round-off)
        for side in ("_pmf_remove", "_pmf_add"):
            assert getattr(again, side).get_delta_for_epsilon(e) == pytest.approx(
                getattr(oracle, side).get_delta_for_epsilon(e), rel=1e-6, abs=1e-12)
        assert again.get_delta_for_epsilon(e) == pytest.approx(oracle.get_delta_for_epsilon(e), rel=1e-6, abs=1e-12)
    assert np.max(np.abs(dpax.from_dp_accounting(again).beta(ALPHAS) - pl.beta(ALPHAS))) <= 1e-12


def test_directions_against_exact_curves():
    # symmetric (one PMF): the Gaussian, exactly mu-GDP
    g = dpax.from_dp_accounting(dpa_pld.from_gaussian_mechanism(2.0, value_discretization_interval=1e-4))
    assert np.max(np.abs(g.beta(ALPHAS) - gdp_beta(ALPHAS, 0.5))) <= 1e-4
    # asymmetric: the Poisson-subsampled Gaussian's symmetrised curve, and dpax's own pair
    s, p = 1.0, 0.2
    sub = dpax.from_dp_accounting(dpa_pld.from_gaussian_mechanism(s, sampling_prob=p,
                                                                  value_discretization_interval=1e-4))
    assert sub.exact_ratio  # its X side totals 1 + 4.7e-12 with SciPy 1.13 to 1.15: round-off
    exact = subsampled_symmetrised_beta(ALPHAS, s, p)
    assert np.max(np.abs(sub.beta(ALPHAS) - exact)) <= 1e-4
    ours = dpax.subsampled_gaussian(s, p, grid_step=1e-4)
    assert np.max(np.abs(sub.beta(ALPHAS) - ours.beta(ALPHAS))) <= 1e-4


def test_sparse_pmfs_and_mechanisms_only_dp_accounting_has():
    rr = dpa_pld.from_randomized_response(0.5, 4, value_discretization_interval=1e-4)
    assert isinstance(rr._pmf_remove, (pld_pmf.SparsePLDPmf, pld_pmf.DensePLDPmf))
    pl = dpax.from_dp_accounting(rr)
    # 4-ary randomized response, uniform bucket with probability 1/2: e^eps = (1 - r + r/k) / (r/k)
    eps = np.log((1 - 0.5 + 0.125) / 0.125)
    mine = dpax.randomized_response(eps, k=4)
    assert np.max(np.abs(pl.delta(EPSILONS) - mine.delta(EPSILONS))) <= 1e-4
    # privacy-parameters PLD ((eps, delta)-DP worst case) against dpax.approximate_dp
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    pp = dpa_pld.from_privacy_parameters(DifferentialPrivacyParameters(1.0, 1e-3), value_discretization_interval=1e-4)
    worst = dpax.from_dp_accounting(pp)
    np.testing.assert_allclose(worst.beta(ALPHAS), dpax.approximate_dp(1.0, 1e-3).beta(ALPHAS), atol=1e-4)


def test_batch_and_bad_input():
    b = dpax.laplace([1.0, 2.0], grid_step=1e-2)  # grid 1e-2: both rows on one support length
    plds = b.to_dp_accounting()
    assert plds.shape == (2,)
    np.testing.assert_allclose(dpax.from_dp_accounting(plds[1]).beta(ALPHAS), b.beta(ALPHAS)[1], atol=1e-12)
    with pytest.raises(TypeError, match="pld"):
        dpax.from_dp_accounting(3)
    with pytest.raises(TypeError, match="pl"):
        dpax.to_dp_accounting("not a loss")


def _gaussian_truth(mu, alphas):
    from scipy.optimize import brentq
    from scipy.stats import norm

    def delta(eps):
        return norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2)

    return (gdp_beta(alphas, mu), 2 * norm.cdf(mu / 2) - 1, brentq(lambda e: delta(e) - 1e-5, 0.0, 500.0))


#: grid step -> how far the import may stand from the closed form (safe side), by
#: discretisation: connect-the-dots is tight; rounding loses up to ~the grid step in loss.
IMPORT_ERROR = {True: {1e-2: 3e-4, 1e-3: 3e-6, 1e-4: 1e-4}, False: {1e-2: 2.5e-2, 1e-3: 2.5e-3, 1e-4: 2.5e-4}}
TINY = 1e-10  # float64 round-off of dp-accounting's PMFs (~1e-12 per point at grid 1e-4)


def _check_gaussian_import(sigma, step, connect_dots):
    pld = dpa_pld.from_gaussian_mechanism(sigma, value_discretization_interval=step, use_connect_dots=connect_dots)
    pl = dpax.from_dp_accounting(pld)
    mu = 1.0 / sigma
    alphas = np.logspace(-9, np.log10(0.5), 40)
    beta, advantage, epsilon = _gaussian_truth(mu, alphas)
    tol = IMPORT_ERROR[connect_dots][step]
    got_mu = dpax.gdp.mu_and_regret(pl)[0]
    d_beta = pl.beta(alphas) - beta
    # safe side: beta no higher, advantage, epsilon and mu no lower than the truth
    assert np.max(d_beta) <= TINY and np.min(d_beta) >= -tol
    assert -TINY <= pl.advantage() - advantage <= tol
    assert -TINY <= pl.epsilon(1e-5) - epsilon <= 10 * tol
    assert -TINY <= got_mu - mu <= 10 * tol


# (0.3, 1e-2, True) (kernels of its own; also in the slow grid test below) and (2.0, 1e-4, False)
# (a support and kernels of its own) are slow; default siblings: (0.5, 1e-4, True), dp-accounting's
# defaults (the same import read through beta, advantage, epsilon and mu against the closed forms), and
# test_directions_against_exact_curves (sigma 2's PLD at grid 1e-4 against its exact curve)
@pytest.mark.parametrize("sigma, step, connect_dots", [(0.5, 1e-4, True),
                                                       pytest.param(2.0, 1e-4, False, marks=pytest.mark.slow),
                                                       pytest.param(0.3, 1e-2, True, marks=pytest.mark.slow)])
def test_dp_accounting_default_gaussian_plds_keep_their_meaning(sigma, step, connect_dots):
    """dp-accounting's Gaussian PLDs at its defaults (from_gaussian_mechanism(0.5), and sigma 2
    without connect-the-dots) read by from_dp_accounting keep their meaning: beta, advantage
    (truth 0.6827 for sigma 0.5; 0.8205 would be a misreading), epsilon and mu (truth 0.5 for
    sigma 2, not 0.84) on the safe side of the closed forms, within the grid's error."""
    _check_gaussian_import(sigma, step, connect_dots)


@pytest.mark.slow
@pytest.mark.parametrize("connect_dots", [True, False])
@pytest.mark.parametrize("step", [1e-2, 1e-3, 1e-4])
@pytest.mark.parametrize("sigma", [0.3, 0.5, 1.0, 2.0, 5.0])
def test_dp_accounting_gaussian_plds_grid(sigma, step, connect_dots):
    _check_gaussian_import(sigma, step, connect_dots)


@pytest.mark.slow  # ~9s; default siblings: test_directions_against_exact_curves (an asymmetric subsampled-Gaussian
# PLD at grid 1e-4 against its exact curve and dpax's own pair), test_sparse_pmfs_and_mechanisms_only_dp_accounting_has
# (a point mass at +inf) and test_dp_accounting_default_gaussian_plds_keep_their_meaning[0.5-0.0001-True] (safe side)
def test_dp_accounting_subsampled_and_laplace_plds_against_native():
    """Asymmetric PMFs (two different ones) and a mechanism with a point mass: against
    dpax's native construction at the same grid, and the Laplace's closed form."""
    s, p = 0.8, 0.05
    sub = dpax.from_dp_accounting(dpa_pld.from_gaussian_mechanism(s, sampling_prob=p,
                                                                  value_discretization_interval=1e-4))
    # its Y side totals 1 within round-off (1 + 1.2e-12 with SciPy 1.13 to 1.15, 1 - 1e-12
    # with 1.16 and 1.17): left unscaled, the pair keeps its exact ratio (interop.ROUNDING)
    assert sub.exact_ratio
    mine = dpax.subsampled_gaussian(s, p, grid_step=1e-4)
    exact = subsampled_symmetrised_beta(ALPHAS, s, p)
    assert np.max(sub.beta(ALPHAS) - exact) <= TINY and np.min(sub.beta(ALPHAS) - exact) >= -1e-4
    assert abs(sub.epsilon(1e-5) - mine.epsilon(1e-5)) <= 1e-4
    assert abs(dpax.gdp.mu_and_regret(sub)[0] - dpax.gdp.mu_and_regret(mine)[0]) <= 1e-4
    lap = dpax.from_dp_accounting(dpa_pld.from_laplace_mechanism(1.0, value_discretization_interval=1e-4))
    # Laplace with scale 1 and sensitivity 1 is pure 1-DP (dp-accounting's truncation keeps
    # ~1e-16 at +inf, so epsilon is asked at a delta just above it)
    native = dpax.laplace(1.0, grid_step=1e-4)
    assert np.max(np.abs(lap.beta(ALPHAS) - native.beta(ALPHAS))) <= 1e-4
    assert -TINY <= lap.epsilon(1e-12) - 1.0 <= 1e-4
