"""The certified bracket of a reported number: ``Interval(safe, optimistic)``.

The safe side comes from the dominating pair, the optimistic one from its companion
(:mod:`dpax.privacy_loss.companion`), so the truth lies between them (Kulynych et al. 2024,
the connect-the-dots pair, Section 3; the companion is dpax's post-processing of the
mechanism onto the grid). :func:`uncrossed` keeps a bracket a certificate when float64
round-off makes the two sides cross.
"""

from __future__ import annotations

import sys
import warnings
from types import FrameType
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._engine import validation as _v
from .._engine.x64 import as_result

#: Sides of a bracket that cross by at most this (relative, plus 1e-15 absolute) are float64
#: round-off of two equal numbers: the optimistic side is set to the safe one.
CROSSING_ROUNDOFF = 1e-12


class Interval(NamedTuple):
    """A reported number with its certified bracket.

    ``safe`` is the number dpax reports without ``bounds=True`` (from the dominating pair:
    beta never above the truth, advantage / epsilon / delta never below it); ``optimistic``
    is the same quantity from the optimistic companion
    (:meth:`PrivacyLoss.optimistic_companion`), on the other side of the truth. So the truth
    lies in ``[lower, upper]``, and ``width`` is what the grid's discretisation can cost.
    Fields and properties are floats for a single value, arrays (any batch shape) otherwise.

    Args:
        safe: the number from the dominating pair (the side dpax reports): a float, or an
            array of any shape.
        optimistic: the same quantity from the optimistic companion; broadcasts with
            ``safe`` (checked when an end is read: an Interval built by hand whose sides do
            not broadcast raises a ValueError naming them).

    >>> import dpax
    >>> b = dpax.gaussian(1.0, grid_step=1e-2).beta(0.1, bounds=True)
    >>> round(b.lower, 4), round(b.upper, 4), b.width < 1e-4
    (0.6109, 0.6109, True)
    """

    # float | np.ndarray in use; Any because callers outside this module build brackets from
    # values whose static type is wider (the risk methods' float | np.ndarray | Interval)
    safe: Any
    optimistic: Any

    def _shape(self) -> tuple[int, ...]:
        """The broadcast shape of the two sides (a ValueError naming them where they do not
        broadcast, a TypeError naming one that is not real numbers: an Interval built by hand)."""
        for name, side in (("safe", self.safe), ("optimistic", self.optimistic)):
            kind = np.asarray(side).dtype.kind
            if kind not in "fiu":
                raise TypeError(f"Interval's {name} side must be real numbers (floats), got "
                                f"{type(side).__name__} of dtype {np.asarray(side).dtype}")
        return _v.broadcast_shapes(("safe", np.shape(self.safe)), ("optimistic", np.shape(self.optimistic)))

    @property
    def lower(self) -> float | np.ndarray:
        """The smaller end of the bracket.

        Returns:
            ``minimum(safe, optimistic)``: a float where both sides are single numbers, else
            an array of their broadcast shape; at or below the truth.

        Raises:
            ValueError: the two sides do not broadcast (an Interval built by hand).
            TypeError: a side is not real numbers (an Interval built by hand).

        >>> Interval(0.5, 0.25).lower
        0.25
        """
        shape = self._shape()  # (checks the sides first)
        return as_result(np.minimum(self.safe, self.optimistic), shape)

    @property
    def upper(self) -> float | np.ndarray:
        """The larger end of the bracket.

        Returns:
            ``maximum(safe, optimistic)``: a float where both sides are single numbers, else
            an array of their broadcast shape; at or above the truth.

        Raises:
            ValueError: the two sides do not broadcast (an Interval built by hand).
            TypeError: a side is not real numbers (an Interval built by hand).

        >>> Interval([0.5, 0.1], 0.25).upper
        array([0.5 , 0.25])
        """
        shape = self._shape()
        return as_result(np.maximum(self.safe, self.optimistic), shape)

    @property
    def width(self) -> float | np.ndarray:
        """``upper - lower`` (``nan`` where both ends are infinite).

        Returns:
            ``|safe - optimistic|``, >= 0: a float where both sides are single numbers, else
            an array of their broadcast shape; the most the reported (safe) number can lie
            from the truth.

        Raises:
            ValueError: the two sides do not broadcast (an Interval built by hand).
            TypeError: a side is not real numbers (an Interval built by hand).

        >>> Interval(0.5, 0.25).width, Interval(float("inf"), float("inf")).width
        (0.25, nan)
        """
        shape = self._shape()
        with np.errstate(invalid="ignore"):
            return as_result(np.abs(np.subtract(self.safe, self.optimistic)), shape)

    def contains(self, value: ArrayLike, tol: float = 0.0) -> bool | np.ndarray:
        """Whether ``value`` lies in ``[lower - tol, upper + tol]`` (elementwise).

        Args:
            value: real numbers, +-inf allowed (an epsilon may be inf), NaN not; any shape
                broadcasting with the bracket's.
            tol: the slack added on both sides, one finite number >= 0 (default 0).

        Returns:
            A bool for a single value against a single bracket, else a boolean array of the
            broadcast shape.

        Raises:
            ValueError: ``value`` NaN or empty, ``tol`` negative, NaN, infinite or more than
                one number, or shapes that do not broadcast.
            TypeError: ``value`` or ``tol`` not real (a boolean, a string, complex).

        >>> b = Interval(0.5, 0.25)
        >>> b.contains(0.3), b.contains([0.2, 0.6], tol=0.1).tolist()
        (True, [True, True])
        """
        tol = _v.scalar("tol", tol, low=0.0)
        v = real_or_infinite("value", value)
        inside = (v >= np.asarray(self.lower) - tol) & (v <= np.asarray(self.upper) + tol)
        return inside.item() if inside.ndim == 0 else inside


