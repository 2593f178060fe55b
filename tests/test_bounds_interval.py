"""Certified brackets: the truth lies between the safe pair and its optimistic
companion (``pl.optimistic_companion()``), for every quantity, at every grid.

The truths are closed forms computed here independently of dpax (tests/exact_refs.py):
the composed Gaussian is mu-GDP (beta = Phi(Phi^-1(1 - alpha) - mu)), one subsampled
Gaussian step has an exact symmetrised curve, Laplace and randomized response have closed
forms, discrete mechanisms are exact atom laws analysed here by Neyman-Pearson. Each check
is oriented: beta_safe <= truth <= beta_opt and eps_opt <= truth <= eps_safe, so a swap of
the two sides fails (and :func:`test_swapped_sides_are_caught` makes sure the brackets are
wide enough at a coarse grid for a swap to show).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.stats import norm

import dpax
from dpax.privacy_loss import Interval
from exact_refs import (
    gdp_advantage,
    gdp_beta,
    gdp_delta,
    gdp_epsilon,
    subsampled_delta,
    subsampled_epsilon,
    subsampled_symmetrised_beta,
)

#: alpha from 1e-8 to 1 (log and linear)
ALPHAS = np.unique(np.concatenate([np.logspace(-8, 0, 49), np.linspace(0.0, 1.0, 51)]))
DELTAS = np.array([1e-8, 1e-6, 1e-5, 1e-3, 1e-2, 0.1])
EPSILONS = np.array([0.0, 0.1, 0.5, 1.0, 2.0, 4.0])
#: float64 round-off allowed on either side of a bracket (absolute, on probabilities)
ROUND = 1e-12


def _at(values, v):
    """The index of ``v`` in ``values`` (present exactly)."""
    (i,) = np.flatnonzero(values == v)
    return int(i)


def rounding(step):
    """Round-off of a construction from differences of CDFs at grid ``step``: ~1e-16 / step
    relative per cell (as for the safe pair), 2e-11 seen at grid 1e-5."""
    return max(ROUND, 5e-16 / step)


def eps_rounding(step):
    """The same on epsilon = log((Pr[Y > x] - delta) / Pr[X > x]): relative errors of the
    tail sums, amplified where Pr[Y > x] is close to delta (1.6e-9 seen at grid 1e-5)."""
    return max(1e-9, 1e-13 / step)


def _below(lo, truth, tol=ROUND):
    """lo <= truth elementwise, up to round-off (relative for large values)."""
    lo, truth = np.asarray(lo, float), np.asarray(truth, float)
    ok = lo <= truth + tol + 1e-12 * np.abs(truth)
    assert np.all(ok), f"bound above the truth by {np.max(lo - truth):.3g} at {np.argwhere(~ok)[:3].tolist()}"


def _check_beta(b: Interval, truth, tol=ROUND):
    _below(b.safe, truth, tol)  # safe: never above the true curve
    _below(truth, b.optimistic, tol)  # optimistic: never below it


def _check_loss(v: Interval, truth, tol=ROUND):
    """epsilon, delta, advantage: optimistic <= truth <= safe."""
    _below(v.optimistic, truth, tol)
    _below(truth, v.safe, tol)


# --------------------------------------------------------------------------------------
# composed Gaussian: exactly mu-GDP
# --------------------------------------------------------------------------------------

SLOW = pytest.mark.slow
#: (noise, steps, grid): the default run keeps a few cheap cases (compilations dominate)
#: (1.0, 1, 1e-2) is slow (kernels of its own): the default (1.0, 4, 1e-3) keeps the guarantee;
#: the default case composes 4 steps, the shapes of the file's other composed Gaussians (mu, swap,
#: pytree, refine), and the 16-step cases are slow (the default 4-step one keeps the guarantee);
#: (1.0, 4, 1e-2) is slow too (~2 s); default siblings: (1.0, 4, 1e-3) (the same four brackets) and
#: test_swapped_sides_are_caught (this composition at grid 1e-2, beta and epsilon strictly on their sides)
GAUSS = [pytest.param(1.0, 1, 1e-2, marks=SLOW), pytest.param(1.0, 4, 1e-2, marks=SLOW), (1.0, 4, 1e-3),
         pytest.param(1.0, 16, 1e-2, marks=SLOW), pytest.param(1.0, 16, 1e-3, marks=SLOW),
         pytest.param(1.0, 1, 1e-3, marks=SLOW),
         pytest.param(2.0, 10, 1e-2, marks=SLOW), pytest.param(2.0, 10, 1e-3, marks=SLOW),
         pytest.param(0.7, 3, 1e-2, marks=SLOW), pytest.param(0.7, 3, 1e-3, marks=SLOW)]


def _gaussian_case(sigma, steps, step):
    pl = dpax.gaussian(sigma, grid_step=step).self_compose(steps)
    mu = np.sqrt(steps) / sigma
    tol = rounding(step)
    _check_beta(pl.beta(ALPHAS, bounds=True), gdp_beta(ALPHAS, mu), tol)
    _check_loss(pl.advantage(bounds=True), gdp_advantage(mu), tol)
    _check_loss(pl.delta(EPSILONS, bounds=True), gdp_delta(EPSILONS, mu), tol)
    _check_loss(pl.epsilon(DELTAS, bounds=True), [gdp_epsilon(d, mu) for d in DELTAS], tol=eps_rounding(step))
    return pl


@pytest.mark.parametrize("sigma,steps,step", GAUSS)
def test_composed_gaussian_inside_bracket(sigma, steps, step):
    _gaussian_case(sigma, steps, step)


# (16 steps at grid 1e-5: the companion's six-law composition onto 10.5M points needs 9.4 GiB, over
# the default 8 GiB budget, and is refused up front)
@pytest.mark.slow
@pytest.mark.parametrize("sigma,steps,step", [(1.0, 1, 1e-4), (1.0, 1, 1e-5), (1.0, 16, 1e-4)])
def test_composed_gaussian_inside_bracket_fine(sigma, steps, step):
    _gaussian_case(sigma, steps, step)


# slow (the mu kernel at 4096 points, ~3 s to compile); default siblings:
# tests/engine/test_companion_tails.py::test_mu_bracket_holds_the_truth_and_is_narrow (the composed
# Gaussian's mu(pl.optimistic_companion()) below the true mu (16 steps: 4), mu(pl) above it, less than 1e-4 apart)
# and tests/gdp/test_gdp_mu_regret.py::test_composed_gaussian_regret_is_zero (mu's bracket holds the truth)
@pytest.mark.slow
def test_gaussian_mu_inside_bracket():
    """mu from the companion's curve (``gdp.mu_and_regret(pl.optimistic_companion())``) is a lower bound."""
    pl = dpax.gaussian(1.0, grid_step=1e-2).self_compose(4)
    mu_safe = dpax.gdp.mu_and_regret(pl)[0]
    mu_opt = dpax.gdp.mu_and_regret(pl.optimistic_companion())[0]
    assert mu_opt <= 2.0 <= mu_safe and mu_safe - mu_opt < 1e-3


