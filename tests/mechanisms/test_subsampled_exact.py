"""One Poisson-subsampled Gaussian step against its exact trade-off curve.

P = N(0, s^2), Q = (1 - p) N(0, s^2) + p N(1, s^2). One direction is
f_p(a) = (1 - p)(1 - a) + p G(a), G(a) = Phi(Phi^-1(1 - a) - 1/s); the add/remove
(symmetrised) curve is f_p on [0, x*], the slope -1 line from (x*, f_p(x*)) to
(f_p(x*), x*), and f_p^{-1} after, with x* = Phi(-1/(2 s)) (Dong, Roth & Su, Def. F.1).
The reference is computed here independently (exact_refs) and cross-checked against the
lower convex hull of min(f_p, f_p^{-1}).
"""

from __future__ import annotations

import numpy as np
import pytest

import dpax
from exact_refs import (
    lower_convex_hull_curve,
    subsampled_delta,
    subsampled_epsilon,
    subsampled_f,
    subsampled_fixed_point,
    subsampled_symmetrised_beta,
)

#: alpha from 1e-10 up to 1, log and linear, plus the neighbourhood of 1 (the f^-1 part):
#: 509 values (548 with 401 linear points until 2026-11-27), so that beta's query axis is
#: padded to 512, not 1024 -- the beta kernels tests/test_gaussian_exact.py (20480 points) and
#: tests/test_plot.py (6144 points) compile -- also with the three extra alphas of
#: test_symmetrised_curve_passes_through_both_ends_of_the_line
ALPHAS = np.unique(
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
    beta = pl.beta(ALPHAS)
    exact = subsampled_symmetrised_beta(ALPHAS, sigma, p)
    err = beta - exact
    # pessimism: never above the true curve
    assert err.max() <= 1e-8, f"beta above the exact curve by {err.max():.3g} at alpha={ALPHAS[err.argmax()]:.3g}"
    # accuracy: the loose acceptance level and the level actually attained at this grid
    assert err.min() >= -1e-3
    assert err.min() >= -TIGHT[step], f"beta below exact by {-err.min():.3g} at alpha={ALPHAS[err.argmin()]:.3g}"


# (0.6, 0.9) and (1, 0.01) (their own supports at grid 1e-4) are slow; default siblings: the other two
@pytest.mark.parametrize("sigma, p", [(0.5, 0.3), pytest.param(1.0, 0.01, marks=pytest.mark.slow), (2.0, 0.1),
                                      pytest.param(0.6, 0.9, marks=pytest.mark.slow)])
def test_symmetrised_curve_passes_through_both_ends_of_the_line(sigma, p):
    """At x* and at f_p(x*) the curve takes the values f_p(x*) and x*: the symmetrisation is
    really done (the one-direction curve f_p would give a different value at f_p(x*))."""
    pl = dpax.subsampled_gaussian(sigma, p, grid_step=1e-4)
    x_star = subsampled_fixed_point(sigma)
    fx = subsampled_f(x_star, sigma, p)
    # asked together with ALPHAS (each alpha is answered on its own): the beta kernel that
    # test_beta_matches_exact_symmetrised_curve compiles for this support length, not one more
    got = pl.beta(np.concatenate([[x_star, fx, 0.5 * (x_star + fx)], ALPHAS]))[:3]
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
    # compile for p = 0.01's support (tests/cli/test_cli.py, tests/accountants/test_accountants.py)
    got_eps = np.array([pl.epsilon(d) for d in deltas])
    assert np.all(got_eps >= exact_eps * (1 - 1e-9))
    np.testing.assert_allclose(got_eps, exact_eps, rtol=1e-3 if step == 1e-3 else 1e-5)
