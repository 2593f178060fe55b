"""dpax.gdp.mu_regret: the tight mu and its regret (mu_and_regret, regret_witness), their
certified brackets (bounds=True, regret_bracket and regret_upper_rows), the all-attack bound
at tail 0 and the rows' memory budget.

References: closed forms (composed Gaussian: mu = sqrt(T)/sigma exactly; randomized response:
Proposition 6.1), gdpnum on the same grid (its PLD and its regret algorithm), and a direct
check of the regret's definition (Eq. 8) at the FPR where dpax finds it.

Brackets: mu's bracket is [mu(companion), mu(pl)]; the regret's is [Delta(h_s, f_{mu_o}),
upper bound of Delta(h_o, f_{mu_s})] (:func:`dpax.gdp.mu_regret.regret_bracket`). Truths:
the composed Gaussian is exactly mu-GDP (regret 0); one subsampled Gaussian step has an exact
symmetrised curve (tests/exact_refs.py), whose mu and regret are computed here by brute force
(dense FPRs, each point's kappa by bisection), independently of dpax's kernels.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from gdp_losses import _dpsgd, _gaussian, _rows, _rr
from scipy.special import ndtr, ndtri
from scipy.stats import norm

import dpax
from dpax import conversions as cv
from dpax import gdp
from dpax.gdp import mu_regret as _mu_regret
from exact_refs import gdp_beta, subsampled_symmetrised_beta

TAIL = dpax.gdp.DEFAULT_TAIL


@functools.cache
def _batch():
    """A 2 x 2 batch: noise multipliers (1, 2) by sample rates (0.1, 0.3), 100 steps."""
    return dpax.dpsgd(np.array([[1.0], [2.0]]), np.array([0.1, 0.3]), 100, grid_step=1e-3)


def _symmetrised_points(pl):
    """Breakpoints of the symmetrised curve (f up to alpha_bar, then mirrored), alpha ascending."""
    cx, cy = pl.tradeoff_points()
    k0 = int(np.clip(1 - int(pl.offset), 0, pl.support_length))
    a = np.concatenate([cx[k0:], cy[k0:]])
    b = np.concatenate([cy[k0:], cx[k0:]])
    order = np.argsort(a, kind="stable")
    return a[order], b[order]


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


# -- mu and regret --------------------------------------------------------------------------


# slow (all cases): the composed Gaussian's mu pessimistic and within 1e-3 of sqrt(T)/sigma stays
# in the default run in tests/engine/test_companion_tails.py::test_mu_bracket_holds_the_truth_and_is_narrow
# (16 steps of sigma 1: mu_optimistic < 4 < mu, less than 1e-4 apart), the composed Gaussian's
# curve equal to the GDP curve in tests/test_gaussian_exact.py::test_beta_matches_gdp_curve, and a
# Gaussian's regret ~0 in test_composed_gaussian_regret_is_zero[1.0-1-0.002] below
# (point mu inside a bracket narrower than 1e-3, regret below 1e-5) and
# tests/gdp/test_report.py::test_report_gaussian_epsilon_matches_closed_form (regret < 1e-6)
@pytest.mark.parametrize("sigma,steps", [pytest.param(1.0, 1, marks=pytest.mark.slow),
                                         pytest.param(1.0, 4, marks=pytest.mark.slow),
                                         pytest.param(2.0, 100, marks=pytest.mark.slow),
                                         pytest.param(5.0, 1000, marks=pytest.mark.slow)])
def test_composed_gaussian_is_exactly_gdp(sigma, steps):
    pl = dpax.gaussian(sigma, grid_step=1e-4 if steps < 100 else 1e-3).self_compose(steps)
    mu, regret = gdp.mu_and_regret(pl)
    exact = np.sqrt(steps) / sigma
    assert exact <= mu <= exact * (1 + 1e-3)  # pessimistic, to grid precision
    assert 0.0 <= regret < 1e-6


# (100, 1e-4) is slow: its 2048-point mu kernel is no other default test's; default sibling: the
# (200, 1e-4) case, the same check at mu 0.005, on the 1024 points of the dpax.gdp docstring
# examples' Gaussian (tests/test_docs.py: their mu kernel)
@pytest.mark.parametrize("sigma,step", [pytest.param(30.0, 1e-4, marks=pytest.mark.slow),
                                        pytest.param(100.0, 1e-4, marks=pytest.mark.slow), (200.0, 1e-4),
                                        pytest.param(100.0, 1e-5, marks=pytest.mark.slow)])
def test_small_mu_is_exact_to_the_grid(sigma, step):
    """A single Gaussian step with mu = 1/sigma down to 0.005: Eq. 29's max sits at the box's
    corner, where beta ~ 1 - 1e-10. Taking Phi^-1 of beta from the head sums left 1 - beta
    with ~6 digits and mu off by up to 5e-5 relative, in either direction; from the
    complementary sums, mu exceeds 1/sigma by the connect-the-dots grid's own
    (step / mu)^2 / 8, converging with the grid (the old error did not). (The grid's own mu:
    the same pair without the Gaussian's closed-form bound, which caps the reported mu.)"""
    pl = dpax.gaussian(sigma, grid_step=step)
    mu, _ = gdp.mu_and_regret(dpax.PrivacyLoss(*pl.pair, pl.grid_step, exact_ratio=True))
    excess = mu * sigma - 1.0
    assert excess == pytest.approx((step * sigma) ** 2 / 8.0, rel=1e-3)
    assert gdp.mu_and_regret(pl)[0] == pytest.approx(1.0 / sigma, rel=1e-15)  # capped: the closed form


def test_randomized_response_gets_proposition_6_1_and_large_regret():
    from gdpnum.converter import get_worst_case_regret

    eps = 1.0
    pl = _rr(eps, grid_step=2e-3)  # the loss +-1 on the grid; its 1001 points are the mu kernel of tests/test_docs.py
    mu, regret = gdp.mu_and_regret(pl)
    assert mu == pytest.approx(cv.mu_from_epsilon_dp(eps), abs=1e-7)
    # regret of the exact 3-point curve: against gdpnum's algorithm and the Delta-divergence
    p = 1.0 / (1.0 + np.exp(eps))
    ref = get_worst_case_regret(np.array([0.0, p, 1.0]), np.array([1.0, p, 0.0]), cv.mu_from_epsilon_dp(eps))
    assert regret == pytest.approx(ref, abs=1e-7)
    assert regret == pytest.approx(cv.delta_divergence(cv.epsilon_delta_curve(eps, 0.0), cv.gdp_curve(mu)), abs=1e-8)
    assert regret > 0.05  # mu-GDP is a poor summary of randomized response
    assert not gdp.report(pl).gdp_ok


#: DP-SGD configurations where gdpnum's own curve is accurate enough to compare mu with:
#: (sigma, p, T, grid). Observed: |mu - gdpnum| <= 6.5e-5 relative, |regret| <= 1.5e-5.
GDPNUM_CONFIGS = [
    # the paper's De et al. CIFAR-10 configuration: slow; the default run keeps the
    # agreement with gdpnum in (1.0, 0.3, 100), this configuration's mu and regret against
    # gdpnum's at grid 1e-3 in tests/compat/test_compat.py::test_mu_and_regret_for_dpsgd[cfg0], and
    # the mu of a DP-SGD curve at grid 1e-4 equal to the exact Eq. 29 max in
    # tests/engine/test_branch_and_bound.py::test_eq29_fast_path_bounds_the_exact_max[dpsgd] (this curve's: its
    # slow "dpsgd rows" case)
    pytest.param((9.4, 16384 / 50000, 2000, 1e-4), marks=pytest.mark.slow),
    (1.0, 0.3, 100, 1e-3),
    pytest.param((1.0, 0.1, 1000, 1e-3), marks=pytest.mark.slow),
    pytest.param((2.0, 0.1, 1000, 1e-3), marks=pytest.mark.slow),
    pytest.param((2.0, 0.3, 100, 1e-3), marks=pytest.mark.slow),
    pytest.param((2.0, 0.3, 1000, 1e-3), marks=pytest.mark.slow),
]


@pytest.mark.parametrize("cfg", GDPNUM_CONFIGS,
                         ids=lambda c: "s{:g}-p{:.3g}-T{}-h{:g}".format(*c) if isinstance(c, tuple) else None)
def test_dpsgd_matches_gdpnum(cfg):
    from gdpnum.dpsgd import get_mu_and_regret_for_dpsgd

    sigma, p, steps, h = cfg
    mu, regret = gdp.mu_and_regret(_dpsgd(sigma, p, steps, h))
    g_mu, g_regret = get_mu_and_regret_for_dpsgd(sigma, p, steps, grid_step=h)
    assert mu == pytest.approx(g_mu, rel=1e-3)
    assert regret == pytest.approx(g_regret, abs=1e-3)


@pytest.mark.parametrize("cfg", [(1.0, 0.3, 100), pytest.param((1.0, 0.01, 100), marks=pytest.mark.slow),
                                 pytest.param((2.0, 0.1, 400), marks=pytest.mark.slow)])
def test_mu_never_below_finer_grid(cfg):
    """The mu of grid 1e-2 against that of grid 1e-3. For (1.0, 0.3, 100) these are the curves
    (and kernels) of test_mu_reads_tightened_tails_where_the_booking_could_move_it's DP-SGD at
    sample rate 0.3 and of test_dpsgd_matches_gdpnum's default case (grid 5e-4 as the finer
    one compiled a 163840-point mu and regret of its own). Observed: the coarse mu 5.2e-5
    relative above the fine one for (1.0, 0.3, 100), 2.8e-3 and 2.4e-3 for the slow cases."""
    sigma, p, steps = cfg
    coarse = dpax.dpsgd(sigma, p, steps, grid_step=1e-2)
    fine = _dpsgd(sigma, p, steps)
    mu_c, _ = gdp.mu_and_regret(coarse)
    mu_f, _ = gdp.mu_and_regret(fine)
    assert mu_c >= mu_f - 1e-12
    assert mu_c == pytest.approx(mu_f, rel=2e-2)


@pytest.mark.slow
def test_gdpnum_mu_is_optimistic_where_its_fnr_rounds_to_one():
    """sigma=1, p=0.01, T=100: gdpnum sums FNRs from the large end, so 1 - beta below ~1e-10
    rounds to 0 and its filter (beta < 1 - 1e-10) drops the far-tail breakpoints. dpax keeps
    them; there f_mu of gdpnum's mu lies above the curve (a violated guarantee), on two grids."""
    from gdpnum.dpsgd import get_mu_and_regret_for_dpsgd

    sigma, p, steps = 1.0, 0.01, 100
    g_mu, _ = get_mu_and_regret_for_dpsgd(sigma, p, steps, grid_step=1e-3)
    pl = dpax.dpsgd(sigma, p, steps, grid_step=1e-4)
    mu, _ = gdp.mu_and_regret(pl)
    assert mu > 1.3 * g_mu
    cx, cy = pl.tradeoff_points()
    box = (cx >= 1e-10) & (cy >= 1e-10) & (cx <= 1 - 1e-10) & (cy <= 1 - 1e-10)
    violated = box & (gdp_beta(cx, g_mu) > cy)
    assert violated.any()
    a = cx[violated][np.argmax(gdp_beta(cx[violated], g_mu) - cy[violated])]
    assert a < 1e-6  # far tail: the attack with FPR a has TPR above what gdpnum's mu allows
    tpr_fine = 1.0 - pl.beta(a)
    tpr_coarse = 1.0 - dpax.dpsgd(sigma, p, steps, grid_step=1e-3).beta(a)
    assert tpr_fine == pytest.approx(tpr_coarse, rel=2e-2)  # converged in the grid
    assert tpr_fine > 1.0 - gdp_beta(a, g_mu)


def test_regret_where_gdpnum_grid_misses_the_point():
    """sigma=0.5, p=0.1, T=1000 (grid 1e-2): the regret is attained at an FPR below 1e-4, between
    gdpnum's first two grid points (0 and 1/9999). With the same curve and mu, gdpnum's
    algorithm returns a smaller regret; at dpax's witness FPR it violates Eq. 8. (Grid 1e-2:
    32768 points, whose mu, regret and breakpoint kernels tests/compat's 32768-point curves
    compile, the mu and regret ones also test_mu_bracket_far_past_700_nats_and_at_tiny_tails'
    composed Gaussian; its single step's construction kernels are those of 2048 points, shared
    widely. Grid 2e-3 compiled a 163840-point mu and regret. Observed at grid 1e-2: witness FPR
    7.7e-7, regret 1.6e-6 above gdpnum's, as at grids 2e-3 and 4e-3.)"""
    from gdpnum.converter import get_worst_case_regret

    pl = _dpsgd(0.5, 0.1, 1000, 1e-2)
    mu, regret = gdp.mu_and_regret(pl)
    alpha_w = gdp.regret_witness(pl)
    a, b = _symmetrised_points(pl)
    g_regret = get_worst_case_regret(a, b, mu)
    assert 0 < alpha_w < 1.0 / 9999
    assert regret > g_regret + 1e-6

    def excess(kappa):  # f(alpha_w + kappa) - kappa - f_mu(alpha_w): > 0 violates Eq. 8
        return np.interp(alpha_w + kappa, a, b) - kappa - gdp_beta(alpha_w, mu)

    g_upper = g_regret + 1e-10  # gdpnum bisects to 1e-10 and returns the lower end
    assert excess(g_upper) > 1e-7
    assert abs(excess(regret)) < 1e-9
    # gdpnum's grid does not see it: its upper bracket holds at every one of its points
    x = np.linspace(0, 1, 10_000)
    assert np.all(np.interp(np.clip(x + g_upper, 0, 1), a, b) - g_upper <= gdp_beta(x, mu))


# (1.0, 0.3, 100): the curve of test_dpsgd_matches_gdpnum's default case (its mu kernel shape);
# (1.0, 0.1, 100) is slow (its own construction and mu kernel)
@pytest.mark.parametrize("cfg", [(1.0, 0.3, 100), pytest.param((1.0, 0.1, 100), marks=pytest.mark.slow),
                                 pytest.param((0.5, 0.1, 10), marks=pytest.mark.slow),
                                 pytest.param((0.5, 0.01, 100), marks=pytest.mark.slow),
                                 pytest.param((2.0, 0.01, 1000), marks=pytest.mark.slow)])
def test_regret_matches_gdpnum_algorithm_on_the_same_curve(cfg):
    """Same breakpoints and mu: dpax's closed-form regret vs gdpnum's bisection on 10,000 FPRs
    (observed agreement ~1e-9) and it is never below it (gdpnum's is an underestimate)."""
    from gdpnum.converter import get_worst_case_regret

    pl = _dpsgd(*cfg)
    mu, regret = gdp.mu_and_regret(pl)
    a, b = _symmetrised_points(pl)
    g_regret = get_worst_case_regret(a, b, mu)
    assert g_regret - 1e-9 <= regret <= g_regret + 1e-6


# slow: a batch's rows keep their own mu and regret in the default run in
# test_rows_run_in_chunks_within_the_memory_budget (a 2 x 2 batch in two-row chunks, bit for bit) and
# tests/engine/test_composition.py::test_a_narrow_row_in_a_wide_batch_keeps_its_own_far_tails
# (a row alone and in a batch, to 1e-12); the (2, 2) shapes in
# tests/gdp/test_report.py::test_report_tiers_table_and_json
@pytest.mark.slow
def test_batch_is_one_call_and_matches_rows():
    """Each row of a batch gets the mu and regret it has alone: the batch's rows (views,
    which read the composition's tightened tails as the batch does) and, for the same arrays
    without a composition's recipe, each row rebuilt from them."""
    pl = _batch()
    mu, regret = gdp.mu_and_regret(pl)
    assert mu.shape == regret.shape == (2, 2)
    rows = pl.pair
    plain = dpax.PrivacyLoss(*rows, pl.grid_step, batch_shape=(2, 2))  # the arrays alone: no recipe
    mu_plain, regret_plain = gdp.mu_and_regret(plain)
    for flat, idx in enumerate(np.ndindex(2, 2)):
        m, r = gdp.mu_and_regret(pl[idx])
        assert mu[idx] == pytest.approx(m, rel=1e-12)
        assert regret[idx] == pytest.approx(r, abs=1e-12)
        row = dpax.PrivacyLoss(*(a[flat:flat + 1] for a in rows), pl.grid_step, batch_shape=())
        m, r = gdp.mu_and_regret(row)
        assert mu_plain[idx] == pytest.approx(m, rel=1e-12)
        assert regret_plain[idx] == pytest.approx(r, abs=1e-12)
    assert np.all(np.diff(mu, axis=0) < 0) and np.all(mu <= mu_plain)  # more noise, less privacy loss


def test_rows_run_in_chunks_within_the_memory_budget(monkeypatch):
    """Rows are independent: under a budget that holds two rows, a 4-row batch runs
    as two kernel calls of two rows each, with answers bit-identical to the whole batch's;
    a budget below one row is a MemoryBudgetError naming mu_and_regret. (The batch: _rows(),
    distinct rows whose construction compiles nothing of its own.)"""
    from dpax._engine import grid as _grid
    from dpax.gdp import mu_regret as _mu_regret

    pl = _rows()
    whole = _mu_regret.mu_regret_rows(pl, gdp.DEFAULT_TAIL)
    assert len(set(np.ravel(whole[0]).tolist())) == 4  # distinct rows: a mix-up of rows shows
    length = _mu_regret.kernel_length(pl.support_length)
    calls = []
    kernel = _mu_regret.mu_regret_kernel
    monkeypatch.setattr(_mu_regret, "mu_regret_kernel",
                        lambda pair, t, *m: calls.append(pair.pmf_x.shape) or kernel(pair, t, *m))
    monkeypatch.setattr(_grid, "MEMORY_LIMIT_BYTES", 2 * length * _grid.BYTES_PER_POINT)
    chunked = _mu_regret.mu_regret_rows(pl, gdp.DEFAULT_TAIL)
    assert calls == [(2, length), (2, length)]
    for a, b in zip(chunked, whole):
        np.testing.assert_array_equal(a, b)
    monkeypatch.setattr(_grid, "MEMORY_LIMIT_BYTES", length * _grid.BYTES_PER_POINT - 1)
    with pytest.raises(_grid.MemoryBudgetError, match="mu_and_regret"):
        gdp.mu_and_regret(pl)


def test_a_curve_under_the_box_corner_gets_the_box_limit():
    """gaussian(0.07) is 14.3-GDP; its curve passes under the corner (tail, tail) of the box
    at tail 1e-10 and never enters it. The attack at the corner is achievable and in the box,
    so mu is the largest the box certifies, 2 Phi^-1(1 - tail), never 0; a smaller tail reaches
    the mechanism's own mu. Both sides of the bracket agree. (Grid 0.05: its 10240 points are
    gaussian(1.0, grid_step=2e-3)'s, so its mu and regret kernels are those of
    test_composed_gaussian_regret_is_zero[1.0-1-0.002]; grid 0.01 compiled 5 of its own.)"""
    g = dpax.gaussian(0.07, grid_step=0.05)
    corner = 2.0 * norm.isf(1e-10)
    mu, regret = gdp.mu_and_regret(g)
    assert mu == pytest.approx(corner, rel=1e-12) and regret == 0.0


# the companion's kernels of its own, and gaussian(0.2)'s mu kernel (16384 points); default siblings: the
# test above (the safe side at the corner) and, for a curve inside the box keeping its own mu,
# tests/engine/test_companion_tails.py::test_mu_bracket_holds_the_truth_and_is_narrow (the 4-GDP composed
# Gaussian) and test_composed_gaussian_regret_is_zero
@pytest.mark.slow
def test_the_box_corner_bracket_and_a_smaller_tail():
    g = dpax.gaussian(0.07, grid_step=0.01)
    corner = 2.0 * norm.isf(1e-10)
    # a curve inside the box is unchanged: gaussian(0.2) stays 5-GDP
    assert gdp.mu_and_regret(dpax.gaussian(0.2, grid_step=0.01))[0] == pytest.approx(5.0, rel=1e-5)
    bracket = gdp.mu_and_regret(g, bounds=True)[0]
    assert bracket.safe == pytest.approx(corner, rel=1e-12) and bracket.optimistic == pytest.approx(corner, rel=1e-12)
    assert gdp.mu_and_regret(g, tail=1e-30)[0] == pytest.approx(1.0 / 0.07, rel=1e-4)


def test_tail_zero_and_infinite_atoms():
    """tail=0 asks for every attack. The grid keeps its truncated tails (and the ulps its
    rounding leaves) at +-inf, points below every f_mu, so the grid alone gave mu = inf for
    mechanisms that are exactly mu-GDP (dpax.gaussian(1.0, grid_step=0.01) among them). The
    Gaussian family knows its all-attack bound in closed form: mu is the smaller of the grid's
    and that bound (for DP-SGD sqrt(T) / sigma, its exact all-attack mu); a pair without one
    (built from arrays) still gives inf. (The curves and mu kernel of the tests above.)"""
    pl = _dpsgd(1.0, 0.3, 100)  # the curve and mu kernel shape of test_dpsgd_matches_gdpnum's default case
    assert float(np.max(pl.inf_mass_y)) > 0
    mu0, regret0 = gdp.mu_and_regret(pl, tail=0.0)
    assert 10.0 <= mu0 <= 10.0 * (1 + 1e-12)  # sqrt(100) / 1
    assert mu0 >= gdp.mu_and_regret(pl)[0]  # every attack: at least the box's mu
    assert 0 < regret0 <= 0.5
    # the Gaussian with sigma 1 is exactly 1-GDP: the closed form, on the safe side by round-off
    g = _gaussian()
    mu, regret = gdp.mu_and_regret(g, tail=0.0)
    assert gdp.gaussian_mu(1.0) <= mu <= 1.0 + 1e-12 and 0.0 <= regret < 1e-6
    # without a closed-form bound the grid cannot certify the corners: inf, as before
    arrays = dpax.PrivacyLoss(g.pmf_x, g.pmf_y, g.offset, g.inf_mass_y, g.neginf_mass_x, g.grid_step)
    assert gdp.mu_and_regret(arrays, tail=0.0)[0] == np.inf
    # tail > 0: the box's mu from the grid, unchanged
    assert gdp.mu_and_regret(g, tail=1e-6)[0] == pytest.approx(1.0, rel=1e-4)


@pytest.mark.slow  # compositions and companions of their own; default sibling: test_tail_zero_and_infinite_atoms
def test_tail_zero_bound_travels_with_the_mechanism():
    """The closed-form bound goes with the mechanism through composition (sqrt of the sum of
    squares), indexing, broadcasting and regridding, and the bracket of mu at tail 0 holds
    the truth (the companion has no infinite atom: its grid mu stands)."""
    g = dpax.gaussian(1.0, grid_step=0.01)  # the reported case
    mu, _ = gdp.mu_and_regret(g, tail=0.0)
    assert 1.0 <= mu <= 1.0 + 1e-12
    brackets = gdp.mu_and_regret(g, tail=0.0, bounds=True)
    assert brackets[0].optimistic <= 1.0 <= brackets[0].safe == mu and brackets[1].optimistic <= brackets[1].safe
    assert 2.0 <= gdp.mu_and_regret(dpax.compose(g, (g, 3)), tail=0.0)[0] <= 2.0 + 1e-12
    assert 1.0 <= gdp.mu_and_regret(g.broadcast_to((2,))[1], tail=0.0)[0] <= 1.0 + 1e-12
    assert 1.0 <= gdp.mu_and_regret(g.regrid(0.02), tail=0.0)[0] <= 1.0 + 1e-12
    sub = dpax.gaussian(2.0, grid_step=0.01, neighbouring="substitution")  # sensitivity doubled: 1-GDP
    assert 1.0 <= gdp.mu_and_regret(sub, tail=0.0)[0] <= 1.0 + 1e-12
    mog = dpax.mixture_of_gaussians(2.0, [0.0, 1.0, 2.0], [0.5, 0.3, 0.2], grid_step=0.01)
    assert 1.0 <= gdp.mu_and_regret(mog, tail=0.0)[0] <= 1.0 + 1e-12  # largest sensitivity / noise
    arrays = dpax.PrivacyLoss(g.pmf_x, g.pmf_y, g.offset, g.inf_mass_y, g.neginf_mass_x, g.grid_step)
    assert gdp.mu_and_regret(dpax.compose(g, arrays), tail=0.0)[0] == np.inf


def test_bad_input():
    with pytest.raises(TypeError, match="PrivacyLoss"):
        gdp.mu_and_regret(1.0)
    with pytest.raises(ValueError, match="tail"):
        gdp.mu_and_regret(_gaussian(), tail=0.7)  # (a curve built above: no construction kernels)


# -- certified brackets (bounds=True) -------------------------------------------------------


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


# (1.0, 0.01, 1e-2) and (1.0, 0.3, 1e-2) are slow (kernels of their own); default sibling: (0.8, 0.1, 1e-3), the
# same checks at grid 1e-3 (grid 1e-2's mu and regret brackets: tests/cli/test_gdp_command.py's Gaussian)
@pytest.mark.parametrize("sigma,p,step", [pytest.param(1.0, 0.01, 1e-2, marks=pytest.mark.slow),
                                          pytest.param(1.0, 0.3, 1e-2, marks=pytest.mark.slow), (0.8, 0.1, 1e-3)])
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
    # grid 9e-3: 1024 points, no padding, so its construction, mu, regret and upper-end kernels
    # are those of test_small_mu_is_exact_to_the_grid's default case and tests/cli/test_gdp_command.py
    # (grid 1e-2, the slow case test_subsampled_step_truth_inside[1.0-0.3-0.01]'s curve: 896 points)
    pl = dpax.subsampled_gaussian(1.0, 0.3, grid_step=9e-3)
    x, y = (np.asarray(a)[0] for a in (pl.pair.pmf_x, pl.pair.pmf_y))
    perm = np.random.default_rng(3).permutation(x.size)
    shuffled = dpax.PrivacyLoss(x[perm], y[perm], 0, 0.0, 0.0, 9e-3)
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


def test_mu_reads_tightened_tails_where_the_booking_could_move_it():
    """mu_and_regret takes mu from the composition with its far tails tightened
    (dpax.privacy_loss.tails) for DP-SGD at a small sample rate, whose mu is set where the
    booked FFT round-off outweighs the curve (10 steps at sample rate 1e-3, grid 1e-3: 0.0923
    from the plain pair, 0.070379 from the tightened one, the companion's 0.070332); not for
    DP-SGD at sample rate 0.3, where the booking moves mu by 5e-12 relatively (measured) and
    the tightened pair is never built."""
    from dpax.privacy_loss import tails

    small = dpax.dpsgd(1.0, 1e-3, 10, grid_step=1e-3)
    mu_small, regret_small = gdp.mu_and_regret(small)
    assert small in tails._MEMO and 0.070332 < mu_small < 0.0704
    tight = tails.tight_tails(small)
    assert (mu_small, regret_small) == gdp.mu_and_regret(tight)
    wide = dpax.dpsgd(1.0, 0.3, 100, grid_step=1e-2)
    mu_wide = gdp.mu_and_regret(wide)[0]
    assert wide not in tails._MEMO
    assert abs(gdp.mu_and_regret(tails.tight_tails(wide))[0] - mu_wide) < 1e-9 * mu_wide


def test_mu_bracket_far_past_700_nats_and_at_tiny_tails():
    """A composed Gaussian with mu = 30 (losses near 450 +- 30 nats, the companion's P-masses
    underflowing past ~708): at tail = 0 mu's bracket was (30, inf), its sides crossed, as the
    companion's points sat at alpha = 0; it now holds the truth. A Gaussian's mu at tails of
    1e-320 and 1e-300 was inf and 29 for a truth of 1: the closed-form bound caps every tail."""
    pl = dpax.gaussian(0.1, grid_step=0.05).self_compose(9)
    mu, regret = gdp.mu_and_regret(pl, tail=0.0, bounds=True)
    assert mu.optimistic <= 30.0 <= mu.safe <= 30.0 * (1 + 1e-14) and mu.optimistic > 29.99
    assert 0.0 <= regret.optimistic <= regret.safe
    # grid 2e-3: the support (10240 points) and companion of test_composed_gaussian_regret_is_zero's
    # default case, so its mu, regret and companion kernels are that test's (grid 0.05 compiled 4 of its own)
    one = dpax.gaussian(1.0, grid_step=2e-3)
    for tail in (0.0, 1e-320, 1e-300, 1e-10):
        m = gdp.mu_and_regret(one, tail=tail, bounds=True)[0]
        assert m.optimistic <= 1.0 <= m.safe <= 1.0 + 1e-14, (tail, m)
