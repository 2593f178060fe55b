"""``calibrate_dpsgd(accuracy=...)``: the grid refined until the certified bracket of the
target's quantity at the calibrated noise is ``accuracy`` narrow, both sides of the target
(the safe pair and its optimistic companion) at the answer, and the companion's answer
searched just below the safe one (the noise interval)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .. import targets as _targets
from .._engine import batching as _batching
from .._engine import grid as _grid
from .._engine import sharding as _sharding
from ..mechanisms import dpsgd
from ..privacy_loss import REFINE_MIN_STEP, _reached, refine_step
from .quantities import ACHIEVED_GROUP_MIN_ROWS, _width_key
from .search import ANCHOR_MARGIN, COARSE_PHASES, _Bracket, _Evaluator

#: the targets ``calibrate_dpsgd(accuracy=...)`` supports, and the quantity whose bracket it narrows
ACCURACY_TARGETS = ("ErrRates, Accuracy, PPV, Reconstruction (beta at the target's alpha), Advantage (advantage), "
                    "Epsilon (epsilon at the target's delta), or a list of these with different quantities")


def _accuracy_quantities(target: _targets.Target) -> tuple[str, ...]:
    """Names of the quantities whose brackets ``accuracy`` bounds (ValueError if unsupported)."""
    parts = target.parts if isinstance(target, _targets.All) else (target,)
    kinds = (_targets.ErrRates, _targets._ViaErrRates, _targets.Advantage, _targets.Epsilon)
    for part in parts:
        if not isinstance(part, kinds):
            raise ValueError(f"accuracy: calibrate_dpsgd(accuracy=...) supports the targets {ACCURACY_TARGETS}; "
                             f"got {type(part).__name__} (use grid_step instead)")
    names = [n for part in parts for n in part.reports]
    if len(set(names)) < len(names):
        raise ValueError(f"accuracy: a list of targets reporting the same quantity twice ({', '.join(names)}) is not "
                         "supported with accuracy=...; give one target with array fields instead")
    return tuple(names)


@dataclass
class _Sides:
    """The target's margins and quantities at one noise per row, from the safe pair and from
    its optimistic companion (NaN where there is no noise to evaluate)."""

    margin: np.ndarray
    margin_opt: np.ndarray
    safe: dict[str, np.ndarray]
    optimistic: dict[str, np.ndarray]

    def widths(self) -> np.ndarray:
        """Per row, the widest bracket of the quantities."""
        with np.errstate(invalid="ignore"):
            return np.max([np.abs(self.safe[k] - self.optimistic[k]) for k in self.safe], 0)

    def width(self) -> float:
        """The widest bracket of the batch (NaN when no row has one)."""
        w = self.widths()
        return float(np.nanmax(w)) if np.any(np.isfinite(w)) else float("nan")

    def fill(self, idx: np.ndarray, other: _Sides) -> None:
        """Rows ``idx`` from ``other``."""
        self.margin[idx], self.margin_opt[idx] = other.margin, other.margin_opt
        for k in self.safe:
            self.safe[k][idx], self.optimistic[k][idx] = other.safe[k], other.optimistic[k]


def _both_sides(noise: np.ndarray, p: np.ndarray, t: np.ndarray, target: _targets.Target, step: float,
                names: tuple[str, ...]) -> _Sides:
    """Both sides of the target at ``noise`` (rows) on the grid ``step``: the margins and
    quantities of the safe pair and of its optimistic companion, by the path of
    ``dpsgd(...).beta(alpha, bounds=True)`` (the companion's round-off booked on its own,
    optimistic, side). Rows without noise (0, NaN) stay NaN, except noise 0, whose
    curve (1 - q)(1 - alpha) is exact: both sides equal."""
    rows = noise.shape[0]
    vals = np.full((rows, 2 + 2 * len(names)), np.nan)
    have = np.flatnonzero(np.isfinite(noise) & (noise > 0))
    keys = _width_key(noise[have], p[have], t[have])
    for g in _batching.merge_groups(keys, ACHIEVED_GROUP_MIN_ROWS) if have.size else ():
        sel = have[np.isin(keys, g)]
        count = sel.size
        if _grid.sharing():  # padded as the search's batches are: their compiled kernels serve
            size = _grid.shared_size(_batching.group_size(count), ("rows", step), _grid.SHARED_ROWS)
            sel = np.concatenate([sel, np.repeat(sel[-1:], size - count)])

        def run(a: int, b: int, sel: np.ndarray = sel) -> np.ndarray:
            r = sel[a:b]
            pl, tg = dpsgd(noise[r], p[r], t[r], step), target.take(r)
            (m, ach), (mo, acho) = tg.margin(pl.pair), tg.margin(pl.optimistic_companion().pair)
            return np.stack([m, mo] + [ach[n] for n in names] + [acho[n] for n in names], -1)

        vals[sel[:count]] = _sharding.map_chunks(run, sel.size)[0][:count]
    k = len(names)
    return _Sides(vals[:, 0], vals[:, 1], {n: vals[:, 2 + i] for i, n in enumerate(names)},
                  {n: vals[:, 2 + k + i] for i, n in enumerate(names)})


class _AccuracyFit:
    """calibrate_dpsgd(accuracy=...) for the rows that need noise: the grid is refined until
    the bracket of the target's quantity at the answer is ``accuracy`` narrow, then the
    optimistic companion's answer is searched just below the safe one.

    The coarse phases run as without accuracy (grids 1e-2, then 1e-3 unless the bracket at
    the 1e-2 answer already asks for a coarser final grid); the bracket width at each
    phase's answer chooses the next grid by :func:`dpax.privacy_loss.refine_step`; the
    final phase runs at ``rtol`` on the chosen grid, and its answer's bracket (evaluated
    as ``dpsgd(noise, ...)`` alone gives it) decides: narrow enough, or refine again. One
    grid for the whole batch: the finest any row needs."""

    def __init__(self, p: np.ndarray, t: np.ndarray, target: _targets.Target, bounds: tuple[float, float], rtol: float,
                 candidates: int, cost: Callable[[np.ndarray, np.ndarray], ArrayLike], anchor: np.ndarray | None,
                 accuracy: float) -> None:
        self.p, self.t, self.target, self.bounds, self.rtol, self.k = p, t, target, bounds, rtol, candidates
        self.cost, self.anchor, self.accuracy = cost, anchor, accuracy
        self.names = _accuracy_quantities(target)
        self.lengths = _grid.lengths_in_use()
        self.evaluations = 0
        self.history: list[tuple[float, float]] = []
        # set by run
        self.step: float | None = None
        self.sides: _Sides | None = None
        self.optimistic: np.ndarray | None = None
        self.seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None

    def _evaluator(self, step: float,
                   seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None) -> _Evaluator:
        p, t = self.p, self.t
        return _Evaluator(lambda w, r: dpsgd(w, p[r], t[r], step), self.target, "calibrate_dpsgd", self.cost,
                          self.lengths, step, seen)

    def _phase(self, state: _Bracket, step: float, tol: float, k: int, final: bool = False) -> _Sides:
        """One phase on ``step``; returns both sides at its answer: a coarse phase's on the
        search's kernel shapes (it only steers), the final's as ``dpsgd(noise, ...)`` alone
        gives them (they are reported). The final phase's margins are kept (``seen``)."""
        self.seen = [] if final else None
        try:
            state.run(self._evaluator(step, self.seen), tol, k, self.bounds, "calibrate_dpsgd")
            with _grid.own_lengths() if final else contextlib.nullcontext():
                sides = _both_sides(state.hi, self.p, self.t, self.target, step, self.names)
        except _grid.MemoryBudgetError as exc:
            raise ValueError(f"calibrate_dpsgd: accuracy={self.accuracy:g} not reached: {_reached(self.history)}; "
                             f"grid_step={step:.3g} is over the memory budget ({exc})") from exc
        self.history.append((step, sides.width()))
        return sides

    def run(self, guess: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The safe search (hi, lo, infeasible); sets ``step``, ``sides``, ``optimistic``."""
        state, margin, step = _Bracket.around(guess), None, None
        for c_step, tol, k, c_margin in COARSE_PHASES:
            if step is not None and step > 1.5 * c_step:
                break
            if margin is not None:
                state.reopen(margin, tol, self.bounds, self.anchor)
            width = self._phase(state, c_step, tol, k).width()
            step, margin = (c_step if width <= self.accuracy else refine_step(c_step, width, self.accuracy)), c_margin
        assert step is not None and margin is not None  # the first coarse phase always runs
        while True:
            state.reopen(margin, self.rtol, self.bounds, self.anchor)
            sides = self._phase(state, step, self.rtol, self.k, final=True)
            if not sides.width() > self.accuracy:  # NaN: no row left with a bracket
                break
            if step <= REFINE_MIN_STEP:
                raise ValueError(f"calibrate_dpsgd: accuracy={self.accuracy:g} not reached: {_reached(self.history)} "
                                 f"(the smallest grid step is {REFINE_MIN_STEP:g}); ask for a larger accuracy")
            step, margin = refine_step(step, sides.width(), self.accuracy), ANCHOR_MARGIN
        self.evaluations += state.evaluations
        self.step, self.sides = step, sides
        self.optimistic = self._optimistic(state, self.seen)
        return state.hi, state.lo, state.infeasible

    def _optimistic(self, state: _Bracket,
                    seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None) -> np.ndarray:
        """Per row, the largest noise verified to fail the target with the optimistic
        companion (the true smallest noise lies above it), searched in a bracket opened just
        below the safe answer; ``bounds[0]`` where the safe answer is at the bound, NaN where
        infeasible."""
        assert self.step is not None and self.sides is not None  # set by run, which calls this
        hi, lo = state.hi, state.lo
        out = np.where(np.isnan(lo) & ~state.infeasible, self.bounds[0], np.nan)
        run = np.flatnonzero(np.isfinite(lo) & np.isfinite(hi))
        if not run.size:
            return out
        with np.errstate(all="ignore"):
            gap = self.sides.margin_opt[run] / _slopes(seen, hi, lo)[run]  # log noise the companion gains
        gap = np.where(np.isfinite(gap), np.clip(gap, 0.0, 0.5), 10 * self.rtol)
        est = hi[run] * np.exp(-gap)
        sub = _Bracket(est / (1 + 0.6 * self.rtol), np.minimum(hi[run], est * (1 + 0.6 * self.rtol)),
                       np.zeros(run.size, bool), widen=1 + 10 * self.rtol)
        p, t, step = self.p[run], self.t[run], self.step  # the companion, as PrivacyLoss gives it
        ev = _Evaluator(lambda w, r: dpsgd(w, p[r], t[r], step).optimistic_companion(), self.target.take(run),
                        "calibrate_dpsgd", lambda w, r: self.cost(w, run[r]), self.lengths, step)
        sub.run(ev, self.rtol, self.k, self.bounds, "calibrate_dpsgd")
        self.evaluations += sub.evaluations
        out[run] = np.minimum(np.where(np.isnan(sub.lo), self.bounds[0], sub.lo), hi[run])
        return out


def _slopes(seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Per row, d margin / d log noise between the final bracket's ends (from the margins
    ``seen`` by the search's evaluator); NaN where one end was not evaluated."""
    params = np.concatenate([a for a, _, _ in seen]) if seen else np.zeros(0)
    rows = np.concatenate([r for _, r, _ in seen]) if seen else np.zeros(0, int)
    margins = np.concatenate([m for _, _, m in seen]) if seen else np.zeros(0)
    out = np.full(hi.shape, np.nan)
    for r in range(hi.size):
        mine = rows == r
        m_hi, m_lo = margins[mine & (params == hi[r])], margins[mine & (params == lo[r])]
        if m_hi.size and m_lo.size and hi[r] > lo[r]:
            out[r] = (m_hi[0] - m_lo[0]) / np.log(hi[r] / lo[r])
    return out
