"""The bracketing search on :class:`~dpax.PrivacyLoss` rows, and the generic :func:`calibrate`
(Kulynych et al. 2024, Eq. 9).

The search is vectorised: every round evaluates a whole grid of candidate noise values for
every configuration in one batched kernel call, keeps the bracket [lo, hi] where lo is a
candidate verified to *fail* the target and hi one verified to *meet* it at the requested
grid, and repeats until hi / lo - 1 <= rtol. The returned noise is always a verified hi:
it meets the target at the requested grid step, and a noise rtol (relative) smaller was
seen to fail there. The starting bracket comes from the Gaussian-DP closed form of the
target and the CLT approximation of DP-SGD (Bu et al.); it is widened until it brackets.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike

from .. import targets as _targets
from .._engine import batching as _batching
from .._engine import grid as _grid
from .._engine import progress as _progress
from .._engine import sharding as _sharding
from .._engine import validation as _v
from .._engine.search import bracket_search
from .._engine.x64 import float64
from ..privacy_loss import PrivacyLoss
from .result import CalibrationResult, _on_infeasible, _out, _raise_infeasible

DEFAULT_RTOL = 1e-4
DEFAULT_CANDIDATES = 3
#: Bracketing phases (grid step, relative tolerance, candidates per round, how far the next
#: phase's bracket is opened below this one's answer). The last phase always runs at the
#: requested grid and tolerance, so the answer is verified there.
COARSE_PHASES = ((1e-2, 1e-2, 8, 0.35), (1e-3, 1e-3, 6, 0.03))
#: margin of the next phase's bracket around the anchored estimate (see _search)
ANCHOR_MARGIN = 0.03

#: ``build(params, rows) -> PrivacyLoss``: one batched privacy loss, a row per candidate parameter
_Build = Callable[[np.ndarray, np.ndarray], PrivacyLoss]
#: a phase's grid step: a float, or None where the mechanism sets its own grid (:func:`calibrate`)
_Step = TypeVar("_Step", bound=float | None)


def _phases(grid_step: float, rtol: float, candidates: int) -> list[tuple[float, float, int, float]]:
    phases = [ph for ph in COARSE_PHASES if ph[0] > grid_step * 1.5 and ph[1] > rtol]
    return phases + [(grid_step, rtol, candidates, 0.0)]


def _renamed_bounds(new_name: str, new_value: tuple[float, float] | None, old_value: tuple[float, float] | None,
                    default: tuple[float, float]) -> tuple[float, float]:
    """The search range given as ``new_name`` or, deprecated for one release, as ``bounds``
    (the name ``bounds=True`` keeps for certified brackets): a DeprecationWarning for the old
    name, a TypeError for both."""
    if old_value is None:
        return default if new_value is None else new_value
    if new_value is not None:
        raise TypeError(f"pass the search range once, as {new_name}= (bounds= is its deprecated name)")
    warnings.warn(f"bounds= is deprecated for the search range and will be removed in the next release: pass "
                  f"{new_name}=(low, high)", DeprecationWarning, stacklevel=3)
    return old_value


def _search_settings(rtol: float, candidates: int, bounds: ArrayLike,
                     bounds_name: str) -> tuple[float, int, tuple[float, float]]:
    """Checked (rtol, candidates, (low, high)) of a bracketing search."""
    rtol = _v.scalar("rtol", rtol, low=1e-8, high=0.1)
    if isinstance(candidates, (bool, np.bool_)) or not isinstance(candidates, (int, np.integer)):
        raise TypeError(f"candidates must be an integer in [2, 1024], got {_v.brief(candidates)}")
    if not 2 <= candidates <= 1024:
        raise ValueError(f"candidates must be an integer in [2, 1024], got {int(candidates)}")
    b = _v.real_array(bounds_name, bounds, low=0.0, low_open=True).reshape(-1)
    if b.size != 2 or b[0] >= b[1]:
        raise ValueError(f"{bounds_name} must be (low, high) with 0 < low < high, got {_v.brief(bounds)}")
    return rtol, int(candidates), (float(b[0]), float(b[1]))


class _Evaluator:
    """Margins of flat arrays of candidate parameters and their rows, one batched kernel
    call per group of rows per round.

    A batch shares one padded support length, so rows of very different support (a small
    noise composed many times next to a large one) are split into groups by an estimated
    support width ``cost(params, rows)`` (a factor 4 apart at most); each group's row count
    is padded to a few fixed sizes and to a multiple of the device count (so it shards
    evenly, see :mod:`dpax._engine.sharding`), and evaluated in calls of at most
    :data:`dpax._engine.batching.SEARCH_CALL_ROWS` rows (fewer where the memory budget says
    so). Rows are independent, so the grouping changes the cost, not the answers."""

    def __init__(self, build: _Build, target: _targets.Target, what: str,
                 cost: Callable[[np.ndarray, np.ndarray], ArrayLike] | None = None, lengths: dict | None = None,
                 step: float | None = None, seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
                 padding: float | None = None) -> None:
        self.build, self.target, self.what, self.cost = build, target, what, cost
        self.padding = padding  # the most a length is padded to reuse another round's (None: the sites' own)
        self.seen = seen  # a list: every call's (params, rows, margins) is appended
        self.chunk: dict[int, int] = {}
        # kernel shapes (support lengths, row counts at this grid step) shared by the rounds
        # of every search of one call: few compilations (see grid.shared_lengths)
        self.lengths = {} if lengths is None else lengths
        self.step = step

    def _run_group(self, params: np.ndarray, rows: np.ndarray, key: int) -> np.ndarray:
        with _grid.shared_lengths(self.lengths, self.padding):
            return self._run_shared(params, rows, key)

    def _run_shared(self, params: np.ndarray, rows: np.ndarray, key: int) -> np.ndarray:
        n = params.size
        most = _sharding.pad_rows(_batching.SEARCH_CALL_ROWS)  # rows per call (a multiple of the device count)
        size = _batching.group_size(n)
        if _grid.repeated():  # this call's own sizes (shapes compiled once)
            size = _grid.shared_size(size, ("rows", self.step), _grid.SHARED_ROWS)
        elif size > most:  # whole calls of `most` rows: one row count for every round's calls
            size = _sharding.pad_rows(size, most)
        else:  # a row count of an earlier round, at most `most`
            size = min(_grid.shared_size(size, ("rows", self.step), _grid.SHARED_ROWS), most)
        pad = size - n
        if pad:
            params = np.concatenate([params, np.repeat(params[-1:], pad)])
            rows = np.concatenate([rows, np.repeat(rows[-1:], pad)])

        def run(a: int, b: int) -> np.ndarray:
            pl = self.build(params[a:b], rows[a:b])
            if not isinstance(pl, PrivacyLoss):
                raise TypeError(f"{self.what}: mechanism must return a PrivacyLoss, got {type(pl).__name__}")
            if int(np.prod(pl.batch_shape, dtype=int)) != b - a:
                raise ValueError(
                    f"{self.what}: mechanism must return one privacy loss per parameter value "
                    f"(batch of {b - a}), got batch_shape {pl.batch_shape}"
                )
            margin, _ = self.target.take(rows[a:b]).margin(pl.pair)
            return margin

        chunk = min(self.chunk.get(key) or most, most)
        margins, self.chunk[key] = _sharding.map_chunks(run, params.size, chunk)
        return margins[:n]

    def __call__(self, params: np.ndarray, rows: np.ndarray) -> np.ndarray:
        out = np.empty(params.size)
        if self.cost is None:
            keys = np.zeros(params.size, int)
        else:
            with np.errstate(all="ignore"):
                keys = _batching.width_class(np.asarray(self.cost(params, rows), float))
        # a repeated workload: small groups, each at its own width (their shapes are compiled
        # once, on the third call)
        groups = _batching.merge_groups(keys, _batching.REPEATED_GROUP_MIN_ROWS if _grid.repeated() else None)
        for g in reversed(groups):  # widest first: narrower groups may reuse its shapes
            sel = np.flatnonzero(np.isin(keys, g))
            out[sel] = self._run_group(params[sel], rows[sel], int(g[0]))
        if self.seen is not None:
            self.seen.append((np.array(params, float), np.array(rows), out.copy()))
        return out


@dataclass
class _Bracket:
    """A search's per-row state between phases: [lo, hi] (hi verified to meet on the last
    grid, lo to fail), the rows infeasible there, the widening factor of the next phase."""

    lo: np.ndarray
    hi: np.ndarray
    infeasible: np.ndarray
    widen: float = 4.0
    evaluations: int = 0

    @classmethod
    def around(cls, guess: np.ndarray) -> _Bracket:
        return cls(guess / 2, guess * 2, np.zeros(guess.shape, bool))

    def reopen(self, margin: float, tol: float, bounds: tuple[float, float], anchor: np.ndarray | None) -> None:
        """Open the next (finer) phase's bracket: the finer grid is less pessimistic, so its
        answer lies a little lower (``margin``: how far below, relative; see :func:`_search`)."""
        lo = np.where(np.isnan(self.lo), bounds[0], self.lo)
        hi = np.where(self.infeasible, bounds[1], self.hi)
        if anchor is None:
            self.lo, self.hi = np.maximum(lo * (1 - margin), bounds[0]), np.minimum(hi * (1 + 0.1 * margin), bounds[1])
            self.widen = 1 + 2 * margin
            return
        est = np.where(np.isfinite(anchor) & (anchor > 0), np.minimum(hi, anchor), hi)
        est = np.where(self.infeasible, hi, est)
        m = min(margin, ANCHOR_MARGIN)
        new_hi = np.minimum(hi * (1 + 0.1 * m), est * (1 + 1.5 * m))
        new_lo = np.minimum(est * (1 - m), new_hi / (1 + 2 * tol))
        self.lo, self.hi, self.widen = (np.maximum(new_lo, bounds[0]),
                                        np.minimum(np.maximum(new_hi, bounds[0]), bounds[1]), 1.25)

    def run(self, evaluate: Callable[[np.ndarray, np.ndarray], np.ndarray], tol: float, k: int,
            bounds: tuple[float, float], what: str) -> None:
        """One phase: the bracket search from the current bracket with ``evaluate``."""
        self.hi, self.lo, ev, self.infeasible = bracket_search(
            evaluate, self.lo, self.hi, bounds=bounds, rtol=tol, candidates=k, what=what, widen=self.widen)
        self.evaluations += ev


def _search(build_at: Callable[[_Step], _Build], target: _targets.Target, guess: np.ndarray,
            bounds: tuple[float, float], phases: Sequence[tuple[_Step, float, int, float]], what: str,
            cost: Callable[[np.ndarray, np.ndarray], ArrayLike] | None = None,
            anchor: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Run the bracketing phases (coarse grids first, the last at the requested grid).

    ``build_at(step)`` gives ``build(params, rows) -> PrivacyLoss`` on that grid. A row
    infeasible on a coarse grid is retried on the finer one (which is less pessimistic);
    only the last phase decides. ``anchor``: an optional per-row estimate of the answer on
    fine grids (DP-SGD: the CLT noise); a coarse grid can be far too pessimistic where the
    privacy loss per step is small against the grid step, so the next phase's bracket opens
    around min(coarse answer, anchor). The brackets only steer the search (a bracket that
    misses is widened), never the verified answer. Returns (hi, lo, evaluations, infeasible)."""
    state = _Bracket.around(guess)
    lengths = _grid.lengths_in_use()  # all rounds share compiled kernel shapes
    # many configurations: rounds share less (see grid.BATCH_SHARED_PADDING)
    padding = _grid.BATCH_SHARED_PADDING if guess.size >= _batching.GROUP_MIN_ROWS else None
    for i, (step, tol, k, _) in enumerate(phases):
        if i:
            state.reopen(phases[i - 1][3], tol, bounds, anchor)
        state.run(_Evaluator(build_at(step), target, what, cost, lengths, step, padding=padding), tol, k, bounds, what)
    return state.hi, state.lo, state.evaluations, state.infeasible


