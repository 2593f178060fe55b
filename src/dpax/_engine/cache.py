"""Compiled kernels: a bounded in-memory table and a checked on-disk store.

Every dpax kernel goes through :func:`kernel`. A call is keyed by the kernel, the shapes
and dtypes of its arguments and its static arguments; the executable for a key is compiled
once (``jit(...).lower(...).compile()``) and kept in a table of at most
:data:`MAX_IN_MEMORY` executables, least recently used dropped first, so a long-lived
process (an accountant inside a training job, a notebook, a sweep) stays bounded.

On disk (default on; ``$DPAX_CACHE_DIR``, else ``$XDG_CACHE_HOME/dpax`` or
``~/.cache/dpax``; off with ``DPAX_CACHE=0`` or :func:`disable`) each executable is kept in
the checked store of :mod:`dpax._engine.kernel_store`, so that a new process loads it
instead of tracing, lowering and compiling; nothing read from it is trusted.

Importing dpax changes no JAX setting; the store does not use JAX's own persistent cache.

A pipeline that knows the shapes of a later stage before it runs (DP-SGD: the cells' split
and the composition's Chernoff window, known once the single step's support is) asks for its
kernels ahead (:func:`compile_ahead_of`, a wrapped kernel's ``.ahead``): a background thread
compiles or loads them while the caller's thread compiles and runs the stages before, and
the first call waits for that executable instead of making its own.

On CPU each kernel says whether XLA compiles it with its MLIR fusion emitters (XLA's
default) or its classic LLVM emitters (``fusion_emitters=False``, passed to that one
compilation as ``xla_cpu_use_fusion_emitters``). The classic emitters compile a kernel 20-35%
faster; the fusion emitters' code is faster only where a kernel's time goes to elementwise
transcendental or complex arithmetic (the construction's CDFs: 10-20% faster), or where a
loop's result is written over its operand (a product of spectra: 1.5x). So the query and
mu/regret kernels, the cells' split and a self-composition of moderate size, which run as
fast either way, compile with the classic emitters (benchmarks/README.md, "Compile
options"); a kernel may choose per call, from its shapes and static arguments.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import os
import threading
from collections.abc import Callable
from typing import Any, cast

import jax
import numpy as np

from . import grid as _grid
from . import kernel_store as _store
from .kernel_store import stats  # noqa: F401  (cache.stats: the counters, read by tests and benchmarks)

#: XLA:CPU generates a kernel's code in this many parallel parts (its default is 32), each
#: loaded as an object of three memory mappings (code, constants, data). On 2 cores 2 to 4
#: parts compile as fast as 32 (the kernels of DP-SGD's beta and mu: 2.0 s against 2.2 s)
#: and run as fast, with half the mappings (those kernels: 26 a kernel instead of 55; a small
#: DP-SGD's construction, composition and beta: 47 instead of 94), so that
#: :data:`MAX_IN_MEMORY` executables fit the process's mappings.
CODEGEN_SPLIT = max(2, min(8, os.cpu_count() or 2))
#: Executables kept loaded in memory (least recently used dropped first). A loaded kernel
#: takes about 0.2 MiB (its serialised form ~0.16 MiB) and, in 2 parts, 25-50 of the
#: process's memory mappings (in XLA's 32, 55-100: 1,024 kernels took a process to 63,500
#: mappings, next to Linux's default limit of 65,530 (vm.max_map_count), past which LLVM
#: cannot map the next compilation and the process crashed); 640 stay under ~32,000. A
#: calibration repeated on 64 unlike DP-SGD rows uses 316 kernels once it compiles its own
#: shapes (a row-by-row loop of eleven, 239); a table smaller than a workload's kernels
#: reloads them from disk on every call (5-10 ms each: at 256, that calibration took ~20 s a
#: call).
MAX_IN_MEMORY = 640

_lock = threading.RLock()
_table: collections.OrderedDict[str, Any] = collections.OrderedDict()
_state: dict[str, Any] = {"dir": None, "resolved": False}
#: Work recorders (:func:`dpax._engine.work.count_work`): while any is active, every kernel
#: call reports ``recorder.record(name, key, tree, leaves, static, out)`` to each once it
#: returned (key None on the plain-jit path). Process-wide; changed under _lock.
_recorders: list = []


# -- where the store lives ---------------------------------------------------------------


def default_dir() -> str:
    """``$DPAX_CACHE_DIR``, else ``$XDG_CACHE_HOME/dpax``, else ``~/.cache/dpax``."""
    path = os.environ.get("DPAX_CACHE_DIR")
    if not path:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = os.path.join(base, "dpax")
    return os.path.abspath(os.path.expanduser(path))


def _env_disabled() -> bool:
    return os.environ.get("DPAX_CACHE", "1").strip().lower() in ("0", "false", "no", "off")


def enable(path: str | None = None) -> str | None:
    """Keep compiled kernels on disk under ``path`` (default :func:`default_dir`).

    Returns the directory in use, or None (with a warning) when it cannot be created or is
    not safe to use (owned by another user, writable by group or others).
    """
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a directory path (str or os.PathLike) or None, got {type(path).__name__}")
    with _lock:
        _table.clear()
        _state["dir"] = _store.checked_dir(os.path.abspath(os.path.expanduser(os.fspath(path or default_dir()))))
        _state["resolved"] = True
        return _state["dir"]


def disable() -> None:
    """Compile in memory only: nothing is read from or written to disk."""
    with _lock:
        _table.clear()
        _state["dir"] = None
        _state["resolved"] = True


def directory() -> str | None:
    """The directory compiled kernels are kept in, or None when the store is off.

    On first use this follows the environment: off when ``DPAX_CACHE=0``, else
    :func:`default_dir`.
    """
    with _lock:
        if not _state["resolved"]:
            _state["resolved"] = True
            _state["dir"] = None if _env_disabled() else _store.checked_dir(default_dir())
        return _state["dir"]


@contextlib.contextmanager
def suspended():
    """Keep the body off the disk (the store's setting is restored afterwards)."""
    with _lock:
        saved = _state["dir"], _state["resolved"]
        _state["dir"], _state["resolved"] = None, True
    try:
        yield
    finally:
        with _lock:
            _state["dir"], _state["resolved"] = saved


def follow_environment() -> None:
    """Forget :func:`enable` / :func:`disable`: the next kernel call reads ``DPAX_CACHE`` and
    ``DPAX_CACHE_DIR`` again."""
    with _lock:
        _table.clear()
        _state["dir"], _state["resolved"] = None, False


def enabled() -> bool:
    """Whether compiled kernels are read from and written to disk."""
    return directory() is not None


def clear(memory_only: bool = False) -> int:
    """Drop the executables held in memory and (unless ``memory_only``) delete the files of
    the store in use; returns the number of files deleted. The calls of earlier
    workloads are forgotten too (:func:`dpax._engine.grid.forget_repeats`): the next
    calibration shares shapes as a first call does."""
    if not isinstance(memory_only, (bool, np.bool_)):  # "no" would count as true and keep the store
        raise TypeError(f"memory_only must be True or False, got {type(memory_only).__name__} {memory_only!r:.40}")
    with _lock:
        _table.clear()
        path = _state["dir"]
    _grid.forget_repeats()
    if memory_only or path is None:
        return 0
    removed = 0
    for name in os.listdir(path):
        if name.endswith(_store.SUFFIX) or name.endswith(".tmp"):
            try:
                os.unlink(os.path.join(path, name))
                removed += 1
            except OSError:
                pass
    return removed


# -- the wrapper ---------------------------------------------------------------------------


def _single_default_device(leaves) -> bool:
    device = None
    for leaf in leaves:
        if isinstance(leaf, jax.core.Tracer):
            return False
        if isinstance(leaf, jax.Array):
            devices = leaf.sharding.device_set
            if len(devices) != 1:
                return False
            if device is None:
                device = jax.local_devices()[0]
            if next(iter(devices)) != device:
                return False
    return True


def compile_options(fusion_emitters: bool) -> dict[str, Any]:
    """XLA options of one compilation on the default backend: on CPU, code generated in
    :data:`CODEGEN_SPLIT` parts, and the fusion emitters off unless ``fusion_emitters`` (see
    the module's docstring); elsewhere none."""
    if jax.default_backend() != "cpu":
        return {}
    options: dict[str, Any] = {"xla_cpu_parallel_codegen_split_count": CODEGEN_SPLIT}
    if not fusion_emitters:
        options["xla_cpu_use_fusion_emitters"] = False
    return options


def kernel(jitted, name: str, fusion_emitters: bool | Callable[..., bool] = True):
    """Wrap a jitted kernel (positional arguments traced, keyword arguments static) so that
    its executables come from the in-memory table, then the on-disk store, then XLA.

    ``fusion_emitters=False``: compile it on CPU with XLA's classic emitters, for a kernel
    whose run time they do not lengthen (:func:`compile_options`); a function of the call's
    ``(*args, **static)`` chooses per call (a choice that follows from the shapes, structure
    and static arguments, which key the executable)."""

    def emitters(args, static) -> bool:
        return bool(fusion_emitters(*args, **static)) if callable(fusion_emitters) else fusion_emitters

    @functools.wraps(jitted)
    def call(*args, **static):
        leaves, tree = jax.tree_util.tree_flatten(args)
        if not _single_default_device(leaves):  # traced, sharded or placed elsewhere: plain jit
            out = jitted(*args, **static)
            if _recorders:
                _report(name, None, tree, leaves, static, out)
            return out
        key = _memory_key(name, tree, leaves, static)
        with _lock:
            entry = _table.get(key)
            if entry is not None:
                _table.move_to_end(key)
            # (in a forked child the parent's work ahead never finishes: not waited for)
            ahead = _ahead.get(key) if entry is None and _pool.get("pid") == os.getpid() else None
        # being compiled (or loaded) ahead: wait for it, unless it is still queued behind other
        # work ahead (then compiled here, while the background thread finishes that)
        if ahead is not None and not ahead.cancel():
            entry = _ahead_result(key, ahead)
        if entry is None:
            entry = _obtain(jitted, key, args, static, _store.signature(name, tree, leaves, static), leaves,
                            emitters(args, static))
        if isinstance(entry, _store.Stored):
            try:
                out = entry(leaves)
            except Exception as exc:  # noqa: BLE001 - only an entry XLA refuses to run is rebuilt
                if not _store.refused_by_xla(exc):
                    raise
                out = _rebuild(jitted, key, args, static, _store.signature(name, tree, leaves, static), entry,
                               exc, emitters(args, static))(*args)
        else:
            out = entry(*args)
        if _recorders:
            _report(name, _store.key_of(name, tree, leaves, static), tree, leaves, static, out)
        return out

    def ahead(*args, **static) -> None:
        compile_ahead_of(jitted, name, emitters(args, static), args, static)

    cast(Any, call).jitted = jitted  # function attributes functools.wraps's type does not declare
    cast(Any, call).ahead = ahead
    return call


# -- compiling ahead -----------------------------------------------------------------------

#: Background threads that compile (or load from the store) kernels ahead of their first call
#: (:func:`compile_ahead_of`): one per spare core, at most 3. XLA compiles a kernel on one
#: core, so while the caller's thread compiles (or runs) one stage of a pipeline, another
#: stage whose argument shapes are already known compiles beside it.
AHEAD_WORKERS = max(0, min(3, (os.cpu_count() or 1) - 1))
_ahead: dict[tuple, Any] = {}
_pool: dict[str, Any] = {}


def compile_ahead_of(jitted, name, fusion_emitters, args, static) -> None:
    """Start obtaining the executable of ``name(*args, **static)`` (``args``: arrays or
    :class:`jax.ShapeDtypeStruct` leaves of the shapes, dtypes and weak types the call will
    have) in a background thread, unless it is in memory or already under way; its first
    call then waits for it instead of compiling, or, where the thread has not begun it
    (busy with earlier work ahead), takes it back and compiles it itself. Nothing where no
    core is spare (:data:`AHEAD_WORKERS`), off a single default device, or while work is recorded (the
    recorders count each call's own compilations). The executable is the one the call would
    compile itself, so answers do not depend on whether it came ahead. A failure in the
    background is left for the call to meet (it compiles again, and raises as it would)."""
    if not AHEAD_WORKERS or _recorders or len(jax.local_devices()) != 1:
        return
    leaves, tree = jax.tree_util.tree_flatten(args)
    key = _memory_key(name, tree, leaves, static)
    with _lock:
        if key in _table or key in _ahead:
            return
        pool = _pool.get("pool")
        if pool is None or _pool.get("pid") != os.getpid():  # a forked child has the pool but not its threads
            import concurrent.futures

            pool = _pool["pool"] = concurrent.futures.ThreadPoolExecutor(AHEAD_WORKERS, "dpax-compile-ahead")
            _pool["pid"] = os.getpid()
            _ahead.clear()  # (the parent's, never to finish here)
        call = _store.signature(name, tree, leaves, static)
        # JAX's x64 switch is per thread: the background one lowers under the caller's
        future = _ahead[key] = pool.submit(_obtain_with_x64, bool(jax.config.jax_enable_x64),  # type: ignore[attr-defined]
                                           jitted, key, args, static, call, leaves, fusion_emitters)
    future.add_done_callback(functools.partial(_forget_ahead, key))  # kept in _table by then (_keep)


def _obtain_with_x64(x64: bool, *args):
    with jax.enable_x64(x64):
        return _obtain(*args)


def _forget_ahead(key, future) -> None:
    with _lock:
        if _ahead.get(key) is future:
            del _ahead[key]


def _ahead_result(key, future):
    """The executable ``future`` (of :func:`compile_ahead_of`) obtained, or None where it
    failed (the caller then compiles it itself)."""
    try:
        return future.result()
    except Exception:  # noqa: BLE001 - the call compiles again and meets the error itself
        return None


def _leaf_key(leaf) -> tuple:
    dtype = getattr(leaf, "dtype", None)
    if dtype is None:  # Python scalar: weakly typed
        return (type(leaf),)
    return (getattr(leaf, "shape", None) or np.shape(leaf), dtype, bool(getattr(leaf, "weak_type", False)))


def _memory_key(name, tree, leaves, static) -> tuple:
    """The in-memory table's key of a call: what :func:`dpax._engine.kernel_store.signature`
    describes (kernel, argument structure, each leaf's shape, dtype and weak type, static
    arguments, x64), as a tuple of hashable parts instead of hashed JSON text, which is
    computed only for the store (a warm call pays ~2 us a leaf instead of ~10)."""
    return (name, tree, tuple(_leaf_key(x) for x in leaves), tuple((k, type(v), v) for k, v in sorted(static.items())),
            bool(jax.config.jax_enable_x64))  # type: ignore[attr-defined]  # jax stubs: Config options are dynamic


def _report(name, key, tree, leaves, static, out) -> None:
    for recorder in tuple(_recorders):
        recorder.record(name, key, tree, leaves, static, out)


def _jax_cache_in_use() -> bool:
    """Whether JAX's own persistent compilation cache is on: an executable it served is
    itself deserialised, and XLA:CPU does not serialise such an executable faithfully (it
    fails to load: "Function ... not found"), so nothing is stored meanwhile."""
    try:
        return bool(jax.config.jax_enable_compilation_cache  # type: ignore[attr-defined]  # jax stubs: Config options are dynamic
                    and jax.config.jax_compilation_cache_dir)  # type: ignore[attr-defined]  # (the same)
    except AttributeError:  # pragma: no cover - options renamed in another JAX
        return True


def _fresh_jit(jitted, static):
    """A new ``jit`` of the kernel's function for one compilation: JAX's tracing caches are
    keyed weakly on the function object, so once the executable leaves the table nothing
    keeps it (or the memory its code is mapped in) alive. ``jitted(...)`` itself would be
    cached for the life of the process, one entry per shape."""
    fn = jitted.__wrapped__

    @functools.wraps(fn)
    def once(*args, **kwargs):
        return fn(*args, **kwargs)

    return jax.jit(once, static_argnames=tuple(static))


def _compile(jitted, key, args, static, call, store, fusion_emitters=True):
    """Compile the kernel for this call (with :func:`compile_options`) and (``store`` set)
    write it to the store."""
    compiled = _fresh_jit(jitted, static).lower(*args, **static).compile(compile_options(fusion_emitters))
    _store.stats["compiled"] += 1
    if store and not _jax_cache_in_use():
        try:
            header, payload = _store.describe(compiled, call)
            _store.write_entry(store, key, header, payload)
        except Exception:  # noqa: BLE001 - a kernel that cannot be stored only costs time
            _store.stats["not_stored"] += 1
    return compiled


def _keep(key, entry):
    with _lock:
        _table[key] = entry
        _table.move_to_end(key)
        while len(_table) > MAX_IN_MEMORY:
            _table.popitem(last=False)
    return entry


def _obtain(jitted, key, args, static, call, leaves, fusion_emitters=True):
    """The executable for the call ``call`` (:func:`dpax._engine.kernel_store.signature`),
    from the store or compiled, kept in memory under ``key`` (:func:`_memory_key`)."""
    store = directory()
    disk_key = _store.signature_key(call)
    entry = _store.load_entry(store, disk_key, call, leaves) if store else None
    if entry is None:
        entry = _compile(jitted, disk_key, args, static, call, store, fusion_emitters)
    return _keep(key, entry)


def _rebuild(jitted, key, args, static, call, bad, exc, fusion_emitters=True):
    """A loaded entry XLA refused to run (or whose outputs did not match its header): dropped
    from memory, deleted from the store with a warning like any bad entry, compiled again."""
    with _lock:
        if _table.get(key) is bad:
            del _table[key]
    store = directory()
    disk_key = _store.signature_key(call)
    if store:
        _store.discard(os.path.join(store, disk_key + _store.SUFFIX), exc)
    else:
        _store.stats["discarded"] += 1
        _store.warn(f"discarded a loaded kernel: {exc}; compiling it again")
    return _keep(key, _compile(jitted, disk_key, args, static, call, store, fusion_emitters))
