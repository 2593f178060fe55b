"""Fixtures shared by the tests of the ``dpax`` command line (tests/cli/)."""

from __future__ import annotations

import pytest


@pytest.fixture
def _cache_dir(tmp_path, monkeypatch):
    """Keep the kernel cache of every test run out of the user's home."""
    path = tmp_path / "jax-cache"
    monkeypatch.setenv("DPAX_CACHE_DIR", str(path))
    return path
