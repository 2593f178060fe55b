"""The work each standard public operation does, counted without a clock and pinned: a
change that makes an operation call more kernels, need more kernel shapes or sweep more grid
points (a longer support, more padding, another search round) fails here, whatever the
machine's speed or load and whatever the kernel cache already holds.

Counted with :func:`dpax._engine.work.count_work` (its module docstring says exactly what
each number counts): ``calls`` (kernel executions), ``kernels`` (distinct compiled shapes),
``points`` (elements of the floating arrays of two or more dimensions the kernels read:
padded grid points x rows), ``out_points`` (the same for what they return) and, for a
calibration, ``evaluations``. The single calibration is pinned twice: as a first call (its rounds
share kernel shapes, padding their work) and as the fourth call of a repeated workload (every
size its own: a third of the points, for the shapes the third call compiled; see
:func:`dpax._engine.grid.repeated`). Each measured number must stay within
[pinned / 4, pinned * 1.25]: above, the operation got slower; below, by more than a factor
of four, the counter (or the operation) is probably broken. Faster is good: update the pins.

The pins are the numbers of the tree they were measured on. When the engine changes them on
purpose, regenerate the table with::

    .venv/bin/python tests/engine/test_work.py

which prints the current table as a dict literal to paste over ``PINNED`` below (a failing
test prints it too). The grids are coarse (1e-3 for single answers, 1e-2 for calibrations),
and the mu/regret and batch calibration configurations are those of
tests/compat/test_compat.py (mu and regret at grid 1e-3) and tests/calibration/test_calibration_dpsgd.py
(the table's default rows at grid 1e-2), so in a full run their kernels load from the shared
store.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import dpax
from dpax._engine import analyse, cache, grid
from dpax._engine.work import Work, count_work
from dpax.targets import ErrRates

#: operation -> the work it did on the tree it was pinned on (regenerate: see the docstring)
PINNED = {
    "dpsgd(1.0, 1e-3, 10_000), grid 1e-3": {"calls": 4, "kernels": 4, "points": 27648, "out_points": 31744},
    "  .beta([1e-3, 1e-2, 0.1])": {"calls": 1, "kernels": 1, "points": 10244, "out_points": 4},
    "  .epsilon(1e-5)": {"calls": 1, "kernels": 1, "points": 10241, "out_points": 1},
    "gdp.mu_and_regret(dpsgd(9.4, 16384/50000, 2000)), grid 1e-3": {
        "calls": 6, "kernels": 6, "points": 203522, "out_points": 136450},
    "calibrate_dpsgd(1e-3, 10_000, ErrRates(0.1, 0.5)), grid 1e-2": {
        "calls": 30, "kernels": 10, "points": 1702929, "out_points": 1545233, "evaluations": 14},
    "calibrate_dpsgd(4 unlike rows), grid 1e-2": {
        "calls": 33, "kernels": 13, "points": 2911394, "out_points": 2584994, "evaluations": 25},
    "calibrate_dpsgd(1e-3, 10_000, ErrRates(0.1, 0.5)), grid 1e-2, fourth call": {
        "calls": 35, "kernels": 23, "points": 685072, "out_points": 605200, "evaluations": 14},
}

#: a measured number may exceed its pin by this factor (more is a regression) ...
SLOWER = 1.25
#: ... and fall below it by this one (less: the counter is probably broken)
FASTER = 4.0


def _table_rows():
    """Rows 0, 2, 5 and 11 of tests/calibration/test_calibration_dpsgd.py's dpsgd_table() (its default
    rows: p from 1e-4 to 0.055, T from 193 to 1405, all three alphas, two need no noise)."""
    rng = np.random.default_rng(0)
    n, rows = 64, [0, 2, 5, 11]
    p = 10 ** rng.uniform(-4, -1, n)
    t = np.round(10 ** rng.uniform(2, np.log10(50000), n)).astype(int)
    alpha = rng.choice([0.01, 0.05, 0.1], n)
    tpr = rng.uniform(np.maximum(0.1, alpha + 0.05), 0.5)
    return p[rows], t[rows], ErrRates.from_tpr(alpha[rows], tpr[rows])


#: the operations measured as a repeated workload's fourth call: the first two share kernel
#: shapes, the third compiles its own sizes, the fourth pads nothing (grid.repeated)
REPEATED = ("calibrate_dpsgd(1e-3, 10_000, ErrRates(0.1, 0.5)), grid 1e-2, fourth call",)


def _operations():
    """(name, thunk) in the order they run (the beta and epsilon rows ask the DP-SGD row's
    curve). Each runs as a first call (the sizes of earlier searches forgotten), except the
    REPEATED ones."""
    held = {}

    def dpsgd():
        held["pl"] = dpax.dpsgd(1.0, 1e-3, 10_000, grid_step=1e-3)

    def batch():
        p, t, target = _table_rows()
        return dpax.calibrate_dpsgd(sample_rate=p, num_steps=t, target=target, grid_step=1e-2, compare_standard=False)

    return [
        ("dpsgd(1.0, 1e-3, 10_000), grid 1e-3", dpsgd),
        ("  .beta([1e-3, 1e-2, 0.1])", lambda: held["pl"].beta([1e-3, 1e-2, 0.1])),
        ("  .epsilon(1e-5)", lambda: held["pl"].epsilon(1e-5)),
        ("gdp.mu_and_regret(dpsgd(9.4, 16384/50000, 2000)), grid 1e-3",
         lambda: dpax.gdp.mu_and_regret(dpax.dpsgd(9.4, 16384 / 50000, 2000, grid_step=1e-3))),
        ("calibrate_dpsgd(1e-3, 10_000, ErrRates(0.1, 0.5)), grid 1e-2",
         lambda: dpax.calibrate_dpsgd(sample_rate=1e-3, num_steps=10_000, target=ErrRates(0.1, 0.5), grid_step=1e-2,
                                      compare_standard=False)),
        ("calibrate_dpsgd(4 unlike rows), grid 1e-2", batch),
        (REPEATED[0], lambda: dpax.calibrate_dpsgd(sample_rate=1e-3, num_steps=10_000, target=ErrRates(0.1, 0.5),
                                                   grid_step=1e-2, compare_standard=False)),
    ]


def _counts(work: Work, result=None) -> dict:
    out = {"calls": work.calls, "kernels": work.kernels, "points": work.points, "out_points": work.out_points}
    if hasattr(result, "evaluations"):
        out["evaluations"] = int(np.max(result.evaluations))
    return out


def measure() -> dict:
    """The current work of every operation in PINNED, as a table like PINNED."""
    table = {}
    for name, run in _operations():
        grid.forget_repeats()  # a first call, whatever ran before in this process
        if name in REPEATED:
            run(), run(), run()
        with count_work() as work:
            result = run()
        table[name] = _counts(work, result)
    return table


def check(measured: dict, pinned: dict) -> list[str]:
    """What in ``measured`` is off its pin (more than SLOWER times it, or less than a
    FASTER-th of it); empty when all is well."""
    problems = []
    for name, pins in pinned.items():
        got = measured.get(name, {})
        for what, pin in pins.items():
            value = got.get(what)
            if value is None:
                problems.append(f"{name}: {what} not measured")
            elif value > pin * SLOWER:
                problems.append(f"{name}: {what} {value}, over {SLOWER} x the pinned {pin} (more work)")
            elif value < pin / FASTER:
                problems.append(f"{name}: {what} {value}, under 1/{FASTER:g} of the pinned {pin} "
                                f"(a broken counter? if the operation got faster, update PINNED)")
    return problems


def _literal(table: dict) -> str:
    """``table`` as a dict literal, one operation a line."""
    return "\n".join(["PINNED = {", *(f"    {name!r}: {counts!r}," for name, counts in table.items()), "}"])


@pytest.fixture(scope="module")
def measured():
    return measure()


def test_work_of_public_operations_is_pinned(measured):
    problems = check(measured, PINNED)
    assert not problems, (
        "\n".join(problems) + "\n\nmeasured now (paste over PINNED if intended):\n" + _literal(measured))


def test_a_second_run_counts_the_same_work_and_compiles_nothing(measured):
    """The counts do not depend on what the cache holds (the DP-SGD rows again, every
    kernel now in memory)."""
    again = {}
    for name, run in _operations()[:3]:
        with count_work() as work:
            result = run()
        again[name] = _counts(work, result)
        assert work.compiled == work.loaded == 0, name
    assert again == {name: measured[name] for name in again}


def test_doubled_work_is_caught(measured, monkeypatch):
    """An epsilon that calls its kernel twice fails the check against the single call's
    counts, and so does a table whose points doubled."""
    pl = dpax.dpsgd(1.0, 1e-3, 10_000, grid_step=1e-3)
    once = analyse.epsilon_kernel

    @functools.wraps(once)
    def twice(*args, **kwargs):
        once(*args, **kwargs)
        return once(*args, **kwargs)

    monkeypatch.setattr(analyse, "epsilon_kernel", twice)
    with count_work() as work:
        pl.epsilon(1e-5)
    name = "  .epsilon(1e-5)"
    doubled = {name: _counts(work)}
    assert doubled[name]["calls"] == 2 * measured[name]["calls"]
    assert doubled[name]["points"] == 2 * measured[name]["points"]
    problems = check(doubled, {name: measured[name]})
    assert any("calls" in p and "more work" in p for p in problems)
    assert any("points" in p and "more work" in p for p in problems)
    assert not any("kernels" in p for p in problems)  # the same shapes

    table = {k: dict(v) for k, v in measured.items()}
    assert check(table, measured) == []
    table["calibrate_dpsgd(4 unlike rows), grid 1e-2"]["points"] *= 2
    assert check(table, measured) == [
        f"calibrate_dpsgd(4 unlike rows), grid 1e-2: points "
        f"{table['calibrate_dpsgd(4 unlike rows), grid 1e-2']['points']}, "
        f"over {SLOWER} x the pinned {measured['calibrate_dpsgd(4 unlike rows), grid 1e-2']['points']} (more work)"]
    table["  .beta([1e-3, 1e-2, 0.1])"]["points"] = 0  # a counter that stopped counting
    assert any("under" in p for p in check(table, measured))


# -- the counter itself ---------------------------------------------------------------


@functools.partial(cache.kernel, name="test_work_double")
@jax.jit
def _double(x, y):
    return x * 2, jnp.sum(y)


def test_the_counter_counts_calls_shapes_and_points():
    a, b = np.ones((3, 8)), np.ones((3, 16))
    ints, flat = np.ones((3, 8), np.int32), np.ones(5)
    with count_work() as outer:
        with count_work() as work:
            _double(a, flat)
            _double(a + 1, flat)  # the same shapes: one kernel
        assert (work.calls, work.kernels, work.points, work.out_points) == (2, 1, 2 * 24, 2 * 24)
        _double(b, flat)  # another length: another kernel; rows x length points
        _double(ints, flat)  # integer arrays are not points (but another kernel)
    assert (work.calls, work.kernels, work.points) == (2, 1, 48)  # the inner block had ended
    assert (outer.calls, outer.kernels, outer.points, outer.out_points) == (4, 3, 2 * 24 + 48, 2 * 24 + 48)
    assert outer.by_kernel["test_work_double"].calls == 4 and outer.traced == 0
    assert outer.as_dict()["by_kernel"]["test_work_double"]["kernels"] == 3
    assert cache._recorders == []


def test_the_counter_counts_the_plain_jit_path_and_keeps_traced_calls_apart(monkeypatch):
    a = np.ones((2, 4))
    with count_work() as work:
        jax.jit(lambda x: _double(x, x)[0])(a)  # traced inside another jit: not an execution
    assert (work.calls, work.kernels, work.points, work.traced) == (0, 0, 0, 1)
    monkeypatch.setattr(cache, "_single_default_device", lambda leaves: False)  # as if sharded
    with count_work() as work:
        _double(a, a)
        _double(a, a)
    assert (work.calls, work.kernels, work.points, work.out_points, work.traced) == (2, 1, 2 * 16, 2 * 8, 0)
    assert work.compiled == 0  # plain jit: the cache compiled nothing


def test_the_stats_deltas():
    x = np.ones((7, 3))  # a shape no other test uses
    cache.clear(memory_only=True)
    with count_work() as work:
        _double(x, np.ones(2))
    assert work.compiled + work.loaded == 1 and work.kernels == 1
    with count_work() as work:
        _double(x, np.ones(2))
    assert (work.compiled, work.loaded, work.calls) == (0, 0, 1)


if __name__ == "__main__":
    print(_literal(measure()))


# -- repeated workloads ---------------------------------------------------------------


def test_sizes_recur_only_for_the_same_workload(monkeypatch):
    """The third call of a workload gives every size its own length; another workload, or a
    block without one, shares as a first call; clear_kernel_cache forgets."""
    grid.forget_repeats()

    def lengths(**kw):
        with grid.shared_lengths(**kw):
            return grid.padded_length(3000, "construct"), grid.padded_length(1500, "construct")

    first = lengths(workload="a")
    assert first == (3072, 3072)  # the second size shares the first's kernel shape
    assert lengths(workload="a") == first  # a second call: the same shapes, nothing new
    assert lengths(workload="a") == (3072, 1536)  # a third: its own
    assert lengths(workload="b") == first and lengths() == first
    monkeypatch.setattr(cache, "_table", type(cache._table)())  # clear only an empty table
    cache.clear(memory_only=True)
    assert lengths(workload="a") == first and lengths(workload="a") == first


def test_a_repeated_calibration_gives_the_same_answer_with_less_work():
    """The fourth call of the same calibration pads nothing and answers the same numbers
    (the second compiles nothing, the third its own sizes); a different configuration after
    it is a first call (shares shapes as the first did)."""
    grid.forget_repeats()
    call = functools.partial(dpax.calibrate_dpsgd, sample_rate=1e-3, target=ErrRates(0.1, 0.5), grid_step=1e-2,
                             compare_standard=False)
    works, answers = [], []
    for steps in (10_000, 10_000, 10_000, 10_000, 10_001):
        with count_work() as work:
            r = call(num_steps=steps)
        works.append(work)
        answers.append((r.noise_multiplier, r.noise_multiplier_failing, r.achieved["beta"]))
    assert answers[1] == answers[0] and answers[2] == answers[0] and answers[3] == answers[0]
    assert works[1].points == works[0].points and works[1].compiled == works[1].loaded == 0
    assert works[3].points < 0.6 * works[0].points and works[3].compiled == works[3].loaded == 0
    assert works[4].points > 0.9 * works[0].points  # not a repeat: shared, padded shapes
