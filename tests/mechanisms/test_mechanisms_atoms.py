"""dpax.mechanisms.atoms: mechanisms made of atoms -- randomized response (binary, k-ary), the
(epsilon, delta)-DP worst case, the discrete Laplace and discrete Gaussian mechanisms -- and
their least noise and bad arguments, refused by name.

References: closed-form trade-off curves (randomized response and the epsilon-DP /
(epsilon, delta) worst case: Kairouz et al.), exact privacy profiles summed over the atoms,
and dp-accounting's PLDs on the same grid. Tolerances: 1e-4 absolute, and never on the
optimistic side (beta above the truth, delta below it) beyond 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpa_pld
from mechanism_refs import ALPHAS, EPSILONS, approx_dp_beta, assert_safe_close, atoms_delta
from scipy.special import logsumexp

import dpax

# -- randomized response and the (epsilon, delta) worst case --------------------------------


# default siblings: tests/mechanisms/test_mechanisms_cli.py::test_cli_mechanism_subcommand (randomized
# response, epsilon 1: beta against the closed form at 1e-12, epsilon at delta 0),
# test_approximate_dp_worst_case_curve[1.0-0.0],
# tests/test_bounds_interval.py::test_randomized_response_inside_bracket (closed-form curve and
# advantage tanh(eps / 2) inside the bracket) and tests/engine/test_batch_independence.py::
# test_constructions_answer_as_alone (a randomized-response batch)
@pytest.mark.slow
def test_randomized_response_closed_form():
    eps = np.array([0.1, 1.0, 3.0])
    pl = dpax.randomized_response(eps)
    beta = pl.beta(ALPHAS)
    for i, e in enumerate(eps):
        assert_safe_close(beta[i], approx_dp_beta(ALPHAS, e), 1e-12, "beta")
    np.testing.assert_allclose(pl.epsilon(0.0), eps, atol=1e-12)
    np.testing.assert_allclose(pl.advantage(), np.tanh(eps / 2), atol=1e-12)  # (e^eps - 1) / (e^eps + 1)


# default siblings: tests/test_interop.py::test_sparse_pmfs_and_mechanisms_only_dp_accounting_has (4-ary
# randomized response against dp-accounting's), test_approximate_dp_worst_case_curve[1.0-0.0] and
# tests/mechanisms/test_mechanisms_cli.py::test_cli_mechanism_subcommand (binary randomized response
# against the closed form at 1e-12)
@pytest.mark.slow
def test_k_ary_randomized_response_exact_and_dp_accounting():
    eps, k = 1.2, np.array([2, 3, 10])
    pl = dpax.randomized_response(eps, k=k)
    for i, kk in enumerate(k):
        z = np.exp(eps) + kk - 1
        p = np.array([np.exp(eps), 1.0, kk - 2.0]) / z
        q = np.array([1.0, np.exp(eps), kk - 2.0]) / z
        assert_safe_close(pl.delta(EPSILONS)[i], atoms_delta(EPSILONS, p, q), 1e-12, "risk")
        # dp-accounting: uniform bucket with probability r, so e^eps = (1 - r + r / k) / (r / k)
        r = kk / z
        oracle = dpa_pld.from_randomized_response(r, int(kk), value_discretization_interval=1e-4)
        theirs = np.array([oracle.get_delta_for_epsilon(e) for e in EPSILONS])
        assert np.max(np.abs(pl.delta(EPSILONS)[i] - theirs)) <= 1e-4
    assert np.all(pl.epsilon(0.0) == pytest.approx(eps, abs=1e-12))


# (0, 0.1), (0.5, 1e-3) and (3, 0.2) (supports of their own) are slow; default siblings: (1, 1e-3)
# (delta > 0, on the support of (1, 0)) and (1, 0)
@pytest.mark.parametrize("eps,delta", [pytest.param(0.0, 0.1, marks=pytest.mark.slow),
                                       pytest.param(0.5, 1e-3, marks=pytest.mark.slow),
                                       (1.0, 1e-3), (1.0, 0.0), pytest.param(3.0, 0.2, marks=pytest.mark.slow)])
def test_approximate_dp_worst_case_curve(eps, delta):
    pl = dpax.approximate_dp(eps, delta, grid_step=1e-3)  # atoms on the grid: exact
    assert_safe_close(pl.beta(ALPHAS), approx_dp_beta(ALPHAS, eps, delta), 1e-12, "beta")
    # asked with EPSILONS (each is answered on its own): the 8-query delta kernel of
    # tests/test_input_errors.py on this support, instead of a one-query kernel of its own
    assert pl.delta(np.append(EPSILONS, eps))[-1] == pytest.approx(delta, abs=1e-12)
    assert pl.epsilon(delta + 1e-12) == pytest.approx(eps, abs=1e-9)
    if delta > 0:
        assert pl.epsilon(delta / 2) == np.inf  # the +inf atom of Y holds delta
    # every (eps, delta)-DP mechanism lies above: randomized response with the same eps
    rr = dpax.randomized_response(max(eps, 1e-3), grid_step=1e-3)
    assert np.all(rr.beta(ALPHAS) >= pl.beta(ALPHAS) - 1e-12)


# -- discrete mechanisms ---------------------------------------------------------------------


def discrete_laplace_atoms(scale, sens):
    z = np.arange(-60 * scale - sens, 60 * scale + sens + 1)
    logp = -np.abs(z) / scale
    p = np.exp(logp - logsumexp(logp))
    q = np.exp(-np.abs(z - sens) / scale - logsumexp(logp))
    return p, q


def discrete_gaussian_atoms(sigma, sens):
    z = np.arange(-int(40 * sigma) - sens, int(40 * sigma) + 2 * sens + 1)
    lp = -(z**2) / (2 * sigma**2)
    lq = -((z - sens) ** 2) / (2 * sigma**2)
    norm_ = logsumexp(lp)
    return np.exp(lp - norm_), np.exp(lq - norm_)


# (2, 3) (a support of its own) is slow too; default sibling: (1, 1)
@pytest.mark.parametrize("scale,sens", [(1.0, 1), pytest.param(2.0, 3, marks=pytest.mark.slow),
                                        pytest.param(0.7, 2, marks=pytest.mark.slow)])
def test_discrete_laplace_exact_and_dp_accounting(scale, sens):
    pl = dpax.discrete_laplace(scale, sens)
    p, q = discrete_laplace_atoms(scale, sens)
    assert_safe_close(pl.delta(EPSILONS), atoms_delta(EPSILONS, p, q), 1e-12, "risk")
    assert pl.epsilon(0.0) == pytest.approx(sens / scale, abs=1e-4)
    oracle = dpa_pld.from_discrete_laplace_mechanism(1.0 / scale, sensitivity=sens, value_discretization_interval=1e-4)
    theirs = np.array([oracle.get_delta_for_epsilon(e) for e in EPSILONS])
    assert np.max(np.abs(pl.delta(EPSILONS) - theirs)) <= 1e-4


# (0.8, 1) (atoms of its own) is slow too; default sibling: (4, 2) (with the continuous comparison)
@pytest.mark.parametrize("sigma,sens", [pytest.param(0.8, 1, marks=pytest.mark.slow),
                                        pytest.param(1.5, 1, marks=pytest.mark.slow), (4.0, 2)])
def test_discrete_gaussian_exact_and_dp_accounting(sigma, sens):
    pl = dpax.discrete_gaussian(sigma, sens)
    p, q = discrete_gaussian_atoms(sigma, sens)
    assert_safe_close(pl.delta(EPSILONS), atoms_delta(EPSILONS, p, q), 1e-4, "risk")
    oracle = dpa_pld.from_discrete_gaussian_mechanism(sigma, sensitivity=sens, value_discretization_interval=1e-4)
    theirs = np.array([oracle.get_delta_for_epsilon(e) for e in EPSILONS])
    assert np.max(np.abs(pl.delta(EPSILONS) - theirs)) <= 1e-4
    # the discrete Gaussian is close to the continuous one for large sigma (CKS20)
    if sigma >= 4:
        cont = dpax.gaussian(sigma, sensitivity=sens).beta(ALPHAS)
        assert np.max(np.abs(pl.beta(ALPHAS) - cont)) <= 3e-3  # atoms 0.125 apart in loss


def test_discrete_batch_broadcasts():
    # grid 0.5: every row on the shortest support (one kernel for the six rows, not five)
    pl = dpax.discrete_gaussian([[1.0], [2.0]], [1, 2, 3], grid_step=0.5)
    assert pl.batch_shape == (2, 3)
    single = dpax.discrete_gaussian(2.0, 3, grid_step=0.5)
    np.testing.assert_allclose(pl.delta(0.5)[1, 2], single.delta(0.5), atol=1e-12)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: dpax.randomized_response(-1.0), "epsilon"),
        (lambda: dpax.randomized_response(1.0, k=1), "k"),
        (lambda: dpax.approximate_dp(1.0, 1.5), "delta"),
        (lambda: dpax.discrete_laplace(1.0, 0.5), "sensitivity"),
        (lambda: dpax.discrete_gaussian(np.nan), "sigma"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("sigma", [1e-200, 1e-310, 1e-3, 0.028])
def test_discrete_gaussian_below_its_least_sigma_is_refused_with_the_range(sigma):
    """The atom at 0 holds half of P's mass and has loss -D^2 / (2 sigma^2): beyond 600 nats the
    pair leaves float64 range, so sigma >= D / sqrt(1200). Below ~1e-154 sigma^2 underflowed and
    epsilon read 0, the advantage NaN."""
    with pytest.raises(ValueError, match=r"sigma=.* is too small for sensitivity 1: .* sigma must be at least "
                                         r"0\.0289 x the sensitivity"):
        dpax.discrete_gaussian(sigma, grid_step=0.1)
    with pytest.raises(ValueError, match=r"sensitivity 3 \(6 under substitution\).*\(here 0\.174\)"):
        dpax.discrete_gaussian(sigma, 3, grid_step=0.1, neighbouring="substitution")


def test_discrete_mechanisms_least_noise_is_exact():
    least = 1 / np.sqrt(1200)  # the discrete Gaussian's: D^2 / (2 sigma^2) = 600
    dpax.discrete_gaussian(least * (1 + 1e-9), grid_step=0.1)
    with pytest.raises(ValueError, match="sigma"):
        dpax.discrete_gaussian(least * (1 - 1e-9), grid_step=0.1)
    dpax.discrete_laplace(1 / 600 * (1 + 1e-9), grid_step=0.1)  # the discrete Laplace's: D / scale = 600
    for scale in (1 / 600 * (1 - 1e-9), 1e-310):  # a subnormal scale was read as the point mass (inf)
        with pytest.raises(ValueError, match=r"scale=.* is too small .* scale must be at least 0\.00167"):
            dpax.discrete_laplace(scale, grid_step=0.1)
