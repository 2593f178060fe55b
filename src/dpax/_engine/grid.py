"""Grid bookkeeping: padded lengths, FFT sizes and the working-memory budget.

A batch shares one grid step and one padded support length. Lengths are rounded up to a
small set of FFT-friendly sizes (2^k times 1, 5/4, 3/2 or 7/4) so that calls with slightly
different supports reuse compiled kernels, and a search shares longer lengths across its
rounds (:func:`shared_lengths`): every new shape is a compilation (a fraction of a second).

Sharing is for the first calls. A call repeated a third time (the same configurations and
settings, in the same process) gives every size its own length (:func:`repeated`): the third
call compiles the shapes it lacks once, and every call after it does no padded work. A second
call still compiles nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading

import jax.numpy as jnp
import numpy as np

MIN_LENGTH = 256

#: The loss grid's step wherever a function lets the user leave it out (mechanisms, events,
#: calibration, sweeps, the CLI): 1e-4 nats, riskcal's and gdpnum's default.
DEFAULT_GRID_STEP = 1e-4

#: Largest |privacy loss| a grid may reach: exp(loss) must stay inside float64.
MAX_LOSS = 600.0

#: Working-memory budget, in bytes (DPAX_MEMORY_LIMIT_GB): every kernel's peak (its arrays,
#: and a batch's assembled output beside the chunk running) is estimated before it runs and
#: refused above this, naming the argument to change. The process itself (~0.2 GiB after
#: importing dpax) and XLA's compiler while it compiles (~0.1-0.2 GiB) come on top.
MEMORY_LIMIT_BYTES = int(float(os.environ.get("DPAX_MEMORY_LIMIT_GB", "8")) * 2**30)

#: Bytes of working memory per support point per batch row (pmfs, CDFs, FFT buffers).
BYTES_PER_POINT = 160


#: A length used before in a search is reused for a support up to this many times shorter
#: (see :func:`shared_lengths`): the rounds of a search share their kernels, whose padded work
#: is small next to a compilation (~0.25 s a kernel on a 2-core CPU). Measured on the quick
#: start's command (grid 1e-4, with the standard comparison; 2-core CPU): 8 compiled 28
#: kernels (first run 9.7 s; 23 since SMALL_BATCH_POINTS) and runs 1.68 s warm; sharing
#: compositions only up to 2x compiled 36 (11.7 s) for 1.29 s warm, and 1.5 everywhere 57 (16.6 s) for 0.90 s: each
#: warm gain cost the first run more, so the first run's count decides. A repeated workload
#: (:func:`repeated`) pads nothing: its sizes are compiled once, on its third call.
SHARED_PADDING = 8
#: The most any site shares in a search over many configurations (at least
#: :data:`dpax._engine.batching.GROUP_MIN_ROWS`): there each round's groups already run at
#: their widest row's length, and sharing more would pad every narrower group to the
#: lengths of wider ones. The 64-row calibration table at grid 1e-3 (2-core CPU): warm
#: 8.3 s with 8-fold sharing, 5.2 s with this, for as long a first call (48 s, 140 and 153
#: kernels compiled).
BATCH_SHARED_PADDING = 1.5
#: Inside a search over fewer than 32 configurations (no ``padding``, see
#: BATCH_SHARED_PADDING), a length a kernel shape used before (the same rows and factors)
#: serves a support however much shorter while the padded batch has at most this many points
#: (rows x length): its padded work, a few milliseconds, is far below a compilation (~0.25 s).
#: calibrate_dpsgd(1e-3, 10_000, ErrRates(0.1, 0.5)) with the standard comparison compiles 17
#: kernels instead of 22 at grid 1e-3 (first call 6.5 -> 5.1 s, 2-core CPU) and the quick
#: start's command 23 instead of 28: the standard search's rounds reuse the 32,768-point
#: kernels of the risk search's first round for supports of 1,280 points.
SMALL_BATCH_POINTS = 2**19
#: A batch's row count used before in a search is reused for up to this many times fewer
#: rows: padding rows is cheap next to compiling (a round of 2 candidates after rounds of
#: 8 reuses their kernels).
SHARED_ROWS = 8


def power_of_two(n: int) -> int:
    """Smallest power of two >= n (and >= MIN_LENGTH): the coarser ladder of kernels whose
    compilation is expensive and whose inputs can be padded without changing the answer.

    >>> [power_of_two(n) for n in (1, 300, 1024, 1025)]
    [256, 512, 1024, 2048]
    """
    return max(MIN_LENGTH, 1 << (max(int(n), 1) - 1).bit_length())


def _ladder(n: int) -> int:
    n = max(int(n), MIN_LENGTH)
    base = 1 << (n.bit_length() - 1)
    return next(size for size in (base, base * 5 // 4, base * 3 // 2, base * 7 // 4, 2 * base) if size >= n)


_used: contextvars.ContextVar[dict | None] = contextvars.ContextVar("dpax_used_lengths", default=None)
_padding: contextvars.ContextVar[float | None] = contextvars.ContextVar("dpax_shared_padding", default=None)
#: the workload of the enclosing :func:`shared_lengths` block (None: never repeated)
_workload: contextvars.ContextVar[object] = contextvars.ContextVar("dpax_workload", default=None)

#: workload -> how many of its calls (outermost :func:`shared_lengths` blocks) have ended in
#: this process (see :func:`repeated`)
_RUNS: dict = {}
#: Calls of a workload that share shapes before the next pads nothing: two, so that a second
#: call compiles nothing (a script run twice, a test repeating a call), and a loop repeating
#: the call pays its own shapes' compilations once, on its third call
REPEATS_BEFORE_OWN = 2
#: at most this many workloads are counted (a few bytes each; past it, new ones are not)
RUNS_MAX = 100_000
_runs_lock = threading.Lock()


def repeated() -> bool:
    """Whether the workload of the enclosing :func:`shared_lengths` block (a hashable
    identity of the call: its configurations and settings) has run
    :data:`REPEATS_BEFORE_OWN` times before in this process. Without a workload: False.

    The first calls of a workload pad to shapes their earlier rounds compiled (few
    compilations: the fastest first answer, and nothing new on a second call); a repeated
    call gives every size its own shape (compiled once, on the third call; then no padded
    work). A loop over different configurations is a first call each time. Whether a call
    is repeated depends only on the calls made before it in the process, so answers are
    reproducible from the process's history; they differ from a first call's by the
    padding's effect on round-off (see :func:`shared_lengths`) and never in safety.

    >>> forget_repeats()
    >>> for _ in range(3):
    ...     with shared_lengths(workload="demo"):
    ...         print(repeated())
    False
    False
    True
    >>> with shared_lengths(workload="another"):
    ...     repeated()
    False
    """
    workload = _workload.get()
    return workload is not None and _RUNS.get(workload, 0) >= REPEATS_BEFORE_OWN


def forget_repeats() -> None:
    """Forget the workloads run so far: the next call of any workload shares shapes as a
    first call does (used by :func:`dpax.clear_kernel_cache`, and by tests that pin the
    work of a first call)."""
    with _runs_lock:
        _RUNS.clear()


def _count_run(workload) -> None:
    with _runs_lock:
        if workload in _RUNS or len(_RUNS) < RUNS_MAX:
            _RUNS[workload] = _RUNS.get(workload, 0) + 1


def padded_length(n: int, site: str | None = None, rows: int | None = None, shape: tuple | None = None) -> int:
    """Smallest size >= n of the form 2^k * {1, 5/4, 3/2, 7/4}, and at least MIN_LENGTH:
    FFT-friendly, at most 25% longer than needed, and one compiled kernel serves a range of
    supports. Inside :func:`shared_lengths`, a named ``site`` may get a longer length it
    used before (``rows``, ``shape``: see :func:`shared_size`).

    >>> [padded_length(n) for n in (1, 300, 1024, 1025)]
    [256, 320, 1024, 1280]
    """
    return shared_size(_ladder(n), site, rows=rows, shape=shape)


def shared_size(size: int, site=None, factor: float | None = None, rows: int | None = None,
                shape: tuple | None = None) -> int:
    """``size``, or inside :func:`shared_lengths` the smallest size already used at ``site``
    (any hashable name) between ``size`` and ``factor * size`` (default
    ``SHARED_PADDING``; recorded).

    ``rows`` (the batch's row count) and ``shape`` (the rest of the kernel's input shape,
    e.g. its factors' lengths) describe the kernel the size is for: a size used before for
    the same rows and shape (the same compiled kernel) is preferred to another; and in a
    search over fewer than 32 configurations (no ``padding`` set by :func:`shared_lengths`)
    such a size also serves a support more than ``factor`` times shorter, when the padded
    batch has at most :data:`SMALL_BATCH_POINTS` points.

    >>> forget_repeats()
    >>> with shared_lengths({}):
    ...     [shared_size(s, "compose", rows=8, shape=(5120,)) for s in (32768, 1280, 1536)]
    [32768, 32768, 32768]
    """
    used = _used.get()
    if site is None or used is None:
        return size
    kernel = (site, rows, shape)
    if repeated():  # a repeated workload: its own size
        used.setdefault(site, set()).add(size)
        used.setdefault(kernel, set()).add(size)
        return size
    padding = _padding.get()
    if factor is None:
        factor = SHARED_PADDING if padding is None else min(SHARED_PADDING, padding)
    # padded whatever the factor: a small batch of the same kernel, in a search over fewer
    # than 32 configurations (over more, rows are grouped by width: see BATCH_SHARED_PADDING)
    small = SMALL_BATCH_POINTS // rows if padding is None and rows else 0

    def serves(m: int, same_kernel: bool) -> bool:
        return size <= m and (m <= factor * size or (same_kernel and m <= small))

    same = [m for m in used.get(kernel, ()) if serves(m, True)]
    before = same or [m for m in used.get(site, ()) if serves(m, False)]
    size = min(before, default=size)
    used.setdefault(site, set()).add(size)
    used.setdefault(kernel, set()).add(size)
    return size


@contextlib.contextmanager
def own_lengths():
    """Within the body, every call gets its own padded lengths (an enclosing
    :func:`shared_lengths` is suspended): results exactly as a standalone call gives them."""
    token = _used.set(None)
    try:
        yield
    finally:
        _used.reset(token)


def sharing() -> bool:
    """Whether the caller runs inside :func:`shared_lengths` (a search: its batches share
    lengths and kernel shapes; outside, every row of a batch gets its own)."""
    return _used.get() is not None


def lengths_in_use() -> dict:
    """The ``used`` dict of the enclosing :func:`shared_lengths` block, or a new one."""
    used = _used.get()
    return {} if used is None else used


@contextlib.contextmanager
def shared_lengths(used: dict | None = None, padding: float | None = None, workload=None):
    """Within the body, each site (construct, compose) reuses the shortest length it used
    before, up to ``SHARED_PADDING`` times its own, under
    the same ``used`` dict (which records them; None: the enclosing block's, or a new one).
    ``padding``: at most this factor at every site within the body (see
    :data:`BATCH_SHARED_PADDING`). ``workload``: a hashable identity of the call (its
    configurations and settings) whose repeated calls pad nothing (:func:`repeated`; None:
    the enclosing block's, if any).

    A search evaluates rounds of candidates whose supports differ a little; sharing lengths
    makes later rounds reuse the compiled kernels of earlier ones instead of compiling new
    ones. A longer array only extends the support with grid points beyond the tail bound
    (mass below ``SINGLE_STEP_TAIL`` per step, which the shorter array would book on its end
    point and infinite atom), and the FFT with zeros: results change by round-off only.

    >>> forget_repeats()  # a first call
    >>> used = {}
    >>> with shared_lengths(used):
    ...     padded_length(3000, "construct"), padded_length(1500, "construct"), padded_length(300, "construct")
    (3072, 3072, 320)
    >>> with shared_lengths({}, padding=1.5):
    ...     padded_length(3000, "construct"), padded_length(2200, "construct"), padded_length(1500, "construct")
    (3072, 3072, 1536)
    """
    if used is None:  # join the enclosing one, if any
        used = lengths_in_use()
    token, token_padding = _used.set(used), _padding.set(padding if padding is not None else _padding.get())
    token_workload = _workload.set(workload if workload is not None else _workload.get())
    try:
        yield used
    finally:
        _workload.reset(token_workload)
        _padding.reset(token_padding)
        _used.reset(token)
        if workload is not None:
            _count_run(workload)


def loss_grid(offset, n: int, grid_step: float):
    """Grid losses ``(offset[r] + i) * grid_step`` for i = 0..n-1, shape (rows, n).

    NumPy in, NumPy out (host code); JAX arrays (or tracers) give a JAX array.
    """
    xp = np if isinstance(offset, np.ndarray) else jnp
    return (offset[:, None] + xp.arange(n)[None, :]) * grid_step


class MemoryBudgetError(ValueError):
    """A kernel would exceed the working-memory budget (batched callers split the batch)."""


def _gib(nbytes: float) -> str:
    gib = nbytes / 2**30
    return f"{gib:.1f} GiB" if gib >= 10 else f"{gib:.3g} GiB"


def check_bytes(need: float, what: str, detail: str, hint: str = "a coarser grid_step or a smaller batch") -> None:
    """Raise :class:`MemoryBudgetError` (a ValueError) before a kernel runs, if its estimated
    peak ``need`` (bytes) exceeds the budget ``MEMORY_LIMIT_BYTES``; ``detail`` says what
    needs it, ``hint`` which argument to change."""
    if need > MEMORY_LIMIT_BYTES:
        raise MemoryBudgetError(
            f"{what}: {detail} need about {_gib(need)} of working memory, over the "
            f"{_gib(MEMORY_LIMIT_BYTES)} budget; use {hint}, or raise DPAX_MEMORY_LIMIT_GB"
        )


def check_memory(rows: int, length: int, what: str) -> None:
    """Raise a ValueError saying how much memory a kernel would need, if over budget."""
    check_bytes(rows * length * BYTES_PER_POINT, what, f"{rows} row(s) of {length} grid points")


def rows_per_chunk(rows: int, per_row: float, fixed: float, what: str, detail: str,
                   hint: str = "a coarser grid_step or a smaller batch") -> int:
    """How many of ``rows`` independent rows one kernel call may take so that ``fixed`` bytes
    (the outputs, kept whole) plus ``per_row`` bytes of intermediates per row stay within
    the budget; raises :class:`MemoryBudgetError` (saying ``detail`` and ``hint``, as
    :func:`check_bytes`) when not even one row fits.

    >>> rows_per_chunk(10, 100, 0, "k", "x") == 10
    True
    """
    check_bytes(fixed + per_row, what, detail, hint)
    return int(max(1, min(rows, (MEMORY_LIMIT_BYTES - fixed) // max(per_row, 1))))
