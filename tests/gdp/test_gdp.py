"""dpax.gdp: tight mu-GDP, regret, reports and GDP closed forms.

References: closed forms (composed Gaussian: mu = sqrt(T)/sigma exactly; randomized response:
Proposition 6.1), gdpnum on the same grid (its PLD and its regret algorithm), and a direct
check of the regret's definition (Eq. 8) at the FPR where dpax finds it.
"""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from scipy.stats import norm

import dpax
from dpax import conversions as cv
from dpax import gdp
from dpax.gdp import bounds as gdp_bounds
from dpax.gdp import mu_regret as gdp_mu_regret
from dpax._engine import analyse as _analyse
from exact_refs import gdp_advantage, gdp_beta, gdp_delta


@functools.lru_cache(maxsize=None)
def _dpsgd(sigma, p, steps, grid_step=1e-3):
    """DP-SGD losses shared by the tests (each distinct configuration is built and compiled once)."""
    return dpax.dpsgd(sigma, p, steps, grid_step=grid_step)


@functools.lru_cache(maxsize=None)
def _batch():
    """A 2 x 2 batch: noise multipliers (1, 2) by sample rates (0.1, 0.3), 100 steps."""
    return dpax.dpsgd(np.array([[1.0], [2.0]]), np.array([0.1, 0.3]), 100, grid_step=1e-3)


def _rr(epsilon, grid_step=1e-3):
    """Randomized response with parameter epsilon from its privacy profile (symmetric pair)."""
    e = float(epsilon)

    def profile(x):
        return np.maximum(0.0, (np.exp(e) - np.exp(x)) / (1.0 + np.exp(e)))

    return dpax.from_privacy_profile(profile, grid_step=grid_step, description=f"rr({e:g})")


def _symmetrised_points(pl):
    """Breakpoints of the symmetrised curve (f up to alpha_bar, then mirrored), alpha ascending."""
    cx, cy = pl.tradeoff_points()
    k0 = int(np.clip(1 - int(pl.offset), 0, pl.support_length))
    a = np.concatenate([cx[k0:], cy[k0:]])
    b = np.concatenate([cy[k0:], cx[k0:]])
    order = np.argsort(a, kind="stable")
    return a[order], b[order]


# -- closed forms ---------------------------------------------------------------------------


def test_closed_forms_match_dong_roth_su():
    alpha = np.array([0.0, 1e-10, 1e-4, 0.1, 0.5, 0.9, 1.0])
    for mu in (0.0, 0.3, 1.0, 4.0):
        np.testing.assert_allclose(gdp.tradeoff(mu, alpha), gdp_beta(alpha, mu), rtol=1e-12, atol=1e-300)
        assert gdp.advantage(mu) == pytest.approx(gdp_advantage(mu), abs=1e-15)
    # delta(epsilon) against the reference in exact_refs and epsilon(delta) as its inverse
    eps = np.array([0.0, 0.5, 1.0, 3.0, 8.0])
    for mu in (0.5, 1.0, 2.0):
        np.testing.assert_allclose(gdp.delta(eps, mu), gdp_delta(eps, mu), rtol=1e-10, atol=1e-17)
        d = gdp.delta(eps[1:], mu)
        np.testing.assert_allclose(gdp.epsilon(d, mu), eps[1:], rtol=1e-9)
    assert gdp.epsilon(0.9, 1.0) == 0.0  # delta above delta(0) = advantage
    # large epsilon: e^eps overflows float64 but the log-space evaluation does not
    d = gdp.delta(800.0, 40.0)
    assert np.isfinite(d) and 0.0 <= d <= norm.cdf(-800 / 40 + 20)
    assert gdp.compose(0.3, 0.4) == pytest.approx(0.5)
    assert gdp.compose([0.3, 0.4]) == pytest.approx(0.5)
    assert gdp.gaussian_mu(2.0, sensitivity=1.0, num_steps=16) == pytest.approx(2.0)


