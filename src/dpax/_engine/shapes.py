"""Checks of shapes: arguments that must broadcast together, and an index that must select
rows of a batch; each error names the arguments.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .messages import brief


def broadcast_shapes(*named: tuple[str, Any]) -> tuple[int, ...]:
    """The broadcast shape of named arrays (or shapes), NumPy rules; a ValueError naming two
    arguments that do not broadcast together, with their shapes, otherwise.

    Args:
        *named: ``(name, array_or_shape)`` pairs; a tuple is taken as a shape.

    Returns:
        The broadcast shape.

    >>> broadcast_shapes(("noise_multiplier", np.ones(2)), ("num_steps", ()))
    (2,)
    >>> broadcast_shapes(("noise_multiplier", np.ones(2)), ("sample_rate", np.ones(3)))
    Traceback (most recent call last):
    ...
    ValueError: noise_multiplier (shape (2,)) and sample_rate (shape (3,)) do not broadcast together (NumPy rules: each axis, counted from the last, must have equal lengths or length 1)
    """  # noqa: E501 (a doctest's expected exception message, kept verbatim on one line)
    shapes = [(n, tuple(a) if isinstance(a, tuple) else np.shape(a)) for n, a in named]
    try:
        return np.broadcast_shapes(*(s for _, s in shapes))
    except ValueError:
        pass
    for i, (n1, s1) in enumerate(shapes):
        for n2, s2 in shapes[i + 1:]:
            try:
                np.broadcast_shapes(s1, s2)
            except ValueError:
                raise ValueError(
                    f"{n1} (shape {s1}) and {n2} (shape {s2}) do not broadcast together (NumPy rules: each "
                    "axis, counted from the last, must have equal lengths or length 1)") from None
    raise ValueError("the arguments do not broadcast together: " + ", ".join(f"{n} {s}" for n, s in shapes))


def broadcast_arrays(*named: tuple[str, np.ndarray]) -> list[np.ndarray]:
    """The arrays of ``named`` broadcast to one shape (:func:`broadcast_shapes` names the
    two that do not broadcast).

    >>> [a.shape for a in broadcast_arrays(("epsilon", np.ones(2)), ("delta", np.ones(())))]
    [(2,), (2,)]
    """
    shape = broadcast_shapes(*named)
    return [np.broadcast_to(a, shape) for _, a in named]


def batch_rows(name: str, key: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """The flat row numbers that the NumPy index ``key`` selects from a batch of ``shape`` (an
    int array of the selection's shape), or an error naming ``name``.

    Args:
        name: how the message names the index (e.g. ``"index"``).
        key: a NumPy index: integers, a boolean mask, a slice or a tuple of them.
        shape: the batch shape indexed.
        what: what the batch is, for the message (e.g. ``"PrivacyLoss"``).

    Returns:
        The selected rows' numbers in the flattened batch, with the selection's shape.

    Raises:
        TypeError: the index would add an axis (``None``, a bare ``True`` or ``False``).
        IndexError: NumPy refuses the index (out of range, float entries, too many indices).
        ValueError: the index selects no row: an empty batch holds no configuration.

    >>> batch_rows("index", [1], (3,), "target")
    array([1])
    >>> batch_rows("index", [], (3,), "target")
    Traceback (most recent call last):
    ...
    ValueError: index [] selects none of the 3 rows of the target; select at least one (an empty batch holds no configuration)
    """  # noqa: E501 (a doctest's expected exception message, kept verbatim on one line)
    n = int(np.prod(shape, dtype=int))
    if any(part is None or isinstance(part, (bool, np.bool_)) for part in (key if isinstance(key, tuple) else (key,))):
        raise TypeError(f"{name} {brief(key)} would add an axis (None or a bare True / False) to the {what}'s batch; "
                        "index it with integers, a boolean mask, slices or a tuple of them")
    try:
        rows = np.arange(n).reshape(shape)[key]
    except IndexError as exc:
        raise IndexError(f"{name} {brief(key)} is not an index into a batch of shape {shape}: {exc}") from None
    if np.size(rows) == 0:
        raise ValueError(f"{name} {brief(key)} selects none of the {n} rows of the {what}; select at least one (an "
                         "empty batch holds no configuration)")
    return np.asarray(rows)


def shape_tuple(shape: Any, low: int = 0, what: str = "", name: str = "shape") -> tuple[int, ...]:
    """``shape`` as a tuple of integers >= ``low``; a TypeError (not a sequence of integers:
    a string, booleans, floats) or ValueError naming the argument ``name`` otherwise,
    ``what`` saying what the integers count.

    >>> shape_tuple([2, 3])
    (2, 3)
    >>> shape_tuple((0,), low=1, what="a batch of configurations")
    Traceback (most recent call last):
    ...
    ValueError: shape must hold integers >= 1 (a batch of configurations), got (0,)
    """
    try:
        if isinstance(shape, (str, bytes)) or any(isinstance(d, (bool, np.bool_)) for d in shape):
            raise TypeError
        out = tuple(int(operator.index(d)) for d in shape)
    except TypeError:
        raise TypeError(f"{name} must be a tuple of integers, got {brief(shape)}") from None
    if any(d < low for d in out):
        raise ValueError(f"{name} must hold integers >= {low}{f' ({what})' if what else ''}, got {out}")
    return out
