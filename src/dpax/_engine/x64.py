"""float64 on every device without touching the user's global JAX configuration.

JAX computes in float32 unless ``jax_enable_x64`` is set. dpax never flips that global
switch: every public entry point runs its kernels inside the ``jax.enable_x64(True)``
context manager instead, so importing dpax leaves the user's own code as it was.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import jax
import numpy as np

F = TypeVar("F", bound=Callable)


def float64(fn: F) -> F:
    """Decorator: run ``fn`` with 64-bit JAX types enabled (and restore the setting after)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with jax.enable_x64(True):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def as_result(values: Any, shape: tuple[int, ...] | None = None, dtype: Any = np.float64) -> Any:
    """A result for the user: NumPy values (float64 unless ``dtype`` says otherwise; None
    keeps theirs) reshaped to ``shape`` (default: as they are), a Python scalar where the
    shape is ``()``.

    >>> as_result([0.5], ()), as_result([1, 2], (2,)), as_result(["met"], (), dtype=None)
    (0.5, array([1., 2.]), 'met')
    """
    arr = np.asarray(values) if dtype is None else np.asarray(values, dtype=dtype)
    if shape is not None:
        arr = arr.reshape(shape)
    return arr.item() if arr.ndim == 0 else arr
