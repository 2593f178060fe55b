"""Input checks shared by every public function.

Each check names the argument and the allowed range in its message; nothing reaches a
kernel as NaN, infinity, or outside its domain.
"""

from __future__ import annotations

import numbers

import numpy as np


def _as_array(name: str, value, dtype) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a number or an array of numbers, got {value!r}") from exc
    if arr.dtype == object:
        raise TypeError(f"{name} must be a number or an array of numbers, got {value!r}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or infinity), got {value!r}")
    return arr.astype(dtype, copy=False)


def real_array(
    name: str,
    value,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> np.ndarray:
    """``value`` as a float64 array, every entry finite and inside the stated interval."""
    arr = _as_array(name, value, np.float64)
    bad = np.zeros(arr.shape, dtype=bool)
    if low is not None:
        bad |= (arr <= low) if low_open else (arr < low)
    if high is not None:
        bad |= (arr >= high) if high_open else (arr > high)
    if np.any(bad):
        lo = "(" if low_open or low is None else "["
        hi = ")" if high_open or high is None else "]"
        lo_v = "-inf" if low is None else f"{low:g}"
        hi_v = "inf" if high is None else f"{high:g}"
        first = float(arr[bad].ravel()[0])
        raise ValueError(f"{name} must lie in {lo}{lo_v}, {hi_v}{hi}, got {first:g}")
    return arr


def positive_int_array(name: str, value, *, minimum: int = 1) -> np.ndarray:
    """``value`` as an int64 array of integers >= ``minimum`` (floats must be whole numbers)."""
    if isinstance(value, bool) or (isinstance(value, np.ndarray) and value.dtype == bool):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {value!r}")
    arr = _as_array(name, value, np.float64)
    if np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    if np.any(arr < minimum):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {float(arr[arr < minimum].ravel()[0]):g}")
    if np.any(arr > 2**53):
        raise ValueError(f"{name} must be at most 2**53, got {value!r}")
    return arr.astype(np.int64)


def grid_step(value) -> float:
    """A single positive, finite discretisation interval in (0, 1]."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        arr = np.asarray(value)
        if arr.ndim != 0:
            raise TypeError(f"grid_step must be one number shared by the batch, got {value!r}")
        value = arr.item()
    v = float(real_array("grid_step", value, low=0.0, high=1.0, low_open=True))
    if v < 1e-7:
        raise ValueError(f"grid_step must be >= 1e-7 (finer grids exceed float64 resolution), got {v:g}")
    return v


def probabilities(name: str, value, *, open_low: bool = False, open_high: bool = False) -> np.ndarray:
    return real_array(name, value, low=0.0, high=1.0, low_open=open_low, high_open=open_high)