# --------------------------------------------------------------------------------------
# one subsampled Gaussian step: exact symmetrised curve
# --------------------------------------------------------------------------------------

#: the default (0.5, 0.3, 1e-2) keeps the guarantee: it has the support of dpax.gaussian(1.0, grid_step=1e-2)
#: (2048 points), so it shares its construction and companion kernels (the GAUSS cases) and its beta
#: and delta kernels (tests/mechanisms/test_gaussian_family.py, tests/test_input_errors.py): one kernel of its own;
#: (1.0, 0.5, 1e-2) (the support of dpax.gaussian(2.0): three analysis kernels of its own),
#: (1.0, 0.01, 1e-2), (1.0, 0.01, 1e-3) and (2.0, 0.5, 1e-2) (their own kernels) are slow, as
#: the finer grids are
SUBSAMPLED = [pytest.param(1.0, 0.01, 1e-2, marks=SLOW), pytest.param(1.0, 0.01, 1e-3, marks=SLOW),
              pytest.param(1.0, 0.5, 1e-2, marks=SLOW),
              pytest.param(2.0, 0.5, 1e-2, marks=SLOW), pytest.param(2.0, 0.5, 1e-3, marks=SLOW),
              pytest.param(0.8, 0.1, 1e-2, marks=SLOW), pytest.param(0.8, 0.1, 1e-3, marks=SLOW),
              (0.5, 0.3, 1e-2), pytest.param(0.5, 0.3, 1e-3, marks=SLOW)]


def _subsampled_case(sigma, p, step):
    pl = dpax.subsampled_gaussian(sigma, p, grid_step=step)
    tol = rounding(step)
    _check_beta(pl.beta(ALPHAS, bounds=True), subsampled_symmetrised_beta(ALPHAS, sigma, p), tol)
    _check_loss(pl.delta(EPSILONS, bounds=True), subsampled_delta(EPSILONS, sigma, p), tol)
    _check_loss(pl.epsilon(DELTAS, bounds=True), [subsampled_epsilon(d, sigma, p) for d in DELTAS],
                tol=eps_rounding(step))


@pytest.mark.parametrize("sigma,p,step", SUBSAMPLED)
def test_subsampled_gaussian_step_inside_bracket(sigma, p, step):
    _subsampled_case(sigma, p, step)


@pytest.mark.slow
@pytest.mark.parametrize("step", [1e-4, 1e-5])
def test_subsampled_gaussian_step_inside_bracket_fine(step):
    _subsampled_case(1.0, 0.01, step)


@pytest.mark.parametrize("step", [1e-2, pytest.param(1e-3, marks=SLOW)])
def test_substitution_gaussian_inside_bracket(step):
    """Replace-one subsampled Gaussian at p = 1: P = N(-1, s^2), Q = N(1, s^2), mu = 2 / s.
    4 steps: the composition's shapes are those of dpax.gaussian(1.0).self_compose(4) above."""
    pl = dpax.subsampled_gaussian(2.0, 1.0, grid_step=step, neighbouring="substitution").self_compose(4)
    mu = 2.0 / 2.0 * np.sqrt(4)
    _check_beta(pl.beta(ALPHAS, bounds=True), gdp_beta(ALPHAS, mu))
    _check_loss(pl.epsilon(DELTAS, bounds=True), [gdp_epsilon(d, mu) for d in DELTAS], tol=1e-9)


# --------------------------------------------------------------------------------------
# Laplace, randomized response, discrete mechanisms
# --------------------------------------------------------------------------------------


def laplace_beta(alpha, eps):
    """T(Lap(0, 1), Lap(eps, 1)) (Dong, Roth & Su): symmetric."""
    a = np.asarray(alpha, float)
    with np.errstate(divide="ignore"):
        mid = np.exp(-eps) / (4 * a)
    return np.where(a < np.exp(-eps) / 2, 1 - np.exp(eps) * a, np.where(a <= 0.5, mid, np.exp(-eps) * (1 - a)))


