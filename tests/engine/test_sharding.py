"""Sharded and chunked batches give the single-device, single-chunk answers.

The sharded path runs in a subprocess with XLA_FLAGS=--xla_force_host_platform_device_count=2
(it must be set before JAX is imported), so two CPU devices stand in for GPUs / a TPU slice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dpax
from dpax._engine import grid as _grid
from dpax._engine import sharding
from dpax.targets import Advantage, ErrRates

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: The calibration of the sharded test (in the subprocess) and of the chunking test (in this
#: process, on one device: it loads the kernels the subprocess stored for its single-device
#: run from the test run's kernel store instead of compiling them)
KW = ("dict(sample_rate=[0.001, 0.01, 0.02], num_steps=[1000, 100, 300], "
      "target=[ErrRates(0.1, [0.5, 0.4, 0.6]), Advantage(0.5)], grid_step=1e-2, compare_standard=False)")

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    import jax, numpy as np
    import dpax
    from dpax._engine import cache as _aot, sharding
    from dpax.targets import ErrRates, Advantage
    KW = {kw}
    assert len(jax.devices()) == 2
    out = {}
    kw = KW
    a = dpax.calibrate_dpsgd(**kw)
    # two of the calibrated rows (their kernels those of the calibration; rows of noise 1 and 2
    # at (0.01, 100) compiled their own)
    rows = dict(noise_multiplier=a.noise_multiplier[1:], sample_rate=kw["sample_rate"][1:],
                num_steps=kw["num_steps"][1:], grid_step=1e-2)
    pl = dpax.dpsgd(**rows)
    out["sharding"] = str(pl.pair[0].sharding)
    out["devices_used"] = sorted(d.id for d in pl.pair[0].sharding.device_set)
    # the kernel cache stores single-device executables; sharded calls run through jit. The
    # store is on (the test run's, DPAX_CACHE_DIR): the same call again, the executables of
    # pl's single-device kernels now loaded from it (a fresh store compiled them all again)
    assert _aot.enabled()
    _aot.enable()
    before = _aot.stats["loaded"]
    c = dpax.dpsgd(**rows)
    assert _aot.stats["loaded"] > before
    out["aot_sharding"] = str(c.pair[0].sharding)
    out["aot_beta"] = c.beta(0.1).tolist()
    out["plain_beta"] = pl.beta(0.1).tolist()
    sharding.use_devices(jax.devices()[:1])
    b = dpax.calibrate_dpsgd(**kw)
    for name, r in (("sharded", a), ("single", b)):
        out[name] = {"noise": r.noise_multiplier.tolist(), "failing": r.noise_multiplier_failing.tolist(),
                     "status": list(r.status), "evaluations": r.evaluations,
                     "achieved": {k: np.asarray(v).tolist() for k, v in r.achieved.items()}}
    print("RESULT" + json.dumps(out))
    """
).replace("{kw}", KW)


