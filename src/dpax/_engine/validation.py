"""Input checks shared by every public function.

Each check names the argument and the allowed range in its message; nothing reaches a
kernel as NaN, infinity, or outside its domain. Only real numbers pass: booleans, strings
(even numeric ones), complex numbers, masked arrays and arrays of Python objects are refused
with a ``TypeError`` naming the argument, since NumPy would otherwise turn ``True`` into 1,
``"0.5"`` into 0.5, drop an imaginary part and ignore a mask without a word. Messages quote a value by a
short repr (:func:`dpax._engine.messages.brief`), never a whole array. The shape checks
(:mod:`dpax._engine.shapes`) are reached through this module too.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .messages import BRIEF_CHARS, brief  # noqa: F401  (the checks' namespace: _v.brief)
from .shapes import batch_rows, broadcast_arrays, broadcast_shapes, shape_tuple  # noqa: F401  (_v.broadcast_shapes ...)


def shown(x: float) -> str:
    """``x`` in a message: ``{x:g}``, or every digit where that rounds it to another number
    (600.0001 is not "600", which would look inside a range ending at 600).

    >>> shown(0.25), shown(600.0001), shown(1.000000000000001), shown(float("nan"))
    ('0.25', '600.0001', '1.000000000000001', 'nan')
    """
    short = f"{x:g}"
    return short if float(short) == x or x != x else repr(float(x))


def _refuse(name: str, what: str, value: Any) -> TypeError:
    return TypeError(f"{name} must be a real number or an array of real numbers, not {what}; got {brief(value)}")


def _holds_masked(value: Any) -> bool:
    """Whether ``value`` is a NumPy masked array (``np.ma.masked`` included) or a (nested) list
    or tuple holding one: NumPy would drop the mask without a word."""
    if isinstance(value, np.ma.MaskedArray):
        return True
    return isinstance(value, (list, tuple)) and any(_holds_masked(v) for v in value)


def _refuse_masked(name: str, value: Any) -> None:
    if _holds_masked(value):
        raise TypeError(f"{name} must be a real number or an array of real numbers, not a masked array (its mask "
                        f"would be ignored); pass np.ma.filled(...) or the entries you mean, got {brief(value)}")


def _holds_bool(seq: list | tuple) -> bool:
    """Whether a (nested) list or tuple holds a boolean anywhere: mixed with numbers, NumPy
    reads it as 0 or 1 without a word."""
    return any(isinstance(v, (bool, np.bool_)) or (isinstance(v, (list, tuple)) and _holds_bool(v)) for v in seq)


def _as_array(name: str, value: ArrayLike, dtype: DTypeLike) -> np.ndarray:
    """``value`` as a finite, non-empty array of ``dtype``; booleans, strings, complex numbers,
    masked arrays and object arrays are refused (TypeError), NaN / infinity / emptiness too
    (ValueError)."""
    _refuse_masked(name, value)
    if isinstance(value, (bool, np.bool_)):
        raise _refuse(name, "a boolean", value)
    if isinstance(value, (str, bytes)):
        raise _refuse(name, "a string", value)
    if isinstance(value, (list, tuple)) and _holds_bool(value):  # NumPy would read True as 1.0
        raise _refuse(name, "booleans", value)
    try:
        raw = np.asarray(value)
    except Exception as exc:  # ragged nested lists, objects NumPy cannot read
        raise TypeError(f"{name} must be a number or a regular (non-ragged) array of numbers, got "
                        f"{brief(value)}") from exc
    kind = raw.dtype.kind
    if kind == "O" and raw.ndim == 0 and isinstance(raw.item(), numbers.Integral) \
            and not isinstance(raw.item(), bool):  # a Python int beyond int64
        try:
            raw = np.asarray(float(raw.item()))
        except OverflowError:
            raise ValueError(f"{name} must be finite, got an integer too large for float64 "
                             f"({len(str(abs(raw.item())))} digits)") from None
        kind = raw.dtype.kind
    if kind == "b":
        raise _refuse(name, "booleans", value)
    if kind in "USa":
        raise _refuse(name, "strings", value)
    if kind == "c":
        raise _refuse(name, "complex numbers", value)
    if kind not in "iuf":
        what = "an array of Python objects (dtype object)" if kind == "O" else f"an array of dtype {raw.dtype}"
        raise _refuse(name, what, value)
    arr = raw.astype(np.float64)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    finite = np.isfinite(arr)
    if not finite.all():
        first = float(arr[~finite].ravel()[0])
        where = "" if arr.ndim == 0 else f" (entry {np.argwhere(~finite)[0].tolist()} of an array of shape {arr.shape})"
        raise ValueError(f"{name} must be finite (no NaN or infinity), got {first:g}{where}")
    return arr.astype(dtype, copy=False)


def _interval(name: str, arr: np.ndarray, low: float | None, high: float | None, low_open: bool,
              high_open: bool) -> np.ndarray:
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
        raise ValueError(f"{name} must lie in {lo}{lo_v}, {hi_v}{hi}, got {shown(first)}")
    return arr


def real_array(
    name: str,
    value: ArrayLike,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    infinite_ok: bool = False,
) -> np.ndarray:
    """``value`` as a float64 array, every entry finite and inside the stated interval.

    Args:
        name: the argument's name, quoted in error messages.
        value: a number or an array-like of numbers (not booleans, strings, complex
            numbers or an object array).
        low: lower end of the allowed interval (``None``: unbounded below).
        high: upper end of the allowed interval (``None``: unbounded above).
        low_open: exclude ``low`` itself (the interval is ``(low, ...``).
        high_open: exclude ``high`` itself (the interval is ``..., high)``).
        infinite_ok: also allow +inf where the interval is unbounded above and -inf where
            it is unbounded below (limits, e.g. of a density's argument).

    Returns:
        A float64 array of the shape of ``value``.

    Raises:
        TypeError: ``value`` is not a real number or array of them (a boolean, a string,
            complex, a masked array, an object array, a ragged nested list).
        ValueError: ``value`` is empty, not finite, or has an entry outside the interval
            (the message names ``name``, the interval and the first offending entry).

    >>> real_array("noise_multiplier", [0.5, 1.0], low=0.0, low_open=True)
    array([0.5, 1. ])
    >>> real_array("noise_multiplier", 0.0, low=0.0, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: noise_multiplier must lie in (0, inf), got 0
    >>> real_array("s", [0.5, float("inf")], low=0.0, infinite_ok=True)
    array([0.5, inf])
    >>> real_array("noise_multiplier", True)
    Traceback (most recent call last):
    ...
    TypeError: noise_multiplier must be a real number or an array of real numbers, not a boolean; got True
    """
    if infinite_ok:  # the allowed infinities checked as a number inside the interval
        _refuse_masked(name, value)
        try:
            raw = np.asarray(value)
        except Exception:  # noqa: BLE001 - ragged lists: the check below names them
            raw = None
        if raw is not None and raw.dtype.kind == "f":
            inside = low + 1.0 if low is not None else (high - 1.0 if high is not None else 0.0)
            allowed = ((raw == np.inf) & (high is None)) | ((raw == -np.inf) & (low is None))
            real_array(name, np.where(allowed, inside, raw), low=low, high=high, low_open=low_open,
                       high_open=high_open)
            return raw.astype(np.float64)
    with np.errstate(over="ignore"):
        arr = _as_array(name, value, np.float64)
    return _interval(name, arr, low, high, low_open, high_open)


def returned(name: str, value: Any, size: int, *, low: float | None = None, high: float | None = None,
             infinite_ok: bool = False) -> np.ndarray:
    """What a caller's function ``name`` returned, checked: ``size`` real numbers (any shape),
    none NaN, each in [low, high] (``infinite_ok``: +inf allowed too).

    Args:
        name: how the message names the function and its call, e.g. ``"epsilon(w=2, deltas)"``.
        value: what it returned.
        size: how many numbers it must return (one per point it was given).
        low: smallest allowed value (``None``: unbounded below).
        high: largest allowed finite value (``None``: unbounded above).
        infinite_ok: +inf is allowed (e.g. epsilon = inf: no guarantee).

    Returns:
        The values as a flat float64 array of ``size``.

    Raises:
        TypeError: not real numbers (strings, booleans, complex numbers, masked arrays, objects).
        ValueError: the wrong count, NaN, or a value outside the interval.

    >>> returned("delta(epsilon)", [0.0, 0.5], 2, low=0.0, high=1.0)
    array([0. , 0.5])
    >>> returned("delta(epsilon)", ["0.1", "0.2"], 2)
    Traceback (most recent call last):
    ...
    TypeError: delta(epsilon) must return a real number or an array of real numbers, not strings; got ['0.1', '0.2']
    """
    if _holds_masked(value):
        raise TypeError(f"{name} must return a real number or an array of real numbers, not a masked array (its "
                        f"mask would be ignored); got {brief(value)}")
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raw, kind = None, "b" if isinstance(value, (bool, np.bool_)) else "U"
    else:
        try:
            raw = np.asarray(value)
        except Exception:  # ragged nested lists, objects NumPy cannot read
            raise TypeError(f"{name} must return a number or a regular array of numbers, got {brief(value)}") from None
        kind = raw.dtype.kind
    if kind not in "iuf":
        what = {"b": "booleans", "U": "strings", "S": "strings", "c": "complex numbers"}.get(
            kind, "Python objects" if kind == "O" else f"values of dtype {getattr(raw, 'dtype', '?')}")
        raise TypeError(f"{name} must return a real number or an array of real numbers, not {what}; got {brief(value)}")
    assert raw is not None  # None only for booleans and strings, refused just above
    arr = raw.astype(np.float64).reshape(-1)
    if arr.size != size:
        raise ValueError(f"{name} returned {arr.size} value(s) for {size} point(s); it must return one per point")
    if np.isnan(arr).any():
        raise ValueError(f"{name} returned NaN (entry {int(np.argmax(np.isnan(arr)))})")
    finite = arr[np.isfinite(arr)]
    if not infinite_ok and finite.size != arr.size:
        raise ValueError(f"{name} returned an infinite value (entry {int(np.argmax(~np.isfinite(arr)))})")
    if infinite_ok and np.any(arr == -np.inf):
        raise ValueError(f"{name} returned -inf (entry {int(np.argmax(arr == -np.inf))})")
    _interval(f"the values {name} returned", finite, low, high, False, False)
    return arr


def scalar(
    name: str,
    value: ArrayLike,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """One number: :func:`real_array` for an argument that does not broadcast (a curve's
    parameter, a tail bound); a 0-d array is accepted.

    Args:
        name: the argument's name, quoted in error messages.
        value: a single real number.
        low, high, low_open, high_open: the allowed interval, as in :func:`real_array`.

    Returns:
        The number as a Python float.

    Raises:
        TypeError: as :func:`real_array`.
        ValueError: ``value`` is an array of more than one number (the message says that
            ``name`` must be a single number), or as :func:`real_array`.

    >>> scalar("mu", 1)
    1.0
    >>> scalar("mu", [1.0, 2.0])
    Traceback (most recent call last):
    ...
    ValueError: mu must be a single number (it does not broadcast), got an array of shape (2,)
    """
    with np.errstate(over="ignore"):
        arr = _as_array(name, value, np.float64)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a single number (it does not broadcast), got an array of shape {arr.shape}")
    return float(_interval(name, arr, low, high, low_open, high_open))


def one_number(name: str, value: ArrayLike, **interval: Any) -> float:
    """One real number (a size-1 array is read as its entry) in the interval of
    :func:`real_array` (``low``, ``high``, ``low_open``, ``high_open``); several numbers are
    refused with a message naming ``name``.

    >>> one_number("noise_multiplier", [1.5], low=0.0, low_open=True)
    1.5
    >>> one_number("noise_multiplier", [1.0, 2.0])
    Traceback (most recent call last):
    ...
    ValueError: noise_multiplier must be one number here, got 2 numbers (shape (2,))
    """
    arr = real_array(name, value, **interval)
    if arr.size != 1:
        raise ValueError(f"{name} must be one number here, got {arr.size} numbers (shape {arr.shape})")
    return float(arr.reshape(-1)[0])


def one_integer(name: str, value: ArrayLike, *, minimum: int = 1) -> int:
    """One integer >= ``minimum`` (:func:`positive_int_array`; a size-1 array is read as its
    entry); several are refused with a message naming ``name``."""
    arr = positive_int_array(name, value, minimum=minimum)
    if arr.size != 1:
        raise ValueError(f"{name} must be one integer here, got {arr.size} numbers (shape {arr.shape})")
    return int(arr.reshape(-1)[0])


#: What the message of a fractional value adds, by argument name: where a whole number comes from.
WHOLE_NUMBER_HINTS = {
    "num_steps": ("; to train for a number of epochs, dpax.dpsgd_schedule(dataset_size, batch_size, epochs) gives "
                  "the sample rate and a whole number of steps (epochs * ceil(dataset_size / batch_size))"),
}


def positive_int_array(name: str, value: ArrayLike, *, minimum: int = 1) -> np.ndarray:
    """``value`` as an int64 array of integers >= ``minimum`` (floats must be whole numbers).

    A fractional value of an argument in :data:`WHOLE_NUMBER_HINTS` is refused with a hint
    (``num_steps``: how to go from epochs to steps).

    Args:
        name: the argument's name, quoted in error messages.
        value: an integer or an array-like of integers (``2.0`` is accepted, ``2.5``,
            booleans and strings are not).
        minimum: the smallest allowed value.

    Returns:
        An int64 array of the shape of ``value``.

    Raises:
        TypeError: ``value`` is a boolean or not numeric.
        ValueError: an entry is not whole, below ``minimum``, above 2**53, or not finite.

    >>> positive_int_array("num_steps", [1, 10.0])
    array([ 1, 10])
    >>> positive_int_array("num_steps", 60 * 60_000 / 256)
    Traceback (most recent call last):
    ...
    ValueError: num_steps must be a whole number >= 1, got 14062.5; to train for a number of epochs, dpax.dpsgd_schedule(dataset_size, batch_size, epochs) gives the sample rate and a whole number of steps (epochs * ceil(dataset_size / batch_size))
    """  # noqa: E501 (a doctest's expected exception message, kept verbatim on one line)
    with np.errstate(over="ignore"):
        arr = _as_array(name, value, np.float64)
    raw = np.asarray(value)
    if raw.dtype.kind in "iu" and np.any(raw > 2**53):  # 2**53 + 1 rounds to 2**53 in float64
        raise ValueError(f"{name} must be at most 2**53, got {int(raw[raw > 2**53].ravel()[0])}")
    whole = arr == np.round(arr)
    if not whole.all():
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {float(arr[~whole].ravel()[0]):g}"
                         + WHOLE_NUMBER_HINTS.get(name, ""))
    if np.any(arr < minimum):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {float(arr[arr < minimum].ravel()[0]):g}")
    if np.any(arr > 2**53):
        raise ValueError(f"{name} must be at most 2**53, got {float(arr[arr > 2**53].ravel()[0]):g}")
    return arr.astype(np.int64)


def grid_step(value: ArrayLike, name: str = "grid_step") -> float:
    """A single positive, finite discretisation interval in [1e-7, 1].

    Args:
        value: one number (a 0-d array is accepted); a batch shares one grid step.
        name: the argument's name in error messages (e.g. dp-accounting's
            ``value_discretization_interval``).

    Returns:
        The step as a Python float.

    Raises:
        TypeError: ``value`` is an array with more than one entry, or not a real number (a
            boolean or a string such as ``"0.5"`` included).
        ValueError: ``value`` is outside (0, 1] or below 1e-7.

    >>> grid_step(1e-3)
    0.001
    """
    _refuse_masked(name, value)
    try:
        ndim = np.ndim(value)
    except Exception:  # ragged nested lists
        ndim = 1
    if ndim != 0:
        raise TypeError(f"{name} must be one number shared by the batch, got {brief(value)}")
    v = float(real_array(name, value, low=0.0, high=1.0, low_open=True))
    if v < 1e-7:
        raise ValueError(f"{name} must be >= 1e-7 (finer grids exceed float64 resolution), got {shown(v)}")
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


def flag(name: str, value: Any) -> bool:
    """A boolean option (``True`` / ``False``, NumPy booleans included), else a TypeError
    naming it: a string such as ``"no"`` would otherwise count as true.

    >>> flag("compare_standard", False)
    False
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {brief(value)}")
    return bool(value)


def choice(name: str, value: Any, allowed: Iterable[str]) -> str:
    """One of the strings ``allowed``, else a ValueError (TypeError for a non-string)
    naming the argument and the choices.

    >>> choice("method", "empirical", ("parametric", "empirical"))
    'empirical'
    """
    allowed = tuple(allowed)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {allowed}, got {brief(value)}")
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {brief(value)}")
    return value
