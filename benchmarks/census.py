"""``python -m benchmarks census [PYTEST ARGS]``: where a test run's time goes, module by module.

Runs the README's test command (``python -m pytest``, the default run: two workers, slow
tests left out; extra arguments are passed on) with this module loaded as a pytest plugin
in every process of the run. Each test's time (setup, call and teardown) and the XLA
compilations made while it ran (JAX's backend-compile events: dpax's kernels and JAX's own
small computations alike; a kernel compiled ahead in a background thread counts for the test
running at the time) are summed per test module. Prints a Markdown table, the modules with
the most time first, with the run's wall time and the share of the tests' time spent
compiling, then the verdicts of benchmarks/goals.toml (the default run's wall time against
its goal, measured only when no pytest arguments are given); writes the same as JSON (default
``benchmarks/results/census.json``, the verdicts under "goals").

Why a census: the default run is bounded by compilation, not by the tests' arithmetic
(each distinct kernel shape costs ~0.3-4 s of XLA's time, and the tests ask for over a
thousand), so a slow module is slow for the kernels it is the first to need. A test moved
to the slow set saves only the kernels no other default test compiles.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import pytest

#: The per-process records of a census are written to this directory (set by the command for
#: the pytest run; the plugin does nothing without it).
DIR_ENV = "DPAX_CENSUS_DIR"
#: JAX's event for one XLA backend compilation (``jax.monitoring`` duration events).
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# -- the plugin: runs inside each pytest process ------------------------------------------


class Census:
    """One process's records: nodeid -> {"seconds", "compile_s", "compiles"}, and the test
    running now (compilations outside tests are booked on ``<outside tests>``: collection,
    session fixtures' teardown)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.current: str | None = None
        self.tests: dict[str, dict] = {}

    def _entry(self, nodeid: str) -> dict:
        return self.tests.setdefault(nodeid, {"seconds": 0.0, "compile_s": 0.0, "compiles": 0})

    def on_event_duration(self, event: str, duration: float, **_kwargs) -> None:
        """JAX's duration listener: a backend compilation, booked on the running test."""
        if event != COMPILE_EVENT:
            return
        with self.lock:
            entry = self._entry(self.current or "<outside tests>")
            entry["compile_s"] += float(duration)
            entry["compiles"] += 1

    def start(self, nodeid: str) -> None:
        """A test begins: compilations from now on are its own."""
        with self.lock:
            self.current = nodeid

    def finish(self, nodeid: str, seconds: float) -> None:
        """A test ended after ``seconds`` (setup, call and teardown)."""
        with self.lock:
            self._entry(nodeid)["seconds"] += seconds
            self.current = None

    def write(self, directory: str, name: str) -> None:
        """The records as JSON in ``directory``, written whole or not at all (a temporary
        file renamed), so that the command never reads half a record."""
        with self.lock:
            text = json.dumps(self.tests)
        path = os.path.join(directory, f"census-{name}-{os.getpid()}.json")
        with open(path + ".part", "w") as fh:
            fh.write(text)
        os.replace(path + ".part", path)


#: this process's census (the plugin's hooks record into it)
_CENSUS = Census()


def pytest_configure(config) -> None:
    if os.environ.get(DIR_ENV):
        import jax.monitoring

        jax.monitoring.register_event_duration_secs_listener(_CENSUS.on_event_duration)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Time the test (setup, call, teardown) and book the compilations meanwhile on it."""
    _CENSUS.start(item.nodeid)
    start = time.perf_counter()
    try:
        return (yield)
    finally:
        _CENSUS.finish(item.nodeid, time.perf_counter() - start)


def pytest_sessionfinish(session, exitstatus) -> None:
    directory = os.environ.get(DIR_ENV)
    if directory and _CENSUS.tests:
        _CENSUS.write(directory, os.environ.get("PYTEST_XDIST_WORKER", "main"))


# -- the command ---------------------------------------------------------------------------


def module_of(nodeid: str) -> str:
    """The test module of a pytest node id (``tests/a.py::test_x[1]`` -> ``tests/a.py``)."""
    return nodeid.split("::", 1)[0]


def summarise(records: list[dict], wall: float) -> dict:
    """Per-module sums (tests, seconds, compile seconds, compilations) of the processes'
    records, modules by seconds (most first), and the run's totals."""
    modules: dict[str, dict] = {}
    for record in records:
        for nodeid, entry in record.items():
            m = modules.setdefault(module_of(nodeid), {"tests": 0, "seconds": 0.0, "compile_s": 0.0, "compiles": 0})
            m["tests"] += not nodeid.startswith("<")
            for key in ("seconds", "compile_s", "compiles"):
                m[key] += entry[key]
    ordered = dict(sorted(modules.items(), key=lambda kv: (-kv[1]["seconds"], -kv[1]["compile_s"], kv[0])))
    seconds = sum(m["seconds"] for m in modules.values())
    compile_s = sum(m["compile_s"] for m in modules.values())
    return {"wall_s": wall, "processes": len(records), "tests": sum(m["tests"] for m in modules.values()),
            "seconds": seconds, "compile_s": compile_s, "compiles": sum(m["compiles"] for m in modules.values()),
            "modules": ordered}


def markdown(summary: dict, top: int = 30) -> str:
    """The census as a Markdown table (the ``top`` modules) under a line of totals."""
    s = summary
    share = s["compile_s"] / s["seconds"] if s["seconds"] else 0.0
    lines = [f"Test run: {s['wall_s']:.0f} s wall, {s['processes']} process(es), {s['tests']} tests; "
             f"{s['seconds']:.0f} s of test time, of which {s['compile_s']:.0f} s ({share:.0%}) in "
             f"{s['compiles']} XLA compilations.", "",
             "| module | tests | seconds | compiling (s) | compilations |", "| --- | --- | --- | --- | --- |"]
    for name, m in list(s["modules"].items())[:top]:
        lines.append(f"| {name} | {m['tests']} | {m['seconds']:.1f} | {m['compile_s']:.1f} | {m['compiles']} |")
    rest = list(s["modules"].values())[top:]
    if rest:
        lines.append(f"| ({len(rest)} more) | {sum(m['tests'] for m in rest)} | {sum(m['seconds'] for m in rest):.1f}"
                     f" | {sum(m['compile_s'] for m in rest):.1f} | {sum(m['compiles'] for m in rest)} |")
    return "\n".join(lines) + "\n"


def run(pytest_args: list[str], cwd: str = ROOT) -> tuple[int, dict]:
    """Run ``python -m pytest`` with this plugin (and ``pytest_args``) in ``cwd``; (pytest's
    exit status, :func:`summarise` of its processes' records)."""
    with tempfile.TemporaryDirectory(prefix="dpax-census-") as directory:
        env = {**os.environ, DIR_ENV: directory,
               "PYTHONPATH": os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)}
        start = time.perf_counter()
        status = subprocess.call([sys.executable, "-m", "pytest", "-p", "benchmarks.census", *pytest_args],
                                 cwd=cwd, env=env)
        wall = time.perf_counter() - start
        records = []
        for name in sorted(os.listdir(directory)):
            if name.endswith(".json"):  # (a ".part" file: a process stopped while writing)
                with open(os.path.join(directory, name)) as fh:
                    records.append(json.load(fh))
    return status, summarise(records, wall)


def lookup_for(summary: dict, default_run: bool):
    """benchmarks/goals.toml lookup: the wall time, for the test-run goal, of a default run
    only (a census given pytest arguments runs something else)."""

    def lookup(goal):
        if goal["metric"] == "test_run_seconds" and default_run:
            return [("default run", summary["wall_s"])]
        return []

    return lookup


def main(args) -> int:
    from benchmarks import goals

    status, summary = run(list(args.pytest_args))
    verdicts = goals.evaluate(goals.load(), lookup_for(summary, default_run=not args.pytest_args))
    summary["goals"] = verdicts
    out = args.out or os.path.join(HERE, "results", "census.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as fh:
        json.dump(summary, fh, indent=1)
    print(markdown(summary))
    print(goals.markdown(verdicts))
    print(f"wrote {out}", file=sys.stderr)
    return status
