"""The mixture-of-Gaussians mechanism (dp-accounting's MixtureOfGaussiansDpEvent).

References: its special cases built by dpax's closed forms (one component (1, 1) is the
Gaussian, two (0, 1) with (1 - q, q) the Poisson-subsampled Gaussian: the same numbers to
~1e-9, the loss inverse solved in the kernel meeting the closed one), mu-GDP's delta(eps),
dp-accounting's ``from_mixture_gaussian_mechanism`` on the same grid (measured agreement
~1e-11 relative in epsilon), a finer dpax grid (a coarser pair dominates it: never below),
the optimistic companion (the truth between both sides) and a Monte Carlo estimate of
delta(eps) from the loss law itself.

Kept cheap (one pytest-xdist worker runs the file): the checks share batches, so that one
set of analysis kernels serves several mechanisms.
"""

from __future__ import annotations

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpa_pld

import dpax
from exact_refs import gdp_delta

DELTAS = np.array([1e-6, 1e-3])
EPSILONS = np.array([0.0, 0.5, 1.0, 2.0])
ALPHAS = np.array([1e-3, 0.1, 0.5])
#: (standard deviation, sensitivities, probabilities) of the multi-component checks, and a
#: third row with all its mass on sensitivity 0 (the identity: Q = P)
SIGMAS = np.array([1.0, 2.0, 1.5])
SENSITIVITIES = np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 3.0], [0.0, 4.0, 0.0]])
PROBS = np.array([[0.2, 0.6, 0.2], [0.33, 0.34, 0.33], [0.5, 0.0, 0.5]])


def risks(pl, names=("epsilon", "delta", "beta", "advantage")):
    """epsilon(DELTAS), delta(EPSILONS), beta(ALPHAS) and advantage of ``pl`` (arrays over
    its batch; ``names``: those only)."""
    args = {"epsilon": (DELTAS,), "delta": (EPSILONS,), "beta": (ALPHAS,), "advantage": ()}
    return {name: getattr(pl, name)(*args[name]) for name in names}


def mixture_loss(o, s, c, p):
    """L(o) = log sum_i p_i exp((2 c_i o - c_i^2) / (2 s^2)) at the outputs o (NumPy)."""
    c, p = np.asarray(c, float), np.asarray(p, float)
    with np.errstate(divide="ignore"):
        terms = np.log(p) + (2.0 * c * o[:, None] - c**2) / (2.0 * s**2)
    return np.logaddexp.reduce(terms, axis=-1)


def test_gaussian_and_subsampled_gaussian_are_special_cases():
    q = 0.9
    # one batch: row 0 one component (1, 1) (the sensitivity-0 entry has probability 0 and
    # is dropped), row 1 two components (0, 1) with (1 - q, q); its supports (2560 and 1536
    # points) are those of the fixtures' first rows below: their kernels are shared
    pl = dpax.mixture_of_gaussians(0.8, [0.0, 1.0], [[0.0, 1.0], [1 - q, q]], grid_step=1e-2)
    ref = dpax.subsampled_gaussian(0.8, [1.0, q], grid_step=1e-2)  # row 0: dpax.gaussian(0.8)
    ours, theirs = risks(pl), risks(ref)
    for name in ours:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-9, atol=1e-15, err_msg=name)
    # the single calls are the batch's rows, and the order of the components does not matter
    gauss = dpax.mixture_of_gaussians(0.8, [1.0], [1.0], grid_step=1e-2)
    np.testing.assert_array_equal(gauss.pair.pmf_y[0], pl.pair.pmf_y[0, :gauss.support_length])
    np.testing.assert_allclose(gauss.pair.pmf_y[0], dpax.gaussian(0.8, grid_step=1e-2).pair.pmf_y[0],
                               rtol=1e-9, atol=1e-18)
    sub = dpax.mixture_of_gaussians(0.8, [7.0, 1.0, 0.0], [0.0, q, 1 - q], grid_step=1e-2)
    np.testing.assert_array_equal(sub.pair.pmf_y[0], pl.pair.pmf_y[1, :sub.support_length])
    # mu-GDP, mu = 1 / 0.8: on the safe side, within the grid's error
    exact = gdp_delta(EPSILONS, 1.0 / 0.8)
    got = ours["delta"][0]
    assert np.all(got >= exact - 1e-12), np.max(exact - got)
    assert np.max(got - exact) <= 1e-5, np.max(got - exact)


@pytest.fixture(scope="module")
def coarse():
    return dpax.mixture_of_gaussians(SIGMAS, SENSITIVITIES, PROBS, grid_step=1e-2)


@pytest.fixture(scope="module")
def fine():
    return dpax.mixture_of_gaussians(SIGMAS, SENSITIVITIES, PROBS, grid_step=2e-3)


