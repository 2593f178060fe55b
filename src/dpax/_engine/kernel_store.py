"""The on-disk store of compiled kernels (:mod:`dpax._engine.cache` keeps the in-memory
table and decides when to compile): keys, entries, and every check made before a byte
reaches XLA.

On disk (default on; ``$DPAX_CACHE_DIR``, else ``$XDG_CACHE_HOME/dpax`` or
``~/.cache/dpax``; off with ``DPAX_CACHE=0`` or :func:`dpax._engine.cache.disable`) each
executable is kept as XLA's own serialisation of the compiled program plus a JSON header, so that a new process
loads it instead of tracing, lowering and compiling. The store is kept under
:data:`MAX_STORE_BYTES` (2 GiB; ``DPAX_CACHE_MAX_GB``), least recently used entries deleted
first. What is read is never trusted:

* no pickle: the header is JSON, and the output structure it describes may only name
  dpax's own NamedTuple result types;
* the file name and the header carry the key, which hashes the kernel, its argument
  signature, dpax's source, the JAX/jaxlib version, the device, the host CPU's features
  and this format's version, so another dpax, JAX, device or machine never loads it;
* a SHA-256 of the key, header and payload is checked before XLA sees a byte;
* the header records the call the executable was compiled for (kernel, argument structure,
  the shape, dtype and weak type of every argument leaf, static arguments) and its outputs'
  shapes and dtypes; the call must match it before the entry is used, and the outputs after
  every run of a loaded entry;
* an entry that fails any of these (truncated, bit-flipped, swapped between keys,
  oversized, written for another call, an older format without the call's signature) or
  that XLA refuses to run on the call's arguments is deleted, a warning is issued, and the
  kernel is compiled and stored again;
* the directory is created with mode 0700; a directory (or entry) owned by another user
  or writable by group or others is refused with a warning, and dpax only compiles:
  anyone who can write there could make this process run code of their choice.

Importing dpax changes no JAX setting; the store does not use JAX's own persistent cache.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import json
import os
import platform
import stat
import sys
import tempfile
import warnings
from typing import Any, NamedTuple

import jax
import numpy as np

#: Version of the file format; part of every key.
FORMAT = "dpax-kernel-2"
MAGIC = b"DPAXKERNEL1\n"
#: Largest entry read from disk, in bytes.
MAX_ENTRY_BYTES = 256 * 2**20
#: Size of the store on disk beyond which the least recently used entries are deleted
#: (down to 3/4 of it). Override with DPAX_CACHE_MAX_GB.
MAX_STORE_BYTES = int(float(os.environ.get("DPAX_CACHE_MAX_GB", "2")) * 2**30)
SUFFIX = ".xk"
#: Counters, for tests and benchmarks: compiled, loaded from disk, stored, discarded entries.
stats: collections.Counter[str] = collections.Counter()


def warn(message: str) -> None:
    warnings.warn(f"dpax kernel cache: {message}", RuntimeWarning, stacklevel=4)


def _unsafe(st: os.stat_result, what: str) -> str | None:
    """Why a directory or file with this lstat is not safe to load code from (None: safe).
    POSIX ownership and permission bits; elsewhere (Windows) the user's profile directory's
    access control is relied on."""
    if os.name != "posix":
        return None
    if st.st_uid != os.getuid():
        return f"{what} is owned by another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{what} is writable by group or others (mode {stat.filemode(st.st_mode)})"
    return None


def checked_dir(path: str) -> str | None:
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError as exc:
        warn(f"cannot create {path} ({exc}); compiling in memory only")
        return None
    if not stat.S_ISDIR(st.st_mode):
        warn(f"{path} is not a directory; compiling in memory only")
        return None
    why = _unsafe(st, path)
    if why:
        warn(f"refusing {why}; compiling in memory only "
              f"(use a private directory: DPAX_CACHE_DIR, or DPAX_CACHE=0)")
        return None
    return path


# -- keys --------------------------------------------------------------------------------


def _cpu_features() -> str:
    """The host CPU's model and feature flags: XLA:CPU code is compiled for them."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            lines = [ln for ln in fh.read(1 << 20).splitlines()
                     if ln.startswith(("flags", "model name", "Features", "CPU part"))]
        return "|".join(sorted(set(lines)))
    except OSError:
        return platform.processor() or platform.machine()


