"""Input checks shared by every public function.

Each check names the argument and the allowed range in its message; nothing reaches a
kernel as NaN, infinity, or outside its domain.
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike, DTypeLike


def _as_array(name: str, value: ArrayLike, dtype: DTypeLike) -> np.ndarray:
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
    value: ArrayLike,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> np.ndarray:
    """``value`` as a float64 array, every entry finite and inside the stated interval.

    Args:
        name: the argument's name, quoted in error messages.
        value: a number or an array-like of numbers.
        low: lower end of the allowed interval (``None``: unbounded below).
        high: upper end of the allowed interval (``None``: unbounded above).
        low_open: exclude ``low`` itself (the interval is ``(low, ...``).
        high_open: exclude ``high`` itself (the interval is ``..., high)``).

    Returns:
        A float64 array of the shape of ``value``.

    Raises:
        TypeError: ``value`` is not numeric.
        ValueError: ``value`` is empty, not finite, or has an entry outside the interval
            (the message names ``name``, the interval and the first offending entry).

    >>> real_array("noise_multiplier", [0.5, 1.0], low=0.0, low_open=True)
    array([0.5, 1. ])
    >>> real_array("noise_multiplier", 0.0, low=0.0, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: noise_multiplier must lie in (0, inf), got 0
    """
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


def positive_int_array(name: str, value: ArrayLike, *, minimum: int = 1) -> np.ndarray:
    """``value`` as an int64 array of integers >= ``minimum`` (floats must be whole numbers).

    Args:
        name: the argument's name, quoted in error messages.
        value: an integer or an array-like of integers (``2.0`` is accepted, ``2.5`` and
            booleans are not).
        minimum: the smallest allowed value.

    Returns:
        An int64 array of the shape of ``value``.

    Raises:
        TypeError: ``value`` is a boolean or not numeric.
        ValueError: an entry is not whole, below ``minimum``, above 2**53, or not finite.

    >>> positive_int_array("num_steps", [1, 10.0])
    array([ 1, 10])
    """
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


def grid_step(value: ArrayLike) -> float:
    """A single positive, finite discretisation interval in [1e-7, 1].

    Args:
        value: one number (a 0-d array is accepted); a batch shares one grid step.

    Returns:
        The step as a Python float.

    Raises:
        TypeError: ``value`` is an array with more than one entry, or not numeric.
        ValueError: ``value`` is outside (0, 1] or below 1e-7.

    >>> grid_step(1e-3)
    0.001
    """
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        arr = np.asarray(value)
        if arr.ndim != 0:
            raise TypeError(f"grid_step must be one number shared by the batch, got {value!r}")
        value = arr.item()
    v = float(real_array("grid_step", value, low=0.0, high=1.0, low_open=True))
    if v < 1e-7:
        raise ValueError(f"grid_step must be >= 1e-7 (finer grids exceed float64 resolution), got {v:g}")
    return v


def probabilities(name: str, value: ArrayLike, *, low_open: bool = False, high_open: bool = False) -> np.ndarray:
    """``value`` as a float64 array of probabilities: :func:`real_array` on [0, 1].

    Args:
        name: the argument's name, quoted in error messages.
        value: a number or an array-like of numbers.
        low_open: exclude 0 (the interval is ``(0, ...``).
        high_open: exclude 1 (the interval is ``..., 1)``).

    Returns:
        A float64 array of the shape of ``value``.

    Raises:
        TypeError: ``value`` is not numeric.
        ValueError: an entry lies outside the interval or is not finite.

    >>> probabilities("delta", [0.0, 1e-5])
    array([0.e+00, 1.e-05])
    >>> probabilities("delta", 0.0, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: delta must lie in (0, 1], got 0
    """
    return real_array(name, value, low=0.0, high=1.0, low_open=low_open, high_open=high_open)
