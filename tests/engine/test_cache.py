"""dpax's kernel cache (dpax._engine.cache): the same numbers from memory, from disk and
from XLA; nothing read from disk is trusted (no pickle, checksums bound to the key, private
directories only); a bounded table of executables in memory."""

import ast
import json
import os
import pickle
import random
import shutil
import stat
import subprocess
import sys
import warnings

import jax
import numpy as np
import pytest

import dpax
from dpax._engine import cache, kernel_store


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "kernels"
    assert cache.enable(str(path)) == str(path)
    yield path
    cache.follow_environment()


#: The kernels under test are those of one tiny mechanism (randomized response on 256 points,
#: the cheapest to compile): the cache's guarantees do not depend on what a kernel computes,
#: and these tests compile their kernels again and again in private stores. _numbers()
#: takes seven kernels (construction, Chernoff window, FFT composition, beta, advantage,
#: epsilon, delta; a DP-SGD row at grid 1e-3 took eleven, each costlier), _small() three.
def _numbers():
    pl = dpax.randomized_response([0.9, 1.1], grid_step=0.25).self_compose(3)
    return np.concatenate([pl.beta([0.01, 0.1]).ravel(), pl.advantage(), pl.epsilon(1e-5), pl.delta(1.0)])


def _entries(path):
    return sorted(p for p in path.iterdir() if p.suffix == ".xk")


def _small():
    pl = dpax.randomized_response(np.array([0.9, 1.7]), grid_step=0.25)
    return np.concatenate([pl.advantage(), pl.delta(1.0)])


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    """_numbers() and _small() compiled by XLA once for the module (each into an empty store
    of its own, so nothing is loaded), with the entries those compilations wrote. Tests copy
    the entries into their own store (``_seed``) instead of compiling the kernels again."""
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


@pytest.fixture(scope="module")
def reference(seeds):
    """_numbers() from executables XLA compiled (none read from disk)."""
    return seeds["numbers"][1]


def _seed(store, seeds, name="small"):
    """Copy the entries seeds' compilation of _numbers() or _small() stored into ``store``;
    returns the reference numbers (those of the compiled executables)."""
    path, numbers = seeds[name]
    for entry in _entries(path):
        shutil.copy2(entry, store / entry.name)
    return numbers


def _fresh_process_numbers(path, compute=_numbers):
    """What a new process gets: the executables in memory are forgotten, the files stay."""
    cache.enable(str(path))
    before = dict(cache.stats)
    numbers = compute()
    return numbers, {k: cache.stats[k] - before.get(k, 0) for k in cache.stats}


def test_stored_kernels_give_the_same_numbers_and_are_loaded_not_compiled(store, seeds, reference):
    _seed(store, seeds, "numbers")  # what compiling _numbers() stored (the seeds fixture)
    assert len(_entries(store)) >= 6  # construct, window, fft, beta, advantage, epsilon, delta
    numbers, counts = _fresh_process_numbers(store)
    np.testing.assert_array_equal(numbers, reference)
    assert counts.get("loaded", 0) >= 6 and counts.get("compiled", 0) == 0 and counts.get("discarded", 0) == 0


def test_a_new_process_loads_the_store(tmp_path, monkeypatch):
    """This process, following DPAX_CACHE_DIR as a new one does, creates the store and
    compiles into it; a new process finds the store there and loads every kernel. (The
    first of two new processes did the compiling until 2026-11-27: a second start of
    Python, JAX and dpax.)"""
    code = ("import dpax, json; from dpax._engine import cache; "
            "pl = dpax.randomized_response(1.3, grid_step=1e-2); b = float(pl.beta(0.1)); "
            "print(json.dumps([b, dict(cache.stats)]))")
    env = dict(os.environ, DPAX_CACHE_DIR=str(tmp_path / "kc"))
    env.pop("DPAX_CACHE", None)
    monkeypatch.setenv("DPAX_CACHE_DIR", env["DPAX_CACHE_DIR"])
    monkeypatch.delenv("DPAX_CACHE", raising=False)
    cache.follow_environment()  # memory table dropped: the kernels are compiled again
    try:
        before = dict(cache.stats)
        b1 = float(dpax.randomized_response(1.3, grid_step=1e-2).beta(0.1))
        s1 = {k: cache.stats[k] - before.get(k, 0) for k in cache.stats}
        assert cache.directory() == str(tmp_path / "kc")
    finally:
        monkeypatch.undo()
        cache.follow_environment()
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    b2, s2 = __import__("json").loads(run.stdout)
    assert b1 == b2
    assert s1.get("compiled", 0) >= 2 and s1.get("stored", 0) == s1["compiled"]
    assert s2.get("compiled", 0) == 0 and s2.get("loaded", 0) == s1["compiled"]
    assert stat.S_IMODE(os.stat(tmp_path / "kc").st_mode) == 0o700
    for entry in (tmp_path / "kc").iterdir():
        assert stat.S_IMODE(os.stat(entry).st_mode) & 0o077 == 0


