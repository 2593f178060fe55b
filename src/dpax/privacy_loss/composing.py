"""Composition of PrivacyLoss values: heterogeneous, counted and adaptive, by FFT.

All factors are multiplied in the frequency domain in one kernel
(:func:`dpax._engine.composition.compose_arrays`); the pair of a composition is the
composition of the factors' pairs (Kulynych et al. 2024, Section 3). Factors on different
grids are first brought to one by :func:`dpax.privacy_loss.regridding.regrid`, an exact
post-processing, hence pessimistic. The result carries the composed GDP bound (GDP composes
exactly: mu = sqrt(sum of count mu_i^2), Gomez et al. 2025) and, as its companion, the
composition of the factors' companions; optimistic companions compose by exponentially
tilted FFTs closed with their composed slack (:mod:`dpax._engine.optimistic`).
"""

from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from .._engine import composition as _compose
from .._engine import grid as _grid
from .._engine import optimistic as _optimistic
from .._engine import validation as _v
from .._engine.pair import Pair
from .._engine.x64 import float64
from .companion import derived, need_slack, optimistic, optimistic_companion
from .fields import Companion, Fields, Tails, V, gdp_rows
from .regridding import regrid
from .shaping import broadcast_to
from .tails import tightened


@float64
def compose(*losses: V | tuple[V, ArrayLike], grid_step: float | str | None = None) -> V:
    """The composition of ``losses`` (each a value or a ``(value, count)`` pair), batches and
    counts broadcast; ``grid_step``: a step, ``"coarsest"`` or ``None`` (keep a shared step).
    See :func:`dpax.compose`.

    Args:
        *losses: at least one; each a value or a pair ``(value, count)`` meaning ``count``
            copies of it (positive integers, any shape broadcasting with the batches). The
            factors are all dominating pairs or all optimistic companions.
        grid_step: the common grid: a step in [1e-7, 1], ``"coarsest"`` (the largest of the
            factors' steps), or ``None`` (default: the factors' shared step, ``"coarsest"``
            when their steps differ). Factors on another step are regridded
            (:func:`dpax.privacy_loss.regridding.regrid`: pessimistic for a dominating pair).

    Returns:
        A value of the first factor's class, batch shape the broadcast of every factor's
        batch shape and count shape, described as the sum of the factors' descriptions. The
        composition of dominating pairs dominates the composed mechanism (its risks on the
        safe side), with the composed GDP bound where every factor has one and, as its
        companion, the composition of the factors' companions; that of optimistic
        companions is optimistic. A single factor with count 1 on its own step is returned
        as it is.

    Raises:
        TypeError: an argument neither a value nor a ``(value, count)`` pair (a number after
            the first: the message says to pass ``grid_step`` by keyword); ``grid_step`` an
            array or not a number or string; a count not numeric or a boolean.
        ValueError: no argument; a count not a whole number >= 1; ``grid_step`` a string
            other than ``"coarsest"`` or a number outside [1e-7, 1]; a factor that cannot be
            brought to the common grid (named by its position); batches and counts that do
            not broadcast; optimistic companions mixed with other pairs; a composition beyond
            the memory budget (:class:`dpax._engine.grid.MemoryBudgetError`, a ValueError
            naming the largest count and the grid step).

    >>> import dpax
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> round(compose((pl, 2), (pl, 2)).advantage(), 4)
    0.6827
    """
    if not losses:
        raise ValueError("compose needs at least one PrivacyLoss")
    items = []
    for i, item in enumerate(losses):
        count: ArrayLike = 1
        if isinstance(item, tuple):
            if len(item) != 2:
                raise TypeError(f"compose argument {i} must be a PrivacyLoss or a (PrivacyLoss, count) pair, "
                                f"got a tuple of {len(item)}")
            item, count = item
        if not isinstance(item, Fields):
            hint = " (pass grid_step by keyword: compose(pl_a, pl_b, grid_step=...))" if i and (
                isinstance(item, (int, float, str)) and not isinstance(item, bool)) else ""
            raise TypeError(f"compose argument {i} must be a PrivacyLoss, got {type(item).__name__}{hint}")
        items.append((item, _v.positive_int_array(f"count of compose argument {i}", count)))
    steps = {pl.grid_step for pl, _ in items}
    if grid_step is None and len(steps) != 1:
        grid_step = "coarsest"
    if isinstance(grid_step, str) and grid_step != "coarsest":
        raise ValueError(f"grid_step must be a number in (0, 1] or 'coarsest', got {_v.brief(grid_step)}")
    if grid_step is not None:
        target = max(steps) if isinstance(grid_step, str) and grid_step == "coarsest" else _v.grid_step(grid_step)
        regridded = []
        for i, (pl, c) in enumerate(items):
            try:
                regridded.append((regrid(pl, target), c))
            except ValueError as exc:  # the budget, or losses beyond the new grid's reach
                raise type(exc)(f"grid_step={target:g}: compose argument {i} cannot be brought to this grid "
                                f"(from {pl.grid_step:g}): {exc}") from exc
        items = regridded
    if len(items) == 1 and np.all(items[0][1] == 1):
        return items[0][0]
    shape = _v.broadcast_shapes(*((f"the batch of compose argument {i}", pl.batch_shape)
                                  for i, (pl, _) in enumerate(items)),
                                *((f"count of compose argument {i}", c) for i, (_, c) in enumerate(items)))
    factors = [broadcast_to(pl, shape) for pl, _ in items]
    counts = [np.broadcast_to(c, shape).reshape(-1) for _, c in items]
    step, exact = items[0][0].grid_step, all(pl.exact_ratio for pl, _ in items)
    kind = {pl.optimistic for pl, _ in items}
    if len(kind) > 1:
        raise ValueError("compose cannot mix optimistic companions (from optimistic_companion()) with other pairs: "
                         "compose the pairs, then call optimistic_companion() on the result")
    try:
        arrays = _compose.compose_arrays([pl.pair for pl in factors], counts, step, exact, tilted=kind == {True})
    except _grid.MemoryBudgetError as exc:  # say which arguments made it so large
        raise _grid.MemoryBudgetError("the counts of compose's arguments (up to "
                                      f"{max(int(np.max(c)) for c in counts):,}) "
                                      f"at grid_step={step:g}: {exc}") from exc
    parts = [
        pl.description if (c.ndim == 0 and int(c) == 1) else f"{pl.description} x {int(c) if c.ndim == 0 else 'counts'}"
        for pl, c in items
    ]
    desc = " + ".join(parts) if len(parts) <= 4 else f"{parts[0]} + ... + {parts[-1]} ({len(parts)} factors)"
    cls = type(items[0][0])
    if kind == {True}:  # tilted=True: compose_arrays gave a Tilted
        return _optimistic_result(cls, cast(_compose.Tilted, arrays), factors, counts, step, desc, shape)
    mus = [pl._gdp_bound for pl in factors]
    gdp = None if any(b is None for b in mus) else gdp_rows(  # GDP composes exactly: sqrt(sum of count mu^2)
        np.sqrt(sum(c * cast(np.ndarray, b)**2 for c, b in zip(counts, mus))), shape)
    tails: Tails = None if not exact else (lambda: tightened(cls, factors, counts, step, desc, shape, gdp))
    return cls._make(cast(Pair, arrays), step, desc, shape, exact_ratio=exact, gdp_bound=gdp,
                     companion=_companion(losses, grid_step), tails=tails)