@float64
def calibrate(
    mechanism: Callable[..., PrivacyLoss],
    target: _targets.Target | list[_targets.Target] | tuple[_targets.Target, ...],
    *,
    args: tuple[ArrayLike, ...] | list[ArrayLike] | ArrayLike = (),
    param_bounds: tuple[float, float] | None = None,
    rtol: float = DEFAULT_RTOL,
    candidates: int = DEFAULT_CANDIDATES,
    guess: ArrayLike | None = None,
    privacy: str = "increasing",
    on_infeasible: str | None = None,
    full_output: bool = False,
    progress: bool | None = None,
    bounds: tuple[float, float] | None = None,
) -> float | np.ndarray | CalibrationResult:
    """Parameter w in ``param_bounds`` (default (1e-2, 1e3)) meeting ``target`` with the least
    privacy (Eq. 9), for any monotone family ``mechanism(w, *args) -> PrivacyLoss``.
    (``bounds=`` is the deprecated name of ``param_bounds``, kept for one release.)

    ``privacy='increasing'``: larger w is more private (noise scale, Laplace scale); the
    answer is the smallest w that meets the target. ``'decreasing'``: larger w is less private
    (sample rate, number of steps, epsilon of randomized response); the answer is the
    largest w that meets it (the search runs on 1/w; a family with an integer parameter
    should round it down inside ``mechanism``). ``mechanism`` receives a 1-D array of
    parameter values and, for each of ``args`` (configuration arrays broadcast against the
    target's fields), the matching 1-D array of values; it returns one batched PrivacyLoss
    with one row per value. The whole batch is searched together, one kernel call per round.

    Args:
        mechanism: the family, ``mechanism(w, *args) -> PrivacyLoss`` with one row per
            entry of the 1-D array ``w``; monotone in w (see ``privacy``).
        target: a :mod:`dpax.targets` target, or a list / tuple of them (meet all).
        args: configuration arrays passed to ``mechanism`` row by row, broadcast with the
            target's fields and ``guess`` (a single array-like that is not a tuple or list
            is one argument; default: none).
        param_bounds: ``(low, high)`` parameters searched, 0 < low < high (None: (1e-2, 1e3)).
        rtol: relative width of the final bracket, hi / lo - 1, in [1e-8, 0.1] (default 1e-4).
        candidates: parameters tried per row per round, an integer in [2, 1024] (default 3).
        guess: where the search starts, > 0, broadcast with the rows (None: the geometric
            middle of ``param_bounds``); clipped to ``param_bounds``. It only steers the
            search, never the answer.
        privacy: 'increasing' (default: larger w more private) or 'decreasing'.
        on_infeasible: 'raise' (a ValueError naming the row), 'mark' (NaN and status
            'infeasible') or None (raise for a single configuration, mark in a batch).
        full_output: return a :class:`CalibrationResult` instead of the parameters
            (default False).
        progress: as in :func:`dpax.calibrate_dpsgd`: None (a bar on a terminal, plain
            lines in a log), True or False (nothing).
        bounds: the deprecated name of ``param_bounds`` (a DeprecationWarning), kept for
            one release.

    Returns:
        The verified parameter: a float for one configuration, else a float64 array of
        the broadcast shape; NaN where infeasible. It meets the target with the
        PrivacyLoss ``mechanism`` returns (dpax's mechanisms are pessimistic, so the
        mechanism meets it too), and a parameter ``rtol`` (relative) less private was seen
        to fail. With ``full_output`` a :class:`CalibrationResult` with per-row ``status``
        ('calibrated', 'met_at_bound', 'infeasible') and ``reason`` (the parameter is in
        its ``noise_multiplier`` field, the target's risks at it in ``achieved``; its
        ``delta``, standard comparison and ``grid_step`` are NaN).

    Raises:
        TypeError: ``mechanism`` not callable or not returning a PrivacyLoss; ``target``
            not a target; an entry of ``args`` not array-like (ragged); ``candidates`` not
            an integer; ``full_output`` not a boolean; ``progress`` not None, True or
            False; both ``param_bounds`` and ``bounds`` given.
        ValueError: ``privacy``, ``rtol``, ``candidates``, ``param_bounds``, ``guess`` or
            ``on_infeasible`` out of range; ``args``, ``guess`` and the target's fields do
            not broadcast together; ``mechanism`` returns a batch of the wrong size; a row
            is infeasible and ``on_infeasible`` is 'raise'.

    >>> import dpax
    >>> family = lambda s: dpax.gaussian(s, grid_step=1e-3)
    >>> round(dpax.calibrate(family, dpax.targets.Advantage(0.2), param_bounds=(0.05, 45)), 3)
    1.974

    Randomized response is less private as its epsilon grows; its advantage is
    tanh(epsilon / 2), so the largest epsilon meeting advantage 0.2 is 2 artanh(0.2) = 0.405465:

    >>> r = dpax.calibrate(lambda e: dpax.randomized_response(e, k=2, grid_step=1e-2), dpax.targets.Advantage(0.2),
    ...                    privacy="decreasing", param_bounds=(0.01, 10.0), full_output=True)
    >>> round(r.noise_multiplier, 4), r.status, r.achieved["advantage"] <= 0.2
    (0.4054, 'calibrated', True)
    """
    if not callable(mechanism):
        raise TypeError(f"mechanism must be a callable parameter -> PrivacyLoss, got {type(mechanism).__name__}")
    target = _targets.as_target(target)
    _v.choice("privacy", privacy, ("increasing", "decreasing"))
    param_bounds = _renamed_bounds("param_bounds", param_bounds, bounds, (1e-2, 1e3))
    rtol, candidates, (lo_b, hi_b) = _search_settings(rtol, candidates, param_bounds, "param_bounds")
    full_output = _v.flag("full_output", full_output)
    if not isinstance(args, (tuple, list)):
        args = (args,)
    arg_arrays = []
    for i, a in enumerate(args):
        try:
            arg_arrays.append(np.asarray(a))
        except Exception:  # ragged nested lists
            raise TypeError(f"args[{i}] must be an array-like of configuration values, got {_v.brief(a)}") from None
    g_arr = np.sqrt(lo_b * hi_b) if guess is None else _v.real_array("guess", guess, low=0.0, low_open=True)
    shape = _v.broadcast_shapes(("the target's fields", target.shape()),
                                *((f"args[{i}]", a.shape) for i, a in enumerate(arg_arrays)),
                                ("guess", np.shape(g_arr)))
    mode = _on_infeasible(on_infeasible, shape)
    n = int(np.prod(shape, dtype=int))
    arg_rows = [np.broadcast_to(a, shape).reshape(-1) for a in arg_arrays]
    tgt_rows = target.flat(shape)
    g_rows = np.clip(np.broadcast_to(g_arr, shape).reshape(-1).astype(float), lo_b, hi_b)

    inc = privacy == "increasing"
    to_w = (lambda u: u) if inc else (lambda u: 1.0 / u)
    s_bounds = (lo_b, hi_b) if inc else (1.0 / hi_b, 1.0 / lo_b)

    def build_at(_step: float | None) -> _Build:
        return lambda u, r: mechanism(to_w(u), *(a[r] for a in arg_rows))

    phases = [(None, rtol, candidates, 0.0)]
    _progress.check(progress)
    with _progress.task("dpax calibrate", progress):
        hi, lo, evaluations, bad = _search(build_at, tgt_rows, to_w(g_rows), s_bounds, phases, "calibrate")
    param = np.where(bad, np.nan, to_w(hi))
    failing = to_w(lo)
    status = np.full(n, "calibrated", object)
    reason = np.full(n, "", object)
    at_floor = ~bad & np.isnan(lo)
    status[at_floor] = "met_at_bound"
    reason[at_floor] = (f"{'low' if inc else 'high'} end of param_bounds ({lo_b if inc else hi_b:g}, the least "
                        "private) already meets the target")
    status[bad] = "infeasible"
    reason[bad] = (
        f"the target is not met even at {'the upper' if inc else 'the lower'} end of param_bounds "
        f"({hi_b if inc else lo_b:g}, the most private); widen param_bounds or relax the target"
    )
    if mode == "raise":
        _raise_infeasible("calibrate", status, reason, shape)
    out = lambda a: _out(np.asarray(a).reshape(shape))
    if not full_output:
        return out(param)
    achieved = {}
    ok = np.flatnonzero(~bad)
    if ok.size:
        pl = mechanism(param[ok], *(a[ok] for a in arg_rows))
        _, ach = tgt_rows.take(ok).margin(pl.pair)
        for k, v in ach.items():
            full = np.full(n, np.nan)
            full[ok] = np.asarray(v, float)
            achieved[k] = out(full)
    nan = out(np.full(n, np.nan))
    return CalibrationResult(
        noise_multiplier=out(param), noise_multiplier_failing=out(failing), achieved=achieved, delta=nan,
        standard_epsilon=nan, standard_noise_multiplier=nan, status=out(status.astype(str)), target=target,
        grid_step=float("nan"), rtol=rtol, evaluations=evaluations, reason=out(reason.astype(str)),
    )