@pytest.mark.parametrize("module", [cache, kernel_store], ids=["cache", "kernel_store"])
def test_the_cache_modules_use_no_pickle(module):
    source = open(module.__file__).read()
    tree = ast.parse(source)
    names = {a.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
             for a in node.names} | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {"pickle", "cPickle", "dill", "cloudpickle", "marshal", "shelve"} & names
    # JAX's serialize_executable module pickles
    assert "experimental import serialize_executable" not in source and "deserialize_and_load" not in source


class _Payload:
    def __reduce__(self):
        return (os.mkdir, (self.target,))


def test_bad_entries_are_deleted_and_rebuilt_never_trusted(store, seeds, reference, tmp_path):
    """Bit flips, truncation, an empty file, trailing bytes, a planted pickle (whose payload
    would create a directory) and two entries swapped between keys: each is refused before
    XLA sees it, deleted with a warning naming it, compiled and stored again."""
    _seed(store, seeds, "numbers")
    entries = _entries(store)
    assert len(entries) >= 7
    blobs = [e.read_bytes() for e in entries]
    rng = random.Random(7)
    flipped = bytearray(blobs[0])
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(flipped))
        flipped[i] ^= 1 << rng.randrange(8)
    target = tmp_path / "pwned"
    payload = _Payload()
    payload.target = str(target)
    damaged = [bytes(flipped), blobs[1][: rng.randrange(len(blobs[1]))], b"", blobs[3] + b"\0",
               pickle.dumps(payload), blobs[6], blobs[5]]
    for entry, blob in zip(entries, damaged):
        entry.write_bytes(blob)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        numbers, counts = _fresh_process_numbers(store)
    np.testing.assert_array_equal(numbers, reference)
    assert not target.exists()
    assert counts["discarded"] == 7 and counts["compiled"] >= 7
    messages = " ".join(str(w.message) for w in caught if issubclass(w.category, RuntimeWarning))
    assert all(e.name in messages for e in entries[:7]) and "checksum" in messages
    for entry in _entries(store):  # rebuilt
        assert entry.read_bytes().startswith(b"DPAXKERNEL1\n")
    numbers, counts = _fresh_process_numbers(store)  # and the next run is clean again
    np.testing.assert_array_equal(numbers, reference)
    assert counts.get("discarded", 0) == 0 and counts.get("compiled", 0) == 0


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["bit flips", "truncated", "empty", "appended"])
def test_every_entry_damaged_the_same_way(store, seeds, reference, damage):
    _seed(store, seeds, "numbers")
    rng = random.Random(11)
    originals = {}
    for entry in _entries(store):
        blob = bytearray(entry.read_bytes())
        originals[entry.name] = bytes(blob)
        if damage == "bit flips":
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(len(blob))
                blob[i] ^= 1 << rng.randrange(8)
        elif damage == "truncated":
            blob = blob[: rng.randrange(len(blob))]
        elif damage == "empty":
            blob = bytearray()
        else:
            blob += b"\0"
        entry.write_bytes(bytes(blob))
    with pytest.warns(RuntimeWarning, match="discarded"):
        numbers, counts = _fresh_process_numbers(store)
    np.testing.assert_array_equal(numbers, reference)
    assert counts.get("loaded", 0) == 0 and counts["discarded"] == len(originals)


def test_an_oversized_entry_is_not_read(store, seeds, monkeypatch):
    reference = _seed(store, seeds)  # the entries compiling _small() stored
    monkeypatch.setattr(kernel_store, "MAX_ENTRY_BYTES", 1000)
    with pytest.warns(RuntimeWarning, match="limit"):
        numbers, counts = _fresh_process_numbers(store, _small)
    np.testing.assert_array_equal(numbers, reference)
    assert counts.get("loaded", 0) == 0