@functools.lru_cache(maxsize=1)
def fingerprint() -> str:
    """Hash of everything a stored executable depends on besides its own arguments."""
    import jaxlib

    h = hashlib.sha256(FORMAT.encode())
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the dpax package
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as fh:
                    h.update(os.path.relpath(os.path.join(folder, name), root).encode() + b"\0" + fh.read())
    device = jax.local_devices()[0]
    h.update(f"|{jax.__version__}|{jaxlib.__version__}|{device.platform}|{device.device_kind}"
             f"|{device.client.platform_version}|{platform.machine()}|{sys.byteorder}".encode())
    h.update(_cpu_features().encode())
    if jax.process_count() > 1:  # jax.distributed: an executable is bound to this process's device
        h.update(f"|process {jax.process_index()} of {jax.process_count()}|device {jax.local_devices()[0].id}".encode())
    return h.hexdigest()


def _leaf_signature(leaf) -> str:
    dtype = getattr(leaf, "dtype", None)
    if dtype is None:  # Python scalar: weakly typed
        return f"py:{type(leaf).__name__}"
    weak = getattr(leaf, "weak_type", False)
    return f"{np.shape(leaf)}:{dtype}:{int(bool(weak))}"


def signature(name, tree, leaves, static) -> dict:
    """The call an executable serves, as JSON: kernel name, argument structure, every
    argument leaf's shape, dtype and weak type, and the static arguments."""
    return {"kernel": str(name), "tree": str(tree), "leaves": [_leaf_signature(x) for x in leaves],
            "static": repr(sorted(static.items())), "x64": bool(jax.config.jax_enable_x64)}  # type: ignore[attr-defined]  # jax stubs: Config options are dynamic


def signature_key(call: dict) -> str:
    text = repr((call["kernel"], fingerprint(), call["tree"], call["leaves"], call["static"], call["x64"]))
    return hashlib.sha256(text.encode()).hexdigest()


def key_of(name, tree, leaves, static) -> str:
    return signature_key(signature(name, tree, leaves, static))


def _aval_list(avals) -> list:
    """``[[shape...], dtype]`` for each abstract value (JSON)."""
    return [[[int(d) for d in a.shape], str(a.dtype)] for a in avals]


# -- executables that can be stored ------------------------------------------------------


class NotStorable(Exception):
    """This executable cannot be written to the store (it is still used in memory)."""


def _encode_tree(tree) -> Any:
    """JSON description of a kernel's output structure (leaves, tuples, lists, dicts, None
    and dpax NamedTuples only)."""
    if jax.tree_util.treedef_is_leaf(tree):
        return "*" if tree.num_leaves == 1 else None
    kind, aux = tree.node_data()
    children = [_encode_tree(c) for c in tree.children()]
    if kind is tuple:
        return {"tuple": children}
    if kind is list:
        return {"list": children}
    if kind is dict:
        return {"dict": [list(aux), children]}
    if issubclass(kind, tuple) and hasattr(kind, "_fields") and kind.__module__.startswith("dpax."):
        return {"named": f"{kind.__module__}:{kind.__qualname__}", "of": children}
    raise NotStorable(f"output node {kind!r}")


def _named_type(name: str):
    module, _, qualname = name.partition(":")
    cls = sys.modules.get(module) if module.startswith("dpax.") else None
    for part in qualname.split("."):
        cls = getattr(cls, part, None)
    if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
        raise ValueError(f"unknown output type {name!r}")
    return cls


def _decode_tree(spec, leaves):
    """Rebuild the output from its description and an iterator over the output arrays."""
    if spec == "*":
        return next(leaves)
    if spec is None:
        return None
    if not isinstance(spec, dict) or len(spec) not in (1, 2):
        raise ValueError("bad output structure")
    if "tuple" in spec:
        return tuple(_decode_tree(c, leaves) for c in spec["tuple"])
    if "list" in spec:
        return [_decode_tree(c, leaves) for c in spec["list"]]
    if "dict" in spec:
        keys, children = spec["dict"]
        return {k: _decode_tree(c, leaves) for k, c in zip(keys, children)}
    if "named" in spec:
        return _named_type(spec["named"])(*(_decode_tree(c, leaves) for c in spec["of"]))
    raise ValueError("bad output structure")


class BadEntry(Exception):
    """A store entry that failed a check."""


