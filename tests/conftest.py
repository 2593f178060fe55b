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

# dpax's kernel cache (on by default) lives in a private directory for the test run, shared
# by the pytest-xdist workers and the subprocesses the tests start (the CLI), and removed by
# the process that made it
_RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID")
if _RUN:  # a worker: the directory of this run, whichever worker comes first
    _KERNELS = os.path.join(tempfile.gettempdir(), f"dpax-test-kernels-{os.getuid() if hasattr(os, 'getuid') else 0}-{_RUN}")
    os.makedirs(_KERNELS, mode=0o700, exist_ok=True)
    if os.environ.get("PYTEST_XDIST_WORKER") == "gw0":
        atexit.register(shutil.rmtree, _KERNELS, True)
else:
    _KERNELS = tempfile.mkdtemp(prefix="dpax-test-kernels-")
    atexit.register(shutil.rmtree, _KERNELS, True)
os.environ["DPAX_CACHE_DIR"] = _KERNELS
os.environ.pop("DPAX_CACHE", None)


@pytest.fixture(autouse=True, scope="module")
def _drop_compiled_kernels_after_module():
    yield
    jax.clear_caches()
    from dpax._engine import cache

    cache.clear(memory_only=True)