def laplace_delta(e, eps):
    """delta(e) of the Laplace pair (symmetric): 1 - e^((e - eps) / 2) for 0 <= e <= eps."""
    e = np.asarray(e, float)
    return np.where(e >= eps, 0.0, 1 - np.exp((e - eps) / 2))


#: (1.2345, 1e-3) is slow (seven kernels of its own: the support at that grid): the default (1.2345, 1e-2)
#: keeps Laplace's bracket, GAUSS's default cases keep both grids
@pytest.mark.parametrize("eps,step", [(1.2345, 1e-2), pytest.param(1.2345, 1e-3, marks=SLOW),
                                      pytest.param(0.5, 1e-2, marks=SLOW), pytest.param(3.0, 1e-3, marks=SLOW)])
def test_laplace_inside_bracket(eps, step):
    pl = dpax.laplace(1.0, sensitivity=eps, grid_step=step)
    _check_beta(pl.beta(ALPHAS, bounds=True), laplace_beta(ALPHAS, eps))
    _check_loss(pl.advantage(bounds=True), 1 - np.exp(-eps / 2))
    _check_loss(pl.delta(EPSILONS, bounds=True), laplace_delta(EPSILONS, eps))
    _check_loss(pl.epsilon(0.0, bounds=True), eps, tol=1e-9)


#: (0.3, 1e-3) and (1.2345, 1e-3) are slow (the support at 1e-3 is test_laplace_inside_bracket's slow
#: case's): the default (1.2345, 1e-2), on the support of test_laplace_inside_bracket's default case
#: (shared kernels), keeps the guarantee
@pytest.mark.parametrize("eps,step", [(1.2345, 1e-2), pytest.param(1.2345, 1e-3, marks=SLOW),
                                      pytest.param(0.3, 1e-3, marks=SLOW), pytest.param(4.0, 1e-2, marks=SLOW)])
def test_randomized_response_inside_bracket(eps, step):
    pl = dpax.randomized_response(eps, grid_step=step)
    truth = np.maximum.reduce([np.zeros_like(ALPHAS), 1 - np.exp(eps) * ALPHAS, np.exp(-eps) * (1 - ALPHAS)])
    _check_beta(pl.beta(ALPHAS, bounds=True), truth)
    _check_loss(pl.advantage(bounds=True), (np.exp(eps) - 1) / (np.exp(eps) + 1))
    _check_loss(pl.epsilon(0.0, bounds=True), eps, tol=1e-9)


def _atoms_beta(loss, p, q, alpha):
    """Neyman-Pearson curve of an atom law (one direction): reject the largest losses first."""
    order = np.argsort(-loss)
    a = np.concatenate([[0.0], np.cumsum(p[order])])
    b = 1 - np.concatenate([[0.0], np.cumsum(q[order])])
    return np.interp(alpha, a, np.maximum(b, 0.0))


# discrete_gaussian is slow (a support and beta kernel of its own); default sibling: discrete_laplace
# (the same atom-law companion, checked against its Neyman-Pearson curve)
@pytest.mark.parametrize("mech", ["discrete_laplace", pytest.param("discrete_gaussian", marks=SLOW)])
def test_discrete_mechanisms_inside_bracket(mech):
    if mech == "discrete_laplace":
        pl = dpax.discrete_laplace(1.3, grid_step=1e-2)
        t = 1.3
        o = np.arange(-60, 62)
        logw = -np.abs(o) / t
    else:
        pl = dpax.discrete_gaussian(1.7, grid_step=1e-2)
        o = np.arange(-80, 82)
        logw = -(o**2) / (2 * 1.7**2)
    w = np.exp(logw - np.max(logw))
    p = w / w.sum()
    q = np.roll(p, 1)  # the law shifted by the sensitivity 1 (p[-1] ~ 0)
    keep = (p > 0) & (q > 0)
    p, q = p[keep], q[keep]
    loss = np.log(q / p)
    # both pairs are symmetric (o -> 1 - o), so one direction is the symmetrised curve
    _check_beta(pl.beta(ALPHAS, bounds=True), _atoms_beta(loss, p, q, ALPHAS))


# --------------------------------------------------------------------------------------
# orientation and refinement
# --------------------------------------------------------------------------------------


def test_swapped_sides_are_caught():
    """At grid 1e-2 both sides are strictly away from the truth, so the oriented checks
    above would fail if safe and optimistic were swapped."""
    pl = dpax.gaussian(1.0, grid_step=1e-2).self_compose(4)
    truth = gdp_beta(0.1, 2.0)
    # beta(0.1) read off the queries of the GAUSS cases (their kernel)
    b = pl.beta(ALPHAS, bounds=True)
    b = Interval(b.safe[_at(ALPHAS, 0.1)], b.optimistic[_at(ALPHAS, 0.1)])
    assert b.safe < truth - 1e-8 < truth + 1e-8 < b.optimistic
    # epsilon(1e-5) read off the queries of the GAUSS cases (their kernel)
    e = pl.epsilon(DELTAS, bounds=True)
    e = Interval(e.safe[_at(DELTAS, 1e-5)], e.optimistic[_at(DELTAS, 1e-5)])
    assert e.optimistic < gdp_epsilon(1e-5, 2.0) - 1e-6 < gdp_epsilon(1e-5, 2.0) + 1e-6 < e.safe
    with pytest.raises(AssertionError):
        _check_beta(Interval(b.optimistic, b.safe), truth)
    with pytest.raises(AssertionError):
        _check_loss(Interval(e.optimistic, e.safe), gdp_epsilon(1e-5, 2.0))


