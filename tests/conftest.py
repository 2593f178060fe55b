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