def real_or_infinite(name: str, value: ArrayLike) -> np.ndarray:
    """``value`` as float64, real numbers or +-inf (NaN and non-numbers refused, named).

    Args:
        name: the argument's name, quoted in error messages.
        value: a number or an array-like of numbers, +-inf allowed.

    Returns:
        A float64 array of the shape of ``value`` (0-d for a number).

    Raises:
        ValueError: ``value`` holds NaN or is empty (the message names ``name``).
        TypeError: ``value`` is not real (a boolean, a string, complex, a masked array, a
            ragged nested list).

    >>> real_or_infinite("value", [1.0, float("inf")])
    array([ 1., inf])
    """
    checked = value
    try:
        raw = np.asarray(value)
    except Exception:  # ragged lists: real_array names them
        raw = None
    if raw is not None and raw.dtype.kind == "f":  # infinities allowed: checked as 0
        checked = np.where(np.isinf(raw), 0.0, raw)
    _v.real_array(name, checked)
    return np.asarray(value, np.float64)


def uncrossed(safe: float | np.ndarray, optimistic: ArrayLike, safe_is_upper: bool, trivial: ArrayLike,
              what: str) -> Interval:
    """``Interval(safe, optimistic)`` that is a certificate: where the companion's number lies
    beyond the safe one by more than round-off (its float64 sums lost the precision a tiny
    risk needs, e.g. a sample rate of 1e-12), the optimistic side is replaced by the bound
    every mechanism meets (0 for advantage, epsilon and delta; 1 - alpha for beta), with a
    RuntimeWarning pointing at the first caller outside dpax. The safe side is never changed.

    Args:
        safe: the dominating pair's answers (a float or an array), kept as given.
        optimistic: the companion's answers, of the shape of ``safe`` (or broadcasting to it).
        safe_is_upper: True where the safe side is the larger (advantage, epsilon, delta),
            False where it is the smaller (beta).
        trivial: the bound every mechanism meets, broadcasting to ``safe``'s shape: 0, or
            ``1 - alpha`` for beta.
        what: the quantity's name, the start of the warning's message.

    Returns:
        ``Interval(safe, optimistic')``: ``optimistic'`` is ``optimistic`` where it lies on its
        side of ``safe``, ``safe`` where the two cross by at most :data:`CROSSING_ROUNDOFF`
        (relative, plus 1e-15), ``trivial`` where they cross by more; a float where ``safe``
        is a single number, else an array of its shape.

    Warns:
        RuntimeWarning: the sides crossed by more than round-off somewhere.

    >>> uncrossed(0.5, 0.5 + 1e-14, True, 0.0, "delta")
    Interval(safe=0.5, optimistic=0.5)
    """
    s = np.asarray(safe, np.float64)
    o = np.asarray(optimistic, np.float64)
    with np.errstate(invalid="ignore"):
        over = (o - s) if safe_is_upper else (s - o)  # > 0: the sides cross
        limit = CROSSING_ROUNDOFF * np.abs(s) + 1e-15
        crossed = over > limit
        o = np.where((over > 0) & ~crossed, s, o)
    if np.any(crossed):
        warnings.warn(f"{what}: the optimistic companion's answer crossed the safe one (float64 round-off of a "
                      f"risk this small, at {int(np.sum(crossed))} value(s)); the optimistic side there is the "
                      f"trivial bound ({'0' if safe_is_upper else '1 - alpha'}), so the bracket stays a certificate; "
                      "a coarser grid_step may give a narrower one", RuntimeWarning, stacklevel=_caller_outside_dpax())
        o = np.where(crossed, np.broadcast_to(trivial, o.shape), o)
    return Interval(safe, as_result(o, np.shape(s)))


def _caller_outside_dpax() -> int:
    """The ``stacklevel`` of a warning raised by the function that calls this one: the
    first frame whose module is not dpax's (the user's line, through any wrappers)."""
    frame: FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("dpax."):
        frame, level = frame.f_back, level + 1
    return level