def test_clt_approximations():
    # Gaussian: the CLT is exact
    pl = dpax.gaussian(2.0, grid_step=1e-4)
    assert gdp.clt_mu(pl, num_steps=100) == pytest.approx(5.0, rel=1e-3)


@pytest.mark.slow
def test_clt_approximations_of_dpsgd_are_optimistic():
    # Bu et al. asymptotic mu of DP-SGD approaches the exact one for many small steps ...
    sigma, p, steps = 1.0, 0.01, 2000
    approx = gdp.subsampled_clt_mu(sigma, p, steps)
    exact, _ = gdp.mu_and_regret(dpax.dpsgd(sigma, p, steps, grid_step=1e-3))
    assert approx == pytest.approx(exact, rel=0.25)
    # ... and is optimistic: below the tight mu of the discretised (pessimistic) curve
    assert approx < exact
    assert gdp.clt_mu(dpax.subsampled_gaussian(sigma, p, grid_step=1e-3), steps) < exact


# -- mu and regret --------------------------------------------------------------------------


@pytest.mark.parametrize("sigma,steps", [(1.0, 1), (1.0, 4), (2.0, 100), (5.0, 1000)])
def test_composed_gaussian_is_exactly_gdp(sigma, steps):
    pl = dpax.gaussian(sigma, grid_step=1e-4 if steps < 100 else 1e-3).self_compose(steps)
    mu, regret = gdp.mu_and_regret(pl)
    exact = np.sqrt(steps) / sigma
    assert exact <= mu <= exact * (1 + 1e-3)  # pessimistic, to grid precision
    assert 0.0 <= regret < 1e-6


@pytest.mark.parametrize("sigma,step", [(30.0, 1e-4), (100.0, 1e-4), (100.0, 1e-5)])
def test_small_mu_is_exact_to_the_grid(sigma, step):
    """A single Gaussian step with mu = 1/sigma down to 0.01: Eq. 29's max sits at the box's
    corner, where beta ~ 1 - 1e-10. Taking Phi^-1 of beta from the head sums left 1 - beta
    with ~6 digits and mu off by up to 5e-5 relative, in either direction; from the
    complementary sums, mu exceeds 1/sigma by the connect-the-dots grid's own
    (step / mu)^2 / 8, converging with the grid (the old error did not)."""
    mu, _ = gdp.mu_and_regret(dpax.gaussian(sigma, grid_step=step))
    excess = mu * sigma - 1.0
    assert excess == pytest.approx((step * sigma) ** 2 / 8.0, rel=1e-3)


def test_eq29_fast_path_bounds_the_exact_max():
    """Eq. 29 from the tables as they are (1 - value near 1 by subtraction) is an upper bound
    whose error part covers the distance to the max from complementary sums, on curves whose
    max sits far into the corner (DP-SGD at FNR ~ 1 - 1e-6, small mu at 1 - 1e-10); the
    kernel keeps it only within MU_ROUNDING, and is never below the exact max."""
    import jax
    import jax.numpy as jnp

    cases = [dpax.dpsgd(np.array([9.4, 2.0, 3.0]), np.array([16384 / 50000, 0.1, 0.001]), np.array([2000, 400, 400]),
                        grid_step=1e-4),
             dpax.gaussian(np.array([1.0, 30.0, 100.0]), grid_step=1e-4)]
    with jax.enable_x64(True):
        for pl in cases:
            px, py, _, inf_y, neginf_x = pl.pair
            cx, cy, _, _ = _analyse.breakpoints(pl.pair._replace(inf_y=jnp.zeros_like(inf_y)))
            tail = jnp.full((px.shape[0], 1), 1e-10)
            fast, error = (np.asarray(v) for v in gdp_bounds.eq29_max(px, py, py / px, cx, cy, None, None, tail))
            nx = neginf_x[:, None] + _analyse.head_sums(px)
            ny = _analyse.tail_sums(py) + inf_y[:, None]
            exact, none = (np.asarray(v) for v in gdp_bounds.eq29_max(px, py, py / px, cx, cy, nx, ny, tail))
            np.testing.assert_array_equal(none, 0.0)
            assert np.all(fast >= exact) and np.all(fast - 2 * error <= exact)
            mu, _ = gdp.mu_and_regret(pl)
            mu = np.ravel(mu)
            assert np.all(mu >= exact) and np.all(mu <= exact * (1 + gdp.MU_ROUNDING))
            assert np.any(2 * error > gdp.MU_ROUNDING * fast)  # some row needs the complementary sums


