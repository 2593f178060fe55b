"""dpax._engine.branch_and_bound, the mu/regret kernel's branch and bound: every block bound is at or
above the largest term of its block and tight, the fast Eq. 29 path bounds the exact max,
and branch and bound returns exactly what evaluating every point returns."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import dpax
from dpax import gdp
from dpax._engine import analyse as _analyse
from dpax._engine import branch_and_bound as gdp_bounds
from dpax._engine import cumulative as _cumulative
from dpax._engine import mu_regret as engine_mu_regret


@pytest.fixture(scope="module")
def dpsgd_corner():
    """A DP-SGD curve whose Eq. 29 max sits far into the corner (FNR ~ 1 - 1e-6) at grid 1e-4,
    shared by the three block-bound tests below, so that its construction and mu kernels
    compile once for the module: (2.0, 0.1, 400), the row of _dpsgd_corner_rows()
    that alone passes every check of these tests (the short (3.0, 0.001, 400) row, 5 blocks,
    would leave the "at most 8 blocks" checks nothing to fail on); its mu kernel's shape,
    one row of 262144 points, is tests/gdp/test_gdp_mu_regret.py's too."""
    return dpax.dpsgd(2.0, 0.1, 400, grid_step=1e-4)


@functools.cache
def _dpsgd_corner_rows():
    """The slow cases' DP-SGD batch at grid 1e-4 (the default run's fixture before, ~10 kernels
    of its own): De et al.'s CIFAR-10 configuration and three more, the fixture's among them."""
    return dpax.dpsgd(np.array([9.4, 2.0, 3.0, 8.0]), np.array([16384 / 50000, 0.1, 0.001, 0.1]),
                      np.array([2000, 400, 400, 2000]), grid_step=1e-4)


# "dpsgd rows" (slow): the four-row batch; default sibling: the "dpsgd" case (its second row)
@pytest.mark.parametrize("which", ["dpsgd", pytest.param("dpsgd rows", marks=pytest.mark.slow),
                                   pytest.param("gaussian", marks=pytest.mark.slow)])
def test_eq29_fast_path_bounds_the_exact_max(which, dpsgd_corner):
    """Eq. 29 from the tables as they are (1 - value near 1 by subtraction) is an upper bound
    whose error part covers the distance to the max from complementary sums, on curves whose
    max sits far into the corner (DP-SGD at FNR ~ 1 - 1e-6, small mu at 1 - 1e-10); the
    kernel's mu is the exact max (from complementary sums), within float64 rounding."""

    if which == "dpsgd":
        cases = [dpsgd_corner]
    elif which == "dpsgd rows":
        cases = [_dpsgd_corner_rows()]
    else:
        cases = [dpax.gaussian(np.array([1.0, 30.0, 100.0]), grid_step=1e-4)]
    with jax.enable_x64(True):
        @jax.jit  # one compilation instead of one per operation
        def both(pair):
            px, py, _, inf_y, neginf_x = pair
            cx, cy, _, _ = _analyse.breakpoints(pair._replace(inf_y=jnp.zeros_like(inf_y)))
            tail = jnp.full((px.shape[0], 1), 1e-10)
            fast = gdp_bounds.eq29_max(px, py, py / px, cx, cy, None, None, tail)
            nx = neginf_x[:, None] + _cumulative.head_sums(px)
            ny = _cumulative.tail_sums(py) + inf_y[:, None]
            return fast, gdp_bounds.eq29_max(px, py, py / px, cx, cy, nx, ny, tail)

        for pl in cases:
            (fast, error), (exact, none) = ((np.asarray(a), np.asarray(b)) for a, b in both(pl.pair))
            np.testing.assert_array_equal(none, 0.0)
            assert np.all(fast >= exact) and np.all(fast - 2 * error <= exact)
            # the arrays alone (no composition's recipe, so mu is read from them, not from the
            # tightened far tails, which may give less: both are on the safe side)
            plain = dpax.PrivacyLoss(*pl.pair, pl.grid_step, batch_shape=pl.batch_shape)
            mu = np.ravel(gdp.mu_and_regret(plain)[0])
            np.testing.assert_allclose(mu, exact, rtol=1e-14)
            assert np.all(np.ravel(gdp.mu_and_regret(pl)[0]) <= mu * (1 + 1e-14))
            assert np.any(2 * error > gdp.MU_ROUNDING * fast)  # some row needs the complementary sums


