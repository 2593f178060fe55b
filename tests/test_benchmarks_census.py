"""``python -m benchmarks census``: the per-module sums and their table on synthetic records,
the booking of JAX's compile events on the test that runs, and one tiny pytest run in a
child process the way the command runs the test suite."""

from __future__ import annotations

import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import census  # noqa: E402

RECORDS = [
    {"tests/a.py::test_one": {"seconds": 2.0, "compile_s": 1.5, "compiles": 3},
     "tests/a.py::test_two": {"seconds": 1.0, "compile_s": 0.0, "compiles": 0},
     "<outside tests>": {"seconds": 0.0, "compile_s": 0.3, "compiles": 1}},
    {"tests/b.py::test_three[x]": {"seconds": 4.0, "compile_s": 3.0, "compiles": 2},
     "tests/a.py::test_four": {"seconds": 0.5, "compile_s": 0.5, "compiles": 1}},
]


def test_modules_are_summed_over_processes_and_ordered_by_time():
    s = census.summarise(RECORDS, wall=5.0)
    assert list(s["modules"]) == ["tests/b.py", "tests/a.py", "<outside tests>"]
    a = s["modules"]["tests/a.py"]
    assert (a["tests"], a["seconds"], a["compile_s"], a["compiles"]) == (3, 3.5, 2.0, 4)
    assert s["modules"]["<outside tests>"]["tests"] == 0  # compilations outside tests are not a test
    assert (s["processes"], s["tests"], s["seconds"], s["compiles"]) == (2, 4, 7.5, 7)
    assert s["compile_s"] == pytest.approx(5.3)

    table = census.markdown(s, top=1)
    assert "8 s of test time, of which 5 s (71%) in 7 XLA compilations" in table
    assert "| tests/b.py | 1 | 4.0 | 3.0 | 2 |" in table
    assert "| (2 more) | 3 | 3.5 | 2.3 | 5 |" in table  # the rest summed in one row


def test_compile_events_are_booked_on_the_running_test(tmp_path):
    c = census.Census()
    c.start("tests/c.py::test_it")
    c.on_event_duration(census.COMPILE_EVENT, 0.5, fun_name="f")
    c.on_event_duration(census.COMPILE_EVENT, 0.25)
    c.on_event_duration("/jax/some/other_event", 9.0)  # not a compilation: ignored
    c.finish("tests/c.py::test_it", 2.0)
    c.on_event_duration(census.COMPILE_EVENT, 1.0)  # between tests
    want = {"tests/c.py::test_it": {"seconds": 2.0, "compile_s": 0.75, "compiles": 2},
            "<outside tests>": {"seconds": 0.0, "compile_s": 1.0, "compiles": 1}}
    assert c.tests == want
    c.write(str(tmp_path), "gw9")
    (written,) = os.listdir(tmp_path)  # renamed whole: no ".part" left
    assert written.startswith("census-gw9-") and written.endswith(".json")
    assert census.summarise([json.loads((tmp_path / written).read_text())], 3.0)["compiles"] == 3


def test_a_census_of_a_small_run(tmp_path):
    """The command's child run: the plugin loads in the child, books a jitted function's
    compilation on its test and writes its record; pytest's exit status comes back."""
    pytest.importorskip("jax")
    (tmp_path / "test_tiny.py").write_text(
        "import jax\n\n\ndef test_compiles():\n    assert float(jax.jit(lambda x: x * 3.0)(2.0)) == 6.0\n\n\n"
        "def test_fails():\n    assert False\n")
    status, s = census.run([str(tmp_path), "-q", "-p", "no:cacheprovider"], cwd=str(tmp_path))
    assert status == 1  # one test failed: pytest's status
    (module,) = s["modules"]
    assert module.endswith("test_tiny.py")
    m = s["modules"][module]
    assert m["tests"] == 2 and m["compiles"] >= 1 and 0 < m["compile_s"] <= m["seconds"]
    assert s["processes"] == 1 and s["wall_s"] >= m["seconds"]


def test_only_census_passes_unknown_arguments_on():
    from benchmarks.__main__ import main

    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "HEAD", "--no-such-option"])
    assert exit_info.value.code == 2


def test_the_default_run_is_held_to_its_goal_and_a_subset_is_not_measured():
    from benchmarks import goals

    (goal,) = [g for g in goals.load() if g["metric"] == "test_run_seconds"]
    assert goal["section"] == "tests" and goal["max"] == 360
    summary = {"wall_s": 420.0}
    (verdict,) = [v for v in goals.evaluate([goal], census.lookup_for(summary, default_run=True))]
    assert verdict["status"] == "FAIL" and verdict["line"].endswith("default run: 420 s")
    (verdict,) = goals.evaluate([goal], census.lookup_for({"wall_s": 300.0}, default_run=True))
    assert verdict["status"] == "ok"
    (verdict,) = goals.evaluate([goal], census.lookup_for(summary, default_run=False))
    assert verdict["status"] == "not measured"
