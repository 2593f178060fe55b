"""Several targets at once (:class:`All`, a list of targets), and :func:`as_target`, which
reads what a user passes as a target.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._engine import validation as _v
from .._engine.pair import Pair
from .base import Target


class All(Target):
    """Meet every one of several targets (fields of all of them broadcast together).

    The margin is the smallest of the parts' margins, so the calibrated noise is the largest
    of the parts' answers.

    Args:
        *targets: targets to meet together, at least one (nested :class:`All` are
            flattened).

    Raises:
        TypeError: an argument is not a :class:`Target`.
        ValueError: no target is given.

    >>> import dpax
    >>> from dpax.targets import Advantage, All, ErrRates
    >>> both = All(Advantage(0.4), ErrRates(0.01, 0.5))
    >>> margin, achieved = both.margin(dpax.gaussian(1.0, grid_step=1e-2).pair)
    >>> margin.round(4), sorted(achieved)
    (array([0.0171]), ['advantage', 'beta'])
    """

    parts: tuple[Target, ...]

    def __init__(self, *targets: Target) -> None:
        parts: list[Target] = []
        for t in targets:
            if isinstance(t, All):
                parts.extend(t.parts)
            elif isinstance(t, Target):
                parts.append(t)
            else:
                raise TypeError(f"All takes dpax.targets targets, got {_v.brief(t)}")
        if not parts:
            raise ValueError("All needs at least one target")
        self.parts = tuple(parts)
        self.reports = tuple(dict.fromkeys(r for p in parts for r in p.reports))

    def __repr__(self) -> str:
        return f"All({', '.join(map(repr, self.parts))})"

    def shape(self) -> tuple[int, ...]:
        """The broadcast shape of every part.

        Returns:
            The shape as a tuple of integers.

        Raises:
            ValueError: the parts' fields do not broadcast together.

        >>> from dpax.targets import Advantage, All, ErrRates
        >>> All(Advantage([0.3, 0.4]), ErrRates(0.01, 0.5)).shape()
        (2,)
        """
        return np.broadcast_shapes(*(p.shape() for p in self.parts))

    def broadcast(self, shape: tuple[int, ...]) -> All:
        """Every part broadcast to ``shape``.

        Args:
            shape: a shape every part's fields broadcast to.

        Returns:
            An :class:`All` of the parts, each with fields of shape ``shape``.

        Raises:
            TypeError: ``shape`` is not a tuple of integers.
            ValueError: ``shape`` holds a negative integer, or a part's fields do not
                broadcast to it.

        >>> from dpax.targets import Advantage, All, ErrRates
        >>> All(Advantage([0.3, 0.4]), ErrRates(0.01, 0.5)).broadcast((2,)).parts[1].alpha
        array([0.01, 0.01])
        """
        return All(*(p.broadcast(shape) for p in self.parts))

    def flat(self, shape: tuple[int, ...]) -> All:
        """Every part broadcast to ``shape`` and flattened.

        Args:
            shape: the batch shape of the configurations.

        Returns:
            An :class:`All` of the parts, each with 1-D fields of length ``prod(shape)``.

        Raises:
            TypeError: ``shape`` is not a tuple of integers.
            ValueError: ``shape`` holds a negative integer, or a part's fields do not
                broadcast to it.

        >>> from dpax.targets import Advantage, All, ErrRates
        >>> All(Advantage([0.3, 0.4]), ErrRates(0.01, 0.5)).flat((2,))
        All(Advantage(advantage=array([0.3, 0.4])), ErrRates(alpha=array([0.01, 0.01]), beta=array([0.5, 0.5])))
        """
        return All(*(p.flat(shape) for p in self.parts))

    def take(self, index: ArrayLike | slice) -> All:
        """Rows ``index`` of every (flat) part.

        Args:
            index: integer row indices, a boolean mask or a slice into the rows (as from
                :meth:`flat`).

        Returns:
            An :class:`All` of the parts, each holding the selected rows.

        Raises:
            TypeError: ``index`` is not integers, a boolean mask or a slice.
            IndexError: NumPy refuses ``index`` for a part's shape (out of range).
            ValueError: ``index`` selects no row.

        >>> from dpax.targets import Advantage, All, ErrRates
        >>> All(Advantage([0.3, 0.4]), ErrRates(0.01, 0.5)).flat((2,)).take([1])
        All(Advantage(advantage=array([0.4])), ErrRates(alpha=array([0.01]), beta=array([0.5])))
        """
        return All(*(p.take(index) for p in self.parts))

    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The smallest of the parts' margins; achieved values of all parts.

        Args:
            pair: PLRV rows, one per configuration of a flat target
                (:attr:`dpax.PrivacyLoss.pair`).

        Returns:
            ``(margin, achieved)``: the row-wise smallest of the parts' margins (>= 0: every
            part is met), a float64 array of one entry per row, and the union of the parts'
            achieved risk values (each on the safe side of ``pair``'s curve, as in
            :meth:`Target.margin`).

        Raises:
            TypeError: ``pair`` is not a :class:`dpax.PrivacyLoss`'s ``.pair``.

        >>> import dpax
        >>> from dpax.targets import Advantage, All, ErrRates
        >>> margin, achieved = All(Advantage(0.4), ErrRates(0.01, 0.5)).margin(dpax.gaussian(1.0, grid_step=1e-2).pair)
        >>> margin.round(4), achieved["advantage"].round(4), achieved["beta"].round(4)
        (array([0.0171]), array([0.3829]), array([0.9076]))
        """
        margin: np.ndarray | None = None
        achieved: dict[str, np.ndarray] = {}
        for p in self.parts:
            m, a = p.margin(pair)
            margin = m if margin is None else np.minimum(margin, m)
            achieved.update(a)
        assert margin is not None  # __init__ refuses an All of no parts
        return margin, achieved

    def gdp_mu(self) -> np.ndarray:
        """The smallest of the parts' mu (the Gaussian-DP mechanism meeting every part).

        Returns:
            mu, a float64 array with the broadcast shape of the parts (a search start only).

        >>> from dpax.targets import Advantage, All, ErrRates
        >>> All(Advantage([0.3, 0.4]), ErrRates(0.01, 0.5)).gdp_mu().round(4)
        array([0.7706, 1.0488])
        """
        return np.minimum.reduce(np.broadcast_arrays(*(np.asarray(p.gdp_mu(), float) for p in self.parts)))

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """The smallest of the parts' standard epsilons: the epsilon at ``delta`` whose
        guarantee implies every part.

        Args:
            delta: the delta of the (epsilon, delta)-DP guarantee, in [0, 1).

        Returns:
            epsilon, a float64 array with the broadcast shape of the parts and ``delta``
            (NaN where a part has none, e.g. :class:`GDP`).

        Raises:
            TypeError: ``delta`` is not numeric.
            ValueError: an entry of ``delta`` lies outside [0, 1) or is not finite.

        >>> from dpax.targets import Advantage, All, ErrRates
        >>> All(Advantage([0.3, 0.4]), ErrRates(0.01, 0.5)).standard_epsilon(1e-5).round(4)
        array([0.619 , 0.8473])
        """
        return np.minimum.reduce(np.broadcast_arrays(*(np.asarray(p.standard_epsilon(delta), float)
                                                       for p in self.parts)))

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """Whether subsampling alone meets every part.

        Args:
            leak_probability: q = 1 - (1 - p)^T for T steps at sample rate p, in [0, 1].

        Returns:
            A boolean array, with the broadcast shape of the parts and ``leak_probability``.

        Raises:
            TypeError: ``leak_probability`` is not numeric.
            ValueError: an entry of ``leak_probability`` lies outside [0, 1] or is not
                finite.

        >>> from dpax.targets import Advantage, All, ErrRates
        >>> All(Advantage([0.005, 0.4]), ErrRates(0.01, 0.5)).met_without_noise(0.01)
        array([False,  True])
        """
        return np.logical_and.reduce(np.broadcast_arrays(*(np.asarray(p.met_without_noise(leak_probability))
                                                           for p in self.parts)))


def as_target(target: Target | list[Target] | tuple[Target, ...]) -> Target:
    """A target, or a list / tuple of targets meaning "meet all of them" (:class:`All`).

    Args:
        target: a :class:`Target`, or a non-empty list / tuple of them.

    Returns:
        ``target`` itself, or ``All(*target)``.

    Raises:
        TypeError: ``target`` is neither (an empty list included), or a list holds
            something that is not a :class:`Target`.

    >>> from dpax.targets import GDP, Advantage, as_target
    >>> as_target([Advantage(0.3), GDP(1.0)])
    All(Advantage(advantage=array(0.3)), GDP(mu=array(1.)))
    """
    if isinstance(target, Target):
        return target
    if isinstance(target, (list, tuple)) and target:
        return All(*target)
    raise TypeError(
        "target must be a dpax.targets target (ErrRates, Advantage, Epsilon, Accuracy, PPV, GDP, "
        f"Reconstruction, All) or a list of them, got {_v.brief(target)}"
    )