# the other curves are slow (their own grid-1e-4 tables and kernels); the default
# run keeps soundness and tightness on DP-SGD here, the pruning kernel's mu equal to the exact max
# (test_eq29_fast_path_bounds_the_exact_max[dpsgd]) and exact on small mu
# (tests/gdp/test_gdp_mu_regret.py::test_small_mu_is_exact_to_the_grid[200.0-0.0001])
@pytest.mark.parametrize("which", ["dpsgd", pytest.param("dpsgd rows", marks=pytest.mark.slow),
                                   pytest.param("small mu, laplace and random slopes", marks=pytest.mark.slow)])
def test_eq29_block_bounds_hold_and_are_tight(which, dpsgd_corner):
    """gdp_bounds.eq29_block_bounds: every block's bound is at or above the largest of its terms
    (error parts included, as the kernel evaluates them), on DP-SGD, small mu, Laplace and
    pmfs with random slopes (not convex: the parallelogram still holds them); and on DP-SGD
    so tight that at most 8 blocks of 256 reach the best boundary term (the box corner of
    each block, the bound it falls back to, leaves hundreds)."""

    rng = np.random.default_rng(7)
    shaped = rng.uniform(0.0, 1.0, (2, 20_000)) ** 4
    random = dpax.PrivacyLoss(shaped[0] / shaped[0].sum(), shaped[1] / shaped[1].sum(), -10_000, 0.0, 0.0, 1e-3)
    cases = [dpsgd_corner] if which == "dpsgd" else [_dpsgd_corner_rows()] if which == "dpsgd rows" else [
             dpax.gaussian(np.array([1.0, 100.0]), grid_step=1e-4), dpax.laplace(np.array([0.5, 3.0]), grid_step=1e-4),
             random]
    size = gdp_bounds.EQ29_BLOCK
    probit = jax.jit(gdp_bounds.probit_and_error, static_argnums=2)
    with jax.enable_x64(True):
        for case, pl in enumerate(cases):
            px, py = (np.asarray(a) for a in pl.pair[:2])
            # jitted, as in test_kappa_block_bounds_hold_and_are_tight (which reuses this compilation):
            # the same bits as its ~70 operations run one by one, each of them compiled
            cx, cy, _, _ = (np.asarray(a) for a in
                            jax.jit(_analyse.breakpoints)(pl.pair._replace(inf_y=jnp.zeros(px.shape[0]))))
            n1 = cx.shape[-1]
            err = gdp_bounds._table_error(n1)
            inside = (cx >= 1e-10) & (1 - cx >= 1e-10) & (cy >= 1e-10) & (1 - cy >= 1e-10)
            first, last = np.argmax(inside, -1), n1 - 1 - np.argmax(inside[:, ::-1], -1)
            q = np.clip(np.arange(-(-n1 // size) + 1) * size, first[:, None], last[:, None])
            ends = [np.take_along_axis(t, q, -1) for t in (cx, 1 - cx, cy, 1 - cy)]
            zx, ex = (np.asarray(v) for v in probit(jnp.asarray(ends[0]), jnp.asarray(ends[1]), err))
            zy, ey = (np.asarray(v) for v in probit(jnp.asarray(ends[2]), jnp.asarray(ends[3]), err))
            upper = np.asarray(jax.jit(gdp_bounds.eq29_block_bounds)(
                jnp.asarray(px), jnp.asarray(py), jnp.asarray(py) / jnp.asarray(px), [jnp.asarray(e) for e in ends],
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
                if which.startswith("dpsgd"):
                    best = np.max(np.where(
                        held, np.maximum(zx[r, :-1] + zy[r, :-1] + ex[r, :-1] + ey[r, :-1], -np.inf), -np.inf))
                    assert np.sum(upper[r][held] >= best - 2 * gdp_bounds.BOUND_SLACK) <= 8, r


@pytest.mark.parametrize("which", ["dpsgd", pytest.param("dpsgd rows", marks=pytest.mark.slow),
                                   pytest.param("laplace and random slopes", marks=pytest.mark.slow)])
def test_kappa_block_bounds_hold_and_are_tight(which, dpsgd_corner):
    """gdp_bounds.kappa_block_bounds: every block's bound is at or above the largest kappa of its
    segments (as the kernel evaluates them), for mu at, below and above the curve's own (the
    bound is used at the curve's mu, but holds for any), on DP-SGD, Laplace and random
    slopes; on DP-SGD at most 8 blocks of 256 reach the best kappa."""

    rng = np.random.default_rng(11)
    shaped = rng.uniform(0.0, 1.0, (2, 20_000)) ** 4
    random = dpax.PrivacyLoss(shaped[0] / shaped[0].sum(), shaped[1] / shaped[1].sum(), -10_000, 0.0, 0.0, 1e-3)
    # the slow case's curves are built only there (their construction compiles kernels)
    cases = ([dpsgd_corner] if which == "dpsgd" else [_dpsgd_corner_rows()] if which == "dpsgd rows" else
             [None, dpax.laplace(np.array([0.5, 3.0]), grid_step=1e-4), random])
    size = gdp_bounds.KAPPA_BLOCK
    with jax.enable_x64(True):
        for case, pl in enumerate(cases):
            if pl is None:
                continue
            px, py = pl.pair[:2]
            cx, cy, _, _ = jax.jit(_analyse.breakpoints)(pl.pair._replace(inf_y=jnp.zeros(px.shape[0])))
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


def test_bounded_max_equals_the_full_max(monkeypatch):
    """gdp_bounds.bounded_max: branch and bound over blocks must give the full (max, first argmax)
    bit for bit, whether few blocks reach the lower value, ties across blocks, empty rows,
    NaN bounds, or so many candidates that they take several chunks (a flat row)."""

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


# slow (both cases; dpsgd: ~7 s, the unpruned kernel compiles for this test only):
# the default run keeps the pruned kernel's mu equal to the exact max over every point (rtol 1e-14)
# in test_eq29_fast_path_bounds_the_exact_max[dpsgd], its regret against gdpnum's evaluation of
# 10,000 FPRs in tests/gdp/test_gdp_mu_regret.py::test_regret_matches_gdpnum_algorithm_on_the_same_curve,
# and bounded_max equal to the full max bit for bit in test_bounded_max_equals_the_full_max
@pytest.mark.parametrize("which", [pytest.param("dpsgd", marks=pytest.mark.slow),
                                   pytest.param("all", marks=pytest.mark.slow)])
def test_branch_and_bound_kernel_equals_full_evaluation(monkeypatch, which):
    """The kernel's block bounds on Eq. 29's terms and on the regret's kappas are sound: the
    kernel with every block evaluated (no pruning) gives the same mu, regret and witness bit
    for bit, on DP-SGD (peaked terms), the composed Gaussian (flat terms), RR, Laplace and a
    loss shorter than one block. The "dpsgd" case checks the slow cases' DP-SGD batch (grid
    1e-4, _dpsgd_corner_rows()), "all" a DP-SGD batch at grid 1e-3 and the others."""

    cases = [_dpsgd_corner_rows()]
    tails = (1e-10, 0.0)
    if which == "all":  # the other curves are built only here (their construction compiles kernels)
        cases = [dpax.compose(dpax.dpsgd(np.array([0.8, 2.0, 9.4, 1.0]), np.array([0.01, 0.3, 0.3, 0.05]),
                                         np.array([300, 300, 300, 1000]), grid_step=1e-3))]
        cases += [
            dpax.compose(dpax.gaussian(1.5, grid_step=1e-3).self_compose(20),
                         dpax.randomized_response(1.0, grid_step=1e-3)),
            dpax.laplace(np.array([0.5, 2.0, 1.0]), grid_step=1e-3),
            dpax.PrivacyLoss([0.6, 0.0, 0.4], [0.4, 0.0, 0.6], -2, 0.0, 0.0, 0.2),  # shorter than a block
        ]
        tails = (1e-10, 0.0, 1e-3)
    raw = engine_mu_regret.mu_regret
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


def _table_pred(t, q):
    """k -> t[k] >= q, per row (the predicate both searches take)."""
    return lambda k: jnp.take_along_axis(t, k.reshape(t.shape[0], -1), -1).reshape(k.shape) >= q[..., None]


# the table and the queries are arguments, not constants: the ordered and the wobbly table
# (same shapes) share one compilation of each search
@functools.partial(jax.jit, static_argnums=2)
def _level_search(t, q, n):
    return gdp_bounds.level_search(_table_pred(t, q), n, q.shape)


@functools.partial(jax.jit, static_argnums=2)
def _first_true(t, q, n):
    return _cumulative.first_true(_table_pred(t, q), n, q.shape)


def _reference_level_search(table, q, n, levels=3):
    """The level search written out in NumPy, level by level: at each, the last keys of the
    sub-ranges of width S^level within the current range, the False ones counted."""
    s = max(2, int(np.ceil(n ** (1.0 / levels) - 1e-9)))
    while s**levels < n:
        s += 1
    out = np.zeros(q.shape, np.int64)
    for r in range(q.shape[0]):
        for i in range(q.shape[1]):
            lo, span = 0, n
            for level in range(levels - 1, -1, -1):
                width = s**level
                keys = [lo + j * width + width - 1 for j in range(-(-span // width))]
                lo += width * sum(1 for k in keys if k < n and not table[r, k] >= q[r, i])
                span = width
            out[r, i] = lo
    return out


def test_level_search_visits_first_trues_keys():
    """gdp_bounds.level_search (one loop) and cumulative.first_true give the level search's
    answer written out level by level, also on tables an ulp out of order (where a search
    visiting other keys may stop elsewhere), and the plain first k on ordered tables however
    many queries (first_true bisects beyond 256)."""
    rng = np.random.default_rng(5)
    with jax.enable_x64(True):
        for n in (1, 7, 300, 4097):
            table = np.sort(rng.uniform(0.0, 1.0, (3, n)), -1)
            wobbly = table + rng.choice([0.0, 1e-16, -1e-16], table.shape)  # out of order by an ulp
            q = rng.uniform(-0.1, 1.1, (3, 5))
            q[:, :2] = table[:, rng.integers(0, n, 2)]  # exact hits
            for t in (table, wobbly):
                tj, qj = jnp.asarray(t), jnp.asarray(q)
                want = _reference_level_search(t, q, n)
                np.testing.assert_array_equal(np.asarray(_level_search(tj, qj, n)), want)
                np.testing.assert_array_equal(np.asarray(_first_true(tj, qj, n)), want)
            many = rng.uniform(-0.1, 1.1, (3, 200))  # 600 queries
            got = np.asarray(_level_search(jnp.asarray(table), jnp.asarray(many), n))
            np.testing.assert_array_equal(got, (table[:, None, :] < many[..., None]).sum(-1))
            got = np.asarray(_first_true(jnp.asarray(table), jnp.asarray(many), n))
            np.testing.assert_array_equal(got, (table[:, None, :] < many[..., None]).sum(-1))


def test_the_old_module_name_is_a_deprecated_alias():
    """dpax.gdp.bounds (this module's name until it became private) still imports, for one
    release, with a DeprecationWarning, and holds the same functions."""
    import importlib
    import sys
    import warnings

    sys.modules.pop("dpax.gdp.bounds", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = importlib.import_module("dpax.gdp.bounds")
    assert any(issubclass(w.category, DeprecationWarning) and "dpax.gdp.bounds" in str(w.message) for w in caught)
    assert old.eq29_max is gdp_bounds.eq29_max and old.MU_ROUNDING == gdp.MU_ROUNDING