def test_eq29_block_bounds_hold_and_are_tight():
    """gdp_bounds.eq29_block_bounds: every block's bound is at or above the largest of its terms
    (error parts included, as the kernel evaluates them), on DP-SGD, small mu, Laplace and
    pmfs with random slopes (not convex: the parallelogram still holds them); and on DP-SGD
    so tight that at most 8 blocks of 256 reach the best boundary term (the box corner of
    each block, the bound it falls back to, leaves hundreds)."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(7)
    shaped = rng.uniform(0.0, 1.0, (2, 20_000)) ** 4
    random = dpax.PrivacyLoss(shaped[0] / shaped[0].sum(), shaped[1] / shaped[1].sum(), -10_000, 0.0, 0.0, 1e-3)
    cases = [dpax.dpsgd(np.array([9.4, 2.0]), np.array([16384 / 50000, 0.1]), np.array([2000, 400]), grid_step=1e-4),
             dpax.gaussian(np.array([1.0, 100.0]), grid_step=1e-4), dpax.laplace(np.array([0.5, 3.0]), grid_step=1e-4),
             random]
    size = gdp_bounds.EQ29_BLOCK
    probit = jax.jit(gdp_bounds.probit_and_error, static_argnums=2)
    with jax.enable_x64(True):
        for case, pl in enumerate(cases):
            px, py = (np.asarray(a) for a in pl.pair[:2])
            cx, cy, _, _ = (np.asarray(a) for a in _analyse.breakpoints(pl.pair._replace(inf_y=jnp.zeros(px.shape[0]))))
            n1 = cx.shape[-1]
            err = gdp_bounds._table_error(n1)
            inside = (cx >= 1e-10) & (1 - cx >= 1e-10) & (cy >= 1e-10) & (1 - cy >= 1e-10)
            first, last = np.argmax(inside, -1), n1 - 1 - np.argmax(inside[:, ::-1], -1)
            q = np.clip(np.arange(-(-n1 // size) + 1) * size, first[:, None], last[:, None])
            ends = [np.take_along_axis(t, q, -1) for t in (cx, 1 - cx, cy, 1 - cy)]
            zx, ex = (np.asarray(v) for v in probit(jnp.asarray(ends[0]), jnp.asarray(ends[1]), err))
            zy, ey = (np.asarray(v) for v in probit(jnp.asarray(ends[2]), jnp.asarray(ends[3]), err))
            upper = np.asarray(jax.jit(gdp_bounds.eq29_block_bounds)(jnp.asarray(px), jnp.asarray(py), jnp.asarray(py) / jnp.asarray(px),
                                                     [jnp.asarray(e) for e in ends],
                                                     zx, ex, zy, ey, jnp.asarray(first), jnp.asarray(last)))
            za, ea = (np.asarray(v) for v in probit(jnp.asarray(cx), jnp.asarray(1 - cx), err))
            zb, eb = (np.asarray(v) for v in probit(jnp.asarray(cy), jnp.asarray(1 - cy), err))
            k = np.arange(n1)
            with np.errstate(invalid="ignore"):
                terms = np.where(inside & (k >= first[:, None]) & (k <= last[:, None]), za + zb + ea + eb, -np.inf)
            starts = np.arange(q.shape[1]) * size
            for r in range(px.shape[0]):
                # max over [q_b, q_b+1]: reduceat takes [q_b, q_b+1) (the last block to the end,
                # where the terms past the box are -inf), the end point is added
                block_max = np.maximum(np.maximum.reduceat(terms[r], q[r, :-1]), terms[r, q[r, 1:]])
                held = (block_max > -np.inf) & (starts[:-1] <= last[r]) & (starts[1:] > first[r])  # the kernel's blocks
                assert np.all(upper[r][held] >= block_max[held]), (case, r)
                if case == 0:
                    best = np.max(np.where(held, np.maximum(zx[r, :-1] + zy[r, :-1] + ex[r, :-1] + ey[r, :-1], -np.inf), -np.inf))
                    assert np.sum(upper[r][held] >= best - 2 * gdp_bounds.BOUND_SLACK) <= 8, r


def test_kappa_block_bounds_hold_and_are_tight():
    """gdp_bounds.kappa_block_bounds: every block's bound is at or above the largest kappa of its
    segments (as the kernel evaluates them), for mu at, below and above the curve's own (the
    bound is used at the curve's mu, but holds for any), on DP-SGD, Laplace and random
    slopes; on DP-SGD at most 8 blocks of 256 reach the best kappa."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(11)
    shaped = rng.uniform(0.0, 1.0, (2, 20_000)) ** 4
    random = dpax.PrivacyLoss(shaped[0] / shaped[0].sum(), shaped[1] / shaped[1].sum(), -10_000, 0.0, 0.0, 1e-3)
    cases = [dpax.dpsgd(np.array([9.4, 8.0]), np.array([16384 / 50000, 0.1]), np.array([2000, 2000]), grid_step=1e-4),
             dpax.laplace(np.array([0.5, 3.0]), grid_step=1e-4), random]
    size = gdp_bounds.KAPPA_BLOCK
    with jax.enable_x64(True):
        for case, pl in enumerate(cases):
            px, py = pl.pair[:2]
            cx, cy, _, _ = _analyse.breakpoints(pl.pair._replace(inf_y=jnp.zeros(px.shape[0])))
            mu = np.atleast_1d(gdp.mu_and_regret(pl)[0])
            for scale in (1.0, 0.5, 2.0):
                m = jnp.asarray(mu * scale)[:, None]
                upper = np.asarray(jax.jit(gdp_bounds.kappa_block_bounds)(px, py, py / px, cx, cy, m))
                kappas = np.asarray(jax.jit(gdp_bounds.kappa_line)(px, py, cx[:, :-1], cy[:, :-1], m))
                blocks = np.pad(kappas, ((0, 0), (0, upper.shape[1] * size - kappas.shape[1])),
                                constant_values=-np.inf).reshape(upper.shape + (size,)).max(-1)
                # to rounding (~1e-17 here), far inside the branch and bound's BOUND_SLACK
                assert np.all(upper >= blocks - 1e-12), (case, scale)
                if case == 0 and scale == 1.0:
                    best = blocks.max(-1, keepdims=True)
                    assert np.all(np.sum(upper >= best - 2 * gdp_bounds.BOUND_SLACK, -1) <= 8)


