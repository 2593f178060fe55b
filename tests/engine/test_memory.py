"""The working-memory budget is a ceiling on peak memory, and rows are chunked under it.

Every kernel's peak is estimated before it runs (construction, the composition's Chernoff
window, the FFT composition, the analysis kernels); a call over the budget is refused with
a MemoryBudgetError (a ValueError) naming the argument to change, before anything large is
allocated. Rows are independent, so a batch whose intermediates exceed the budget runs in
chunks of rows, bit-identical to one call; only an output larger than the budget is refused.
"""

from __future__ import annotations

import json
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
    """A million-step composition, under a 0.25 GiB budget: the single step (1e6 points)
    fits, the million-fold composition does not. The peak stays within the budget (plus
    ~0.15 GiB of compiler memory; the Chernoff window builds no (n, 48) table, which would
    peak at 0.9 GiB over the process's baseline), and the error names num_steps."""
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
    # the analysis kernels chunk too: the same numbers (epsilon(1e-8) of the least noise is read
    # from the composition's tightened far tails, whose tilted FFTs run in chunks of their own:
    # the same to an ulp)
    again = (chunked.epsilon([1e-5, 1e-8]), chunked.beta([0.01, 0.1]), chunked.delta([1.0]), chunked.advantage())
    np.testing.assert_allclose(again[0], answers[0], rtol=4e-16)
    for a, b in zip(again[1:], answers[1:]):
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


# -- query arrays ------------------------------------------------------------------------

_QUERY_PEAK = """
import json
import numpy as np
import dpax

def status(key):
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith(key))

pl = dpax.gaussian(1.0, grid_step=1e-2)
alpha = np.linspace(0.0, 1.0, 10_000_001)
sample = pl.beta(alpha[::1000])  # 10,001 alphas: one call
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")  # the high-water mark restarts from the resident set now
start = status("VmRSS")
beta = pl.beta(alpha)
print(json.dumps([status("VmHWM") - start, bool(np.array_equal(beta[::1000], sample)), beta.shape[0]]))
"""


