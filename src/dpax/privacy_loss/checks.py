"""Argument checks of the PrivacyLoss value: the arrays of a pair built by hand, and the
query arrays of the risk methods (each message names the argument and the allowed range).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .._engine import validation as _v

#: A law given to :class:`PrivacyLoss` by hand must have a total mass (its infinite atom
#: included) within this of 1.
MASS_TOLERANCE = 1e-6


def checked_arrays(pmf_x: ArrayLike, pmf_y: ArrayLike, offset: ArrayLike, inf_mass_y: ArrayLike,
                   neginf_mass_x: ArrayLike, grid_step: ArrayLike
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """The arrays of a PrivacyLoss built by hand, checked (each message names its argument):
    masses finite and non-negative, both laws of one shape ``batch_shape + (n,)``, offsets
    whole numbers of that batch shape, atoms probabilities broadcasting to it, every law's
    total mass 1 within :data:`MASS_TOLERANCE`, the grid step a positive number.

    Args:
        pmf_x: Pr[X = (offset + i) * grid_step], finite masses >= 0, shape
            ``batch_shape + (n,)`` (at least one axis).
        pmf_y: Pr[Y = (offset + i) * grid_step], the shape of ``pmf_x``.
        offset: grid index of the first support point, whole numbers in [-2**53, 2**53],
            shape ``batch_shape``.
        inf_mass_y: Pr[Y = +inf], probabilities in [0, 1] broadcasting to ``batch_shape``;
            ``pmf_y``'s total plus this must be 1 within :data:`MASS_TOLERANCE`.
        neginf_mass_x: Pr[X = -inf], likewise for ``pmf_x``.
        grid_step: the grid's step, one finite number > 0.

    Returns:
        ``(pmf_x, pmf_y, offset, inf_mass_y, neginf_mass_x, grid_step)``: the masses as
        float64 arrays, ``offset`` as int64, the two atoms broadcast to ``batch_shape``
        (read-only views), the step a float. Nothing is normalised.

    Raises:
        ValueError: a mass negative, NaN, infinite or an array empty; ``pmf_x`` or ``pmf_y``
            one number; the two laws of different shapes; ``offset`` not of the batch shape
            or not whole numbers; an atom outside [0, 1] or not broadcasting to the batch
            shape; a law's total mass not 1 within :data:`MASS_TOLERANCE`; ``grid_step`` not
            > 0 or more than one number. Each message names the argument.
        TypeError: an argument not real (a boolean, a string, complex, a ragged list).

    >>> px, py, off, iy, nx, step = checked_arrays([0.5, 0.5], [0.5, 0.5], 0, 0.0, 0.0, 1.0)
    >>> off.dtype, step
    (dtype('int64'), 1.0)
    """
    step = _v.scalar("grid_step", grid_step, low=0.0, low_open=True)
    px, py = _v.real_array("pmf_x", pmf_x, low=0.0), _v.real_array("pmf_y", pmf_y, low=0.0)
    for name, a in (("pmf_x", px), ("pmf_y", py)):
        if a.ndim == 0:
            raise ValueError(f"{name} must be an array of masses over the grid (shape batch_shape + (n,)), "
                             "got one number")
    if px.shape != py.shape:
        raise ValueError(f"pmf_x (shape {px.shape}) and pmf_y (shape {py.shape}) must have the same shape")
    batch = px.shape[:-1]
    off = _v.real_array("offset", offset, low=-2.0**53, high=2.0**53)
    if off.shape != batch:
        raise ValueError(f"offset must have the batch shape of pmf_x, {batch} (one grid index per row), "
                         f"got shape {off.shape}")
    if np.any(off != np.round(off)):
        raise ValueError("offset must hold whole numbers (grid indices), "
                         f"got {float(off[off != np.round(off)].ravel()[0]):g}")
    atoms = []
    for name, mass in (("inf_mass_y", inf_mass_y), ("neginf_mass_x", neginf_mass_x)):
        arr = _v.probabilities(name, mass)
        try:
            atoms.append(np.broadcast_to(arr, batch))
        except ValueError:
            raise ValueError(f"{name} (shape {arr.shape}) must broadcast to the batch shape {batch}") from None
    for name, law, atom in (("pmf_x", px, atoms[1]), ("pmf_y", py, atoms[0])):
        total = np.sum(law, -1) + atom
        bad = np.abs(total - 1.0) > MASS_TOLERANCE
        if np.any(bad):
            which = "neginf_mass_x" if name == "pmf_x" else "inf_mass_y"
            raise ValueError(f"{name} with {which} must have a total mass of 1 (within {MASS_TOLERANCE:g}), got "
                             f"{float(total[bad].ravel()[0]):.10g}")
    return px, py, off.astype(np.int64), atoms[0], atoms[1], step


def query_values(check: Callable[[str, ArrayLike], np.ndarray], name: str, value: ArrayLike) -> np.ndarray:
    """``check(name, value)`` for the query array of a risk method, which may have any shape,
    an empty one included (it gets answers of its own shape, empty): an empty array's dtype
    is checked on one zero of it (booleans, strings and objects are refused as ever).

    Args:
        check: the validation of one query (e.g. ``validation.probabilities`` for alpha and
            delta, ``validation.real_array`` for epsilon), called with ``(name, value)``.
        name: the argument's name, quoted in error messages.
        value: the query, any shape (an empty array included).

    Returns:
        What ``check`` returns for a non-empty ``value`` (a float64 array of its shape);
        for an empty one, float64 zeros of its shape.

    Raises:
        TypeError: an empty array of a refused dtype (booleans, strings, objects), with the
            message ``check`` gives, quoting the array; otherwise what ``check`` raises.
        ValueError: what ``check`` raises (an entry outside its range, not finite).

    >>> query_values(_v.probabilities, "alpha", np.zeros((0, 2))).shape
    (0, 2)
    """
    try:
        raw = np.asarray(value)
    except Exception:  # noqa: BLE001 - not an array: the check says why
        return check(name, value)
    if raw.size or np.ma.isMaskedArray(value):
        return check(name, value)
    try:
        check(name, np.zeros(1, raw.dtype))
    except TypeError as exc:  # quote the array given, not the zero
        raise TypeError(f"{str(exc).rsplit('; got ', 1)[0]}; got {_v.brief(value)}") from None
    return np.zeros(raw.shape)