@pytest.mark.parametrize("make", [
    lambda h: dpax.gaussian(1.0, grid_step=h).self_compose(4),  # the shapes of GAUSS's default cases
    # dpsgd is slow (kernels of its own): the default gaussian (a composition) and laplace keep the guarantee
    pytest.param(lambda h: dpax.dpsgd(1.0, 0.01, 100, grid_step=h), marks=SLOW),
    # laplace is slow (its support at grid 1e-3: test_laplace_inside_bracket's slow case); default
    # sibling: gaussian (a composition)
    pytest.param(lambda h: dpax.laplace(1.0, sensitivity=1.2345, grid_step=h), marks=SLOW),
], ids=["gaussian", "dpsgd", "laplace"])
def test_widths_shrink_as_the_grid_is_refined(make):
    widths = []
    at = [_at(ALPHAS, a) for a in (1e-4, 0.01, 0.1)]
    for h in (1e-2, 1e-3):
        pl = make(h)
        # beta at (1e-4, 0.01, 0.1) and epsilon at 1e-5 read off the queries of the bracket tests
        # above (their kernels: each number of queries is one more compilation)
        widths.append((pl.beta(ALPHAS, bounds=True).width[at], pl.epsilon(DELTAS, bounds=True).width[_at(DELTAS, 1e-5)],
                       pl.advantage(bounds=True).width))
    (b2, e2, a2), (b3, e3, a3) = widths
    assert np.all(b3 < b2) and e3 < e2 and a3 < a2
    assert np.max(b3) < 1e-2 * 0.5 and e3 < 0.1


# --------------------------------------------------------------------------------------
# the API: Interval, batches, companions that follow composition, indexing and regrids
# --------------------------------------------------------------------------------------


def test_interval_fields_and_batches():
    pl = dpax.gaussian([1.0, 2.0], grid_step=1e-2)
    # the ALPHAS queries: the beta kernel of test_companion_follows_indexing_broadcast_and_composition's
    # batch composition (the same 2 x 2048 shape)
    b = pl.beta(ALPHAS, bounds=True)
    assert isinstance(b, Interval) and b.safe.shape == (2, ALPHAS.size) and b.optimistic.shape == (2, ALPHAS.size)
    np.testing.assert_array_equal(b.safe, pl.beta(ALPHAS))
    np.testing.assert_array_equal(b.lower, np.minimum(b.safe, b.optimistic))
    np.testing.assert_allclose(b.width, b.upper - b.lower)
    at = [_at(ALPHAS, a) for a in (0.01, 0.1, 0.5)]
    b3 = Interval(b.safe[:, at], b.optimistic[:, at])
    assert np.all(b3.contains(gdp_beta(np.array([0.01, 0.1, 0.5]), np.array([[1.0], [0.5]]))))
    one = dpax.gaussian(2.0, grid_step=1e-2).beta(0.1, bounds=True)
    assert isinstance(one.safe, float) and isinstance(one.width, float)
    np.testing.assert_allclose(b3.optimistic[1, 1], one.optimistic, atol=1e-12)
    a = pl.advantage(bounds=True)
    assert a.safe.shape == (2,) and np.all(a.optimistic <= a.safe)
    with pytest.raises(TypeError, match="bounds"):
        pl.beta(0.1, bounds="yes")


def test_companion_follows_indexing_broadcast_and_composition():
    # the batch of test_interval_fields_and_batches, and shapes of the tests above (fewer compilations)
    pl = dpax.gaussian([1.0, 2.0], grid_step=1e-2)
    second = pl[1].optimistic_companion().beta(ALPHAS)
    np.testing.assert_allclose(second, pl.optimistic_companion()[1].beta(ALPHAS), atol=1e-12)
    alone = dpax.gaussian(2.0, grid_step=1e-2).optimistic_companion()
    np.testing.assert_allclose(second, alone.beta(ALPHAS), atol=1e-12)
    assert pl[0].broadcast_to((2, 2)).optimistic_companion().batch_shape == (2, 2)
    steps = pl.self_compose([1, 4])
    direct = pl.optimistic_companion().self_compose([1, 4])
    np.testing.assert_array_equal(steps.optimistic_companion().beta(ALPHAS), direct.beta(ALPHAS))
    assert steps.optimistic_companion().optimistic and not steps.optimistic
    # heterogeneous: the companion of a composition is the composition of the companions,
    # and the composed Gaussian (mu-GDP) stays inside its bracket (counts 4 and 3: mu = 2 and
    # 4096 points, the length of the GAUSS case (1.0, 4, 1e-2), whose kernels
    # test_swapped_sides_are_caught compiles in the default run)
    both = dpax.compose((pl[1], 4), (pl[0], 3))
    np.testing.assert_array_equal(both.optimistic_companion().beta(ALPHAS),
                                  dpax.compose((pl[1].optimistic_companion(), 4),
                                               (pl[0].optimistic_companion(), 3)).beta(ALPHAS))
    _check_beta(both.beta(ALPHAS, bounds=True), gdp_beta(ALPHAS, np.sqrt(4 / 2.0**2 + 3 / 1.0**2)))
    # factors on different grids: the companions are regridded by nearest point (grid 1e-3: the
    # construction of the default GAUSS case at that grid; counts 1 and 3: mu = 2 on 4096 points again)
    mixed = dpax.compose((dpax.gaussian(1.0, grid_step=1e-2), 1), (dpax.gaussian(1.0, grid_step=1e-3), 3))
    _check_beta(mixed.beta(ALPHAS, bounds=True), gdp_beta(ALPHAS, np.sqrt(1.0 + 3.0)))