@pytest.mark.slow  # ~8 s; default siblings: test_query_arrays_split_under_the_budget_give_the_same_answers (query
# arrays in blocks under the budget, every method's answers those of one call) and
# test_the_budget_bounds_the_peak_before_the_error (a process's measured peak within the budget)
@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="Linux high-water mark")
def test_a_query_array_is_answered_in_blocks_within_the_budget():
    """Ten million alphas under a 0.2 GiB budget: their answers and dpax's copy of them take
    0.15 GiB, one call's working memory another ~1 GiB (peak 1.2 GiB over the start before),
    so the alphas run in blocks; the peak stays within the budget (plus ~0.15 GiB of compiler
    and allocator memory) and the answers are those of one call."""
    env = {**os.environ, "DPAX_MEMORY_LIMIT_GB": "0.2"}
    run = subprocess.run([sys.executable, "-c", _QUERY_PEAK], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    peak, same, size = json.loads(run.stdout.strip().splitlines()[-1])
    assert same and size == 10_000_001
    assert peak < (0.2 + 0.15) * 2**30


@pytest.fixture(scope="module")
def small_batch():
    """Two rows (256 points each) with their companions, and every query method's answers
    from one call each (the default budget)."""
    pl = dpax.gaussian([1.0, 2.0], grid_step=0.1)
    pl.optimistic_companion()
    alpha, eps, delta = np.linspace(0.0, 1.0, 3001), np.linspace(-1.0, 20.0, 301), np.geomspace(1e-12, 1.0, 301)
    answers = {"beta": pl.beta(alpha), "delta": pl.delta(eps), "epsilon": pl.epsilon(delta),
               "beta bounds": pl.beta(alpha, bounds=True), "tradeoff": pl.tradeoff_points(),
               "tradeoff symmetric": pl.tradeoff_points(symmetric=True)}
    return pl, alpha, eps, delta, answers


def _query_calls(monkeypatch):
    """Spies on the analysis kernels: each call's (rows, queries) or (rows,)."""
    from dpax._engine import analyse

    calls = []
    for name in ("beta_kernel", "delta_kernel", "epsilon_kernel", "tradeoff_points_kernel"):
        real = getattr(analyse, name)

        def spy(pair, *queries, _real=real, _name=name, **static):
            calls.append((_name, np.shape(queries[0]) if queries else np.shape(pair.pmf_x)[:1]))
            return _real(pair, *queries, **static)

        spy.__name__ = name
        monkeypatch.setattr(analyse, name, spy)
    return calls


def test_query_arrays_split_under_the_budget_give_the_same_answers(monkeypatch, small_batch):
    """A budget with room for the answers and a block of ~1000 alphas on one row: every query
    method splits its rows and queries, and answers bit for bit as one call does."""
    pl, alpha, eps, delta, answers = small_batch
    calls = _query_calls(monkeypatch)
    n = pl.support_length
    # the answers (two sides for bounds) and the alphas' copy, one row's tables and ~1000 alphas
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", 5 * 8 * alpha.size + n * grid.BYTES_PER_POINT + 1024 * 88)
    got = {"beta": pl.beta(alpha), "delta": pl.delta(eps), "epsilon": pl.epsilon(delta),
           "beta bounds": pl.beta(alpha, bounds=True)}
    # tradeoff_points: its arrays (six tables of 2 x 257), one row's tables and ~300 alphas
    table = 2 * (n + 1) * 8
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", 6 * table + n * grid.BYTES_PER_POINT + 300 * 88)
    got.update({"tradeoff": pl.tradeoff_points(), "tradeoff symmetric": pl.tradeoff_points(symmetric=True)})
    for key, value in answers.items():
        for a, b in zip(list(value) if isinstance(value, tuple) else [value],  # pairs of arrays, Intervals
                        list(got[key]) if isinstance(value, tuple) else [got[key]]):
            np.testing.assert_array_equal(a, b, err_msg=key)
    shapes = {name: {shape for n_, shape in calls if n_ == name} for name, _ in calls}
    assert len(calls) > 6
    assert all(shape[0] == 1 for shape in shapes["beta_kernel"] | shapes["delta_kernel"] | shapes["epsilon_kernel"])
    assert max(shape[1] for shape in shapes["beta_kernel"]) <= 1024
    assert max(shape[1] for shape in shapes["delta_kernel"] | shapes["epsilon_kernel"]) < 301
    assert (1,) in shapes["tradeoff_points_kernel"]  # the reversed pair's tables: row by row
    # the symmetric curve's 514 alphas a row, in blocks of 256 padded to 257: searched by
    # bisection as in one call of 2 x 514
    assert (1, 257) in shapes["beta_kernel"]


def test_a_query_array_over_the_budget_is_refused_before_any_kernel(monkeypatch, small_batch):
    """The answers alone (or, with bounds=True, both sides' answers) over the budget: refused
    naming the argument and its size, before anything is converted or run."""
    pl, alpha, eps, delta, _ = small_batch
    calls = _query_calls(monkeypatch)
    big = np.linspace(0.0, 1.0, 100_000)
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", 8 * big.size * 2)  # the answers of two rows
    for call, name in ((lambda: pl.beta(big), "alpha"), (lambda: pl.delta(big), "epsilon"),
                       (lambda: pl.epsilon(big), "delta")):
        with pytest.raises(grid.MemoryBudgetError, match=f"{name} of 100,000 value"):
            call()
    nan = np.full(big.size, np.nan)
    with pytest.raises(grid.MemoryBudgetError, match="alpha of 100,000"):  # refused before it is read
        pl.beta(nan)
    # one side's answers fit beside the alphas' copy and a block of alphas, both sides' do not
    monkeypatch.setattr(grid, "MEMORY_LIMIT_BYTES", 8 * big.size * 3 + pl.support_length * grid.BYTES_PER_POINT
                        + 1024 * 88)
    with pytest.raises(grid.MemoryBudgetError, match="alpha of 100,000"):
        pl.beta(big, bounds=True)
    assert calls == []
    assert np.shape(pl.beta(big)) == (2, big.size) and calls
