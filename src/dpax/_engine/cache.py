"""Compiled kernels kept on disk for the command line's first call.

JAX's persistent compilation cache removes XLA compile time, but a new process still traces
and lowers every kernel (a few hundred ms) before it can look the executable up. When the
``dpax`` command enables this cache, each kernel call is keyed by the kernel, the shapes and
dtypes of its arguments, its static arguments, the JAX version, the device and a hash of
dpax's own source; the compiled executable is serialised under the cache directory on first
use and loaded directly by later processes, skipping tracing and lowering altogether.

The library never enables it on import: ``enable(path)`` is called by the command line (and
by anyone who wants it). The files are the user's own cache (pickled tree structures from
JAX's ``serialize_executable``), never data from elsewhere.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import tempfile

import jax
import numpy as np

_state = {"dir": None}
_loaded: dict[str, object] = {}


def enable(path: str | None) -> None:
    """Keep compiled kernels under ``path`` (None: off, the default)."""
    _state["dir"] = path
    _loaded.clear()


def enabled() -> bool:
    """Whether kernels are served from the on-disk store (see :func:`enable`)."""
    return _state["dir"] is not None


@functools.lru_cache(maxsize=1)
def _fingerprint() -> str:
    h = hashlib.sha256()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the dpax package
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as fh:
                    h.update(os.path.relpath(os.path.join(folder, name), root).encode() + fh.read())
    device = jax.devices()[0]
    h.update(f"{jax.__version__}|{device.platform}|{device.device_kind}".encode())
    return h.hexdigest()


def _leaf_signature(leaf) -> str:
    dtype = getattr(leaf, "dtype", None)
    if dtype is None:  # Python scalar: weakly typed
        return f"py:{type(leaf).__name__}"
    weak = getattr(leaf, "weak_type", False)
    return f"{np.shape(leaf)}:{dtype}:{int(bool(weak))}"


def kernel(jitted, name: str):
    """Wrap a jitted kernel: positional arguments are traced, keyword arguments static."""

    @functools.wraps(jitted)
    def call(*args, **static):
        directory = _state["dir"]
        if directory is None:
            return jitted(*args, **static)
        leaves, tree = jax.tree_util.tree_flatten(args)
        key = hashlib.sha256(
            repr((name, _fingerprint(), str(tree), [_leaf_signature(x) for x in leaves],
                  sorted(static.items()), bool(jax.config.jax_enable_x64))).encode()
        ).hexdigest()
        compiled = _loaded.get(key)
        if compiled is None:
            compiled = _load(directory, key)
            if compiled is None:
                compiled = jitted.lower(*args, **static).compile()
                _store(directory, key, compiled)
            _loaded[key] = compiled
        return compiled(*args)

    return call


def _load(directory, key):
    from jax.experimental import serialize_executable

    path = os.path.join(directory, key + ".bin")
    try:
        with open(path, "rb") as fh:
            payload = pickle.load(fh)
        return serialize_executable.deserialize_and_load(*payload)
    except Exception:  # missing, stale or unreadable: compile again
        return None


def _store(directory, key, compiled) -> None:
    from jax.experimental import serialize_executable

    try:
        os.makedirs(directory, exist_ok=True)
        payload = serialize_executable.serialize(compiled)
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(payload, fh)
        os.replace(tmp, os.path.join(directory, key + ".bin"))
    except Exception:  # a cache that cannot be written only costs time
        pass
