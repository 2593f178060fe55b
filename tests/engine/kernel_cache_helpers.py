"""Helpers of the kernel cache's tests (test_cache.py, test_kernel_store.py, and the seeds
fixture of conftest.py): the two tiny workloads whose kernels they compile, and reading,
seeding and loading a store, and the check that a cache module uses no pickle."""

import ast
import shutil

import numpy as np

import dpax
from dpax._engine import cache, kernel_store


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


def _assert_uses_no_pickle(module):
    """The source of ``module`` imports no pickle (nor its kin) and not JAX's
    serialize_executable, which pickles."""
    source = open(module.__file__).read()
    tree = ast.parse(source)
    names = {a.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
             for a in node.names} | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {"pickle", "cPickle", "dill", "cloudpickle", "marshal", "shelve"} & names
    # JAX's serialize_executable module pickles
    assert "experimental import serialize_executable" not in source and "deserialize_and_load" not in source