def test_another_fingerprint_never_loads(store, seeds, monkeypatch):
    reference = _seed(store, seeds)  # the entries compiling _small() stored
    monkeypatch.setattr(kernel_store, "fingerprint", lambda: "another dpax, jax or device")
    numbers, counts = _fresh_process_numbers(store, _small)
    np.testing.assert_array_equal(numbers, reference)
    assert counts.get("loaded", 0) == 0 and counts["compiled"] >= 3


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_directory_others_can_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.warns(RuntimeWarning, match="writable by group or others"):
        assert cache.enable(str(shared)) is None
    try:
        assert not cache.enabled()
        _small()
        assert list(shared.iterdir()) == []
    finally:
        cache.follow_environment()


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_directory_of_another_user_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "theirs"
    path.mkdir(mode=0o700)
    uid = os.stat(path).st_uid
    monkeypatch.setattr(os, "getuid", lambda: uid + 1)
    with pytest.warns(RuntimeWarning, match="owned by another user"):
        assert cache.enable(str(path)) is None
    cache.follow_environment()


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_an_entry_others_can_write_is_refused(store, seeds):
    reference = _seed(store, seeds)  # the entries compiling _small() stored
    for entry in _entries(store):
        os.chmod(entry, 0o666)
    with pytest.warns(RuntimeWarning, match="writable by group or others"):
        numbers, counts = _fresh_process_numbers(store, _small)
    np.testing.assert_array_equal(numbers, reference)
    assert counts.get("loaded", 0) == 0


def test_a_new_directory_is_private(tmp_path):
    old = os.umask(0)
    try:
        path = cache.enable(str(tmp_path / "a" / "b"))
    finally:
        os.umask(old)
        cache.follow_environment()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700


def test_environment_switches(tmp_path, monkeypatch):
    monkeypatch.setenv("DPAX_CACHE_DIR", str(tmp_path / "here"))
    monkeypatch.delenv("DPAX_CACHE", raising=False)
    cache.follow_environment()
    assert cache.directory() == str(tmp_path / "here")
    for off in ("0", "false", "off", "no"):
        monkeypatch.setenv("DPAX_CACHE", off)
        cache.follow_environment()
        assert cache.directory() is None
    monkeypatch.delenv("DPAX_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.default_dir() == str(tmp_path / "xdg" / "dpax")
    cache.follow_environment()


def test_public_switches(tmp_path, seeds):
    assert dpax.kernel_cache_dir.__doc__ and dpax.enable_kernel_cache.__doc__
    try:
        assert dpax.enable_kernel_cache(str(tmp_path / "k")) == str(tmp_path / "k")
        assert dpax.kernel_cache_dir() == str(tmp_path / "k")
        # the kernels of _small() (compiled and stored by seeds): read from the directory set
        _seed(tmp_path / "k", seeds)
        before = dict(cache.stats)
        np.testing.assert_array_equal(_small(), seeds["small"][1])
        assert cache.stats["loaded"] - before.get("loaded", 0) >= 3 and cache.stats["compiled"] == before["compiled"]
        assert dpax.clear_kernel_cache() >= 1 and _entries(tmp_path / "k") == []
        dpax.disable_kernel_cache()
        assert dpax.kernel_cache_dir() is None
    finally:
        cache.follow_environment()


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="Linux memory maps")
# default: 6 sizes (6 compilations), the table full from size 4 on; kept, sizes 5 and 6 would
# add ~160 mappings against the 40 allowed (observed: +7). The slow case runs 24 sizes
@pytest.mark.parametrize("sizes, checkpoints", [(7, (4, 6)), pytest.param(25, (8, 24), marks=pytest.mark.slow)])
def test_a_long_loop_over_batch_sizes_stays_bounded(monkeypatch, sizes, checkpoints):
    """A process that meets ever new shapes (an accountant in a training job, a sweep) keeps
    a bounded table of executables, and those dropped release their code (each is ~60
    memory mappings; the kernel's limit is 65,530)."""
    monkeypatch.setattr(cache, "MAX_IN_MEMORY", 4)

    def maps():
        with open("/proc/self/maps") as fh:
            return sum(1 for _ in fh)

    counts = []
    with cache.suspended():
        for n in range(1, sizes):
            dpax.randomized_response(np.linspace(0.5, 2, n), grid_step=0.5)  # one kernel per size
            assert len(cache._table) <= 4
            if n in checkpoints:
                counts.append(maps())
    cache.clear(memory_only=True)
    # ~80 mappings per size if they were kept (observed: +78 each, +7 for sizes 5 and 6)
    assert counts[1] - counts[0] < 20 * (checkpoints[1] - checkpoints[0])


