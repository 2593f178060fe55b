"""riskcal's ``riskcal.utils``: ``_ensure_array`` and the bisection
``inverse_monotone_function`` (on :func:`dpax.compat.riskcal._core.bisect`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._core import bisect, is_python_scalar

__all__ = ["inverse_monotone_function"]


def _ensure_array(x):
    """``(np.asarray(x), was_scalar)``; an int or float becomes a 1-element array."""
    if is_python_scalar(x):
        return np.asarray([x]), True
    return np.asarray(x), False


def inverse_monotone_function(
    f: Callable[[float], float],
    f_target: float,
    bounds: tuple[float, float],
    func_threshold: float = 1e-3,
    param_threshold: float = 1e-3,
    max_iter: int = 100,
    increasing: bool = False,
) -> float:
    """x in ``bounds`` where the monotone ``f`` crosses ``f_target``, on the side where
    f(x) <= f_target: the smallest such x for a decreasing f, the largest for an increasing
    one, within ``param_threshold`` of the crossing and with |f(x) - f_target| <=
    ``func_threshold``. Raises :class:`~dpax.compat.riskcal.CalibrationError` (a
    RuntimeError and a ValueError) when no such x is found in ``max_iter`` bisections."""
    x, _, _, _ = bisect(lambda v: (float(f(v)), None), float(f_target), bounds, func_tol=float(func_threshold),
                        param_tol=float(param_threshold), max_iter=int(max_iter), increasing=bool(increasing),
                        meet_below=True, what="inverse_monotone_function")
    return x
