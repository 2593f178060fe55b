"""Grid bookkeeping: padded lengths, FFT sizes and the working-memory budget.

A batch shares one grid step and one padded support length. Lengths are rounded up to a
small set of FFT-friendly sizes (2^k times 1, 5/4, 3/2 or 7/4) so that repeated calls with
slightly different supports reuse compiled kernels instead of re-tracing.
"""

from __future__ import annotations

import math
import os

import jax.numpy as jnp
import numpy as np

MIN_LENGTH = 256

#: Largest |privacy loss| a grid may reach: exp(loss) must stay inside float64.
MAX_LOSS = 600.0

#: Working-memory budget for one kernel call, in bytes. Override with DPAX_MEMORY_LIMIT_GB.
MEMORY_LIMIT_BYTES = int(float(os.environ.get("DPAX_MEMORY_LIMIT_GB", "8")) * 2**30)

#: Bytes of working memory per support point per batch row (pmfs, CDFs, FFT buffers).
BYTES_PER_POINT = 160


def padded_length(n: int) -> int:
    """Smallest size >= n of the form 2^k * {1, 5/4, 3/2, 7/4}, and at least MIN_LENGTH."""
    n = max(int(n), MIN_LENGTH)
    k = math.floor(math.log2(n))
    base = 2**k
    for num in (4, 5, 6, 7, 8):
        size = base * num // 4
        if size >= n:
            return size
    return 2 * base  # unreachable


def loss_grid(offset, n: int, grid_step: float):
    """Grid losses ``(offset[r] + i) * grid_step`` for i = 0..n-1, shape (rows, n).

    NumPy in, NumPy out (host code); JAX arrays (or tracers) give a JAX array.
    """
    xp = np if isinstance(offset, np.ndarray) else jnp
    return (offset[:, None] + xp.arange(n)[None, :]) * grid_step


class MemoryBudgetError(ValueError):
    """A kernel would exceed the working-memory budget (batched callers split the batch)."""


def check_memory(rows: int, length: int, what: str) -> None:
    """Raise a ValueError saying how much memory a kernel would need, if over budget."""
    need = rows * length * BYTES_PER_POINT
    if need > MEMORY_LIMIT_BYTES:
        raise MemoryBudgetError(
            f"{what}: {rows} row(s) of {length} grid points need about {need / 2**30:.1f} GiB "
            f"of working memory, over the {MEMORY_LIMIT_BYTES / 2**30:.1f} GiB budget; use a "
            f"coarser grid_step, a smaller batch, or raise DPAX_MEMORY_LIMIT_GB"
        )