def test_bounds_of_a_companion_is_itself_and_survives_a_pytree_round_trip():
    import jax

    c = dpax.gaussian(1.0, grid_step=1e-2).optimistic_companion()
    assert c.optimistic_companion() is c and c.optimistic and "optimistic" in c.description
    leaves, tree = jax.tree_util.tree_flatten(c)
    back = jax.tree_util.tree_unflatten(tree, leaves)
    assert back.optimistic
    np.testing.assert_array_equal(back.self_compose(4).beta(ALPHAS), c.self_compose(4).beta(ALPHAS))


def _laplace_arrays():
    lap = dpax.laplace(1.0, sensitivity=1.2345, grid_step=1e-2)
    return lap.pmf_x, lap.pmf_y, lap.offset, lap.inf_mass_y, lap.neginf_mass_x, lap.grid_step


def test_no_companion_says_why():
    profile = lambda e: norm.cdf(0.5 - e) - np.exp(e) * norm.cdf(-0.5 - e)
    cases = {
        "privacy profile": dpax.from_privacy_profile(profile, grid_step=1e-2),
        "worst case": dpax.approximate_dp(1.0, 1e-5, grid_step=1e-2),
        "from_atoms": dpax.mechanisms.from_atoms([-1.0, 1.0], [0.7, 0.3], [0.3, 0.7], 1e-2),
        # Laplace's arrays (test_laplace_inside_bracket's pair, 256 points: its beta kernel; a
        # two-point pair compiled one of its own)
        "not built by a dpax mechanism": dpax.PrivacyLoss(*_laplace_arrays()),
    }
    for why, pl in cases.items():
        with pytest.raises(ValueError, match="no optimistic companion exists") as err:
            pl.optimistic_companion()
        assert why in str(err.value)
        with pytest.raises(ValueError, match="no optimistic companion"):
            pl.beta(ALPHAS, bounds=True)  # the ALPHAS queries: from_atoms' and approximate_dp's support is Laplace's
    # a factor built from the Gaussian's own arrays (no companion; declared exact_ratio, which
    # they satisfy, and counts 1 and 3): the window and composition kernels of the two 2048-point
    # factors of test_companion_follows_indexing_broadcast_and_composition's heterogeneous composition
    g = dpax.gaussian(1.0, grid_step=1e-2)
    arrays = dpax.PrivacyLoss(g.pmf_x, g.pmf_y, g.offset, g.inf_mass_y, g.neginf_mass_x, g.grid_step,
                              exact_ratio=True)
    mixed = dpax.compose((g, 1), (arrays, 3))
    with pytest.raises(ValueError, match="compose argument 1 has none"):
        mixed.optimistic_companion()
    with pytest.raises(ValueError, match="cannot mix optimistic"):
        dpax.compose(g, g.optimistic_companion())


def test_dp_accounting_import_has_no_companion():
    pytest.importorskip("dp_accounting")
    pld = dpax.gaussian(1.0, grid_step=1e-2).to_dp_accounting()
    with pytest.raises(ValueError, match="no optimistic companion exists .*dp-accounting"):
        dpax.from_dp_accounting(pld).optimistic_companion()


# --------------------------------------------------------------------------------------
# the README's DP-SGD: p 1e-3, T 1e4, sigma 1, grid 1e-4
# --------------------------------------------------------------------------------------

#: prv-accountant's bracket on epsilon(1e-5) for this DP-SGD
PRV = (0.4658, 0.4858)


@pytest.mark.slow
def test_dpsgd_bracket_at_grid_1e4():
    pl = dpax.dpsgd(1.0, 1e-3, 10_000, grid_step=1e-4)
    b = pl.beta([1e-5, 1e-3, 0.01, 0.1, 0.5], bounds=True)
    assert np.all(b.width <= 1e-4) and np.all(b.safe <= b.optimistic)
    e = pl.epsilon(1e-5, bounds=True)
    assert e.lower <= PRV[1] and e.upper >= PRV[0]  # overlaps
    assert e.width < PRV[1] - PRV[0]  # and is narrower


# --------------------------------------------------------------------------------------
# refine: an accuracy knob in place of the grid step (evaluation)
# --------------------------------------------------------------------------------------


def test_refine_reaches_the_accuracy():
    def beta_at(pl):  # beta(0.01), beta(0.1) read off the queries of the GAUSS cases (their kernels)
        b, at = pl.beta(ALPHAS, bounds=True), [_at(ALPHAS, 0.01), _at(ALPHAS, 0.1)]
        return Interval(b.safe[at], b.optimistic[at])

    r = dpax.refine(lambda h: dpax.gaussian(1.0, grid_step=h).self_compose(4), beta_at, 1e-6)
    assert np.all(r.value.width <= 1e-6) and r.grid_step < 1e-2 and r.privacy_loss.grid_step == r.grid_step
    assert r.history[0][0] == 1e-2 and r.history[-1] == (r.grid_step, float(np.max(r.value.width)))
    assert np.all(r.value.contains(gdp_beta(np.array([0.01, 0.1]), 2.0)))


