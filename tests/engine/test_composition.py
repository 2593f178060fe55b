"""Heterogeneous composition: different mechanisms, counted factors, different grids.

References: mu-GDP composition (Dong, Roth & Su, Cor. 3.3: Gaussians with noise sigma_i
compose to mu = sqrt(sum 1 / sigma_i^2)), dp-accounting's composition of the same
DP-SGD phases on the same grid (analysed by dp-accounting for epsilon/delta and by
riskcal for beta), and exactness of regridding onto a grid that contains the old one.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpa_pld

import dpax
from exact_refs import gdp_beta, gdp_delta

ALPHAS = np.unique(np.concatenate([np.logspace(-6, np.log10(0.5), 25), np.linspace(0.01, 0.99, 40)]))


def test_forty_gaussians_compose_to_exact_gdp():
    """40 Gaussian mechanisms with different noise: beta within 1e-3 of G_mu, never above.
    Observed: |beta - G_mu| <= 1.3e-7. (Noise in [55, 60], mu 0.11: one support length (3584
    points a factor, 20480 composed), whose construction kernels other files compile and whose
    beta and delta kernels (65 alphas, 8 epsilons) are those of
    test_regrid_is_pessimistic_and_exact_on_a_refinement's Gaussian (and of
    tests/mechanisms/test_gaussian_family.py): 2 kernels of its own. In [8, 9], mu 0.74: 6 kernels (4 of its
    own); in [40, 45], 28672 points composed, 4; in [8, 9.5] two lengths, 8; in [2, 20] 11
    lengths, 26, for the same check.)"""
    sigmas = np.random.default_rng(0).uniform(55.0, 60.0, 40)
    mu = np.sqrt(np.sum(1.0 / sigmas**2))
    pl = dpax.compose(*[dpax.gaussian(s) for s in sigmas])
    exact = gdp_beta(ALPHAS, mu)
    beta = pl.beta(ALPHAS)
    assert np.max(np.abs(beta - exact)) <= 1e-3
    assert np.all(beta <= exact + 1e-12)
    assert np.max(np.abs(beta - exact)) <= 1e-6  # what the engine actually achieves
    eps = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0])
    assert np.all(pl.delta(eps) >= gdp_delta(eps, mu) - 1e-12)
    assert "40 factors" in repr(pl)


# slow: tests/test_gaussian_exact.py::test_self_compose_equals_repeated_compose keeps counted ==
# listed in the default run (and test_factors_listed_one_by_one_equal_counted_factors in the slow one)
@pytest.mark.slow
def test_counted_and_listed_composition_agree():
    a = dpax.laplace(2.0, grid_step=1e-3)
    b = dpax.gaussian(3.0, grid_step=1e-3)
    counted = dpax.compose((a, 3), (b, 2))
    listed = dpax.compose(a, a, a, b, b)
    np.testing.assert_allclose(counted.beta(ALPHAS), listed.beta(ALPHAS), atol=1e-10)


# slow; default sibling: tests/test_api.py::test_compose_mixed_grid_steps_go_to_the_coarsest_and_rejects_non_losses
# keeps mixed grids -> the coarsest (default == "coarsest", pessimistic against mu-GDP) in the default run
@pytest.mark.slow
def test_mixed_grids_go_to_the_coarsest_and_stay_pessimistic():
    # the first factor and its regrid to 4e-3 are test_regrid_is_pessimistic_and_exact_on_a_refinement's
    # (observed: |beta - G_mu| <= 1.5e-6)
    sig = [1.0, 2.0, 3.0]
    steps = [1e-3, 2e-3, 4e-3]
    pls = [dpax.gaussian(s, grid_step=h) for s, h in zip(sig, steps)]
    pl = dpax.compose(*pls)  # default: the coarsest step
    assert pl.grid_step == 4e-3
    np.testing.assert_array_equal(pl.beta(ALPHAS), dpax.compose(*pls, grid_step="coarsest").beta(ALPHAS))
    exact = gdp_beta(ALPHAS, np.sqrt(np.sum(1.0 / np.square(sig))))
    beta = pl.beta(ALPHAS)
    assert np.all(beta <= exact + 1e-12)
    assert np.max(np.abs(beta - exact)) <= 1e-3
    same = pls[0].compose(pls[1], grid_step=4e-3)  # a step coarser than both
    assert same.grid_step == 4e-3


def test_regrid_is_pessimistic_and_exact_on_a_refinement():
    g = dpax.gaussian(1.0, grid_step=1e-3)
    exact = gdp_beta(ALPHAS, 1.0)
    coarse = g.regrid(4e-3)
    assert np.all(coarse.beta(ALPHAS) <= g.beta(ALPHAS) + 1e-12)  # post-processing
    assert np.max(np.abs(coarse.beta(ALPHAS) - exact)) <= 1e-4
    fine = g.regrid(5e-4)  # contains the old grid: the same pair
    np.testing.assert_allclose(fine.beta(ALPHAS), g.beta(ALPHAS), atol=1e-12)
    # eight epsilons: the delta kernels (8 queries) of tests/mechanisms/test_gaussian_family.py (the Gaussian
    # at 1e-3) and tests/test_bounds_interval.py (the fine grid's length); 2 compiled their own
    eps = [0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0]
    np.testing.assert_allclose(fine.delta(eps), g.delta(eps), atol=1e-12)
    # a pair not marked exact (built from user arrays) regrids through its CDFs
    imported = dpax.PrivacyLoss(g.pmf_x, g.pmf_y, g.offset, g.inf_mass_y, g.neginf_mass_x, g.grid_step)
    assert not imported.exact_ratio
    r = imported.regrid(4e-3)  # coarse's step: its beta kernel
    assert np.all(r.beta(ALPHAS) <= imported.beta(ALPHAS) + 1e-12)
    assert np.max(np.abs(r.beta(ALPHAS) - exact)) <= 1e-4


#: Three DP-SGD phases: noise and sample rate change by phase.
PHASES = [(0.8, 0.01, 100), (1.0, 0.02, 200), (1.5, 0.05, 300)]


def _phases_as_rows():
    return dpax.dpsgd(*(np.array(c) for c in zip(*PHASES)), grid_step=1e-3)


def test_dpsgd_noise_schedule_matches_dp_accounting():
    """Observed at grid 1e-3: epsilon within 1e-4 relative, delta within 1e-6, beta within 1e-5."""
    step = 1e-3
    pl = dpax.compose(*[(dpax.subsampled_gaussian(s, p, grid_step=step), t) for s, p, t in PHASES])
    oracle = None
    for s, p, t in PHASES:
        phase = dpa_pld.from_gaussian_mechanism(s, sampling_prob=p, value_discretization_interval=step).self_compose(t)
        oracle = phase if oracle is None else oracle.compose(phase)
    for delta in (1e-5, 1e-7):
        ours, theirs = pl.epsilon(delta), oracle.get_epsilon_for_delta(delta)
        assert abs(ours - theirs) <= 1e-3 * theirs
    eps = np.array([0.5, 1.0, 2.0, 3.0])
    theirs = np.array([oracle.get_delta_for_epsilon(e) for e in eps])
    assert np.max(np.abs(pl.delta(eps) - theirs)) <= 1e-5
    from riskcal.analysis import get_beta_from_pld

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle_beta = np.asarray(get_beta_from_pld(oracle, ALPHAS))
    assert np.max(np.abs(pl.beta(ALPHAS) - oracle_beta)) <= 1e-4
    # the same run through dpax's own single-phase path, phase by phase: the phases as rows of
    # one DP-SGD batch (each row is its phase alone, tests/engine/test_batch_independence.py),
    # whose kernels the slow test_a_factor_placed_early_gives_the_rolled_composition shares (three
    # separate dpsgd calls compiled 6 kernels of their own)
    rows = _phases_as_rows()
    chained = dpax.compose(*(rows[i] for i in range(len(PHASES))))
    np.testing.assert_allclose(chained.beta(ALPHAS), pl.beta(ALPHAS), atol=1e-9)


# slow; default sibling: tests/test_privacy_loss.py::test_pair_round_trip_indexing_and_broadcast
# (a row of a batch answers as the mechanism alone, slices keep their batch shape, a row has no rows)
@pytest.mark.slow
def test_indexing_a_batch():
    b = dpax.gaussian([1.0, 2.0, 4.0], grid_step=1e-3)
    one = b[1]
    assert one.batch_shape == ()
    np.testing.assert_allclose(one.beta(ALPHAS), dpax.gaussian(2.0, grid_step=1e-3).beta(ALPHAS), atol=1e-12)
    assert b[1:].batch_shape == (2,)
    with pytest.raises(IndexError):
        one[0]


# slow (~9 s): the default run keeps listed == counted in
# tests/test_gaussian_exact.py::test_self_compose_equals_repeated_compose, many distinct factors
# listed in test_forty_gaussians_compose_to_exact_gdp (closed form: a factor dropped or doubled
# fails it), counted heterogeneous factors in test_dpsgd_noise_schedule_matches_dp_accounting and
# tests/accountants/test_opacus_style.py::test_matches_riskcal_and_gdpnum_ctd_accountants
@pytest.mark.slow
def test_factors_listed_one_by_one_equal_counted_factors():
    """The composition kernels loop over stacked factors: a factor listed k times and the
    same factor with count k are one convolution power, so the numbers agree to FFT
    round-off (a factor dropped, doubled or misplaced in the loop fails this)."""
    f = [dpax.gaussian([1.0, 2.0], grid_step=1e-3), dpax.laplace(3.0, grid_step=1e-3),
         dpax.subsampled_gaussian(1.0, [[0.1], [0.2]], grid_step=1e-3)]
    listed = dpax.compose(f[0], f[0], f[1], f[1], f[1], *[f[2]] * 5)
    counted = dpax.compose((f[0], 2), (f[1], 3), (f[2], 5))
    assert listed.batch_shape == counted.batch_shape == (2, 2)
    np.testing.assert_allclose(listed.beta(ALPHAS), counted.beta(ALPHAS), atol=1e-12)
    np.testing.assert_allclose(listed.epsilon([1e-5, 1e-8]), counted.epsilon([1e-5, 1e-8]), rtol=1e-9)
    fewer = dpax.compose((f[0], 2), (f[1], 2), (f[2], 5))
    assert np.all(fewer.epsilon(1e-5) < counted.epsilon(1e-5) - 1e-3)


def test_a_narrow_row_in_a_wide_batch_keeps_its_own_far_tails():
    """A narrow row beside a 50 times wider one must not pick up round-off beyond its own
    Chernoff window (which would make mu 16% too high, regret 0.0007 for ~0). Each row has
    its own support, window and FFT length: its numbers are those it has alone,
    to 1e-12 (observed: identical). The narrow row (640 points) has the mu kernel of the slow
    tests/engine/test_companion_tails.py::test_dpsgd_mu_bracket_is_narrow (1024 points, rows
    padded to a power of two; sample rate 0.001, 384 points, compiled one of its own), the wide
    one (81920 points) that of tests/gdp/test_gdp_mu_regret.py's chunked rows. The regret is 2.4e-4
    (5.4e-5 before the FFT's round-off bound was booked on the safe side: ~1e-14 a point after
    2000 steps, beside the 1e-10 tail that mu reads)."""
    alone = dpax.dpsgd(4.0, 0.002, 2000, grid_step=1e-3)
    batch = dpax.dpsgd([4.0, 2.0], [0.002, 0.2], [2000, 1000], grid_step=1e-3)
    assert batch.support_length > 50 * alone.support_length
    mu_alone, regret_alone = dpax.gdp.mu_and_regret(alone)
    mu_batch, regret_batch = dpax.gdp.mu_and_regret(batch)
    assert mu_batch[0] == pytest.approx(mu_alone, rel=1e-12)
    assert regret_batch[0] == pytest.approx(regret_alone, rel=1e-12, abs=1e-15)
    assert regret_alone <= 3e-4
    np.testing.assert_allclose(batch[0].epsilon([1e-10, 1e-6]), alone.epsilon([1e-10, 1e-6]), rtol=1e-12)


# slow suite (~20 s): the narrow-row test above and tests/engine/test_batch_independence.py
# keep a row's own treatment in a wide batch in the default run
@pytest.mark.slow
def test_the_cell_split_keeps_every_rows_mass_in_a_wide_batch():
    """Connect-the-dots moves each cell's mass to its two end points and loses none of it.
    Solved for separately, the two parts' rounding (~1e-13 of a cell at grid 1e-3) left up
    to 5e-14 of Y mass per step on the +inf atom of the narrow rows of this batch (the
    paper's Figure 3 sweep); over 2000 steps that is a 1e-10 atom, and mu came out 0.14
    instead of 0.02. Observed now: atoms <= 3.3e-16 per step, mu within 0.1% of the row
    computed alone."""
    sigmas = np.array([2.0, 3.0, 4.0, 6.0, 8.0])[:, None]
    rates = np.array([1e-3, 2e-3, 5e-3, 0.01, 0.02, 0.05, 0.1, 0.2])[None, :]
    step = dpax.subsampled_gaussian(sigmas, rates, grid_step=1e-3)
    assert np.max(step.inf_mass_y) <= 2e-15
    mu = dpax.gdp.mu_and_regret(step.self_compose(2000))[0]
    mu_alone = dpax.gdp.mu_and_regret(dpax.dpsgd(4.0, 1e-3, 2000, grid_step=1e-3))[0]
    assert mu[2, 0] == pytest.approx(mu_alone, rel=0.02)


def test_a_factor_longer_than_the_fft_wraps_around_exactly():
    """A factor whose array is longer than the composed window (here zero padding) is
    folded onto the FFT length circularly: the composition equals the unpadded one."""
    import jax.numpy as jnp

    from dpax._engine import composition
    from dpax._engine.x64 import float64

    @float64
    def both():
        px, py, off, iy, nx = dpax.gaussian(20.0, grid_step=1e-2).pair
        padded = tuple(jnp.pad(a, ((0, 0), (0, 2048 - a.shape[-1]))) for a in (px, py))
        counts = (np.array([3]),)
        plain = composition.compose_arrays(((px, py, off, iy, nx),), counts, 1e-2, exact_ratio=True)
        wrapped = composition.compose_arrays(((*padded, off, iy, nx),), counts, 1e-2, exact_ratio=True)
        return plain, wrapped, padded[0].dtype

    plain, wrapped, dtype = both()
    assert dtype == np.float64 and plain[0].shape[-1] < 2048  # the wrap-around branch ran
    for a, b in zip(plain, wrapped):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=0, atol=1e-15)


# two rows in every case: the cases share the compilations of their operations, run one by one
# (one row in the 2600-point cases and three in the short shifted one: 74 compilations for the
# six cases; two rows: 42); the shifts drawn are -460 and -576, -23 and -1226, -594 and 695
# (either sign, past the length)
@pytest.mark.parametrize("rows,n,length,shifted", [(2, 300, 512, False), (2, 700, 512, False),
                                                  (2, 2600, 512, False), (2, 300, 512, True),
                                                  (2, 700, 512, True), (2, 2600, 512, True)])
def test_rows_land_on_the_fft_circle_as_a_scatter_add_puts_them(rows, n, length, shifted):
    """_rfft_folded's slices and gather place each mass where an in-order scatter-add
    (NumPy's ``np.add.at``) puts it: position (j - shift) mod length, wrapped masses added
    in their order; short rows, rows of 2 and of more than _FOLD_SLICES pieces, shifts of
    either sign and past the length. The same placed array gives the same spectrum, bit for
    bit; a shift off by one or a wrapped slice dropped or added twice fails."""
    import jax.numpy as jnp

    from dpax._engine import composition
    from dpax._engine.x64 import float64

    rng = np.random.default_rng(n + length + shifted)
    pmf = rng.random((rows, n)) ** 6
    shift = rng.integers(-3 * length, 3 * length, rows) if shifted else np.zeros(rows, np.int64)
    placed = np.zeros((rows, length))
    for r in range(rows):
        np.add.at(placed[r], (np.arange(n) - shift[r]) % length, pmf[r])
    assert (n > length * composition._FOLD_SLICES) == (n == 2600)  # both ways of folding are met

    got, want = float64(lambda: (composition._rfft_folded(jnp.asarray(pmf), length,
                                                          jnp.asarray(shift) if shifted else None),
                                 jnp.fft.rfft(jnp.asarray(placed), n=length)))()
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.slow  # ~4 s; default siblings: test_dpsgd_noise_schedule_matches_dp_accounting (these rows, each placed
# early, chained equal the rolled one-call composition to 1e-9 in beta) and
# tests/engine/test_companion_tails.py::test_small_sides_over_estimate_the_exact_composition (a placed self-composition
# against direct convolution, point by point)
def test_a_factor_placed_early_gives_the_rolled_composition(monkeypatch):
    """One factor whose count fits in the FFT's spare length is placed floor((lo - start) / T)
    positions early, so the composed window needs no roll (``aligned``); forcing the roll
    gives the same masses at the same losses, to FFT round-off. Fails on any off-by-one in
    the shift or the offsets. Each law's largest point (where the closing step puts the
    difference between its round-off bounds' sum and its total, which differs with the
    placement's round-off) and the window's ends are compared to that sum's precision."""
    from dpax._engine import composition

    def masses(pl):
        px, py, off, iy, nx = (np.asarray(a) for a in pl.pair)
        return [{(int(o) + i): (x, y) for i, (x, y) in enumerate(zip(rx, ry)) if x > 0 or y > 0}
                for rx, ry, o in zip(px, py, off)], iy, nx

    # the three phases of test_dpsgd_noise_schedule_matches_dp_accounting as rows: the aligned
    # run is that test's batch, kernels and all (rows of (1.0, 0.01, 300) and (4.0, 0.2, 1000)
    # compiled 7 kernels of their own)
    build = _phases_as_rows
    aligned, iy_a, nx_a = masses(build())
    kernel = composition.fft_compose_kernel
    monkeypatch.setattr(composition, "fft_compose_kernel", lambda *a, **k: kernel(*a, **{**k, "aligned": False}))
    rolled, iy_r, nx_r = masses(build())
    for a, r in zip(aligned, rolled):
        keys = sorted(set(a) | set(r))
        assert len(keys) > 1000
        got = np.array([a.get(k, (0.0, 0.0)) for k in keys])
        ref = np.array([r.get(k, (0.0, 0.0)) for k in keys])
        closing = np.zeros(ref.shape, bool)
        closing[[0, -1]] = True
        closing[np.argmax(ref, 0), [0, 1]] = True
        np.testing.assert_allclose(got[~closing], ref[~closing], rtol=0, atol=2e-15)
        np.testing.assert_allclose(got[closing], ref[closing], rtol=0, atol=1e-13)
        np.testing.assert_allclose(got[ref > 1e-6], ref[ref > 1e-6], rtol=1e-9)
    # the atoms hold the window's cut (its Chernoff bounds) and the closing deficits
    np.testing.assert_allclose(iy_a, iy_r, rtol=0, atol=1e-13)
    np.testing.assert_allclose(nx_a, nx_r, rtol=0, atol=1e-13)


def test_lattice_composition_safe_at_every_threshold():
    """10 steps of randomized response at epsilon 1 (grid 1e-2): eleven atoms 200 points
    apart and ~2000 points of round-off between them, whose round-off bound (the largest
    mass) is below the FFT's error at the atoms. delta at 0, 2 and 4 and epsilon(0.1)
    against the binomial law's exact values."""
    import math

    pl = dpax.randomized_response(1.0, grid_step=1e-2).self_compose(10)
    p = math.e / (1.0 + math.e)

    def exact_delta(eps):  # Pr[Y > x] - e^eps Pr[X > x] at the best threshold, k of 10 steps +1
        best = 0.0
        for t in range(11):
            tail_y = sum(math.comb(10, k) * p**k * (1 - p) ** (10 - k) for k in range(t, 11))
            tail_x = sum(math.comb(10, k) * (1 - p) ** k * p ** (10 - k) for k in range(t, 11))
            best = max(best, tail_y - math.exp(eps) * tail_x)
        return best

    for eps in (0.0, 2.0, 4.0):
        assert float(pl.delta(eps)) >= exact_delta(eps) * (1 + 1e-15), eps
    lo, hi = 0.0, 10.0  # epsilon(0.1) by bisection on the exact delta
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if exact_delta(mid) > 0.1 else (lo, mid)
    assert float(pl.epsilon(0.1)) >= lo
