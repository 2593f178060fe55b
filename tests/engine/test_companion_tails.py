"""The optimistic companion's far tails: the tilted composition.

A composed companion's small sides (X above 0, Y below 0) come from the tilted laws
X e^(theta x), Y e^(-theta x) composed in the same FFT (:mod:`dpax._engine.optimistic`). These
tests check that the stored small sides are over-estimates of the exact composition of the
single-step companion (computed here by direct convolution, which keeps relative precision
in the tails), that far-tail epsilon and mu brackets hold the closed-form truth and are
narrow, and that a swap of the sides would be caught.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import dpax
from dpax._engine import composition
from exact_refs import gdp_epsilon


def _exact_power(pmf, steps):
    """pmf^(*steps) by direct convolution (steps a power of two): sums of non-negative
    products, so every mass keeps its relative precision however small."""
    out = pmf
    for _ in range(int(np.log2(steps))):
        out = np.convolve(out, out)
    return out


def _tails(a):
    return np.cumsum(a[::-1])[::-1]


def test_small_sides_over_estimate_the_exact_composition():
    """Pr[X > x] (x >= 0) and Pr[Y <= x] (x < 0) of the composed companion are at least the
    exact ones, down to the far tails (1e-30 and below), and close to them (the booking is
    tight: the tilted laws' round-off is relative)."""
    steps, step = 16, 1e-2
    one = dpax.gaussian(1.0, grid_step=step).optimistic_companion()
    px1, py1 = (np.asarray(a)[0] for a in (one.pair.pmf_x, one.pair.pmf_y))
    ex, ey = _exact_power(px1, steps), _exact_power(py1, steps)
    start = steps * int(np.asarray(one.pair.offset)[0])
    comp = one.self_compose(steps)
    px, py = (np.asarray(a)[0] for a in (comp.pair.pmf_x, comp.pair.pmf_y))
    first = int(np.asarray(comp.pair.offset)[0])
    x = (first + np.arange(px.size)) * step
    k = first - start + np.arange(px.size)  # the exact arrays' index of each stored point
    ok = (k >= 0) & (k < ex.size)
    tx, tx_exact = _tails(px)[ok], _tails(ex)[k[ok]]
    hy, hy_exact = np.cumsum(py)[ok], np.cumsum(ey)[k[ok]]
    upper, lower = x[ok] >= 0, x[ok] < 0
    assert np.all(tx[upper] >= tx_exact[upper] * (1 - 1e-13))
    assert np.all(hy[lower] >= hy_exact[lower] * (1 - 1e-13))
    # the big sides, read through the other sums: Pr[Y > x] (x >= 0) and Pr[X <= x] (x <= 0)
    # never above the exact ones (the direct convolution's own rounding aside)
    ty, ty_exact = _tails(py)[ok], _tails(ey)[k[ok]]
    hx, hx_exact = np.cumsum(px)[ok], np.cumsum(ex)[k[ok]]
    assert np.all(ty[upper] <= ty_exact[upper] * (1 + 1e-12))
    assert np.all(hx[x[ok] <= 0] <= hx_exact[x[ok] <= 0] * (1 + 1e-12))
    far = upper & (tx_exact > 1e-30)
    assert np.min(tx_exact[far]) < 1e-29  # the check reaches the far tail
    assert np.max(tx[far] / tx_exact[far]) < 1.001  # and the booking stays tight there


# grid 1e-3 is slow (ten kernels of its own: the 16 steps at 1e-3, safe and companion); default
# siblings: grid 1e-2 here, and tests/test_bounds_interval.py::test_composed_gaussian_inside_bracket[1.0-4-0.001]
# (a composed Gaussian's epsilon bracket around the closed form at grid 1e-3)
@pytest.mark.parametrize("step", [1e-2, pytest.param(1e-3, marks=pytest.mark.slow)])
def test_far_tail_epsilon_brackets_the_truth(step):
    """mu = 4 (sigma 1, 16 steps): epsilon at delta 1e-14 to 1e-6 within a narrow bracket
    around the closed form (the companion's old ratio bound gave 28.3 at 1e-10; without the
    big sides' booking, epsilon(1e-14) came out 0.01 above the truth at grid 1e-2). The safe
    side reads the deltas within 1e3 times the composition's booked round-off from its
    tightened far tails (dpax.privacy_loss.tails): at grid 1e-3, epsilon(1e-10) is 1.4e-5
    above the truth, 1.3e-4 from the plain pair."""
    pl = dpax.gaussian(1.0, grid_step=step).self_compose(16)
    deltas = np.array([1e-14, 1e-12, 1e-10, 1e-6])
    e = pl.epsilon(deltas, bounds=True)
    truth = np.array([gdp_epsilon(d, 4.0) for d in deltas])
    assert np.all(e.optimistic < truth) and np.all(truth < e.safe)
    assert np.all(truth - e.optimistic < (1e-3 if step == 1e-2 else 2e-5))  # the safe side is looser at 1e-14
    assert np.all(e.width[2:] < (1e-3 if step == 1e-2 else 5e-5))


def test_mu_bracket_holds_the_truth_and_is_narrow():
    pl = dpax.gaussian(1.0, grid_step=1e-2).self_compose(16)
    mu_opt = dpax.gdp.mu_and_regret(pl.optimistic_companion())[0]
    mu_safe = dpax.gdp.mu_and_regret(pl)[0]
    assert mu_opt < 4.0 < mu_safe and mu_safe - mu_opt < 1e-4


@pytest.mark.slow  # ~4 s; default siblings: test_mu_bracket_holds_the_truth_and_is_narrow (a composed companion's
# mu bracket, 16 Gaussian steps), tests/gdp/test_gdp_mu_regret.py::test_subsampled_step_truth_inside (a subsampled
# Gaussian step's mu bracket) and test_companion_batch_independence (this DP-SGD's companion, built and queried)
def test_dpsgd_mu_bracket_is_narrow():
    """DP-SGD at a coarse grid: the mu bracket's width is the grid's effect (a ratio bound
    would leave 0.013 at grid 1e-3 with 10^4 steps; the slow test below runs sigma 1, p 1e-3,
    10^4 steps at grid 1e-4)."""
    pl = dpax.dpsgd(1.0, 0.01, 200, grid_step=1e-2)
    mu_opt = dpax.gdp.mu_and_regret(pl.optimistic_companion())[0]
    mu_safe = dpax.gdp.mu_and_regret(pl)[0]
    assert 0.0 < mu_opt <= mu_safe and mu_safe - mu_opt < 5e-3


@pytest.mark.slow
def test_dpsgd_mu_bracket_at_grid_1e4():
    """The README's DP-SGD (sigma 1, p 1e-3, 10^4 steps) at grid 1e-4: the bracket [0.158344,
    0.159824] (README, "Certified error bars"). mu is set at the box's corner (FPR 1e-10),
    where the plain pair's booked FFT round-off gives 0.174582; mu_and_regret reads the
    composition with its far tails tightened there (dpax.privacy_loss.tails)."""
    pl = dpax.dpsgd(1.0, 1e-3, 10_000, grid_step=1e-4)
    mu_opt = dpax.gdp.mu_and_regret(pl.optimistic_companion())[0]
    mu_safe = dpax.gdp.mu_and_regret(pl)[0]
    assert abs(mu_opt - 0.158344) < 1e-5 and mu_opt <= mu_safe and mu_safe - mu_opt < 3e-3


@pytest.mark.slow  # ~2.5 s; default siblings: test_small_sides_over_estimate_the_exact_composition (the tilted
# composition's far tails over the exact ones and within 0.1% at 1e-30: rates aimed at the tail, an exact tilt) and
# test_far_tail_epsilon_brackets_the_truth[0.01]
def test_tilt_rates_aim_at_the_tail():
    """Rates are >= 1 and follow the law (mu-GDP: X ~ N(-mu^2/2, mu^2), whose Chernoff point
    at 1e-10 has rate (s + mu^2/2) / mu^2 = 1.6 for mu = 4), and the tilt is exact: rate 1
    everywhere gives the same companion up to round-off."""
    one = dpax.subsampled_gaussian(1.0, 0.01, grid_step=1e-2).optimistic_companion()
    # the step as compose_arrays passes it (a float64, not a weakly typed Python float): the
    # kernels compiled by the compositions above and below (a Python float is another key)
    step, span = np.float64(1e-2), np.array([10.0])
    with jax.enable_x64(True):
        rates = [np.asarray(composition.tilt_rates((one.pair,), (np.array([t]),), step, span)[0])
                 for t in (1, 100, 10_000)]
    assert all(r.shape == (1, 4) and np.all(r >= 1.0) for r in rates)
    g = dpax.gaussian(1.0, grid_step=1e-2).optimistic_companion()
    with jax.enable_x64(True):
        rate = np.asarray(composition.tilt_rates((g.pair,), (np.array([16]),), step, span)[0])
    assert np.all(np.abs(rate[:, :2] - (-8.0 + 4.0 * 6.36 + 8.0) / 16.0) < 0.15)  # the rates are a grid (ratio 1.26)
    pl = dpax.gaussian(1.0, grid_step=1e-2).self_compose(16)
    tuned = pl.optimistic_companion().pair
    real = composition.tilt_rates
    try:
        composition.tilt_rates = lambda *a: (real(*a)[0] * 0.0 + 1.0, real(*a)[1])
        plain = dpax.gaussian(1.0, grid_step=1e-2).self_compose(16).optimistic_companion().pair
    finally:
        composition.tilt_rates = real
    for a, b in ((plain.pmf_x, tuned.pmf_x), (plain.pmf_y, tuned.pmf_y)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-17)


def test_companion_batch_independence():
    """A row's companion does not depend on the length its batch shares (its top is folded
    at a point of its own law: :func:`dpax._engine.optimistic.fold_top`). What is left is
    the FFT's round-off in the booked bounds, which moves with the one-ulp differences that
    XLA's code for another batch shape gives the inputs (amplified by the big sides' tilts,
    e^(82 x) at the low end here): ~1e-13 on beta and advantage, ~1e-5 on epsilon(1e-10)
    and mu, always inside the bounds' modelled round-off (FFT_ULPS)."""
    alone, batch = _alone_and_batch()
    for name, args, rtol in (("epsilon", ([1e-10, 1e-5],), 5e-5), ("beta", ([1e-8, 0.01, 0.5],), 1e-11),
                             ("advantage", (), 1e-11)):
        a = getattr(alone, name)(*args, bounds=True).optimistic
        b = getattr(batch, name)(*args, bounds=True).optimistic[0]
        np.testing.assert_allclose(b, a, rtol=rtol, atol=1e-15)


def _alone_and_batch():
    # the row alone is the DP-SGD of the slow test_dpsgd_mu_bracket_is_narrow (the same kernels); the
    # wider row (2048 points a step, 10240 composed, against 640 and 768) is sampling rate 1,
    # 16 steps: the composed Gaussian of the tests above, whose construction and FFTs it shares
    # (0.6, 0.2, 400 steps until 2026-11-27: the same differences, kernels of its own);
    # observed: epsilon within 5e-11, beta and advantage within 2e-13
    return dpax.dpsgd(1.0, 0.01, 200, grid_step=1e-2), dpax.dpsgd([1.0, 1.0], [0.01, 1.0], [200, 16], grid_step=1e-2)


@pytest.mark.slow
def test_companion_mu_batch_independence():
    """The companion rows above, through the mu kernel (~4 s of its own kernels, so slow).
    Default guarantee: the companion's rows are checked as alone by
    test_companion_batch_independence, and the mu kernel's rows as alone by
    tests/engine/test_composition.py::test_a_narrow_row_in_a_wide_batch_keeps_its_own_far_tails."""
    alone, batch = _alone_and_batch()
    np.testing.assert_allclose(dpax.gdp.mu_and_regret(batch.optimistic_companion())[0][0],
                               dpax.gdp.mu_and_regret(alone.optimistic_companion())[0], rtol=5e-5)


# slow (~11 s of its own kernels): companion rows answer as alone in the default run by
# test_companion_batch_independence above; substitution rows in a batch by
# tests/engine/test_batch_independence.py::test_constructions_answer_as_alone (the substitution
# subsampled Gaussian); the substitution companion's bracket by
# tests/test_bounds_interval.py::test_substitution_gaussian_inside_bracket
@pytest.mark.slow
def test_substitution_companion_batch_independence():
    """The replace-one companion (nearest point) is folded too; here the rows agree exactly."""
    kw = dict(grid_step=1e-2, neighbouring="substitution")
    alone = dpax.subsampled_gaussian(1.0, 0.05, **kw).self_compose(20)
    batch = dpax.subsampled_gaussian([1.0, 0.6], [0.05, 0.3], **kw).self_compose(20)
    for name, args in (("epsilon", ([1e-10, 1e-5],)), ("beta", ([1e-8, 0.01, 0.5],)), ("advantage", ())):
        a = getattr(alone, name)(*args, bounds=True).optimistic
        b = getattr(batch, name)(*args, bounds=True).optimistic[0]
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-15)