def test_randomized_response_gets_proposition_6_1_and_large_regret():
    from gdpnum.converter import get_worst_case_regret

    eps = 1.0
    pl = _rr(eps)
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
    (9.4, 16384 / 50000, 2000, 1e-4),  # the paper's De et al. CIFAR-10 configuration
    (1.0, 0.3, 100, 1e-3),
    pytest.param((1.0, 0.1, 1000, 1e-3), marks=pytest.mark.slow),
    pytest.param((2.0, 0.1, 1000, 1e-3), marks=pytest.mark.slow),
    pytest.param((2.0, 0.3, 100, 1e-3), marks=pytest.mark.slow),
    pytest.param((2.0, 0.3, 1000, 1e-3), marks=pytest.mark.slow),
]


@pytest.mark.parametrize("cfg", GDPNUM_CONFIGS, ids=lambda c: "s{:g}-p{:.3g}-T{}-h{:g}".format(*c) if isinstance(c, tuple) else None)
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
    sigma, p, steps = cfg
    coarse = _dpsgd(sigma, p, steps)
    fine = dpax.dpsgd(sigma, p, steps, grid_step=5e-4)
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
    """sigma=0.5, p=0.1, T=1000 (grid 1e-3): the regret is attained at an FPR below 1e-4, between
    gdpnum's first two grid points (0 and 1/9999). With the same curve and mu, gdpnum's
    algorithm returns a smaller regret; at dpax's witness FPR it violates Eq. 8."""
    from gdpnum.converter import get_worst_case_regret

    pl = dpax.dpsgd(0.5, 0.1, 1000, grid_step=1e-3)
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