def test_refine_checks_what_build_returns():
    """What build() returns was not checked: a companion from bounds() made a 0-wide bracket
    (both sides optimistic) that met any accuracy at once; a pair on another grid reported a
    grid_step it was not built on; a batch that changed shape between rounds was compared
    with the wrong rows. Each is refused with a message naming build. (One Gaussian step at
    grid 1e-2, read at the ALPHAS queries, also for the Interval that build wrongly returns:
    the kernels of test_refine_says_how_far_it_got; the second round's pair is built from
    arrays, no kernel of its own.)"""
    one = dpax.gaussian(1.0, grid_step=1e-2)
    evaluate = lambda pl: pl.beta(ALPHAS, bounds=True)
    with pytest.raises(TypeError, match=r"build must return a dpax.PrivacyLoss .* got float"):
        dpax.refine(lambda h: 0.5, evaluate, 1e-3)
    with pytest.raises(TypeError, match=r"build must return a dpax.PrivacyLoss .* got Interval"):
        dpax.refine(lambda h: evaluate(one), evaluate, 1e-3)
    with pytest.raises(ValueError, match=r"build returned an optimistic companion"):
        dpax.refine(lambda h: dpax.gaussian(1.0, grid_step=h).optimistic_companion(), evaluate, 1e-3)
    with pytest.raises(ValueError, match=r"build\(grid_step=0.01\) returned a PrivacyLoss on grid_step=0.02"):
        dpax.refine(lambda h: dpax.gaussian(1.0, grid_step=2 * h), evaluate, 1e-3)

    def build(h):  # the right pair on the first grid, then a batch of two rows
        if h == 1e-2:
            return one
        return dpax.PrivacyLoss(np.full((2, 2), 0.5), np.full((2, 2), 0.5), [0, 0], [0.0, 0.0], [0.0, 0.0], h)

    with pytest.raises(ValueError,
                       match=r"build\(grid_step=.*\) returned a batch of shape \(2,\), the first round's was \(\)"):
        dpax.refine(build, evaluate, 1e-15, max_rounds=2)


def test_refine_says_how_far_it_got(monkeypatch):
    # one Gaussian step at grid 1e-2, read at the ALPHAS queries: the kernels of
    # test_companion_follows_indexing_broadcast_and_composition (max_rounds=1: a second round
    # would build the pair at grid 3e-4, five kernels of its own; the refinement's rounds and
    # history are test_refine_reaches_the_accuracy's)
    build = lambda h: dpax.gaussian(1.0, grid_step=h)
    with pytest.raises(ValueError, match=r"accuracy=1e-15 not reached: width .* at grid_step="):
        dpax.refine(build, lambda pl: pl.beta(ALPHAS, bounds=True), 1e-15, max_rounds=1)
    with pytest.raises(TypeError, match="Interval"):
        dpax.refine(build, lambda pl: pl.beta(ALPHAS), 1e-3)
    with pytest.raises(ValueError, match="accuracy"):
        dpax.refine(build, lambda pl: pl.beta(ALPHAS, bounds=True), 0.0)
    from dpax._engine import grid

    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", 2_000_000)
    with pytest.raises(ValueError, match="not reached: width .* memory budget"):
        dpax.refine(build, lambda pl: pl.beta(ALPHAS, bounds=True), 1e-12)


def test_epsilon_beyond_700_nats_keeps_a_finite_optimistic_side():
    """The Gaussian composed 1000 times (mu = sqrt(1000)): epsilon(1e-10) = 700.25. The
    P-masses of losses beyond ~700 nats (e^-700 times the Q-masses) underflow float64, so
    Pr[X > x] read 0 where Pr[Y > x] exceeded delta: both sides were inf. The safe side
    certifies no finite epsilon there (documented: inf); the companion bounds the
    underflowed masses from above, so its epsilon (and delta) stay finite and below the
    truth, and the bracket still holds it where both are finite."""
    mu = np.sqrt(1000.0)
    pl = dpax.gaussian(1.0, grid_step=0.1).self_compose(1000)
    deltas = np.array([1e-10, 1e-8, 1e-6])
    exact = np.array([gdp_epsilon(d, mu) for d in deltas])
    eps = pl.epsilon(deltas, bounds=True)
    assert np.all(np.isfinite(eps.optimistic)) and np.all(eps.optimistic <= exact)
    assert np.all(exact <= eps.safe) and eps.safe[0] == np.inf and np.all(np.isfinite(eps.safe[1:]))
    assert np.all(eps.safe[1:] - eps.optimistic[1:] < 3.0)
    epsilons = np.array([650.0, 690.0, 705.0])
    delta = pl.delta(epsilons, bounds=True)
    truth = gdp_delta(epsilons, mu)
    assert np.all(delta.optimistic <= truth) and np.all(truth <= delta.safe)


