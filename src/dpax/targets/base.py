"""The :class:`Target` interface every risk target implements, and the argument checks its
methods get.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._engine import shapes as _shapes
from .._engine import validation as _v
from .._engine.pair import Pair


def _shape(shape: Any) -> tuple[int, ...]:
    """``shape`` as a tuple of integers >= 0 (a TypeError / ValueError naming it otherwise)."""
    return _v.shape_tuple(shape)


def _row_index(index: object) -> object:
    """``index`` as integer row indices, a boolean mask or a slice (TypeError naming it)."""
    if isinstance(index, slice):
        return index
    if isinstance(index, (bool, np.bool_)):
        raise TypeError(f"index must be integer row indices, a boolean mask or a slice, got {_v.brief(index)}")
    try:
        arr = np.asarray(index)
    except Exception:
        arr = np.asarray(None, dtype=object)
    if arr.size == 0 and arr.dtype.kind in "fiub":  # no rows
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iub":
        raise TypeError(f"index must be integer row indices, a boolean mask or a slice, got {_v.brief(index)}")
    return arr


def _checked(method: Callable[..., Any], check: Callable[[Any], Any]) -> Callable[..., Any]:
    """``method`` with its one argument checked by ``check`` first (same name and doc)."""
    @functools.wraps(method)
    def wrapped(self: Any, arg: Any) -> Any:
        return method(self, check(arg))

    return wrapped


#: The argument checks every target's methods get (:meth:`Target.__init_subclass__`).
_CHECKS = {
    "broadcast": _shape,
    "flat": _shape,
    "take": _row_index,
    "margin": lambda pair: pair if isinstance(pair, Pair) else (_ for _ in ()).throw(
        TypeError(f"pair must be a PrivacyLoss's .pair (PLRV rows), got {type(pair).__name__}")),
    "standard_epsilon": lambda delta: _v.probabilities("delta", delta, high_open=True),
    "met_without_noise": lambda q: _v.probabilities("leak_probability", q),
}


class Target:
    """Base class: a risk bound the mechanism must meet.

    Subclasses are frozen dataclasses whose fields are the bound's parameters (arrays after
    validation); :class:`All` combines several. The examples below use :class:`ErrRates`.
    Every target's ``broadcast``, ``flat``, ``take``, ``margin``, ``standard_epsilon`` and
    ``met_without_noise`` check their argument first (a TypeError or ValueError naming it).
    """

    #: names of the risk values this target reports as achieved
    reports: tuple[str, ...] = ()
    # set by @dataclass on the subclasses whose broadcast / flat / take use it (not on All)
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, check in _CHECKS.items():
            if name in vars(cls):
                setattr(cls, name, _checked(vars(cls)[name], check))

    def shape(self) -> tuple[int, ...]:
        """The broadcast shape of the target's fields.

        Returns:
            The shape as a tuple of integers (``()`` for scalar fields).

        >>> from dpax.targets import ErrRates
        >>> ErrRates([0.01, 0.1], 0.5).shape()
        (2,)
        """
        raise NotImplementedError

    def broadcast(self, shape: tuple[int, ...]) -> Target:
        """The target with every field broadcast to ``shape``.

        Args:
            shape: a shape the fields broadcast to.

        Returns:
            A target of the same type with fields of shape ``shape``.

        Raises:
            TypeError: ``shape`` is not a tuple of integers.
            ValueError: ``shape`` holds a negative integer, or the fields do not broadcast
                to it.

        >>> from dpax.targets import ErrRates
        >>> ErrRates(0.01, [0.5, 0.6]).broadcast((2,)).alpha
        array([0.01, 0.01])
        """
        return type(self)(*self._broadcast_fields(shape))

    def flat(self, shape: tuple[int, ...]) -> Target:
        """Broadcast to ``shape`` and flattened to one row per configuration.

        Args:
            shape: the batch shape of the configurations.

        Returns:
            A target of the same type with 1-D fields of length ``prod(shape)``.

        Raises:
            TypeError: ``shape`` is not a tuple of integers.
            ValueError: ``shape`` holds a negative integer, or the fields do not broadcast
                to it.

        >>> from dpax.targets import ErrRates
        >>> ErrRates(0.01, 0.5).flat((2, 2)).beta
        array([0.5, 0.5, 0.5, 0.5])
        """
        return type(self)(*(a.reshape(-1) for a in self._broadcast_fields(shape)))

    def _broadcast_fields(self, shape: Any) -> list[np.ndarray]:
        """Every field broadcast to ``shape``, or an error naming the shape and the fields."""
        shape = _shapes.shape_tuple(shape, what="the batch shape of the configurations")
        fields = [np.asarray(getattr(self, f)) for f in self.__dataclass_fields__]
        try:
            return [np.broadcast_to(a, shape) for a in fields]
        except ValueError:
            have = ", ".join(f"{f} {np.shape(a)}" for f, a in zip(self.__dataclass_fields__, fields))
            raise ValueError(f"{type(self).__name__}'s fields ({have}) do not broadcast to shape {shape}") from None

    def take(self, index: ArrayLike | slice) -> Target:
        """Rows ``index`` of a flat target.

        Args:
            index: integer row indices, a boolean mask or a slice into the rows (as from
                :meth:`flat`).

        Returns:
            A target of the same type holding the selected rows.

        Raises:
            TypeError: ``index`` is not integers, a boolean mask or a slice (a bare
                ``True`` / ``False`` or ``None`` included).
            IndexError: NumPy refuses ``index`` for the target's shape (out of range).
            ValueError: ``index`` selects no row.

        >>> from dpax.targets import ErrRates
        >>> ErrRates([0.01, 0.1], 0.5).flat((2,)).take([1]).alpha
        array([0.1])
        """
        shape = self.shape()
        rows = _v.batch_rows("index", index, shape, "target")  # _row_index has checked its type (see _CHECKS)
        return type(self)(*(np.broadcast_to(getattr(self, f), shape).reshape(-1)[rows]
                            for f in self.__dataclass_fields__))

    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """How far inside the target each row of ``pair`` is (>= 0: met), and the risk values.

        The margin grows with privacy, so calibration can interpolate it.

        Args:
            pair: PLRV rows, one per configuration of a flat target
                (:attr:`dpax.PrivacyLoss.pair`).

        Returns:
            ``(margin, achieved)``: float64 arrays of one entry per row, and a dict from the
            names in :attr:`reports` to the achieved risk values per row. The risks are
            on the safe side of ``pair``'s curve (beta never above it, advantage and
            epsilon never below it), so where ``pair`` dominates the mechanism (every
            dpax PrivacyLoss's does) a margin >= 0 means the mechanism meets the target
            (:class:`GDP` forgives the mass at +-inf and ``GDP_SLACK``; see there).

        Raises:
            TypeError: ``pair`` is not a :class:`dpax.PrivacyLoss`'s ``.pair``.

        >>> import dpax
        >>> from dpax.targets import ErrRates
        >>> margin, achieved = ErrRates(0.01, 0.5).margin(dpax.gaussian(1.0, grid_step=1e-2).pair)
        >>> margin.round(4), achieved["beta"].round(4)
        (array([0.4076]), array([0.9076]))
        """
        raise NotImplementedError

    def gdp_mu(self) -> np.ndarray:
        """The mu of the Gaussian-DP mechanism that just meets the target (a search start).

        Returns:
            mu, a float64 array with the target's shape. Only a starting point of the
            search: no guarantee rests on it.

        >>> from dpax.targets import ErrRates
        >>> round(float(ErrRates(0.01, 0.5).gdp_mu()), 4)
        2.3263
        """
        raise NotImplementedError

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """The epsilon that standard calibration at ``delta`` needs to guarantee the target
        (Eq. 2 with Proposition 2.5 / 2.6).

        Args:
            delta: the delta of the (epsilon, delta)-DP guarantee, in [0, 1).

        Returns:
            epsilon, a float64 array with the broadcast shape of the target and ``delta``
            (NaN where no (epsilon, delta) guarantee implies the target).

        Raises:
            TypeError: ``delta`` is not numeric.
            ValueError: an entry of ``delta`` lies outside [0, 1) or is not finite.

        >>> from dpax.targets import ErrRates
        >>> round(float(ErrRates(0.01, 0.5).standard_epsilon(1e-5)), 4)
        3.912
        """
        raise NotImplementedError

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """Whether subsampling alone meets the target: the trade-off curve
        (1 - q)(1 - alpha) of noiseless steps that leak with probability q.

        Args:
            leak_probability: q = 1 - (1 - p)^T for T steps at sample rate p, in [0, 1].

        Returns:
            A boolean array, with the broadcast shape of the target and
            ``leak_probability``.

        Raises:
            TypeError: ``leak_probability`` is not numeric.
            ValueError: an entry of ``leak_probability`` lies outside [0, 1] or is not
                finite.

        >>> from dpax.targets import ErrRates
        >>> bool(ErrRates(0.01, 0.5).met_without_noise(0.01))
        True
        """
        raise NotImplementedError


for _name, _check in _CHECKS.items():  # the base class's own methods as well
    setattr(Target, _name, _checked(vars(Target)[_name], _check))
del _name, _check
