"""float64 on every device without touching the user's global JAX configuration.

JAX computes in float32 unless ``jax_enable_x64`` is set. dpax never flips that global
switch: every public entry point runs its kernels inside the ``jax.enable_x64(True)``
context manager instead, so importing dpax leaves the user's own code as it was.
"""

from __future__ import annotations

import functools
from typing import Callable, TypeVar

import jax

F = TypeVar("F", bound=Callable)


def float64(fn: F) -> F:
    """Decorator: run ``fn`` with 64-bit JAX types enabled (and restore the setting after)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with jax.enable_x64(True):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
