"""The working-memory budget is a ceiling on peak memory, and rows are chunked under it
(issue 21).

Every kernel's peak is estimated before it runs (construction, the composition's Chernoff
window, the FFT composition, the analysis kernels); a call over the budget is refused with
a MemoryBudgetError (a ValueError) naming the argument to change, before anything large is
allocated. Rows are independent, so a batch whose intermediates exceed the budget runs in
chunks of rows, bit-identical to one call; only an output larger than the budget is refused.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import dpax
from dpax._engine import batching, composition, construct, grid

_PEAK = """
import resource, dpax
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    dpax.dpsgd(1.0, 0.5, 1_000_000, grid_step=1e-5)
    print("no error")
except ValueError as exc:
    print(type(exc).__name__, exc)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024)
"""


def test_the_budget_bounds_the_peak_before_the_error():
    """The issue's call, 10 times coarser, under a 0.25 GiB budget: the single step (1e6
    points) fits, the million-fold composition does not. Before, the Chernoff window built an
    (n, 48) table first (peak 0.9 GiB over the process's baseline); now the peak stays
    within the budget (plus ~0.15 GiB of compiler memory), and the error names num_steps."""
    env = {**os.environ, "DPAX_MEMORY_LIMIT_GB": "0.25"}
    run = subprocess.run([sys.executable, "-c", _PEAK], env=env, capture_output=True, text=True, timeout=600)
    message, peak = run.stdout.strip().splitlines()
    assert message.startswith("MemoryBudgetError") and "num_steps" in message and "0.25 GiB budget" in message
    assert int(peak) < (0.25 + 0.15) * 2**30


def _spy(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)
    def spy(*args, **kwargs):  # records each call's row count
        first = args[0][0].pmf_x if isinstance(args[0], tuple) else args[0]
        calls.append(np.shape(first)[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


def test_no_kernel_runs_before_the_budget_error(monkeypatch):
    step = dpax.subsampled_gaussian(1.0, 0.5, grid_step=1e-3)
    window = _spy(monkeypatch, composition, "window_kernel")
    fft = _spy(monkeypatch, composition, "fft_compose_kernel")
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", 100 * step.support_length)  # below the window stage's need
    with pytest.raises(grid.MemoryBudgetError, match="num_steps up to 1,000.*Chernoff window.*working memory"):
        step.self_compose(1000)
    assert window == [] and fft == []
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", 2**30)  # the window fits, the FFT of 1e6 steps does not
    with pytest.raises(grid.MemoryBudgetError, match="num_steps up to 1,000,000"):
        step.self_compose(1_000_000)
    assert len(window) == 1 and fft == []
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", 10**6)  # construction: refused before its kernel
    built = _spy(monkeypatch, construct, "subsampled_gaussian_kernel")
    with pytest.raises(grid.MemoryBudgetError, match="subsampled_gaussian.*grid_step"):
        dpax.subsampled_gaussian(1.0, 0.5, grid_step=1e-4)
    assert built == []


#: 6 rows of noise (the chunking and output tests share their kernels): two support lengths
#: (5120 and 256 points at sample rate 0.2, grid 1e-2), 3 rows each, built as two groups whose
#: construction kernels other files compile (the 3 x 5120 noise searches of
#: tests/compat/riskcal/test_backward_compatibility.py and test_riskcal_dpax_checks.py, the
#: latter's 3 x 256); under the budget below the rows are composed one at a time and analysed
#: 3 or 4 at a time (10 kernels of its own; noise 0.8 and 1.4, 1280 and 640 points, took 12).
#: 8 rows of noise 0.7 and 1.2 (4 x 1536, 4 x 768 points) compiled 16, four of them
#: constructions; 8 rows of three lengths (groups of 3, 3 and 2) compiled 15, six of them FFTs
#: (each row's own composed length); 12 rows from 0.7 to 1.2 took 24; from 0.7 to 3.0, 33
NOISE = np.repeat([0.25, 3.0], 3)


def _arrays(pl):
    return [np.asarray(a) for a in pl.pair]


def test_construction_and_composition_run_in_chunks_bit_identically(monkeypatch):
    noise = NOISE
    whole_step = dpax.subsampled_gaussian(noise, 0.2, grid_step=1e-2)
    whole = whole_step.self_compose(30)
    n, length = whole_step.support_length, whole.support_length
    answers = (whole.epsilon([1e-5, 1e-8]), whole.beta([0.01, 0.1]), whole.delta([1.0]), whole.advantage())
    built = _spy(monkeypatch, construct, "subsampled_gaussian_kernel")
    fft = _spy(monkeypatch, composition, "fft_compose_kernel")
    # room for the outputs and about two rows' intermediates (three rows' let beta, delta and
    # advantage run the 6 rows in one call; with two every analysis kernel runs in chunks)
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", noise.size * 16 * length + 2 * 2 * grid.BYTES_PER_POINT * length)
    step = dpax.subsampled_gaussian(noise, 0.2, grid_step=1e-2)
    chunked = step.self_compose(30)
    assert len(built) > 1 and max(built) <= 4
    assert len(fft) > 1 and max(fft) <= 4
    for a, b in zip(_arrays(step), _arrays(whole_step)):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(_arrays(chunked), _arrays(whole)):
        np.testing.assert_array_equal(a, b)
    # the analysis kernels chunk too: the same numbers
    again = (chunked.epsilon([1e-5, 1e-8]), chunked.beta([0.01, 0.1]), chunked.delta([1.0]), chunked.advantage())
    for a, b in zip(again, answers):
        np.testing.assert_array_equal(a, b)
    assert n < length


def test_an_output_over_the_budget_is_refused(monkeypatch):
    step = dpax.subsampled_gaussian(NOISE, 0.2, grid_step=1e-2)
    length = step.self_compose(30).support_length
    fft = _spy(monkeypatch, composition, "fft_compose_kernel")
    assembled = []
    monkeypatch.setattr(batching.RowAssembly, "__init__", lambda self, *a: assembled.append(a))
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", NOISE.size * 16 * length // 2)
    with pytest.raises(grid.MemoryBudgetError, match="num_steps up to 30"):
        step.self_compose(30)
    assert fft == [] and assembled == []  # refused before the output is allocated
    with pytest.raises(grid.MemoryBudgetError, match="GiB"):  # 2000 rows of 1.8e6 points: 55 GiB of output
        dpax.dpsgd(np.full(2000, 0.3), 0.5, 10, grid_step=1e-5)
    assert assembled == []


def test_the_cli_reports_the_budget_and_out_of_memory(monkeypatch, capsys):
    import importlib

    cli = importlib.import_module("dpax.cli.main")

    argv = ["curve", "--noise-multiplier", "1.0", "--sample-rate", "0.5", "--num-steps", "1000",
            "--grid-step", "1e-3", "--no-cache"]
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", 10**5)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpax: error: ") and "working memory" in err and "Traceback" not in err

    def oom(*args, **kwargs):
        raise RuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 1342177416 bytes.")

    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", 2**33)
    monkeypatch.setattr(dpax.PrivacyLoss, "self_compose", oom)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpax: error: curve: out of memory") and "DPAX_MEMORY_LIMIT_GB" in err
