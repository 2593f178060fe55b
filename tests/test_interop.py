"""dp-accounting interop: from_dp_accounting / to_dp_accounting.

Directions (dp_accounting.pld.privacy_loss_mechanism): _pmf_remove is the law of dpax's Y
with Pr[Y = +inf] as its infinity mass; _pmf_add is the law of -X with Pr[X = -inf]. The
conversion moves arrays only, so round trips keep every number; converted oracle PLDs are
checked against exact references, which a swapped or un-mirrored direction would fail.
"""

from __future__ import annotations

import numpy as np
import pytest
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as dpa_pld
from exact_refs import gdp_beta, subsampled_symmetrised_beta

import dpax

ALPHAS = np.unique(np.concatenate([np.logspace(-6, np.log10(0.5), 25), np.linspace(0.01, 0.99, 40)]))
EPSILONS = np.array([0.0, 0.3, 1.0, 2.0, 4.0])


def test_round_trip_dpax_dp_accounting_dpax_keeps_beta():
    pl = dpax.subsampled_gaussian(0.9, 0.1, grid_step=1e-3).self_compose(20)  # asymmetric pair
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
    oracle = dpa_pld.from_gaussian_mechanism(1.0, sampling_prob=0.05, value_discretization_interval=1e-3).self_compose(50)
    pl = dpax.from_dp_accounting(oracle)
    again = pl.to_dp_accounting()
    for e in EPSILONS:
        # the REMOVE PMF, the pair dpax reads, comes back unchanged
        assert again._pmf_remove.get_delta_for_epsilon(e) == pytest.approx(
            oracle._pmf_remove.get_delta_for_epsilon(e), rel=1e-9, abs=1e-13)  # its FFT round-off below 0 is clipped
        # the ADD side is now the swapped pair of the REMOVE PMF, not dp-accounting's own rounding of it
        assert again.get_delta_for_epsilon(e) == pytest.approx(oracle.get_delta_for_epsilon(e), rel=1e-6, abs=1e-12)
    assert np.max(np.abs(dpax.from_dp_accounting(again).beta(ALPHAS) - pl.beta(ALPHAS))) <= 1e-12


def test_directions_against_exact_curves():
    # symmetric (one PMF): the Gaussian, exactly mu-GDP
    g = dpax.from_dp_accounting(dpa_pld.from_gaussian_mechanism(2.0, value_discretization_interval=1e-4))
    assert np.max(np.abs(g.beta(ALPHAS) - gdp_beta(ALPHAS, 0.5))) <= 1e-4
    # asymmetric: the Poisson-subsampled Gaussian's symmetrised curve, and dpax's own pair
    s, p = 1.0, 0.2
    sub = dpax.from_dp_accounting(dpa_pld.from_gaussian_mechanism(s, sampling_prob=p, value_discretization_interval=1e-4))
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
    b = dpax.laplace([1.0, 2.0], grid_step=1e-3)
    plds = b.to_dp_accounting()
    assert plds.shape == (2,)
    np.testing.assert_allclose(dpax.from_dp_accounting(plds[1]).beta(ALPHAS), b.beta(ALPHAS)[1], atol=1e-12)
    with pytest.raises(TypeError, match="pld"):
        dpax.from_dp_accounting(3)
    with pytest.raises(TypeError, match="pl"):
        dpax.to_dp_accounting("not a loss")