def test_beta_at_zero_beyond_745_nats_keeps_the_optimistic_side_above_the_truth():
    """Losses past ~745 nats: e^-x Pr[Y = x] underflows to 0, so the companion's X had no
    mass where Y had, and its curve read those points at alpha = 0: beta(0) of a 37.6-GDP
    Gaussian (truth 1) came out 0.44615 on the optimistic side, and randomized response's
    1.3e-13. The companion now raises each Pr[X > x] by the masses that may have underflowed:
    beta(0) is Pr[Y < inf] = 1, and every alpha below ~1e-300 reads at most that."""
    mu = np.sqrt(2.0) / 0.03763782297422687
    pl = dpax.gaussian(0.03763782297422687, grid_step=0.05).self_compose(2)
    alphas = np.array([0.0, 1e-320, 1e-300, 1e-200, 1e-100])
    b = pl.beta(alphas, bounds=True)
    truth = norm.cdf(norm.isf(alphas) - mu)
    assert np.all(b.safe <= truth) and np.all(b.optimistic >= truth), (b, truth)
    assert b.optimistic[0] == 1.0 and b.safe[0] < 0.45  # safe: the underflowed points count as infinite
    for symmetric in (False, True):  # no companion point below the truth (alpha = 0 included)
        alpha, beta = pl.optimistic_companion().tradeoff_points(symmetric=symmetric)
        assert np.all(beta >= norm.cdf(norm.isf(alpha) - mu)), symmetric
    # the safe side unchanged: its kernel reads the computed sums, and the bracket keeps them (the
    # plain beta at the same alphas: b's kernel)
    np.testing.assert_array_equal(pl.beta(alphas), b.safe)


# slow (~6 s: a composition and companion of their own); default sibling: the test above (the same
# companion's beta(0) past ~745 nats, on the composed Gaussian)
@pytest.mark.slow
def test_randomized_response_beta_at_zero_beyond_745_nats_is_one_on_the_optimistic_side():
    """Randomized response composed 60 times (losses up to 1200 nats): the companion's beta(0)
    was 1.3e-13; it is Pr[Y < inf] = 1."""
    rr = dpax.randomized_response(20.0, grid_step=0.01).self_compose(60).beta(0.0, bounds=True)
    assert rr.optimistic == 1.0


# slow (~6 s idle: a construction and a companion per family); default sibling:
# tests/test_gaussian_exact.py::test_beta_near_alpha_one_on_both_sides_of_the_truth (the ends of the Gaussian's)
@pytest.mark.slow
def test_every_family_is_exact_at_the_ends_of_its_curve():
    """Invariant: every trade-off curve passes through (1, 0), and f(0) = 1 - (the mass one law
    has where the other has none): at alpha = 1 both sides of beta are exactly 0, at alpha = 0
    the safe side is at most f(0) and the optimistic one at least f(0) (exactly 1 for these
    mechanisms, 1 - delta for the (epsilon, delta) worst case), for every mechanism family and
    a composition; tradeoff_points keep alpha in [0, 1], with beta 0 at alpha 1. gaussian(4.0,
    grid_step=1e-2)'s beta(1) was 1.3e-17 (Pr[X > -inf] summed to 1 + 2^-52), a companion's
    beta(0) 1 - 2^-53 (its Y-masses summed below 1), and tradeoff_points' first alpha
    1 + 2^-52. Grid 0.1: the fuzz's supports."""
    g = 0.1
    families = {
        "gaussian": (dpax.gaussian(4.0, grid_step=g), 1.0),
        "gaussian substitution": (dpax.gaussian(8.0, grid_step=g, neighbouring="substitution"), 1.0),
        "subsampled_gaussian": (dpax.subsampled_gaussian(4.0, 0.3, grid_step=g), 1.0),
        "dpsgd": (dpax.dpsgd(4.0, 0.3, 3, grid_step=g), 1.0),
        "laplace": (dpax.laplace(2.0, grid_step=g), 1.0),
        "subsampled_laplace": (dpax.subsampled_laplace(1.0, 0.3, grid_step=g), 1.0),
        "randomized_response": (dpax.randomized_response(1.0, 2**50, grid_step=g), 1.0),
        "discrete_laplace": (dpax.discrete_laplace(2.0, grid_step=g), 1.0),
        "mixture_of_gaussians": (dpax.mixture_of_gaussians(4.0, [0.0, 1.0], [0.5, 0.5], grid_step=g), 1.0),
        "composition": (dpax.compose(dpax.gaussian(4.0, grid_step=g), (dpax.laplace(2.0, grid_step=g), 2)), 1.0),
        "approximate_dp": (dpax.approximate_dp(1.0, 1e-5, grid_step=g), 1.0 - 1e-5),  # no companion
    }
    for name, (pl, f0) in families.items():
        if name == "approximate_dp":
            safe, opt = pl.beta([0.0, 1.0]), None
        else:
            got = pl.beta([0.0, 1.0], bounds=True)
            safe, opt = got.safe, got.optimistic
        assert safe[0] <= f0 and safe[1] == 0.0, (name, safe)
        assert opt is None or (opt[0] >= f0 and opt[1] == 0.0), (name, opt)
        for symmetric in (False, True):
            alpha, beta = pl.tradeoff_points(symmetric=symmetric)
            assert 0.0 <= alpha.min() and alpha.max() <= 1.0, (name, symmetric, alpha.max())
            assert np.all(beta[alpha == 1.0] == 0.0), (name, symmetric)


def _mp_randomized_response(epsilon, k):
    """k-ary randomized response's masses at mpmath's working precision (the tests' 50 digits):
    losses -eps, 0, eps with P-masses (e^eps, k - 2, 1) / (e^eps + k - 1) and Q the mirror."""
    mpmath = pytest.importorskip("mpmath")
    e = mpmath.exp(mpmath.mpf(epsilon))
    norm_ = e + k - 1
    return [e / norm_, (k - 2) / norm_, 1 / norm_], [1 / norm_, (k - 2) / norm_, e / norm_]