class Stored(NamedTuple):
    """A loaded executable and what calling it needs: which flat inputs it keeps, their
    dtypes, the output structure, and the outputs' shapes and dtypes (checked after each run:
    :class:`BadEntry` on a mismatch)."""

    executable: Any
    kept: tuple
    dtypes: tuple
    outputs: Any
    num_outputs: int
    output_avals: tuple

    def __call__(self, leaves):
        args = [leaves[i] if isinstance(leaves[i], jax.Array) else np.asarray(leaves[i], dtype=d)
                for i, d in zip(self.kept, self.dtypes)]
        host = [j for j, a in enumerate(args) if not isinstance(a, jax.Array)]
        if host:  # one transfer for all host arguments (a call each costs ~20 us)
            for j, placed in zip(host, jax.device_put([args[j] for j in host])):
                args[j] = placed
        out = self.executable.execute(args)
        if len(out) != self.num_outputs:
            raise BadEntry("the executable returned the wrong number of outputs")
        for i, (array, (shape, dtype)) in enumerate(zip(out, self.output_avals)):
            if tuple(array.shape) != shape or array.dtype != dtype:
                raise BadEntry(f"output {i} is {array.dtype}{list(array.shape)}, the header says {dtype}{list(shape)}")
        return _decode_tree(self.outputs, iter(out))


def describe(compiled, call: dict) -> tuple[dict, bytes]:
    """Header and payload for a kernel compiled for ``call`` (:func:`signature`), or
    NotStorable."""
    mesh_exe = compiled._executable
    unloaded = getattr(mesh_exe, "_unloaded_executable", None)
    params = getattr(compiled, "_params", None)
    if unloaded is None or (params is not None and getattr(params, "const_args", None)):
        raise NotStorable("constants or no unloaded executable")
    if unloaded.ordered_effects or unloaded.unordered_effects or unloaded.host_callbacks:
        raise NotStorable("effects")
    if len(unloaded.device_list) != 1 or getattr(unloaded, "mut", None):
        raise NotStorable("more than one device")
    kept = sorted(int(i) for i in mesh_exe._kept_var_idx)
    in_avals = list(unloaded.input_avals)
    if len(in_avals) != len(kept):
        raise NotStorable("inputs")
    runtime = mesh_exe.xla_executable
    payload = runtime.client.serialize_executable(runtime)
    header = {
        "signature": call,
        "kept": kept,
        "inputs": _aval_list(in_avals),
        "outputs": _encode_tree(compiled.out_tree),
        "output_avals": _aval_list(unloaded.output_avals),
        "num_outputs": len(unloaded.output_avals),
    }
    return header, bytes(payload)


def digest(key: str, header_bytes: bytes, payload: bytes) -> str:
    h = hashlib.sha256(key.encode() + b"\0")
    h.update(len(header_bytes).to_bytes(8, "little") + header_bytes)
    h.update(payload)
    return h.hexdigest()


def write_entry(directory: str, key: str, header: dict, payload: bytes) -> None:
    header = dict(header, key=key, format=FORMAT)
    header_bytes = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    blob = (MAGIC + digest(key, header_bytes, payload).encode() + b"\n"
            + len(header_bytes).to_bytes(8, "little") + header_bytes + payload)
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, os.path.join(directory, key + SUFFIX))
        stats["stored"] += 1
        trim(directory)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def trim(directory: str) -> None:
    """Delete the least recently used entries (by modification time: loading an entry
    touches it) while the store is over MAX_STORE_BYTES, down to 3/4 of it."""
    entries = []
    with os.scandir(directory) as it:
        for e in it:
            if e.name.endswith(SUFFIX) and e.is_file(follow_symlinks=False):
                st = e.stat(follow_symlinks=False)
                entries.append((st.st_mtime, st.st_size, e.path))
    total = sum(size for _, size, _ in entries)
    if total <= MAX_STORE_BYTES:
        return
    for _, size, path in sorted(entries):
        if total <= MAX_STORE_BYTES * 3 // 4:
            break
        try:
            os.unlink(path)
            total -= size
            stats["evicted"] += 1
        except OSError:
            pass


