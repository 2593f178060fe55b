"""Mechanism library: Laplace, subsampled Laplace, randomized response (binary, k-ary),
(epsilon, delta)-DP worst case, discrete Laplace / Gaussian, neighbouring relations.

References: closed-form trade-off curves (Laplace: Dong, Roth & Su Example; randomized
response and the epsilon-DP / (epsilon, delta) worst case: Kairouz et al.), exact privacy
profiles summed over the atoms (discrete mechanisms) or from the Laplace CDFs, and
dp-accounting's PLDs on the same grid. Tolerances: 1e-4 absolute, and
never on the optimistic side (beta above the truth, delta below it) beyond 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpa_pld
from scipy.special import logsumexp
from scipy.stats import norm

import dpax

ALPHAS = np.unique(np.concatenate([np.logspace(-6, np.log10(0.5), 30), np.linspace(0.01, 0.99, 50)]))
EPSILONS = np.array([0.0, 0.05, 0.2, 0.5, 1.0, 1.5, 2.5])


def laplace_beta(alpha, eps):
    """Trade-off curve of Lap(0, b) vs Lap(D, b), eps = D / b (Dong, Roth & Su)."""
    a = np.asarray(alpha, float)
    mid = np.exp(-eps) / (4.0 * np.maximum(a, 1e-300))
    return np.where(a < np.exp(-eps) / 2, 1 - np.exp(eps) * a, np.where(a <= 0.5, mid, np.exp(-eps) * (1 - a)))


def approx_dp_beta(alpha, eps, delta=0.0):
    """max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)) (Kairouz et al.)."""
    a = np.asarray(alpha, float)
    return np.maximum(0.0, np.maximum(1 - delta - np.exp(eps) * a, np.exp(-eps) * (1 - delta - a)))


def atoms_delta(eps, p, q):
    """Exact symmetrised delta(eps) of a finite pair: max of both hockey-stick divergences."""
    e = np.exp(np.asarray(eps, float))[..., None]
    return np.maximum(np.sum(np.maximum(q - e * p, 0), -1), np.sum(np.maximum(p - e * q, 0), -1))


def laplace_delta(eps, e0):
    """delta(eps) of the Laplace mechanism with eps0 = D / b: 1 - e^((eps - eps0) / 2)."""
    return np.where(eps < e0, -np.expm1((np.asarray(eps, float) - e0) / 2), 0.0)


def assert_safe_close(got, exact, tol, kind):
    """Within ``tol`` and on the safe side: 'beta' (got <= exact) or 'risk' (got >= exact)."""
    got, exact = np.asarray(got), np.asarray(exact)
    assert np.max(np.abs(got - exact)) <= tol, np.max(np.abs(got - exact))
    if kind == "beta":
        assert np.all(got <= exact + 1e-12), np.max(got - exact)
    else:
        assert np.all(got >= exact - 1e-12), np.max(exact - got)


# -- Laplace --------------------------------------------------------------------------------


def test_laplace_matches_closed_form_curve_batch():
    # scales 0.5 and 1 (0.4, 0.8 and 1 until 2026-11-27): the pairs of
    # test_substitution_laplace_and_discrete_double_sensitivity_rr_unchanged and
    # test_laplace_agrees_with_dp_accounting_same_grid; each row is read on its own, on the
    # batch's (scale 1's) 20480-point support, whose one-row kernels other files compile (the
    # whole batch's analysis kernels would be the file's own); rows of a Laplace batch answer
    # as alone: tests/engine/test_batch_independence.py::test_constructions_answer_as_alone (its Laplace case)
    scale = np.array([0.5, 1.0])
    pl = dpax.laplace(scale, sensitivity=1.0)
    assert pl.batch_shape == (2,)
    for i, b in enumerate(scale):
        row = pl[i]
        e0 = 1.0 / b
        assert_safe_close(row.beta(ALPHAS), laplace_beta(ALPHAS, e0), 1e-8, "beta")
        assert_safe_close(row.delta(EPSILONS), laplace_delta(EPSILONS, e0), 1e-8, "risk")
        # pure epsilon-DP: epsilon at delta = 0 is eps0, on the grid
        assert abs(row.epsilon(0.0) - e0) <= 1e-4 and row.epsilon(0.0) >= e0 - 1e-12
        adv = 1 - 2 * np.exp(-e0 / 2) / 2  # TPR - FPR at the threshold o = D/2: 1 - e^(-eps/2)
        assert abs(row.advantage() - adv) <= 1e-8 and row.advantage() >= adv - 1e-12


def _laplace_agrees_with_dp_accounting(configs):
    for b, s in configs:
        oracle = dpa_pld.from_laplace_mechanism(b, sensitivity=s, value_discretization_interval=1e-4)
        pl = dpax.laplace(b, s)
        ours = pl.delta(EPSILONS)
        theirs = np.array([oracle.get_delta_for_epsilon(e) for e in EPSILONS])
        assert np.max(np.abs(ours - theirs)) <= 1e-10


def test_laplace_agrees_with_dp_accounting_same_grid():
    _laplace_agrees_with_dp_accounting([(1.0, 1.0)])


@pytest.mark.slow  # default sibling: test_laplace_agrees_with_dp_accounting_same_grid (scale 1, sensitivity 1)
def test_laplace_agrees_with_dp_accounting_same_grid_sensitivity_two():
    """Scale 0.5, sensitivity 2 (a support of its own) of the test above."""
    _laplace_agrees_with_dp_accounting([(0.5, 2.0)])


def test_subsampled_laplace_exact_profile_and_dp_accounting():
    b, p = 0.8, 0.2
    pl = dpax.subsampled_laplace(b, p, sensitivity=1.0)
    e0 = 1.0 / b

    def sf_p(o):  # Pr_P[O > o], P = Lap(0, b)
        return np.where(o >= 0, 0.5 * np.exp(-o / b), 1 - 0.5 * np.exp(o / b))

    def sf_q1(o):  # Pr[O > o] under Lap(1, b)
        return sf_p(o - 1.0)

    def exact_delta(eps):
        # remove direction: Q' = (1-p)P + p Lap(1) vs P; L' > eps <=> L > t, L = (|o| - |o-1|)/b
        t = np.log((np.exp(eps) - 1 + p) / p)
        o = b * np.clip(t + e0, 0, 2 * e0) / 2
        o = np.where(t >= e0, np.inf, np.where(t < -e0, -np.inf, o))
        d1 = (1 - p) * sf_p(o) + p * sf_q1(o) - np.exp(eps) * sf_p(o)
        # add direction: P vs Q'; log(P/Q') > eps <=> L' < -eps <=> o < o(-eps)
        g = -eps
        t = np.log(np.maximum(np.exp(g) - 1 + p, 1e-300) / p) if np.exp(g) - 1 + p > 0 else -np.inf
        o2 = -np.inf if t < -e0 else (np.inf if t >= e0 else b * (t + e0) / 2)
        cdf_p = 1 - sf_p(o2)
        cdf_q = (1 - p) * cdf_p + p * (1 - sf_q1(o2))
        d2 = cdf_p - np.exp(eps) * cdf_q
        return max(d1, d2, 0.0)

    eps = np.array([0.0, 0.05, 0.1, 0.2, 0.4])
    exact = np.array([exact_delta(e) for e in eps])
    assert_safe_close(pl.delta(eps), exact, 1e-4, "risk")
    oracle = dpa_pld.from_laplace_mechanism(b, sensitivity=1.0, value_discretization_interval=1e-4, sampling_prob=p)
    theirs = np.array([oracle.get_delta_for_epsilon(e) for e in eps])
    assert np.max(np.abs(pl.delta(eps) - theirs)) <= 1e-6
    # p = 1 is the plain Laplace mechanism (scale 1, 0.8 until 2026-11-27: the pair and beta
    # kernel of test_laplace_agrees_with_dp_accounting_same_grid and other files, not its own)
    np.testing.assert_allclose(dpax.subsampled_laplace(1.0, 1.0).beta(ALPHAS), dpax.laplace(1.0).beta(ALPHAS),
                               atol=1e-12)


# -- randomized response and the (epsilon, delta) worst case --------------------------------


# default siblings: test_cli_mechanism_subcommand (randomized response, epsilon 1: beta against the
# closed form at 1e-12, epsilon at delta 0), test_approximate_dp_worst_case_curve[1.0-0.0],
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
# test_cli_mechanism_subcommand (binary randomized response against the closed form at 1e-12)
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


# -- neighbouring relations -------------------------------------------------------------------


def test_substitution_gaussian_has_twice_the_sensitivity():
    sigma = 4.0  # the pair of gaussian(4, sensitivity=2) in test_discrete_gaussian_exact_and_dp_accounting[4.0-2]
    pl = dpax.gaussian(sigma, neighbouring="substitution")
    exact = norm.cdf(norm.isf(ALPHAS) - 2.0 / sigma)
    assert_safe_close(pl.beta(ALPHAS), exact, 1e-6, "beta")
    oracle = dpa_pld.from_gaussian_mechanism(
        sigma, value_discretization_interval=1e-4, neighboring_relation=dpa_pld.NeighborRel.REPLACE_ONE
    )
    theirs = np.array([oracle.get_delta_for_epsilon(e) for e in EPSILONS])
    assert np.max(np.abs(pl.delta(EPSILONS) - theirs)) <= 1e-4
    assert "substitution" in repr(pl)


def test_substitution_laplace_and_discrete_double_sensitivity_rr_unchanged():
    h = 1e-3
    np.testing.assert_allclose(
        dpax.laplace(1.0, grid_step=h, neighbouring="substitution").beta(ALPHAS),
        dpax.laplace(0.5, grid_step=h).beta(ALPHAS), atol=1e-12
    )
    np.testing.assert_allclose(
        dpax.discrete_laplace(1.0, 1, grid_step=h, neighbouring="substitution").delta(EPSILONS),
        dpax.discrete_laplace(1.0, 2, grid_step=h).delta(EPSILONS),
        atol=1e-12,
    )
    np.testing.assert_array_equal(
        dpax.randomized_response(1.0, grid_step=h, neighbouring="substitution").beta(ALPHAS),
        dpax.randomized_response(1.0, grid_step=h).beta(ALPHAS),
    )


# -- what a PrivacyLoss says about itself, and bad input --------------------------------------


def test_repr_and_tradeoff_points():
    # scale 1 at grid 1e-4 (0.5 at 1e-3 until 2026-11-27, 2 before): the pair of
    # test_laplace_agrees_with_dp_accounting_same_grid, whose tradeoff_points kernel (20480
    # points) other files compile
    pl = dpax.laplace(1.0, sensitivity=1.0, grid_step=1e-4)
    text = repr(pl)
    for part in ("laplace(scale=1, sensitivity=1)", "grid_step=0.0001", "support_length=", "tail_mass"):
        assert part in text
    alpha, beta = pl.tradeoff_points()
    assert alpha.shape == beta.shape == (pl.support_length + 1,)
    assert np.all(np.diff(alpha) <= 0) and np.all(np.diff(beta) >= 0)
    assert np.all(beta <= laplace_beta(alpha, 1.0) + 1e-12)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: dpax.laplace(0.0), "scale"),
        (lambda: dpax.laplace(1.0, neighbouring="swap"), "neighbouring"),
        (lambda: dpax.randomized_response(-1.0), "epsilon"),
        (lambda: dpax.randomized_response(1.0, k=1), "k"),
        (lambda: dpax.approximate_dp(1.0, 1.5), "delta"),
        (lambda: dpax.discrete_laplace(1.0, 0.5), "sensitivity"),
        (lambda: dpax.discrete_gaussian(np.nan), "sigma"),
        (lambda: dpax.subsampled_laplace(1.0, 0.0), "sample_rate"),
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


@pytest.mark.parametrize("neighbouring, factor", [("add_remove", 1.0), ("substitution", 2.0)])
def test_the_least_gaussian_noise_quoted_is_the_true_one(neighbouring, factor):
    """The loss at the output leaving 1e-20 of the mass beyond is x^2 / 2 + z x (x = sensitivity /
    noise, z = -Phi^-1(1e-20)): at most 600 nats for noise >= sensitivity / (sqrt(z^2 + 1200) - z)
    = 0.0376 (0.0752 under substitution, which doubles the sensitivity; the message said 0.05)."""
    z = -norm.ppf(1e-20)
    exact = factor / (np.sqrt(z**2 + 1200) - z)
    with pytest.raises(ValueError) as err:
        dpax.subsampled_gaussian(exact * (1 - 1e-6), 1.0, grid_step=0.1, neighbouring=neighbouring)
    quoted = float(str(err.value).split(">= ")[1].split(" ")[0])
    assert exact <= quoted <= exact * 1.003
    dpax.subsampled_gaussian(exact * (1 + 1e-6), 1.0, grid_step=0.1, neighbouring=neighbouring)
    dpax.subsampled_gaussian(quoted, 0.01, grid_step=0.1, neighbouring=neighbouring)  # enough at every rate
    with pytest.raises(ValueError) as err:
        dpax.gaussian(exact * (1 - 1e-6) / factor, grid_step=0.1, neighbouring=neighbouring)
    assert f"{quoted:g} x sensitivity" in str(err.value)
    with pytest.raises(ValueError) as err:  # all the mass at the largest sensitivity: the Gaussian's bound
        dpax.mixture_of_gaussians(exact / factor * (1 - 1e-6), [0.0, 1.0], [0.0, 1.0], grid_step=0.1)
    mixture = float(str(err.value).split("standard_deviation >= ")[1].split(" ")[0])
    assert exact / factor <= mixture <= exact / factor * 1.003
    dpax.mixture_of_gaussians(mixture, [0.0, 1.0], [0.0, 1.0], grid_step=0.1)


def test_the_gaussian_familys_least_noise_is_one_number_at_every_sample_rate():
    """Invariant: the least noise the docstrings state is the one enforced, at every sample
    rate and for every Gaussian-family constructor. It is exactly L = 1 / (sqrt(z^2 + 1200) - z)
    (z = -Phi^-1(1e-20), the loss at the single step's 1e-20 tail reaches 600 nats; 2 L under
    substitution, which doubles the sensitivity), stated rounded up (0.037601, 0.075201). The
    check was the loss at the given sample rate, which shrinks with it: dpsgd(0.0376, 0.1, 2)
    and a substitution step at 0.0752 (below 2 L) were accepted while the docstrings said 0.0377
    and 0.0753 (found by an independent fuzz)."""
    import inspect

    from dpax.mechanisms import gaussian_family

    z = -norm.ppf(1e-20)
    least = 1.0 / (np.sqrt(z**2 + 1200) - z)
    assert least == pytest.approx(0.0376002227514754, rel=1e-12)
    for factor, text in ((1.0, "0.037601"), (2.0, "0.075201")):  # the least rounded up to 5 digits
        assert float(text) == np.ceil(factor * least * 1e6) / 1e6
    for fn in (dpax.gaussian, dpax.subsampled_gaussian, dpax.dpsgd, dpax.mixture_of_gaussians):
        doc = inspect.getdoc(fn)
        assert "at least 0.037601" in doc and "0.0376002227514754" in doc, fn.__name__
        if fn is not dpax.mixture_of_gaussians:
            assert "0.075201 under substitution" in doc, fn.__name__
    assert "0.0377" not in inspect.getsource(gaussian_family)
    below = lambda x: x * (1 - 1e-9)
    refused = [  # (call, the least it must quote exactly)
        (lambda: dpax.dpsgd(0.0376, 0.1, 2, grid_step=0.1), least),
        (lambda: dpax.dpsgd(below(least), 1e-6, 1, grid_step=0.1), least),
        (lambda: dpax.subsampled_gaussian(below(least), 0.01, grid_step=0.1), least),
        (lambda: dpax.subsampled_gaussian(0.0752, 0.1, grid_step=0.1, neighbouring="substitution"), 2 * least),
        (lambda: dpax.dpsgd(below(2 * least), 1e-3, 3, grid_step=0.1, neighbouring="substitution"), 2 * least),
        (lambda: dpax.gaussian(below(2 * least), grid_step=0.1, neighbouring="substitution"), 2 * least),
        (lambda: dpax.gaussian(below(3 * least), 3.0, grid_step=0.1), least),
        (lambda: dpax.mixture_of_gaussians(below(2 * least), [0.0, 2.0], [0.99, 0.01], grid_step=0.1), least),
    ]
    for call, quoted in refused:
        with pytest.raises(ValueError, match=r"is too small: the least is ") as err:
            call()
        message = str(err.value)
        assert "noise_multiplier" in message or "standard_deviation" in message
        assert float(message.split("the least is ")[1].split(" ")[0]) == pytest.approx(quoted, rel=1e-15)
    # the stated figures are accepted at every sample rate (and the exact least itself)
    for s in (least, 0.037601):
        dpax.subsampled_gaussian(s, [1.0, 0.1], grid_step=0.1)
        dpax.mixture_of_gaussians(s, [0.0, 1.0], [0.5, 0.5], grid_step=0.1)
    for s in (2 * least, 0.075201):
        dpax.subsampled_gaussian(s, [1.0, 0.1], grid_step=0.1, neighbouring="substitution")


# default sibling: tests/test_privacy_loss.py::test_tradeoff_points_are_monotone_and_on_the_curve
# (symmetric=True points monotone and on the curve at 1e-9)
@pytest.mark.slow
def test_symmetrised_tradeoff_points_interpolate_the_curve():
    pl = dpax.subsampled_laplace(1.0, 0.3, grid_step=1e-3)
    alpha, beta = pl.tradeoff_points(symmetric=True)
    assert alpha.shape == beta.shape == (2 * pl.support_length + 2,)
    assert np.all(np.diff(alpha) >= 0) and np.all(np.diff(beta) <= 1e-15)
    np.testing.assert_allclose(np.interp(ALPHAS, alpha, beta), pl.beta(ALPHAS), atol=1e-12)


def test_from_privacy_profile_with_the_laplace_profile():
    """The generic path (Algorithm 2 from a user's delta(epsilon)) on the Laplace profile:
    within its documented second-difference accuracy of the CDF-built Laplace pair."""
    e0 = 1.0
    # grid 2e-3 and the default epsilon_max (1 here; 1e-3 and 2.0 until 2026-11-27): the
    # connect-the-dots kernel (512 points) of tests/gdp/test_gdp.py's randomized response
    # (observed: within 1.1e-7; an explicit epsilon_max: tests/test_fuzz.py::test_fuzz_dpax_from_privacy_profile)
    pl = dpax.from_privacy_profile(lambda e: laplace_delta(e, e0), grid_step=2e-3)
    exact = laplace_beta(ALPHAS, e0)
    assert np.max(np.abs(pl.beta(ALPHAS) - exact)) <= 1e-4
    assert np.all(pl.beta(ALPHAS) <= exact + 1e-9)


@pytest.mark.parametrize("sigma,p", [(1.0, 0.1), pytest.param(0.7, 0.3, marks=pytest.mark.slow),
                                     pytest.param(1.2, 0.01, marks=pytest.mark.slow)])
def test_subsampled_gaussian_substitution_matches_dp_accounting_replace_one(sigma, p):
    """Poisson subsampling under replace-one: dp-accounting's REPLACE pair on the same grid
    (1e-3). Observed: |delta - oracle| <= 5e-14 at grid 1e-4, 3e-16 at 1e-3."""
    h = 1e-3
    pl = dpax.subsampled_gaussian(sigma, p, grid_step=h, neighbouring="substitution")
    oracle = dpa_pld.from_gaussian_mechanism(
        sigma, sampling_prob=p, value_discretization_interval=h, neighboring_relation=dpa_pld.NeighborRel.REPLACE_ONE
    )
    theirs = np.array([oracle.get_delta_for_epsilon(e) for e in EPSILONS])
    assert np.max(np.abs(pl.delta(EPSILONS) - theirs)) <= 1e-10
    # substitution is never more private than add/remove for the same noise and rate
    assert np.all(pl.delta(EPSILONS) >= dpax.subsampled_gaussian(sigma, p, grid_step=h).delta(EPSILONS) - 1e-12)


# default siblings: tests/test_bounds_interval.py::test_substitution_gaussian_inside_bracket[0.01] (the same
# subsampled_gaussian(2, 1, substitution) against mu-GDP closed forms),
# test_subsampled_gaussian_substitution_matches_dp_accounting_replace_one[1.0-0.1] and
# test_substitution_gaussian_has_twice_the_sensitivity (dp-accounting REPLACE_ONE)
@pytest.mark.slow
def test_substitution_without_subsampling_is_the_sensitivity_two_gaussian():
    pl = dpax.subsampled_gaussian(2.0, 1.0, neighbouring="substitution")
    assert_safe_close(pl.beta(ALPHAS), norm.cdf(norm.isf(ALPHAS) - 1.0), 1e-6, "beta")
    steps = dpax.dpsgd(1.0, 0.05, 100, grid_step=1e-3, neighbouring="substitution")
    oracle = dpa_pld.from_gaussian_mechanism(
        1.0, sampling_prob=0.05, value_discretization_interval=1e-3,
        neighboring_relation=dpa_pld.NeighborRel.REPLACE_ONE,
    ).self_compose(100)
    assert steps.epsilon(1e-5) == pytest.approx(oracle.get_epsilon_for_delta(1e-5), rel=1e-6)
    assert "substitution" in repr(steps)


# -- command line ----------------------------------------------------------------------------


def test_cli_mechanism_subcommand(capsys):
    import json

    from dpax.cli import main

    # at ALPHAS: the beta kernel test_approximate_dp_worst_case_curve[1.0-*] compiles for this support
    assert main(["mechanism", "randomized-response", "--epsilon", "1", "--grid-step", "1e-3",
                 "--alpha", *map(repr, ALPHAS.tolist()), "--delta", "0", "--json", "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mechanism"] == "randomized-response"
    np.testing.assert_allclose(out["beta"], approx_dp_beta(ALPHAS, 1.0), atol=1e-12)
    assert out["epsilon"] == [pytest.approx(1.0, abs=1e-12)]
    # scale 1 (0.5 until 2026-11-27, 2 before): three steps on 6144 points, whose beta,
    # advantage and epsilon kernels tests/cli/test_cli.py and tests/accountants/test_accountants.py compile
    assert main(["mechanism", "laplace", "--scale", "1", "--count", "3", "--grid-step", "1e-3", "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "laplace(scale=1, sensitivity=1) x 3" in text and "advantage" in text
    assert main(["mechanism", "laplace", "--epsilon", "1", "--no-cache"]) == 2
    assert "does not take --epsilon" in capsys.readouterr().err
    assert main(["mechanism", "discrete-gaussian", "--no-cache"]) == 2
    assert "needs --sigma" in capsys.readouterr().err


def test_the_least_noise_stays_exact_on_a_grid_padded_past_709_nats():
    """Just above the least Gaussian noise (0.0377 sensitivity) the loss spans ~1300 nats and
    the padded support carries grid points past 709 nats, where e^x overflows: the cells there
    hold no mass, and the construction must give them 0 (it gave NaN, and then epsilon 0 and a
    NaN advantage). The bracket holds the mu-GDP closed form; Laplace at its least scale
    (1/600, the same padding) keeps a certain attack."""
    from dpax import gdp

    for s in (0.0377, 0.038, 0.0385):
        pl = dpax.gaussian(s, grid_step=1e-2)
        assert np.all(np.isfinite(pl.pmf_x)) and np.all(np.isfinite(pl.pmf_y))
        truth = gdp.epsilon(1e-5, 1.0 / s)
        eps = pl.epsilon(1e-5, bounds=True)
        assert eps.optimistic <= truth <= eps.safe <= truth * (1 + 1e-6)
        assert pl.advantage() == pytest.approx(gdp.advantage(1.0 / s), abs=1e-12)
    lap = dpax.laplace(1 / 600, grid_step=1e-2).advantage(bounds=True)
    assert lap.safe == 1.0 and lap.optimistic <= lap.safe