@float64
def self_compose(pl: V, num_steps: ArrayLike) -> V:
    """``num_steps``-fold composition of ``pl`` (broadcasting against its batch); see
    :meth:`dpax.PrivacyLoss.self_compose`.

    Args:
        pl: the value to compose with itself (a dominating pair or an optimistic companion).
        num_steps: positive integers, any shape broadcasting with ``pl.batch_shape``.

    Returns:
        A value of ``pl``'s class, batch shape the broadcast shape, described as
        ``"<description> x <num_steps>"`` (``x num_steps`` for an array): for a dominating
        pair it dominates the composed mechanism (risks on the safe side), with the GDP
        bound sqrt(num_steps) mu and the composed companion; for a companion, optimistic.
        ``pl`` itself (broadcast) where every count is 1.

    Raises:
        TypeError: ``num_steps`` not numeric or a boolean.
        ValueError: ``num_steps`` not whole numbers in [1, 2**53]; its shape not
            broadcasting with the batch; the composition beyond the memory budget
            (:class:`dpax._engine.grid.MemoryBudgetError`, a ValueError naming the largest
            ``num_steps``).

    >>> import dpax
    >>> self_compose(dpax.gaussian(1.0, grid_step=1e-2), 4).description
    'gaussian(noise_multiplier=1, sensitivity=1) x 4'
    """
    steps = _v.positive_int_array("num_steps", num_steps)
    shape = _v.broadcast_shapes(("the PrivacyLoss's batch", pl.batch_shape), ("num_steps", steps))
    wide = broadcast_to(pl, shape) if shape != pl.batch_shape else pl
    if np.all(steps == 1):
        return wide
    counts = np.broadcast_to(steps, shape).reshape(-1)
    try:
        arrays = _compose.compose_arrays((wide.pair,), (counts,), pl.grid_step, pl.exact_ratio, tilted=pl.optimistic)
    except _grid.MemoryBudgetError as exc:  # say which argument made it so large
        raise _grid.MemoryBudgetError(f"num_steps up to {int(np.max(counts)):,}: {exc}") from exc
    desc = f"{pl.description} x {int(steps)}" if steps.ndim == 0 else f"{pl.description} x num_steps"
    if pl.optimistic:  # tilted=True: compose_arrays gave a Tilted
        return _optimistic_result(type(pl), cast(_compose.Tilted, arrays), [wide], [counts], pl.grid_step, desc, shape)
    gdp = None if wide._gdp_bound is None else gdp_rows(np.sqrt(counts) * wide._gdp_bound, shape)
    facts = derived(pl, lambda c: self_compose(c, num_steps))
    # the tightened tails: the steps composed again with tilted big sides (not a view of pl's)
    facts["tails"] = None if not pl.exact_ratio else (
        lambda: tightened(type(pl), [wide], [counts], pl.grid_step, desc, shape, gdp))
    return type(pl)._make(cast(Pair, arrays), pl.grid_step, desc, shape, exact_ratio=pl.exact_ratio, gdp_bound=gdp,
                          **facts)


