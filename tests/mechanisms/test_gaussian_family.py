"""dpax.mechanisms.gaussian_family: the Gaussian mechanism, the Poisson-subsampled Gaussian
(add/remove and substitution), DP-SGD and mixtures of Gaussians.

One Poisson-subsampled Gaussian step against its exact trade-off curve:
P = N(0, s^2), Q = (1 - p) N(0, s^2) + p N(1, s^2). One direction is
f_p(a) = (1 - p)(1 - a) + p G(a), G(a) = Phi(Phi^-1(1 - a) - 1/s); the add/remove
(symmetrised) curve is f_p on [0, x*], the slope -1 line from (x*, f_p(x*)) to
(f_p(x*), x*), and f_p^{-1} after, with x* = Phi(-1/(2 s)) (Dong, Roth & Su, Def. F.1).
The reference is computed here independently (exact_refs) and cross-checked against the
lower convex hull of min(f_p, f_p^{-1}).

Substitution (replace one) against dp-accounting's REPLACE_ONE pairs on the same grid; the
least noise the family accepts (one number at every sample rate, the one its docstrings and
messages quote).

The mixture of Gaussians (dp-accounting's MixtureOfGaussiansDpEvent), against its special
cases built by dpax's closed forms (one component (1, 1) is the Gaussian, two (0, 1) with
(1 - q, q) the Poisson-subsampled Gaussian: the same numbers to ~1e-9, the loss inverse
solved in the kernel meeting the closed one), mu-GDP's delta(eps), dp-accounting's
``from_mixture_gaussian_mechanism`` on the same grid (measured agreement ~1e-11 relative in
epsilon), a finer dpax grid (a coarser pair dominates it: never below), the optimistic
companion (the truth between both sides) and a Monte Carlo estimate of delta(eps) from the
loss law itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpa_pld
from mechanism_refs import ALPHAS, EPSILONS, assert_safe_close
from scipy.stats import norm

import dpax
from exact_refs import (
    gdp_delta,
    lower_convex_hull_curve,
    subsampled_delta,
    subsampled_epsilon,
    subsampled_f,
    subsampled_fixed_point,
    subsampled_symmetrised_beta,
)

# -- one subsampled Gaussian step against its exact curve ------------------------------------

#: the exact-curve checks' alphas: from 1e-10 up to 1, log and linear, plus the neighbourhood
#: of 1 (the f^-1 part): 509 values (548 with 401 linear points until 2026-11-27), so that beta's query axis is
#: padded to 512, not 1024 -- the beta kernels tests/test_gaussian_exact.py (20480 points) and
#: tests/test_plot.py (6144 points) compile -- also with the three extra alphas of
#: test_symmetrised_curve_passes_through_both_ends_of_the_line
EXACT_ALPHAS = np.unique(
    np.concatenate(
        [np.logspace(-10, 0, 121), np.linspace(0.0, 1.0, 361), 1 - np.logspace(-8, -1, 30)]
    )
)

#: how far below the exact curve dpax may sit (grid discretisation): observed maxima over the
#: configurations below are 4.6e-5 / 2.2e-6 / 2.3e-8 (largest for s=5, p=0.001).
TIGHT = {1e-3: 1.5e-4, 1e-4: 7e-6, 1e-5: 1e-7}

CONFIGS = [(0.5, 0.3), (1.0, 0.01), (1.0, 0.5), (2.0, 0.1), (0.8, 1.0), (5.0, 0.001), (0.6, 0.9)]

#: (1, 0.5) at 1e-3 and (5, 0.001) at 1e-4 are slow (supports of their own); p from 0.001
#: to 1 stays in the default run, (5, 0.001) at 1e-3. (2, 0.1) at 1e-3 (kernels of its own in
#: four tests) is slow in this file; default siblings: the other configurations here (and
#: test_symmetrised_curve_passes_through_both_ends_of_the_line[2.0-0.1], the same pair at 1e-4). (1, 0.01) at 1e-4
#: (a support of its own) is slow; default siblings: (1, 0.01) at 1e-3 and (0.5, 0.3) at 1e-4 and 1e-5
DEFAULT = {1e-3: [c for c in CONFIGS if c not in ((1.0, 0.5), (2.0, 0.1))], 1e-4: [(0.5, 0.3)], 1e-5: [(0.5, 0.3)]}
SLOW_1E3 = {(1.0, 0.5), (2.0, 0.1)}


def _param(sigma, p, *rest, slow=False, **kw):
    """A parametrize case, slow for a configuration of SLOW_1E3 (grid 1e-3) or with ``slow``."""
    marks = (pytest.mark.slow,) if slow or (sigma, p) in SLOW_1E3 else ()
    return pytest.param(sigma, p, *rest, marks=marks, **kw)


def _cases():
    for step in (1e-3, 1e-4, 1e-5):
        for sigma, p in CONFIGS:
            marks = () if (sigma, p) in DEFAULT[step] else (pytest.mark.slow,)
            yield pytest.param(sigma, p, step, marks=marks, id=f"s{sigma}-p{p}-h{step:g}")


def test_reference_curve_is_hull_of_min_f_finv():
    """The piecewise formula equals the lower convex hull of min(f_p, f_p^-1) (validates the
    reference itself, including that x* = Phi(-1/(2 s)) is where f_p has slope -1)."""
    for sigma, p in [(0.5, 0.3), (1.0, 0.05), (0.6, 0.9)]:
        a = np.linspace(0.0, 1.0, 200001)
        f = subsampled_f(a, sigma, p)
        xs = np.concatenate([a, f])
        ys = np.concatenate([f, a])  # the graph of f and of its mirror image f^-1
        order = np.lexsort((ys, xs))
        at = np.linspace(0.0, 1.0, 1001)
        hull = lower_convex_hull_curve(xs[order], ys[order], at)
        np.testing.assert_allclose(subsampled_symmetrised_beta(at, sigma, p), hull, atol=5e-6)
        x_star = subsampled_fixed_point(sigma)
        slope = (subsampled_f(x_star + 1e-7, sigma, p) - subsampled_f(x_star - 1e-7, sigma, p)) / 2e-7
        assert slope == pytest.approx(-1.0, abs=1e-6)


@pytest.mark.parametrize("sigma, p, step", list(_cases()))
def test_beta_matches_exact_symmetrised_curve(sigma, p, step):
    pl = dpax.subsampled_gaussian(sigma, p, grid_step=step)
    beta = pl.beta(EXACT_ALPHAS)
    exact = subsampled_symmetrised_beta(EXACT_ALPHAS, sigma, p)
    err = beta - exact
    # pessimism: never above the true curve
    assert err.max() <= 1e-8, f"beta above the exact curve by {err.max():.3g} at alpha={EXACT_ALPHAS[err.argmax()]:.3g}"
    # accuracy: the loose acceptance level and the level actually attained at this grid
    assert err.min() >= -1e-3
    assert err.min() >= -TIGHT[step], f"beta below exact by {-err.min():.3g} at alpha={EXACT_ALPHAS[err.argmin()]:.3g}"


# (0.6, 0.9) and (1, 0.01) (their own supports at grid 1e-4) are slow; default siblings: the other two
@pytest.mark.parametrize("sigma, p", [(0.5, 0.3), pytest.param(1.0, 0.01, marks=pytest.mark.slow), (2.0, 0.1),
                                      pytest.param(0.6, 0.9, marks=pytest.mark.slow)])
def test_symmetrised_curve_passes_through_both_ends_of_the_line(sigma, p):
    """At x* and at f_p(x*) the curve takes the values f_p(x*) and x*: the symmetrisation is
    really done (the one-direction curve f_p would give a different value at f_p(x*))."""
    pl = dpax.subsampled_gaussian(sigma, p, grid_step=1e-4)
    x_star = subsampled_fixed_point(sigma)
    fx = subsampled_f(x_star, sigma, p)
    # asked together with EXACT_ALPHAS (each alpha is answered on its own): the beta kernel that
    # test_beta_matches_exact_symmetrised_curve compiles for this support length, not one more
    got = pl.beta(np.concatenate([[x_star, fx, 0.5 * (x_star + fx)], EXACT_ALPHAS]))[:3]
    np.testing.assert_allclose(got, [fx, x_star, 0.5 * (x_star + fx)], atol=TIGHT[1e-4])
    if p < 1:
        # the one-direction curve is strictly above the line beyond x* (the hull matters)
        assert subsampled_f(fx, sigma, p) > x_star + 1e-4


# (2, 0.1) slow (see SLOW_1E3), (0.8, 1) and (1, 0.01) too (tradeoff_points kernels of their
# own); default sibling: (0.5, 0.3)
@pytest.mark.parametrize("sigma, p", [_param(0.5, 0.3), _param(1.0, 0.01, slow=True), _param(2.0, 0.1),
                                      _param(0.8, 1.0, slow=True)])
def test_one_direction_breakpoints_lie_on_f(sigma, p):
    """tradeoff_points gives the breakpoints of f = T(P, Q) (alpha descending): each is on
    or below the exact f_p, and close to it."""
    step = 1e-3
    pl = dpax.subsampled_gaussian(sigma, p, grid_step=step)
    a, b = pl.tradeoff_points()
    assert a.shape == b.shape == (pl.support_length + 1,)
    # monotone up to float64 round-off of the cumulative sums near 1 (one ulp)
    assert np.all(np.diff(a) <= 1e-15) and np.all(np.diff(b) >= -1e-15)
    assert a[0] == pytest.approx(1.0, abs=1e-12) and b[0] == 0.0
    assert a[-1] == 0.0
    exact = subsampled_f(np.clip(a, 0.0, 1.0), sigma, p)
    assert np.max(b - exact) <= 1e-9
    assert np.min(b - exact) >= -TIGHT[step]


# (2, 0.1) slow (see SLOW_1E3), (0.5, 0.3) too (a kernel of its own); default siblings: p = 0.001,
# 0.01 and 1 here
@pytest.mark.parametrize("sigma, p", [_param(0.5, 0.3, slow=True), _param(1.0, 0.01), _param(2.0, 0.1),
                                      _param(0.8, 1.0), _param(5.0, 0.001)])
def test_advantage_closed_form(sigma, p):
    """Advantage = TV(P, Q) = p (2 Phi(1/(2 s)) - 1) = 1 - x* - f_p(x*)."""
    pl = dpax.subsampled_gaussian(sigma, p, grid_step=1e-3)
    exact = p * (2 * subsampled_fixed_point(-sigma) - 1)
    x_star = subsampled_fixed_point(sigma)
    assert exact == pytest.approx(1 - x_star - subsampled_f(x_star, sigma, p), abs=1e-15)
    adv = pl.advantage()
    assert adv >= exact - 1e-12
    assert adv <= exact + 1e-9


# (1, 0.5) and (2, 0.1) slow at 1e-3 as in DEFAULT, (0.5, 0.3) too (kernels of its own); default
# siblings: p = 0.01 here, and tests/test_oracles.py::test_profile_is_the_conjugate_of_the_curve
# (delta and epsilon are the conjugate of the curve test_beta_matches_exact_symmetrised_curve checks).
# p = 1 (delta and epsilon kernels of its own) is slow too: it is the Gaussian mechanism, whose
# delta and epsilon tests/test_gaussian_exact.py::test_delta_matches_gdp_closed_form[1.0-1] and
# test_epsilon_matches_gdp_closed_form[1.0-1-d-0.001] check against the closed form
@pytest.mark.parametrize("sigma, p, step", [
    _param(sigma, p, step, slow=step == 1e-4 or (sigma, p) in ((0.5, 0.3), (0.8, 1.0)), id=f"{step}-{sigma}-{p}")
    for step in (1e-3, 1e-4) for sigma, p in [(0.5, 0.3), (1.0, 0.01), (2.0, 0.1), (0.8, 1.0), (1.0, 0.5)]])
def test_delta_and_epsilon_closed_form(sigma, p, step):
    """delta(eps) = max of the two directions' hockey-stick divergences; epsilon(delta) its
    inverse. dpax is on the safe side (delta, epsilon never below) and close."""
    eps = np.array([0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 3.0])
    exact = subsampled_delta(eps, sigma, p)
    keep = exact > 1e-10
    pl = dpax.subsampled_gaussian(sigma, p, grid_step=step)
    got = pl.delta(eps[keep])
    assert np.all(got >= exact[keep] * (1 - 1e-9) - 1e-15)
    np.testing.assert_allclose(got, exact[keep], rtol=1e-3 if step == 1e-3 else 1e-5)

    deltas = np.array([1e-2, 1e-4, 1e-6, 1e-8])
    deltas = deltas[deltas < subsampled_delta(0.0, sigma, p)]
    exact_eps = np.array([subsampled_epsilon(d, sigma, p) for d in deltas])
    # one delta a call (each is answered on its own): the one-query epsilon kernel other files
    # compile for p = 0.01's support (tests/cli/test_curve_command.py, tests/cli/test_calibrate_command.py,
    # tests/accountants/test_opacus_style.py)
    got_eps = np.array([pl.epsilon(d) for d in deltas])
    assert np.all(got_eps >= exact_eps * (1 - 1e-9))
    np.testing.assert_allclose(got_eps, exact_eps, rtol=1e-3 if step == 1e-3 else 1e-5)


# -- substitution ---------------------------------------------------------------------------


def test_substitution_gaussian_has_twice_the_sensitivity():
    # the pair of gaussian(4, sensitivity=2) in
    # tests/mechanisms/test_mechanisms_atoms.py::test_discrete_gaussian_exact_and_dp_accounting[4.0-2]
    sigma = 4.0
    pl = dpax.gaussian(sigma, neighbouring="substitution")
    exact = norm.cdf(norm.isf(ALPHAS) - 2.0 / sigma)
    assert_safe_close(pl.beta(ALPHAS), exact, 1e-6, "beta")
    oracle = dpa_pld.from_gaussian_mechanism(
        sigma, value_discretization_interval=1e-4, neighboring_relation=dpa_pld.NeighborRel.REPLACE_ONE
    )
    theirs = np.array([oracle.get_delta_for_epsilon(e) for e in EPSILONS])
    assert np.max(np.abs(pl.delta(EPSILONS) - theirs)) <= 1e-4
    assert "substitution" in repr(pl)


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


# -- the least noise ------------------------------------------------------------------------


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


# -- mixtures of Gaussians -------------------------------------------------------------------
# (kept cheap: the checks share batches, so that one set of analysis kernels serves several mechanisms)

DELTAS = np.array([1e-6, 1e-3])
MIXTURE_EPSILONS = np.array([0.0, 0.5, 1.0, 2.0])
MIXTURE_ALPHAS = np.array([1e-3, 0.1, 0.5])
#: (standard deviation, sensitivities, probabilities) of the multi-component checks, and a
#: third row with all its mass on sensitivity 0 (the identity: Q = P)
SIGMAS = np.array([1.0, 2.0, 1.5])
SENSITIVITIES = np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 3.0], [0.0, 4.0, 0.0]])
PROBS = np.array([[0.2, 0.6, 0.2], [0.33, 0.34, 0.33], [0.5, 0.0, 0.5]])


def risks(pl, names=("epsilon", "delta", "beta", "advantage")):
    """epsilon(DELTAS), delta(MIXTURE_EPSILONS), beta(MIXTURE_ALPHAS) and advantage of ``pl``
    (arrays over its batch; ``names``: those only)."""
    args = {"epsilon": (DELTAS,), "delta": (MIXTURE_EPSILONS,), "beta": (MIXTURE_ALPHAS,), "advantage": ()}
    return {name: getattr(pl, name)(*args[name]) for name in names}


def mixture_loss(o, s, c, p):
    """L(o) = log sum_i p_i exp((2 c_i o - c_i^2) / (2 s^2)) at the outputs o (NumPy)."""
    c, p = np.asarray(c, float), np.asarray(p, float)
    with np.errstate(divide="ignore"):
        terms = np.log(p) + (2.0 * c * o[:, None] - c**2) / (2.0 * s**2)
    return np.logaddexp.reduce(terms, axis=-1)


# ~4 s (analysis kernels of its own); default siblings: test_agrees_with_dp_accounting (the mixtures' epsilon and
# delta against dp-accounting's from_mixture_gaussian_mechanism) and test_rows_are_their_single_calls
@pytest.mark.slow
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
    exact = gdp_delta(MIXTURE_EPSILONS, 1.0 / 0.8)
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
        theirs = np.array([oracle.get_delta_for_epsilon(e) for e in MIXTURE_EPSILONS])
        np.testing.assert_allclose(ours["delta"][i], theirs, rtol=1e-6, atol=1e-12)
    # the identity row: nothing to learn
    assert np.all(ours["epsilon"][2] == 0.0) and ours["advantage"][2] == 0.0
    np.testing.assert_allclose(ours["delta"][2], 0.0, atol=1e-15)
    np.testing.assert_allclose(ours["beta"][2], 1.0 - MIXTURE_ALPHAS, atol=1e-12)


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
    eps, n = MIXTURE_EPSILONS[2], 2_000_000
    rng = np.random.default_rng(20240601)
    # remove direction D(Q || P) = E_Q[(1 - e^(eps - L))_+]; add direction D(P || Q) = E_P[(1 - e^(eps + L))_+]
    from_q = rng.standard_normal(n) * s + c[rng.choice(c.size, size=n, p=p)]
    from_p = rng.standard_normal(n) * s
    remove = np.maximum(-np.expm1(eps - mixture_loss(from_q, s, c, p)), 0.0)
    add = np.maximum(-np.expm1(eps + mixture_loss(from_p, s, c, p)), 0.0)
    larger = remove if remove.mean() >= add.mean() else add
    got = fine.delta(MIXTURE_EPSILONS)[0, 2]
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