@pytest.mark.parametrize("cfg", [(1.0, 0.1, 100), (0.5, 0.1, 10), pytest.param((0.5, 0.01, 100), marks=pytest.mark.slow),
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


def test_bounded_max_equals_the_full_max(monkeypatch):
    """gdp_bounds.bounded_max: branch and bound over blocks must give the full (max, first argmax)
    bit for bit, whether few blocks reach the lower value, ties across blocks, empty rows,
    NaN bounds, or so many candidates that they take several chunks (a flat row)."""
    import jax
    import jax.numpy as jnp

    monkeypatch.setattr(gdp_bounds, "BOUND_CHUNK", 64)  # several chunks for the flat row
    n, size = 10_000, 16
    rng = np.random.default_rng(3)
    values = rng.normal(size=(6, n)) - np.linspace(0.0, 8.0, n) ** 2  # one peak near 0
    values[1, 5000:5040] = 9.0  # ties spanning blocks: the first index wins
    values[1, 9000:9020] = 9.0  # and a later tie, in a later chunk
    values[2] = -np.inf  # empty
    values[3] = 1.0 + 1e-3 * rng.normal(size=n)  # flat: every block is a candidate
    values[3, 7777] = 1.1
    first = np.array([0, 100, 0, 0, 2000, 17])
    last = np.array([n - 1, 9999, n - 1, n - 1, 2500, 9999])
    idx = np.arange(n)
    masked = np.where((idx >= first[:, None]) & (idx <= last[:, None]), values, -np.inf)
    blocks = masked.reshape(6, -1, size)
    upper = blocks.max(-1) + rng.uniform(0.0, 1.0, blocks.shape[:2])  # valid, loose bounds
    upper[1, 312:314] = 9.0  # exactly the bound (the tie blocks)
    upper[1, 320:560] = 9.5  # loose: the later tie's blocks come several chunks later
    upper[4, :3] = np.nan  # treated as +inf
    lower = np.array([masked[0, 3], 9.0, -np.inf, 1.0, masked[4, 2000], -np.inf])

    def run(upper):
        def value(i, a):
            return jnp.where((i >= first[:, None]) & (i <= last[:, None]), a, -jnp.inf)

        return gdp_bounds.bounded_max(value, (jnp.asarray(values),), jnp.asarray(upper), jnp.asarray(lower), size)

    with jax.enable_x64(True):
        top, arg = (np.asarray(x) for x in jax.jit(run)(upper))
    have = masked.max(-1) > -np.inf
    np.testing.assert_array_equal(top, masked.max(-1))
    np.testing.assert_array_equal(arg[have], masked.argmax(-1)[have])
    assert arg[1] == 5000 and arg[2] == n and arg[3] == 7777


def test_branch_and_bound_kernel_equals_full_evaluation(monkeypatch):
    """The kernel's block bounds on Eq. 29's terms and on the regret's kappas are sound: the
    kernel with every block evaluated (no pruning) gives the same mu, regret and witness bit
    for bit, on DP-SGD (peaked terms), the composed Gaussian (flat terms), RR, Laplace and a
    loss shorter than one block."""
    import jax
    import jax.numpy as jnp

    cases = [
        dpax.compose(dpax.dpsgd(np.array([0.8, 2.0, 9.4, 1.0]), np.array([0.01, 0.3, 0.3, 0.05]),
                                np.array([300, 300, 300, 1000]), grid_step=1e-3)),
        dpax.compose(dpax.gaussian(1.5, grid_step=1e-3).self_compose(20), dpax.randomized_response(1.0, grid_step=1e-3)),
        dpax.laplace(np.array([0.5, 2.0, 1.0]), grid_step=1e-3),
        dpax.PrivacyLoss([0.6, 0.0, 0.4], [0.4, 0.0, 0.6], -2, 0.0, 0.0, 0.2),  # shorter than a block
    ]
    raw = gdp_mu_regret._mu_regret_kernel.__wrapped__
    tails = (1e-10, 0.0, 1e-3)
    with jax.enable_x64(True):
        pruned_kernel = jax.jit(lambda *a: raw(*a))
        pruned = [[np.asarray(v) for v in pruned_kernel(pl.pair, jnp.float64(t))] for pl in cases for t in tails]
        def every_point(value, arrays, *_):
            n = arrays[0].shape[-1]  # the others may be longer (breakpoint tables, n + 1)
            idx = jnp.broadcast_to(jnp.arange(n), arrays[0].shape)
            return gdp_bounds.masked_max(value(idx, *(a[..., :n] for a in arrays)), idx, n)

        monkeypatch.setattr(gdp_bounds, "bounded_max", every_point)
        full_kernel = jax.jit(lambda *a: raw(*a))
        full = [[np.asarray(v) for v in full_kernel(pl.pair, jnp.float64(t))] for pl in cases for t in tails]
    for got, want in zip(pruned, full):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert np.all(np.isfinite(pruned[0][0])) and np.all(pruned[0][1] > 0)


def test_batch_is_one_call_and_matches_rows():
    pl = _batch()
    mu, regret = gdp.mu_and_regret(pl)
    assert mu.shape == regret.shape == (2, 2)
    rows = pl.pair
    for flat, idx in enumerate(np.ndindex(2, 2)):
        row = dpax.PrivacyLoss(*(a[flat:flat + 1] for a in rows), pl.grid_step, batch_shape=())
        m, r = gdp.mu_and_regret(row)
        assert mu[idx] == pytest.approx(m, rel=1e-12)
        assert regret[idx] == pytest.approx(r, abs=1e-12)
    assert np.all(np.diff(mu, axis=0) < 0)  # more noise, less privacy loss


def test_tail_zero_and_infinite_atoms():
    # dpax keeps truncated mass at +inf: with tail=0 no finite mu holds
    pl = _dpsgd(1.0, 0.1, 100)
    assert float(np.max(pl.inf_mass_y)) > 0
    mu0, regret0 = gdp.mu_and_regret(pl, tail=0.0)
    assert mu0 == np.inf
    assert 0 < regret0 <= 0.5
    # a Gaussian built exactly has no atom in the box: tail only moves the box
    g = dpax.gaussian(1.0, grid_step=1e-4)
    assert gdp.mu_and_regret(g, tail=1e-6)[0] == pytest.approx(1.0, rel=1e-4)


def test_bad_input():
    with pytest.raises(TypeError, match="PrivacyLoss"):
        gdp.mu_and_regret(1.0)
    with pytest.raises(ValueError, match="tail"):
        gdp.mu_and_regret(dpax.gaussian(1.0), tail=0.7)
    with pytest.raises(ValueError, match="mu"):
        gdp.tradeoff(-1.0, 0.1)
    with pytest.raises(ValueError, match="alpha"):
        gdp.tradeoff(1.0, 1.5)


# -- Proposition 4.2 -----------------------------------------------------------------------


def test_advantage_difference_bounded_by_twice_delta():
    pairs = [
        (dpax.gaussian(1.0, grid_step=1e-4), cv.gdp_curve(1.3)),
        (_dpsgd(1.0, 0.1, 100), cv.gdp_curve(1.2)),
        (_rr(1.0), cv.gdp_curve(cv.mu_from_epsilon_dp(1.0))),
        (cv.epsilon_delta_curve(1.0, 1e-5), cv.rdp_curve(2.0, 0.5)),
        (cv.gdp_curve(0.5), cv.epsilon_delta_curve(0.5, 0.01)),
        (_dpsgd(1.0, 0.3, 100), _dpsgd(1.0, 0.1, 100)),
    ]
    for f, g in pairs:
        adv = [float(c.advantage()) if hasattr(c, "advantage") else None for c in (f, g)]
        d = gdp.symmetric_delta_divergence(f, g)
        assert abs(adv[0] - adv[1]) <= 2 * d + 1e-12
        assert d > 0


# -- report ----------------------------------------------------------------------------------


def test_report_tiers_table_and_json():
    pl = _dpsgd(1.0, 0.3, 100)
    r = gdp.report(pl)
    mu, regret = gdp.mu_and_regret(pl)
    assert r.mu == mu and r.regret == regret and r.gdp_ok == (regret < 1e-2) and not r.gdp_ok
    assert r.alpha.shape == (8,) and r.beta.shape == (8,)
    np.testing.assert_allclose(r.alpha[:7], gdp.TIER2_ALPHAS)
    np.testing.assert_allclose(r.beta, pl.beta(r.alpha), rtol=1e-12)
    assert r.alpha_star == pytest.approx((1 - pl.advantage()) / 2)
    np.testing.assert_allclose(r.epsilon, pl.epsilon(np.array(gdp.REPORT_DELTAS)))
    # mu-GDP is on the safe side of Tier II: beta >= f_mu at every reported alpha in the box
    assert np.all(r.beta[1:] >= gdp_beta(r.alpha[1:], r.mu) - 1e-12)
    text = r.table()
    assert "Tier I" in text and "Tier II" in text and "alpha*" in text
    back = json.loads(r.to_json())
    assert back["mu"] == pytest.approx(mu) and len(back["beta"]) == 8
    # a batch reports per configuration
    rb = gdp.report(_batch())
    assert rb.mu.shape == (2, 2) and rb.beta.shape == (2, 2, 8) and rb.table().count("Tier I:") == 4


def test_report_gaussian_epsilon_matches_closed_form():
    r = gdp.report(dpax.gaussian(1.0, grid_step=1e-4).self_compose(4))
    assert r.regret < 1e-6 and r.gdp_ok
    np.testing.assert_allclose(r.epsilon, gdp.epsilon(np.array(gdp.REPORT_DELTAS), 2.0), rtol=1e-3)
    np.testing.assert_allclose(r.beta[:7], norm.cdf(norm.isf(r.alpha[:7]) - 2.0), rtol=1e-3, atol=1e-9)


# -- command line ----------------------------------------------------------------------------


def test_cli_gdp(capsys):
    from dpax import cli

    assert cli.main(["gdp", "--noise-multiplier", "1", "--sample-rate", "0.3", "--num-steps", "100",
                     "--grid-step", "1e-3", "--json", "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    mu, regret = gdp.mu_and_regret(_dpsgd(1.0, 0.3, 100))
    assert out["mu"] == pytest.approx(mu) and out["regret"] == pytest.approx(regret)
    assert out["gdp_ok"] is False and len(out["beta"]) == 8 and len(out["epsilon"]) == 3
    assert cli.main(["gdp", "--epsilon", "8", "--delta", "1e-5", "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "1.666" in text and "Proposition 6.1" in text
    assert cli.main(["gdp", "--noise-multiplier", "2", "--no-cache"]) == 2  # incomplete mechanism
    assert cli.main(["gdp", "--epsilon", "1", "--delta", "0", "--no-cache"]) == 2
    assert "delta" in capsys.readouterr().err