def read_entry(path: str, key: str) -> tuple[dict, bytes]:
    """Header and payload of an entry after every check (BadEntry otherwise)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        why = _unsafe(st, path) if stat.S_ISREG(st.st_mode) else f"{path} is not a regular file"
        if why:
            raise BadEntry(why)
        if st.st_size > MAX_ENTRY_BYTES:
            raise BadEntry(f"{st.st_size} bytes, over the {MAX_ENTRY_BYTES} byte limit")
        blob = fh.read(MAX_ENTRY_BYTES + 1)
    if not blob.startswith(MAGIC):
        raise BadEntry("not a dpax kernel file")
    rest = blob[len(MAGIC):]
    recorded, rest = rest[:64].decode("ascii", "replace"), rest[65:]
    size = int.from_bytes(rest[:8], "little")
    if size > len(rest) - 8:
        raise BadEntry("truncated")
    header_bytes, payload = rest[8:8 + size], rest[8 + size:]
    if digest(key, header_bytes, payload) != recorded:
        raise BadEntry("checksum mismatch (corrupt, truncated, or stored under another key)")
    header = json.loads(header_bytes)
    if not isinstance(header, dict):
        raise BadEntry("the header is not a JSON object")
    if header.get("format") != FORMAT:
        raise BadEntry(f"stale format {str(header.get('format'))[:40]!r}, not {FORMAT!r}")
    if header.get("key") != key:
        raise BadEntry("key mismatch")
    return header, payload


def _shape_dtype(pair) -> tuple:
    shape, dtype = pair
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise BadEntry("bad shape in the header")
    return tuple(shape), np.dtype(dtype)


def _check_signature(header: dict, call: dict, leaves) -> tuple[tuple, tuple, tuple]:
    """The kept input indices, their dtypes and the output (shape, dtype) pairs of an entry
    whose header matches ``call`` and whose inputs have the shapes of ``leaves`` (BadEntry
    otherwise: written for another call, or a format without the signature)."""
    if "signature" not in header or "inputs" not in header or "output_avals" not in header:
        raise BadEntry("stale entry without the call's signature (older format)")
    if header["signature"] != call:
        theirs = header["signature"]
        which = [k for k in sorted(call) if not isinstance(theirs, dict) or theirs.get(k) != call[k]]
        raise BadEntry(f"written for another call (its {', '.join(which) or 'signature'} differ)")
    kept = tuple(int(i) for i in header["kept"])
    inputs = tuple(_shape_dtype(p) for p in header["inputs"])
    if len(kept) != len(inputs) or not all(0 <= i < len(leaves) for i in kept):
        raise BadEntry("the kept inputs do not match the call")
    for i, (shape, dtype) in zip(kept, inputs):
        aval = jax.typeof(leaves[i])
        if tuple(aval.shape) != shape or np.dtype(aval.dtype) != dtype:
            raise BadEntry(f"input {i} is {aval.dtype}{list(aval.shape)}, the header says {dtype}{list(shape)}")
    outputs = tuple(_shape_dtype(p) for p in header["output_avals"])
    return kept, tuple(d for _, d in inputs), outputs


def load_entry(directory: str, key: str, call: dict, leaves) -> Stored | None:
    path = os.path.join(directory, key + SUFFIX)
    try:
        header, payload = read_entry(path, key)
        kept, dtypes, output_avals = _check_signature(header, call, leaves)
        device = jax.local_devices()[0]
        from jax._src.lib import xla_client

        runtime = device.client.deserialize_executable(
            payload, executable_devices=xla_client.DeviceList((device,)))
        stored = Stored(runtime, kept, dtypes, header["outputs"], int(header["num_outputs"]), output_avals)
        if len(output_avals) != stored.num_outputs:
            raise BadEntry("output shapes do not match the executable's outputs")
        count = iter(range(stored.num_outputs + 1))
        _decode_tree(stored.outputs, count)  # the structure is valid and names dpax types only ...
        if next(count) != stored.num_outputs:  # ... and holds exactly the executable's outputs
            raise BadEntry("output structure does not match the executable")
        stats["loaded"] += 1
        try:
            os.utime(path)  # recently used: trimmed last
        except OSError:
            pass
        return stored
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - any failure: never trust the entry
        discard(path, exc)
        return None


def discard(path: str, exc: BaseException) -> None:
    """Delete a bad entry, count it and warn (the caller compiles the kernel again)."""
    stats["discarded"] += 1
    try:
        os.unlink(path)
    except OSError:
        pass
    warn(f"discarded {path}: {exc}; compiling it again")


def refused_by_xla(exc: BaseException) -> bool:
    """Whether running a loaded executable failed on its arguments (shapes, dtypes or count
    not those it was compiled for), not on a resource (memory) or an interrupt."""
    return isinstance(exc, BadEntry) or (isinstance(exc, RuntimeError) and "INVALID_ARGUMENT" in str(exc))