@float64
def compose_with(pl: V, other: V | tuple[V, ArrayLike], grid_step: float | str | None = None) -> V:
    """``pl`` composed with ``other`` (a value, or a ``(value, count)`` pair), checked so
    that the message names ``other``; see :meth:`dpax.PrivacyLoss.compose`.

    Args:
        pl: the first factor.
        other: the second: a value, or ``(value, count)`` for ``count`` copies of it
            (positive integers broadcasting with the batches).
        grid_step: the common grid, as :func:`compose` (default ``None``: the shared step,
            or the coarsest when the steps differ).

    Returns:
        ``compose(pl, other, grid_step=grid_step)``: a value of ``pl``'s class on the safe
        side of the composed mechanism, batch shape the broadcast shape.

    Raises:
        TypeError: ``other`` not a value or a ``(value, count)`` pair (a positive integer:
            the message points at ``self_compose``), or as :func:`compose`.
        ValueError: a count not a whole number >= 1 (the message names ``other``), or as
            :func:`compose`.

    >>> import dpax
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> compose_with(pl, (pl, 3)).description
    'gaussian(noise_multiplier=1, sensitivity=1) + gaussian(noise_multiplier=1, sensitivity=1) x 3'
    """
    pair = isinstance(other, tuple) and len(other) == 2 and isinstance(other[0], Fields)
    if not (isinstance(other, Fields) or pair):
        hint = (f" (for {other} copies of this mechanism: self_compose({other}))"
                if isinstance(other, (int, np.integer)) and not isinstance(other, bool) and other > 0 else "")
        raise TypeError(f"other must be a PrivacyLoss or a (PrivacyLoss, count) pair, got {_v.brief(other)}{hint}")
    if pair and isinstance(other, tuple):  # the count checked here, so that its message names other
        other = (other[0], _v.positive_int_array("the count of other (other = (PrivacyLoss, count))", other[1]))
    return compose(pl, other, grid_step=grid_step)


def _optimistic_result(cls: type[V], arrays: _compose.Tilted, factors: list[V], counts: list[np.ndarray],
                       grid_step: float, description: str, shape: tuple[int, ...]) -> V:
    """The composition of optimistic companions: the FFT's result closed on the optimistic
    side, with ratio floors from the composed slack (:func:`dpax._engine.optimistic.reclose`)."""
    slack = _optimistic.composed_slack([need_slack(pl) for pl in factors], counts)
    return optimistic(cls, (_optimistic.reclose(arrays, slack, grid_step), slack), grid_step, shape, description)


def _companion(losses: tuple, grid_step: float | str | None) -> Companion:
    """The companion of the composition of ``losses``: the composition of the factors'
    companions, or the first factor's reason why it has none."""
    factors = [(item if isinstance(item, tuple) else (item, 1)) for item in losses]
    for i, (pl, _) in enumerate(factors):
        if isinstance(pl._companion, str):
            return f"compose argument {i} has none: {pl._companion}"
    return lambda: compose(*((optimistic_companion(pl), c) for pl, c in factors), grid_step=grid_step)