def test_nothing_is_stored_while_jax_persistent_cache_is_on(store, tmp_path):
    """An executable JAX's own cache served is itself deserialised; XLA:CPU does not
    serialise those faithfully (they fail to load: 'Function ... not found'), so the store
    stays untouched while that cache is on, and the numbers are the same."""
    from jax.experimental.compilation_cache import compilation_cache as jax_cc

    before = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", str(tmp_path / "jax-own"))
    jax_cc.reset_cache()
    try:
        cache.clear(memory_only=True)
        numbers = dpax.randomized_response(0.93, grid_step=1e-2).beta([0.1, 0.2])  # two kernels
    finally:
        jax.config.update("jax_compilation_cache_dir", before)
        jax_cc.reset_cache()
    assert _entries(store) == []
    cache.clear(memory_only=True)
    np.testing.assert_array_equal(dpax.randomized_response(0.93, grid_step=1e-2).beta([0.1, 0.2]), numbers)
    assert len(_entries(store)) >= 2


@pytest.mark.parametrize("outputs", [{"named": "os:system", "of": ["*"]}, {"tuple": ["*", "*", "*", "*", "*", "*"]},
                                     {"eval": "*"}])
def test_a_well_formed_entry_with_a_bad_header_is_refused(store, seeds, outputs):
    """Even with a valid checksum (a buggy or hostile writer), the output structure may only
    name dpax's NamedTuples and must match the executable's outputs."""
    reference = _seed(store, seeds)  # the entries compiling _small() stored
    for entry in _entries(store):
        header, payload = kernel_store.read_entry(str(entry), entry.stem)
        kernel_store.write_entry(str(store), entry.stem, dict(header, outputs=outputs), payload)
    with pytest.warns(RuntimeWarning, match="discarded"):
        numbers, counts = _fresh_process_numbers(store, _small)
    np.testing.assert_array_equal(numbers, reference)
    assert counts.get("loaded", 0) == 0


def test_the_store_is_trimmed_least_recently_used_first(store, seeds, monkeypatch):
    _seed(store, seeds)
    entries = _entries(store)
    assert len(entries) >= 3
    sizes = {e.name: e.stat().st_size for e in entries}
    for age, entry in enumerate(entries):  # entries[0] the oldest
        os.utime(entry, (1_000_000 + age, 1_000_000 + age))
    budget = sum(sizes.values()) - 1  # one byte over: trim to 3/4 of the budget
    monkeypatch.setattr(kernel_store, "MAX_STORE_BYTES", budget)
    kernel_store.trim(str(store))
    left = {e.name for e in _entries(store)}
    assert sum(sizes[n] for n in left) <= budget * 3 // 4
    kept_order = [e.name in left for e in entries]
    assert kept_order == sorted(kept_order)  # the oldest went first
    numbers, counts = _fresh_process_numbers(store, _small)  # the rest still loads
    assert counts.get("discarded", 0) == 0


def test_a_path_that_is_not_one_is_refused():
    with pytest.raises(TypeError, match="path must be"):
        dpax.enable_kernel_cache(123)


def _headers(store):
    """{kernel name: (entry, header, payload)} of the entries in ``store``."""
    out = {}
    for entry in _entries(store):
        header, payload = kernel_store.read_entry(str(entry), entry.stem)
        out.setdefault(header["signature"]["kernel"], (entry, header, payload))
    return out


def _two_entries(store):
    """Two entries of _small() written for different calls (other kernels, other shapes)."""
    found = _headers(store)
    names = sorted(found)
    assert len(names) >= 2
    (a, ha, pa), (b, hb, pb) = found[names[0]], found[names[-1]]
    assert ha["signature"] != hb["signature"] and ha["inputs"] != hb["inputs"]
    return (a, ha, pa), (b, hb, pb)


def _rebuilt_then_clean(store, reference, match):
    """A fresh run warns ``match``, gives the reference numbers and rebuilds one entry; the
    run after it loads every entry."""
    with pytest.warns(RuntimeWarning, match=match):
        numbers, counts = _fresh_process_numbers(store, _small)
    np.testing.assert_array_equal(numbers, reference)
    assert counts["discarded"] == 1 and counts["compiled"] == 1 and counts["stored"] == 1
    numbers, counts = _fresh_process_numbers(store, _small)
    np.testing.assert_array_equal(numbers, reference)
    assert counts.get("discarded", 0) == 0 and counts.get("compiled", 0) == 0 and counts["loaded"] >= 3


