"""Fixtures of the kernel cache's tests (test_cache.py, test_kernel_store.py): a private store
for a test, and the entries of two tiny workloads compiled once for the session."""

import pytest
from kernel_cache_helpers import _numbers, _small

from dpax._engine import cache


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "kernels"
    assert cache.enable(str(path)) == str(path)
    yield path
    cache.follow_environment()


@pytest.fixture(scope="session")
def seeds(tmp_path_factory):
    """_numbers() and _small() compiled by XLA once for the session (each into an empty store
    of its own, so nothing is loaded), with the entries those compilations wrote. Tests of
    test_cache.py and test_kernel_store.py copy the entries into their own store (``_seed``)
    instead of compiling the kernels again."""
    out = {}
    for name, compute in (("numbers", _numbers), ("small", _small)):
        path = tmp_path_factory.mktemp(name)
        assert cache.enable(str(path)) == str(path)
        try:
            before = dict(cache.stats)
            numbers = compute()
            counts = {k: cache.stats[k] - before.get(k, 0) for k in cache.stats}
        finally:
            cache.follow_environment()
        assert (counts.get("loaded", 0) == 0 and counts["compiled"] >= 3
                and counts.get("stored", 0) == counts["compiled"])
        out[name] = (path, numbers)
    return out
