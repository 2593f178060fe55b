"""Test-session hygiene shared by every test module.

XLA:CPU maps each compiled executable's code into memory; a single process that compiles
the few thousand kernel shapes of the whole suite runs past the kernel's limit on memory
mappings (vm.max_map_count, 65530 by default) and segfaults inside the compiler. Dropping
JAX's compiled-function caches after each test module keeps the count bounded; later
modules recompile what they need (a few seconds in all).
"""

from __future__ import annotations

import jax
import pytest


@pytest.fixture(autouse=True, scope="module")
def _drop_compiled_kernels_after_module():
    yield
    jax.clear_caches()


@pytest.fixture(autouse=True, scope="session")
def _persistent_compilation_cache(tmp_path_factory):
    """Keep every compiled kernel in an on-disk cache for the session: the modules above
    drop their in-memory caches, and many recompile the same kernel shapes (about half
    of the suite's time was XLA compilation), which then load from disk instead."""
    keys = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
            "jax_persistent_cache_min_entry_size_bytes")
    before = {k: getattr(jax.config, k) for k in keys}
    jax.config.update("jax_compilation_cache_dir", str(tmp_path_factory.mktemp("xla_cache")))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    yield
    for k, v in before.items():
        jax.config.update(k, v)