def test_an_entry_copied_over_another_keys_name_is_rebuilt(store, seeds):
    """Another call's entry under this key's name, its header's key edited and its checksum
    made again (anyone who can write the store can): the header's call signature does not
    match this call, so the entry is discarded and rebuilt, and later runs load it."""
    reference = _seed(store, seeds)
    (a, header_a, payload_a), (b, _, _) = _two_entries(store)
    kernel_store.write_entry(str(store), b.stem, header_a, payload_a)  # a's entry, b's key and a valid checksum
    assert kernel_store.read_entry(str(b), b.stem)[1] == payload_a
    _rebuilt_then_clean(store, reference, "another call")


def test_an_entry_whose_payload_is_another_calls_is_rebuilt(store, seeds):
    """The header is this call's but the executable another's (shapes and dtypes it was not
    compiled for): XLA refuses to run it, or its outputs do not match the header; the entry is
    discarded and rebuilt like a damaged one, and later runs load it."""
    reference = _seed(store, seeds)
    (a, _, payload_a), (b, header_b, _) = _two_entries(store)
    kernel_store.write_entry(str(store), b.stem, header_b, payload_a)
    _rebuilt_then_clean(store, reference, "discarded")


def test_an_entry_from_the_file_copied_is_rebuilt(store, seeds):
    """The file itself copied over another key's name (the checksum binds it to its own key)."""
    reference = _seed(store, seeds)
    (a, _, _), (b, _, _) = _two_entries(store)
    shutil.copy2(a, b)
    _rebuilt_then_clean(store, reference, "checksum")


@pytest.mark.parametrize("old", ["no signature", "older format"])
def test_an_entry_without_the_call_signature_is_stale(store, seeds, old):
    """An entry of the earlier header (dtypes only, no shapes) is rebuilt, not run."""
    reference = _seed(store, seeds)
    (_, _, _), (b, header, payload) = _two_entries(store)
    header = {k: v for k, v in header.items() if k not in ("signature", "inputs", "output_avals")}
    header["dtypes"] = ["float64"] * len(header["kept"])
    if old == "older format":
        header["format"] = "dpax-kernel-1"
        header_bytes = json.dumps(dict(header, key=b.stem), sort_keys=True, separators=(",", ":")).encode()
        b.write_bytes(kernel_store.MAGIC + kernel_store.digest(b.stem, header_bytes, payload).encode() + b"\n"
                      + len(header_bytes).to_bytes(8, "little") + header_bytes + payload)
    else:
        kernel_store.write_entry(str(store), b.stem, header, payload)
    _rebuilt_then_clean(store, reference, "stale")


def test_an_executable_xla_refuses_is_dropped_from_memory_too(store, seeds):
    """A loaded entry that fails on its arguments is dropped from the in-memory table as well:
    the next call in the same process runs the rebuilt kernel."""
    reference = _seed(store, seeds)
    (a, _, payload_a), (b, header_b, _) = _two_entries(store)
    kernel_store.write_entry(str(store), b.stem, header_b, payload_a)
    with pytest.warns(RuntimeWarning, match="discarded"):
        numbers, _ = _fresh_process_numbers(store, _small)
    np.testing.assert_array_equal(numbers, reference)
    before = dict(cache.stats)
    np.testing.assert_array_equal(_small(), reference)  # from memory
    assert cache.stats == before


def test_kernels_compile_with_their_emitters_and_give_the_same_numbers_with_either(monkeypatch):
    """The query kernels and the cells' split compile on CPU with XLA's classic emitters
    (faster to compile, as fast to run), the construction's CDFs and the composition with its
    fusion emitters: the numbers are the same bit for bit either way."""
    asked = []
    real = cache.compile_options
    monkeypatch.setattr(cache, "compile_options", lambda fusion_emitters: asked.append(fusion_emitters) or
                        real(fusion_emitters))
    with cache.suspended():
        cache.clear(memory_only=True)
        chosen = _numbers()
        assert set(asked) == {True, False}  # construction and FFT / beta, advantage, epsilon, delta
        if jax.default_backend() == "cpu":
            assert real(False) == {"xla_cpu_use_fusion_emitters": False} and real(True) == {}
        monkeypatch.setattr(cache, "compile_options", lambda fusion_emitters: {})
        cache.clear(memory_only=True)
        fusion_everywhere = _numbers()
        cache.clear(memory_only=True)
    np.testing.assert_array_equal(chosen, fusion_everywhere)
