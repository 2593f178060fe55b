"""dpax.calibration.accuracy: calibrate_dpsgd(accuracy=...), dpax chooses the grid, and shows the
noise the grid costs.

The "truth" is not known in closed form for DP-SGD; a calibration on a grid 10 to 100 times
finer stands in for it. Its safe answer hi_fine meets the target on the fine grid, so it
meets it truly: hi_fine >= the true noise >= noise_interval.optimistic (verified to fail
with the optimistic companion). And the finer grid is less pessimistic than the chosen one
(the grids nest), so hi_fine <= noise_interval.safe up to the search's rtol. The tests run
with rtol = 1e-5, well below the noise the 1e-2 grid costs (a few 1e-4 relative), so the
interval is measurably wider than rtol and a swapped or one-sided interval fails.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpax
from dpax._engine import grid as _grid
from dpax.targets import GDP, Advantage, Epsilon, ErrRates

RTOL = 1e-5
P, T = 0.05, 50
TARGET = ErrRates(0.1, 0.5)


def brackets(interval, value, rtol=0.0) -> bool:
    """Whether ``interval`` (safe, optimistic) of the *noise* holds ``value``: optimistic
    <= value <= safe (1 + rtol), the optimistic end strictly below the safe one."""
    safe, opt = np.asarray(interval.safe), np.asarray(interval.optimistic)
    return bool(np.all((opt <= value) & (value <= safe * (1 + rtol)) & (opt < safe)))


@pytest.fixture(scope="module")
def coarse():
    return dpax.calibrate_dpsgd(sample_rate=P, num_steps=T, target=TARGET, accuracy=1e-2, rtol=RTOL,
                                compare_standard=False)


@pytest.fixture(scope="module")
def fine():
    return dpax.calibrate_dpsgd(sample_rate=P, num_steps=T, target=TARGET, grid_step=1e-3, rtol=RTOL,
                                compare_standard=False)


@pytest.mark.slow  # ~2 s (the fine fixture's grid-1e-3 search); default siblings:
# test_a_smaller_accuracy_refines_the_grid (the coarse noise interval holds the answer on a finer grid, 5e-3),
# test_advantage_and_epsilon_brackets_are_oriented (optimistic < safe == the reported noise),
# test_without_accuracy_nothing_changes (grid_step and noise, no comparison)
def test_the_noise_interval_holds_the_fine_grid_answer(coarse, fine):
    ni = coarse.noise_interval
    assert coarse.grid_step == 1e-2 and coarse.accuracy == 1e-2 and coarse.status == "calibrated"
    assert ni.safe == coarse.noise_multiplier  # the reported noise stays the safe answer
    assert brackets(ni, fine.noise_multiplier, RTOL)
    # the grid's cost is visible: far more than the search's resolution
    assert ni.safe - ni.optimistic > 10 * RTOL * ni.safe
    # and the check can fail: with the sides swapped, or a one-sided "interval"
    assert not brackets(dpax.Interval(ni.optimistic, ni.safe), fine.noise_multiplier, RTOL)
    assert not brackets(dpax.Interval(ni.safe, ni.safe * (1 - RTOL)), fine.noise_multiplier, RTOL)


@pytest.mark.slow  # ~2 s; default siblings: test_the_achieved_bracket_is_what_the_privacy_loss_reports (the bracket is
# pl.beta(0.1, bounds=True) on the grid chosen), test_a_list_of_targets_brackets_each_quantity (width <= accuracy),
# tests/test_bounds_interval.py's beta brackets (optimistic and safe sides hold the truth)
def test_the_achieved_bracket_is_narrow_and_holds_the_fine_grid_value(coarse):
    b = coarse.achieved_interval["beta"]
    assert list(coarse.achieved_interval) == ["beta"]
    assert b.width <= 1e-2 and b.safe <= b.optimistic  # beta: the safe end is the lower one
    assert b.safe == coarse.achieved["beta"]
    # beta at the calibrated noise on a 10x finer grid lies inside (the truth is in both)
    fine_b = dpax.dpsgd(coarse.noise_multiplier, P, T, grid_step=1e-3).beta(0.1, bounds=True)
    assert b.lower <= fine_b.lower <= fine_b.upper <= b.upper
    assert not dpax.Interval(b.optimistic, b.optimistic + 1e-3).contains(fine_b.safe)


def test_the_achieved_bracket_is_what_the_privacy_loss_reports(coarse):
    pl = dpax.dpsgd(coarse.noise_multiplier, P, T, grid_step=coarse.grid_step)
    assert tuple(coarse.achieved_interval["beta"]) == tuple(pl.beta(0.1, bounds=True))


# both about the noise of the coarse fixture (0.508: advantage 0.4326, epsilon 13.40 at 1e-5 there),
# so the kernels of its search serve
# the epsilon case (kernels of its own) is slow; default siblings: the advantage case (the same accuracy
# search, another quantity) and test_bounds_interval.py's epsilon brackets (optimistic <= truth <= safe)
@pytest.mark.parametrize("target, name", [(Advantage(0.432), "advantage"),
                                          pytest.param(Epsilon(13.4, 1e-5), "epsilon", marks=pytest.mark.slow)])
def test_advantage_and_epsilon_brackets_are_oriented(target, name):
    # noise_bounds' upper end 0.61 (below the advantage's CLT estimate 0.641, about TARGET's 0.614) starts its search
    # where the coarse fixture's starts: the fixture's kernels serve (the answer, 0.508, is well inside)
    r = dpax.calibrate_dpsgd(sample_rate=P, num_steps=T, target=target, accuracy=3e-2, rtol=RTOL,
                             compare_standard=False, noise_bounds=(0.05, 0.61))
    b = r.achieved_interval[name]
    assert b.optimistic <= b.safe and b.width <= 3e-2  # never below the truth on the safe side
    assert b.safe <= getattr(target, name)  # the safe side meets the target
    ni = r.noise_interval
    assert ni.optimistic < ni.safe == r.noise_multiplier


def test_a_smaller_accuracy_refines_the_grid(coarse):
    # the coarse fixture's configuration: beta's width 1.7e-4 at grid 1e-2, refined to 5e-3 for 1e-4
    r = dpax.calibrate_dpsgd(sample_rate=P, num_steps=T, target=TARGET, accuracy=1e-4, rtol=RTOL,
                             compare_standard=False)
    assert r.grid_step < 1e-2 and r.achieved_interval["beta"].width <= 1e-4
    assert coarse.grid_step == 1e-2 and coarse.achieved_interval["beta"].width > 1e-4
    # the finer grid's interval is the narrower one, and both hold its answer
    assert r.noise_interval.width < coarse.noise_interval.width
    assert coarse.noise_interval.lower <= r.noise_multiplier <= coarse.noise_multiplier * (1 + 1e-4)


@pytest.mark.slow  # ~24 s; default siblings: test_a_smaller_accuracy_refines_the_grid (refinement below
# grid 1e-2 to the width asked, the coarse interval holding the finer answer), and
# tests/engine/test_batch_independence.py (a row's answer does not depend on its batch)
def test_a_batch_of_two_rows_shares_the_finest_grid():
    kw = dict(compare_standard=False, accuracy=1e-4)
    # both rows at the module's P and T: alone, ErrRates(0.6, 0.058) (the GDP mu of TARGET to 3%, so the same
    # search kernels, noise 0.516) stays on grid 1e-2 (beta's width there 6.1e-5), its kernels all the coarse
    # fixture's; TARGET refines to 5e-3 (beta's width 1.7e-4 at 1e-2)
    rows = (ErrRates(0.6, 0.058), TARGET)
    both = dpax.calibrate_dpsgd(sample_rate=P, num_steps=T, target=ErrRates([0.6, TARGET.alpha], [0.058, TARGET.beta]),
                                **kw)
    one = [dpax.calibrate_dpsgd(sample_rate=P, num_steps=T, target=target, **kw) for target in rows]
    assert one[0].grid_step > one[1].grid_step == both.grid_step
    assert both.noise_interval.safe.shape == (2,) and both.achieved_interval["beta"].safe.shape == (2,)
    assert np.all(both.achieved_interval["beta"].width <= 1e-4)
    assert np.all(both.noise_interval.optimistic < both.noise_interval.safe)
    # the row that chose the grid gets the answer it gets alone
    assert both.noise_multiplier[1] == pytest.approx(one[1].noise_multiplier, rel=1e-12)
    assert both.noise_interval.optimistic[1] == pytest.approx(one[1].noise_interval.optimistic, rel=1e-12)


def test_without_accuracy_nothing_changes():
    r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=Advantage(0.3), grid_step=1e-2,
                             compare_standard=False)
    assert r.accuracy is None and r.noise_interval is None and r.achieved_interval is None
    assert r.grid_step == 1e-2 and round(r.noise_multiplier, 3) == 0.538


def test_met_without_noise_rows_have_exact_brackets():
    # row 1 is the coarse fixture's configuration (default rtol): its kernels serve
    r = dpax.calibrate_dpsgd(sample_rate=[1e-4, P], num_steps=T, target=TARGET, accuracy=1e-2,
                             compare_standard=False)
    assert r.status.tolist() == ["met_without_noise", "calibrated"]
    assert r.noise_interval.safe[0] == r.noise_interval.optimistic[0] == 0.0
    b = r.achieved_interval["beta"]
    assert b.safe[0] == b.optimistic[0] == r.achieved["beta"][0]


@pytest.mark.parametrize("accuracy", [0.0, -1e-3, float("nan")])
def test_a_bad_accuracy_names_the_argument(accuracy):
    with pytest.raises(ValueError, match="accuracy"):
        dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=TARGET, accuracy=accuracy)


def test_grid_step_and_accuracy_together_is_an_error():
    with pytest.raises(ValueError, match="grid_step or accuracy, not both"):
        dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=TARGET, accuracy=1e-2, grid_step=1e-2)


@pytest.mark.parametrize("target", [GDP(1.0), [ErrRates(0.1, 0.5), ErrRates(0.2, 0.3)]])
def test_an_unsupported_target_names_the_supported_ones(target):
    with pytest.raises(ValueError, match="accuracy.*ErrRates.*Advantage.*Epsilon|accuracy.*same quantity"):
        dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=target, accuracy=1e-2)


def test_a_list_of_targets_brackets_each_quantity():
    # the coarse fixture's configuration; Advantage(0.48) (GDP mu 1.287, above TARGET's 1.282: the search starts
    # where the fixture's does, its kernels serve) is met there (0.433), ErrRates decides the noise
    r = dpax.calibrate_dpsgd(sample_rate=P, num_steps=T, target=[TARGET, Advantage(0.48)],
                             accuracy=1e-2, compare_standard=False)
    assert set(r.achieved_interval) == {"beta", "advantage"}
    assert all(iv.width <= 1e-2 for iv in r.achieved_interval.values())


def test_the_memory_budget_stops_the_refinement_with_the_width_reached(monkeypatch):
    monkeypatch.setattr(_grid, "MEMORY_LIMIT_BYTES", 16 * 2**20)  # grid 1e-2 fits, the 1e-3 phase does not
    with pytest.raises(ValueError, match=r"accuracy=1e-09 not reached: width .* at grid_step=.*memory budget"):
        dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=TARGET, accuracy=1e-9, compare_standard=False)


@pytest.mark.slow
def test_quick_start_with_accuracy_holds_the_fixed_grid_answer():
    """The README's quick start: accuracy=1e-4 chooses a grid no finer than 1e-4, and today's
    fixed-grid answer (0.405113 at 1e-4) lies in the interval."""
    r = dpax.calibrate_dpsgd(sample_rate=0.001, num_steps=10_000, target=ErrRates(alpha=0.1, beta=0.5), accuracy=1e-4)
    assert r.grid_step >= 1e-4 and r.achieved_interval["beta"].width <= 1e-4
    assert brackets(r.noise_interval, 0.4051131995905972, 1e-4)
    assert np.isfinite(r.standard_noise_multiplier) and r.standard_noise_multiplier > r.noise_multiplier


@pytest.mark.slow
def test_a_1000x_finer_grid_answer_lies_in_the_interval():
    coarse = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=TARGET, accuracy=1e-2, rtol=RTOL,
                                  compare_standard=False)
    fine = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=TARGET, grid_step=1e-5, rtol=RTOL,
                                compare_standard=False)
    assert brackets(coarse.noise_interval, fine.noise_multiplier, RTOL)
    b = dpax.dpsgd(coarse.noise_multiplier, 0.1, 10, grid_step=1e-5).beta(0.1)
    assert coarse.achieved_interval["beta"].contains(b)
