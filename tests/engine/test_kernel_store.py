"""The on-disk store of compiled kernels (dpax._engine.kernel_store): stored kernels give the
same numbers and are loaded, not compiled; nothing read from disk is trusted (no pickle,
checksums bound to the key, headers checked against the call, size limits, another
fingerprint never loads, private directories and entries only), and the store is trimmed least
recently used first."""

import json
import os
import pickle
import random
import shutil
import stat
import warnings

import numpy as np
import pytest
from kernel_cache_helpers import _assert_uses_no_pickle, _entries, _fresh_process_numbers, _seed, _small, _two_entries

from dpax._engine import cache, kernel_store


@pytest.fixture(scope="module")
def reference(seeds):
    """_numbers() from executables XLA compiled (none read from disk)."""
    return seeds["numbers"][1]


def test_stored_kernels_give_the_same_numbers_and_are_loaded_not_compiled(store, seeds, reference):
    _seed(store, seeds, "numbers")  # what compiling _numbers() stored (the seeds fixture)
    assert len(_entries(store)) >= 6  # construct, window, fft, beta, advantage, epsilon, delta
    numbers, counts = _fresh_process_numbers(store)
    np.testing.assert_array_equal(numbers, reference)
    assert counts.get("loaded", 0) >= 6 and counts.get("compiled", 0) == 0 and counts.get("discarded", 0) == 0


@pytest.mark.parametrize("module", [kernel_store], ids=["kernel_store"])
def test_the_cache_modules_use_no_pickle(module):
    _assert_uses_no_pickle(module)


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
