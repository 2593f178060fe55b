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
        *targets: targets to meet together (nested :class:`All` are flattened).

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
        """The broadcast shape of every part."""
        return np.broadcast_shapes(*(p.shape() for p in self.parts))

    def broadcast(self, shape: tuple[int, ...]) -> All:
        """Every part broadcast to ``shape``."""
        return All(*(p.broadcast(shape) for p in self.parts))

    def flat(self, shape: tuple[int, ...]) -> All:
        """Every part broadcast to ``shape`` and flattened."""
        return All(*(p.flat(shape) for p in self.parts))

    def take(self, index: ArrayLike | slice) -> All:
        """Rows ``index`` of every (flat) part."""
        return All(*(p.take(index) for p in self.parts))

    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The smallest of the parts' margins; achieved values of all parts."""
        margin: np.ndarray | None = None
        achieved: dict[str, np.ndarray] = {}
        for p in self.parts:
            m, a = p.margin(pair)
            margin = m if margin is None else np.minimum(margin, m)
            achieved.update(a)
        assert margin is not None  # __init__ refuses an All of no parts
        return margin, achieved

    def gdp_mu(self) -> np.ndarray:
        """The smallest of the parts' mu."""
        return np.minimum.reduce(np.broadcast_arrays(*(np.asarray(p.gdp_mu(), float) for p in self.parts)))

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """The smallest of the parts' standard epsilons."""
        return np.minimum.reduce(np.broadcast_arrays(*(np.asarray(p.standard_epsilon(delta), float)
                                                       for p in self.parts)))

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """Whether subsampling alone meets every part."""
        return np.logical_and.reduce(np.broadcast_arrays(*(np.asarray(p.met_without_noise(leak_probability))
                                                           for p in self.parts)))


def as_target(target: Target | list[Target] | tuple[Target, ...]) -> Target:
    """A target, or a list / tuple of targets meaning "meet all of them" (:class:`All`).

    Args:
        target: a :class:`Target`, or a non-empty list / tuple of them.

    Returns:
        ``target`` itself, or ``All(*target)``.

    Raises:
        TypeError: ``target`` is neither.

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