#: (epsilon, k) of randomized response: the loss 0 holds all but ~1e-12..1e-15 of the mass, and k = 3
RR_MANY_VALUES = ((0.1, 2**40), (1.0, 2**50), (0.1, 2**53), (1.0, 3))


def test_randomized_response_beta_near_alpha_one_on_both_sides():
    """Invariant: beta's safe side at or below the exact curve and its optimistic side at or
    above it, to 16 ulps, at alpha = 1e-15, 1/2, 1 - 1e-10 and 1 - 1e-15, for k-ary randomized
    response (k = 2^40, 2^50, 2^53 and 3; exact masses in 50-digit arithmetic). Near alpha = 1
    beta was interpolated from the far end of its segment, Q (1 - gamma) with gamma =
    1 - 1.7e-15 rounded (2.4% off at k = 3, epsilon 1, alpha 1 - 1e-15), and the symmetrised
    curve's middle line from two sums near 1, Pr[Y <= 0] - Pr[X <= 0] (1.2% off at k = 2^53,
    epsilon 0.1): now from the nearer end and from the complements Pr[Y > 0] - Pr[X > 0]."""
    mpmath = pytest.importorskip("mpmath")
    alphas = np.array([1e-15, 0.5, 1.0 - 1e-10, 1.0 - 1e-15])
    for epsilon, k in RR_MANY_VALUES:
        # read off the ALPHAS queries with these four after them (128 padded queries: the beta
        # kernels of test_randomized_response_inside_bracket's support; every query is answered
        # on its own, so the four answers are those of a call with only them)
        beta = dpax.randomized_response(epsilon, k, grid_step=0.1).beta(np.concatenate([ALPHAS, alphas]), bounds=True)
        beta = Interval(beta.safe[ALPHAS.size:], beta.optimistic[ALPHAS.size:])
        with mpmath.workdps(50):
            tol = 16 * mpmath.mpf(2) ** -53
            p, q = _mp_randomized_response(epsilon, k)
            points = [(mpmath.mpf(1), mpmath.mpf(0))]  # Neyman-Pearson: reject above each loss
            for pi, qi in zip(p, q):
                points.append((points[-1][0] - pi, points[-1][1] + qi))
            for a, safe, opt in zip(alphas, beta.safe, beta.optimistic):
                a = mpmath.mpf(float(a))
                (a1, b1), (a2, b2) = next(((u, v) for u, v in zip(points, points[1:]) if v[0] <= a <= u[0]))
                exact = b2 + (b1 - b2) * (a - a2) / (a1 - a2)  # a symmetric pair: f is its own inverse
                assert mpmath.mpf(float(safe)) <= exact * (1 + tol), (epsilon, k, float(a), safe, float(exact))
                assert mpmath.mpf(float(opt)) >= exact * (1 - tol), (epsilon, k, float(a), opt, float(exact))


def _mp_delta(p, q, epsilon):
    """delta(epsilon) of a symmetric pair of atoms: the sum of (Q - e^eps P)^+."""
    import mpmath

    return sum(max(mpmath.mpf(0), qi - mpmath.exp(epsilon) * pi) for pi, qi in zip(p, q))


def test_randomized_response_with_many_values_keeps_its_optimistic_side():
    """Invariant: the optimistic side of delta, epsilon and the advantage is at or below the
    truth, to 16 ulps, for k-ary randomized response with k = 2^40, 2^50 and 2^53 values: the
    loss 0 holds all but ~1e-12 of the mass, so at thresholds below it Pr[Y > x] and Pr[X > x]
    are both near 1 and their float64 difference carried ~1e-16 of round-off above a true
    delta of 1e-13, which the max over thresholds picked up (optimistic delta(0) 5e-4
    relative above the truth at epsilon 0.1, k = 2^40); the advantage's differences, exact,
    of masses carrying a few ulps each, were 1.4e-14 above. Found by an independent fuzz;
    truths from the exact masses in 50-digit arithmetic."""
    mpmath = pytest.importorskip("mpmath")
    for epsilon, k in RR_MANY_VALUES:
        pl = dpax.randomized_response(epsilon, k, grid_step=0.1)
        # thresholds -1, 0 and epsilon / 2, and EPSILONS' others (8 queries: the delta kernels of
        # test_laplace_inside_bracket's support; at epsilon and above the truth is 0)
        eps_grid = np.array([-1.0, 0.0, epsilon / 2, *EPSILONS[1:]])
        got, adv = pl.delta(eps_grid, bounds=True).optimistic, pl.advantage(bounds=True).optimistic
        with mpmath.workdps(50):
            tol = 16 * mpmath.mpf(2) ** -53
            delta = functools.partial(_mp_delta, *_mp_randomized_response(epsilon, k))
            for e, opt in zip(eps_grid, got):
                assert mpmath.mpf(float(opt)) <= delta(mpmath.mpf(float(e))) * (1 + tol), (epsilon, k, e, opt)
            assert mpmath.mpf(float(adv)) <= delta(0) * (1 + tol), (epsilon, k, adv)
            # epsilon at delta: at or below the truth where delta there is at or above the query's
            deltas = np.array([1e-20, float(delta(0) / 2)])
            # one query a call: the epsilon kernels of test_laplace_inside_bracket's epsilon(0.0)
            for d, opt in zip(deltas, [pl.epsilon(d, bounds=True).optimistic for d in deltas]):
                assert opt <= epsilon * (1 + 1e-15), (epsilon, k, d, opt)
                assert delta(mpmath.mpf(float(opt))) >= d * (1 - tol), (epsilon, k, d, opt)