@pytest.fixture(scope="module")
def two_devices():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    env.pop("DPAX_SHARDING", None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")][-1]
    return json.loads(line[len("RESULT"):])


def test_rows_are_sharded_over_both_devices(two_devices):
    assert "NamedSharding" in two_devices["sharding"] and "'rows'" in two_devices["sharding"]
    assert two_devices["devices_used"] == [0, 1]


def test_sharded_calibration_is_identical_to_single_device(two_devices):
    """Same candidates, same decisions: the noise and the bracket are bit-for-bit equal.
    The re-evaluated risks agree to 1e-12 (XLA's partitioned kernels may round the last
    bits differently)."""
    a, b = two_devices["sharded"], two_devices["single"]
    assert a["noise"] == b["noise"]
    assert a["failing"] == b["failing"]
    assert a["status"] == b["status"] == ["calibrated"] * 3
    assert a["evaluations"] == b["evaluations"]
    for k in a["achieved"]:
        np.testing.assert_allclose(a["achieved"][k], b["achieved"][k], rtol=1e-12, atol=1e-14)


def test_kernel_cache_leaves_sharding_alone(two_devices):
    assert "NamedSharding" in two_devices["aot_sharding"]
    np.testing.assert_allclose(two_devices["aot_beta"], two_devices["plain_beta"], rtol=1e-12)


def test_pad_rows_and_place_rows_single_device():
    assert sharding.pad_rows(5, 2) == 6 and sharding.pad_rows(6, 2) == 6 and sharding.pad_rows(1, 4) == 4
    x = np.arange(6.0)
    assert sharding.place_rows(x)[0] is x or len(sharding.devices()) > 1


# --------------------------------------------------------------------------------------
# chunking: a batch over the memory budget is split, with the same answers
# --------------------------------------------------------------------------------------


def test_map_chunks_halves_until_it_fits():
    calls = []

    def fn(a, b):
        calls.append((a, b))
        if b - a > 3:
            raise _grid.MemoryBudgetError("too big")
        return np.arange(a, b)

    out, chunk = sharding.map_chunks(fn, 10)
    assert np.array_equal(out, np.arange(10)) and chunk <= 3
    with pytest.raises(_grid.MemoryBudgetError):
        sharding.map_chunks(lambda a, b: (_ for _ in ()).throw(_grid.MemoryBudgetError("x")), 4)


@pytest.mark.slow  # ~4 s; default siblings: test_map_chunks_halves_until_it_fits (map_chunks, through which a
# calibration round runs its rows, halves the chunk until it fits: one call's answers) and tests/engine/test_memory.py::
# test_construction_and_composition_run_in_chunks_bit_identically (a batch over the budget built and composed in
# chunks of rows, bit for bit)
def test_calibration_chunks_a_batch_that_does_not_fit(monkeypatch):
    # the two_devices subprocess's calibration: its single-device kernels are in the store
    kw = eval(KW, {"ErrRates": ErrRates, "Advantage": Advantage})
    whole = dpax.calibrate_dpsgd(**kw)
    # budget: a few rows of the composed support fit, a round's 3 rows x 8 candidates do not
    length = dpax.dpsgd(whole.noise_multiplier, kw["sample_rate"], kw["num_steps"], grid_step=1e-2).support_length
    monkeypatch.setattr(_grid, "MEMORY_LIMIT_BYTES", 4 * 2 * length * 2 * _grid.BYTES_PER_POINT)
    seen = []
    real = sharding.map_chunks

    def spy(fn, n, chunk=None):
        out, used = real(fn, n, chunk)
        seen.append((n, used))
        return out, used

    monkeypatch.setattr(sharding, "map_chunks", spy)
    from dpax._engine import composition  # the engine splits a composition itself
    fft_rows = []
    real_fft = composition.fft_compose_kernel
    monkeypatch.setattr(composition, "fft_compose_kernel",
                        lambda f, *a, **k: fft_rows.append(f[0].pmf_x.shape[0]) or real_fft(f, *a, **k))
    chunked = dpax.calibrate_dpsgd(**kw)
    assert any(used < n for n, used in seen) or min(fft_rows) < max(n for n, _ in seen)  # it really was split
    assert np.array_equal(chunked.noise_multiplier, whole.noise_multiplier)
    assert list(chunked.status) == list(whole.status)
    # the plain call runs such a batch in chunks of rows instead of refusing it: 12
    # copies of the first row, composed 10 rows at a time (3 kernels; 24 rows of noise 0.3
    # to 0.36, grouped by length and never over the budget, took 13)
    fft_rows.clear()
    noise, rate, steps = whole.noise_multiplier[0], kw["sample_rate"][0], kw["num_steps"][0]
    assert dpax.dpsgd(np.full(12, noise), rate, steps, grid_step=1e-2).batch_shape == (12,)
    assert 0 < max(fft_rows) < 12
