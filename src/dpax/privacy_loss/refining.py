"""Refinement of the grid until a reported number's certified bracket is narrow enough.

A bracket's width (:class:`~dpax.privacy_loss.interval.Interval`) is what the grid's
discretisation costs; it shrinks about as grid_step^2, so each round picks the next step
from the last width (:func:`refine_step`), instead of a fixed ladder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .._engine import grid as _grid
from .._engine import validation as _v
from .._engine.x64 import float64
from .interval import Interval
from .value import PrivacyLoss


class Refined(NamedTuple):
    """Result of :func:`refine`: the bracket reached, the grid that reached it, its pair."""

    value: Interval  #: what ``evaluate`` returned on the last grid
    grid_step: float  #: the grid step that met the accuracy
    privacy_loss: PrivacyLoss  #: the pair built on that grid
    history: tuple[tuple[float, float], ...]  #: (grid_step, largest width) of every round


#: Smallest grid step :func:`refine` tries.
REFINE_MIN_STEP = 1e-6


@float64
def refine(build: Callable[[float], PrivacyLoss], evaluate: Callable[[PrivacyLoss], Interval], accuracy: float, *,
           grid_step: float = 1e-2, max_rounds: int = 8) -> Refined:
    """Refine the grid until a reported quantity's certified bracket is ``accuracy`` narrow.

    ``build(grid_step)`` makes the pair (any mechanism with an optimistic companion) and
    ``evaluate(pl)`` returns an :class:`Interval` (a risk method with ``bounds=True``). The
    widths shrink about as grid_step^2, so each round picks the next step from the last
    width (0.7 (accuracy / width)^(1/2) times the step, between 1/30 and 1/2 of it, rounded
    down to one significant digit so that kernels are reused) instead of a fixed ladder.
    Stops when every width is at most ``accuracy``.

    Args:
        build: grid step -> :class:`PrivacyLoss`.
        evaluate: :class:`PrivacyLoss` -> :class:`Interval`.
        accuracy: the largest bracket width accepted, > 0 (absolute, on the quantity).
        grid_step: the first grid step tried, in [1e-6, 1].
        max_rounds: the most grids tried, >= 1.

    Returns:
        A :class:`Refined` (value, grid_step, privacy_loss, history).

    Raises:
        ValueError: the accuracy was not reached: the memory budget, the smallest step
            (1e-6) or ``max_rounds`` stopped the refinement; the message gives the width
            reached and at which grid step. Or ``build`` returned an optimistic companion,
            a pair on another grid step than the one it was given, or a batch shape other
            than its first round's (the message names ``build``).
        TypeError: ``build`` did not return a :class:`PrivacyLoss`, or ``evaluate`` an
            :class:`Interval`.

    >>> import dpax
    >>> r = dpax.refine(lambda h: dpax.gaussian(1.0, grid_step=h), lambda pl: pl.beta(0.1, bounds=True), 3e-6)
    >>> r.grid_step, r.value.width <= 3e-6, round(r.value.lower, 6)
    (0.004, True, 0.610856)
    """
    if not callable(build) or not callable(evaluate):
        raise TypeError("build and evaluate must be callables (grid_step -> PrivacyLoss, PrivacyLoss -> Interval)")
    acc = float(_v.scalar("accuracy", accuracy, low=0.0, low_open=True))
    step = _v.grid_step(grid_step)
    rounds = _v.one_integer("max_rounds", max_rounds)
    history: list[tuple[float, float]] = []
    first: PrivacyLoss | None = None
    for _ in range(rounds):
        try:
            pl = _built(build(step), step, first)
            first = first or pl
            value = evaluate(pl)
        except _grid.MemoryBudgetError as exc:
            raise ValueError(f"accuracy={acc:g} not reached: {_reached(history)}; grid_step={step:.3g} is over the "
                             f"memory budget ({exc})") from exc
        if not isinstance(value, Interval):
            raise TypeError(f"evaluate must return an Interval (call the risk method with bounds=True), got "
                            f"{type(value).__name__}")
        width = float(np.nanmax(np.asarray(value.width, np.float64)))
        history.append((step, width))
        if width <= acc:
            return Refined(value, step, pl, tuple(history))
        if step <= REFINE_MIN_STEP:
            break
        step = refine_step(step, width, acc)
    raise ValueError(f"accuracy={acc:g} not reached: {_reached(history)} (at most {rounds} rounds down to "
                     f"grid_step={REFINE_MIN_STEP:g})")


def _built(pl: Any, step: float, first: PrivacyLoss | None) -> PrivacyLoss:
    """What ``build(step)`` returned in :func:`refine`, checked: a PrivacyLoss (not an
    optimistic companion, whose bracket with itself would be 0 wide) on the grid step asked
    for, with the batch shape of the first round's."""
    if not isinstance(pl, PrivacyLoss):
        raise TypeError(f"build must return a dpax.PrivacyLoss (build(grid_step) -> PrivacyLoss), got "
                        f"{type(pl).__name__} from build(grid_step={step:.6g})")
    if pl.optimistic:
        raise ValueError(f"build returned an optimistic companion (from optimistic_companion()) at grid_step="
                         f"{step:.6g}; build must return the mechanism's own pair, whose optimistic_companion() "
                         "refine evaluates")
    if pl.grid_step != step:
        raise ValueError(f"build(grid_step={step!r}) returned a PrivacyLoss on grid_step={pl.grid_step!r}; build "
                         "must build the pair on the grid step it is given")
    if first is not None and pl.batch_shape != first.batch_shape:
        raise ValueError(f"build(grid_step={step:.6g}) returned a batch of shape {pl.batch_shape}, the first "
                         f"round's was {first.batch_shape}; build must return the same configurations on every grid")
    return pl


def refine_step(grid_step: float, width: float, accuracy: float) -> float:
    """The next grid step of :func:`refine` (and of ``calibrate_dpsgd(accuracy=...)``): the
    widths shrink about as grid_step^2, so 0.7 (accuracy / width)^(1/2) times ``grid_step``,
    between 1/30 and 1/2 of it, rounded down to one significant digit (so that kernels are
    reused), at least :data:`REFINE_MIN_STEP`.

    Args:
        grid_step: the step that gave ``width``.
        width: the largest bracket width seen there (> accuracy; 0: half the step).
        accuracy: the width wanted.

    Returns:
        The next grid step (a float).

    >>> refine_step(1e-3, 2.1e-4, 1e-4)
    0.0004
    """
    ratio = 0.7 * np.sqrt(accuracy / width) if width > 0 else 0.5
    step_next = grid_step * float(np.clip(ratio, 1 / 30, 0.5))
    exponent = int(np.floor(np.log10(step_next)))
    digit = int(np.floor(step_next / 10.0**exponent * (1 + 1e-9)))
    return max(float(f"{digit}e{exponent}"), REFINE_MIN_STEP)


def _reached(history: list[tuple[float, float]]) -> str:
    if not history:
        return "no grid evaluated"
    step, width = history[-1]
    return f"width {width:.3g} at grid_step={step:.3g}"