def test_agrees_with_dp_accounting(coarse):
    assert coarse.batch_shape == (3,)
    ours = risks(coarse)
    for i in range(2):
        oracle = dpa_pld.from_mixture_gaussian_mechanism(SIGMAS[i], SENSITIVITIES[i], PROBS[i],
                                                         value_discretization_interval=1e-2)
        theirs = np.array([oracle.get_epsilon_for_delta(d) for d in DELTAS])
        np.testing.assert_allclose(ours["epsilon"][i], theirs, rtol=1e-6)  # 1e-4 asked; ~1e-11 measured
        theirs = np.array([oracle.get_delta_for_epsilon(e) for e in EPSILONS])
        np.testing.assert_allclose(ours["delta"][i], theirs, rtol=1e-6, atol=1e-12)
    # the identity row: nothing to learn
    assert np.all(ours["epsilon"][2] == 0.0) and ours["advantage"][2] == 0.0
    np.testing.assert_allclose(ours["delta"][2], 0.0, atol=1e-15)
    np.testing.assert_allclose(ours["beta"][2], 1.0 - ALPHAS, atol=1e-12)


# slow (~8 s: a second grid's kernels); by default dp-accounting's upstream test
# test_mixture_of_gaussians_basic (tests/compat/dp_accounting) holds the mixture to the upstream
# test suite's number at grid 1e-4
@pytest.mark.slow
def test_dominates_a_finer_grid_and_brackets_it(coarse, fine):
    ours, tight = risks(coarse, ("epsilon", "delta")), risks(fine, ("epsilon", "delta"))
    # a coarser connect-the-dots pair is a post-processing of a finer one whose grid holds
    # its points: never below it (risks) or above it (beta), beyond round-off
    assert np.all(ours["epsilon"] >= tight["epsilon"] * (1 - 1e-12))
    assert np.all(ours["delta"] >= tight["delta"] - 1e-12)
    assert np.max(ours["epsilon"][:2] / tight["epsilon"][:2] - 1) <= 1e-4
    # the optimistic companion: the truth (at most the finer safe side) above it
    both = coarse.epsilon(DELTAS, bounds=True)
    assert np.all(both.optimistic <= both.safe)
    assert np.all(both.optimistic <= tight["epsilon"] + 1e-12)
    assert np.all(both.width[:2] <= 1e-3 * both.safe[:2])
    assert np.all(both.optimistic[2] == 0.0)


def test_rows_are_their_single_calls(coarse):
    row = dpax.mixture_of_gaussians(SIGMAS[1], SENSITIVITIES[1], PROBS[1], grid_step=1e-2)
    np.testing.assert_array_equal(row.pair.pmf_y[0], coarse.pair.pmf_y[1, :row.support_length])
    np.testing.assert_array_equal(row.pair.inf_y, coarse.pair.inf_y[1:2])
    # shared sensitivities broadcast against the noise's batch shape
    column = dpax.mixture_of_gaussians(SIGMAS[1:2, None], SENSITIVITIES[1], PROBS[1], grid_step=1e-2)
    assert column.batch_shape == (1, 1)
    np.testing.assert_array_equal(column.pair.pmf_y, row.pair.pmf_y)


@pytest.mark.slow  # the finer grid's kernels; the default run's oracle is dp-accounting (above, and upstream)
def test_delta_matches_monte_carlo(fine):
    s, c, p = SIGMAS[0], SENSITIVITIES[0], PROBS[0]
    eps, n = EPSILONS[2], 2_000_000
    rng = np.random.default_rng(20240601)
    # remove direction D(Q || P) = E_Q[(1 - e^(eps - L))_+]; add direction D(P || Q) = E_P[(1 - e^(eps + L))_+]
    from_q = rng.standard_normal(n) * s + c[rng.choice(c.size, size=n, p=p)]
    from_p = rng.standard_normal(n) * s
    remove = np.maximum(-np.expm1(eps - mixture_loss(from_q, s, c, p)), 0.0)
    add = np.maximum(-np.expm1(eps + mixture_loss(from_p, s, c, p)), 0.0)
    larger = remove if remove.mean() >= add.mean() else add
    got = fine.delta(EPSILONS)[0, 2]
    assert abs(got - larger.mean()) <= 5 * larger.std() / np.sqrt(n) + 1e-5, (got, remove.mean(), add.mean())


@pytest.mark.parametrize("kwargs, name", [
    (dict(standard_deviation=0.0), "standard_deviation"),
    (dict(standard_deviation=-1.0), "standard_deviation"),
    (dict(standard_deviation=np.nan), "standard_deviation"),
    (dict(sensitivities=[0.0, -1.0]), "sensitivities"),
    (dict(sensitivities=[0.0, np.inf]), "sensitivities"),
    (dict(sensitivities=1.0, sampling_probs=1.0), "sensitivities"),
    (dict(sampling_probs=[0.5, 0.6]), "sampling_probs"),
    (dict(sampling_probs=[1.5, -0.5]), "sampling_probs"),
    (dict(sampling_probs=[0.3, 0.3]), "sampling_probs"),
    (dict(sampling_probs=[0.5, 0.25, 0.25]), "same length"),
    (dict(grid_step=0.0), "grid_step"),
    (dict(standard_deviation=1e-3, sensitivities=[0.0, 10.0]), "standard_deviation"),
    (dict(standard_deviation=[1.0, 2.0, 3.0], sensitivities=[[0.0, 1.0]] * 2), "standard_deviation"),
])
def test_bad_arguments_name_the_argument(kwargs, name):
    args = dict(standard_deviation=1.0, sensitivities=[0.0, 1.0], sampling_probs=[0.5, 0.5], grid_step=1e-2)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        dpax.mixture_of_gaussians(**args)
