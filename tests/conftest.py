"""Test-session hygiene shared by every test module.

XLA:CPU maps each compiled executable's code into memory; a single process that compiles
the few thousand kernel shapes of the whole suite runs past the kernel's limit on memory
mappings (vm.max_map_count, 65530 by default) and segfaults inside the compiler. Dropping
JAX's compiled-function caches after each test module keeps the count bounded; later
modules recompile what they need (a few seconds in all).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import jax
import pytest

#: Seconds each of the heaviest test modules took in a default run (2-core CPU, rounded; a
#: module not listed counts 0.15 s a test). Only the order of the work matters: pytest-xdist's
#: loadfile hands out modules most tests first, which left heavy modules of few tests (a
#: two-process run, the CLI subprocesses) for last while the other worker sat idle; the
#: heaviest go first instead, and the many light modules fill in at the end.
HEAVY_MODULES = {
    "tests/test_docs.py": 100,
    "tests/test_bounds_interval.py": 70,
    "tests/gdp/test_gdp_mu_regret.py": 55,
    "tests/test_fuzz.py": 50,
    "tests/test_gaussian_exact.py": 40,
    "tests/calibration/test_accuracy.py": 35,
    "tests/engine/test_memory.py": 30,
    "tests/compat/dp_accounting/test_pld_privacy_accountant.py": 30,
    "tests/distributed/test_distributed_calibration.py": 25,
    "tests/engine/test_cache.py": 25,
    "tests/engine/test_composition.py": 25,
    "tests/test_readme.py": 25,
    "tests/engine/test_sharding.py": 20,
    "tests/mechanisms/test_gaussian_family.py": 20,
    "tests/calibration/test_calibration_dpsgd.py": 20,
    "tests/engine/test_branch_and_bound.py": 18,
    "tests/engine/test_companion_tails.py": 18,
    "tests/test_interop.py": 16,
    "tests/test_benchmarks.py": 15,
    "tests/test_plot.py": 15,
    "tests/test_oracles.py": 15,
    "tests/test_compile_counts.py": 13,
    "tests/test_notebooks.py": 12,
    "tests/test_examples.py": 12,
    "tests/events/test_dp_event_accountant.py": 12,
    "tests/cli/test_curve_command.py": 12,
    "tests/privacy_loss/test_value.py": 10,
    "tests/engine/test_kernel_store.py": 10,
    "tests/sweep/test_evaluate.py": 10,
    "tests/privacy_loss/test_tails.py": 9,
    "tests/engine/test_work.py": 8,
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile with the heaviest modules handed out first (HEAVY_MODULES)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class HeaviestModulesFirst(LoadFileScheduling):
        _ordered = False

        def _assign_work_unit(self, node):
            if not self._ordered:  # the first assignment: the work queue is complete
                self._ordered = True
                units = sorted(self.workqueue.items(),
                               key=lambda unit: -HEAVY_MODULES.get(unit[0], 0.15 * len(unit[1])))
                self.workqueue.clear()
                self.workqueue.update(units)
            super()._assign_work_unit(node)

    return HeaviestModulesFirst(config, log)

# dpax's kernel cache (on by default) lives in a private directory for the test run, made
# and removed by the main pytest process, shared by its pytest-xdist workers and by the
# subprocesses the tests start (the CLI)
if os.environ.get("PYTEST_XDIST_WORKER") and os.path.isdir(os.environ.get("DPAX_TEST_KERNELS", "")):
    _KERNELS = os.environ["DPAX_TEST_KERNELS"]  # the main process's
else:
    _KERNELS = tempfile.mkdtemp(prefix="dpax-test-kernels-")
    os.environ["DPAX_TEST_KERNELS"] = _KERNELS
    atexit.register(shutil.rmtree, _KERNELS, True)
os.environ["DPAX_CACHE_DIR"] = _KERNELS
os.environ.pop("DPAX_CACHE", None)


@pytest.fixture(autouse=True, scope="module")
def _drop_compiled_kernels_after_module():
    yield
    jax.clear_caches()
    from dpax._engine import cache

    cache.clear(memory_only=True)


@pytest.fixture(autouse=True)
def _the_runs_kernel_store():
    """Every test starts and ends on the test run's shared store. dpax resolves its store from
    DPAX_CACHE_DIR once, on first use: a test that points it elsewhere (a monkeypatched
    DPAX_CACHE_DIR read by a first kernel call, ``cache.follow_environment()``, a store of its
    own) would otherwise leave this worker compiling into that test's temporary directory for
    the rest of the run, sharing nothing with the other worker and the subprocesses.
    Every test also starts with no repeated calibration behind it (grid.forget_repeats):
    whatever ran before in this worker, its calls are first calls, as in a fresh process."""
    from dpax._engine import grid

    grid.forget_repeats()
    _use_the_runs_store()
    yield
    _use_the_runs_store()


def _use_the_runs_store():
    from dpax._engine import cache

    if cache.directory() != _KERNELS:
        cache.enable(_KERNELS)
