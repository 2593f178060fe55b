"""Calibration: the smallest noise that meets a risk target (Kulynych et al. 2024, Eq. 9, 14, 18).

The search is vectorised: every round evaluates a whole grid of candidate noise values for
every configuration in one batched kernel call, keeps the bracket [lo, hi] where lo is a
candidate verified to *fail* the target and hi one verified to *meet* it at the requested
grid, and repeats until hi / lo - 1 <= rtol. The returned noise is always a verified hi:
it meets the target at the requested grid step, and a noise rtol (relative) smaller was
seen to fail there. The starting bracket comes from the Gaussian-DP closed form of the
target and the CLT approximation of DP-SGD (Bu et al.); it is widened until it brackets.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from . import result_table as _result_table
from . import targets as _targets
from ._engine import analyse as _analyse
from ._engine import batching as _batching
from ._engine import grid as _grid
from ._engine import progress as _progress
from ._engine import sharding as _sharding
from ._engine import validation as _v
from ._engine.search import bracket_search
from ._engine.x64 import as_result, float64
from .mechanisms import dpsgd
from .privacy_loss import REFINE_MIN_STEP, Interval, PrivacyLoss, _reached, refine_step

DEFAULT_RTOL = 1e-4
#: grid step of calibrate_dpsgd without ``accuracy``
DEFAULT_GRID_STEP = 1e-4
DEFAULT_CANDIDATES = 3
DEFAULT_STANDARD_DELTA = 1e-5
#: Bracketing phases (grid step, relative tolerance, candidates per round, how far the next
#: phase's bracket is opened below this one's answer). The last phase always runs at the
#: requested grid and tolerance, so the answer is verified there.
COARSE_PHASES = ((1e-2, 1e-2, 8, 0.35), (1e-3, 1e-3, 6, 0.03))
#: margin of the next phase's bracket around the anchored estimate (see _search)
ANCHOR_MARGIN = 0.03


def _phases(grid_step, rtol, candidates):
    phases = [ph for ph in COARSE_PHASES if ph[0] > grid_step * 1.5 and ph[1] > rtol]
    return phases + [(grid_step, rtol, candidates, 0.0)]


@dataclass
class CalibrationResult:
    """Outcome of a calibration; array fields have the broadcast shape of the configurations."""

    noise_multiplier: object
    """Smallest noise found that meets the target at ``grid_step`` (0 where no noise is needed)."""
    noise_multiplier_failing: object
    """Largest noise seen to fail the target (the lower end of the final bracket)."""
    achieved: dict
    """Risk at ``noise_multiplier``: 'beta' (at the target alpha), 'advantage', 'epsilon' (at
    ``delta``)."""
    delta: object
    standard_epsilon: object
    """epsilon that standard (epsilon, delta) calibration would need to guarantee the same bound."""
    standard_noise_multiplier: object
    """Noise that standard calibration to (standard_epsilon, delta) would need (NaN if not run)."""
    status: object
    """'calibrated'; 'met_without_noise' (subsampling alone meets the target, noise 0);
    'met_at_bound' (the least private end of the bounds meets it); 'infeasible' (not met
    anywhere in the bounds: noise NaN, see ``reason``)."""
    target: _targets.Target
    grid_step: float
    """The grid step of the answer (with ``accuracy``: the one dpax chose)."""
    rtol: float
    evaluations: int = 0
    details: dict = field(default_factory=dict)
    reason: object = ""
    """Why a row is not 'calibrated' (empty string where it is)."""
    accuracy: float | None = None
    """The ``accuracy`` asked for (None: the grid was ``grid_step``)."""
    noise_interval: Interval | None = None
    """With ``accuracy``: ``Interval(safe, optimistic)`` of the noise. ``safe`` is
    ``noise_multiplier`` (meets the target with the safe pair); ``optimistic`` a noise
    verified to *fail* it with the optimistic companion (:meth:`dpax.PrivacyLoss.bounds`),
    at most ``rtol`` below the companion's own answer. The truly smallest noise lies in
    [optimistic, safe]: the width is what the grid's discretisation costs. Both ends 0
    ('met_without_noise'), the lower bound ('met_at_bound'), NaN ('infeasible')."""
    achieved_interval: dict | None = None
    """With ``accuracy``: for the target's quantity ('beta' at its alpha, 'advantage',
    'epsilon' at its delta; a list of targets: each), the :class:`~dpax.Interval` at
    ``noise_multiplier`` on ``grid_step`` -- what ``dpsgd(noise, ..., grid_step).beta(alpha,
    bounds=True)`` gives; every width is at most ``accuracy``."""
    sample_rate: object = None
    """The configuration of each row, in the shape of the other fields: the sample rate
    (calibrate_dpsgd's results record it; None where a result does not)."""
    num_steps: object = None
    """The number of steps of each row, like ``sample_rate`` (None where not recorded)."""

    @property
    def noise_reduction(self):
        """1 - noise / standard noise: the share of noise attack-aware calibration saves (a
        float for one configuration, else an array, like the other fields)."""
        return as_result(1.0 - np.asarray(self.noise_multiplier) / np.asarray(self.standard_noise_multiplier))

    def table(self, max_rows: int | None = None) -> str:
        """One line per configuration: sample rate, steps, target, noise, standard noise,
        noise reduction and status (:func:`dpax.result_table.text`).

        Args:
            max_rows: show at most this many rows (None: all), an integer >= 1.

        Returns:
            The aligned table as a string.

        >>> import dpax
        >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
        ...                          grid_step=1e-2, compare_standard=False)
        >>> print(r.table())
          sample rate  steps            target     noise  standard noise  reduction      status
                  0.1     10  advantage <= 0.3  0.537708               -          -  calibrated
        """
        return _result_table.text(self, max_rows)

    def to_records(self) -> list[dict]:
        """One dict per configuration, every column of :mod:`dpax.result_table` (the
        configuration, the target's numbers, the noise, the standard comparison, the
        achieved risks, status and reason).

        Returns:
            A list of dicts of Python numbers and strings (NaN where not computed).

        >>> import dpax
        >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
        ...                          grid_step=1e-2, compare_standard=False)
        >>> round(r.to_records()[0]["noise_multiplier"], 3), r.to_records()[0]["status"]
        (0.538, 'calibrated')
        """
        return _result_table.records(self)

    def to_csv(self, path_or_file=None) -> str | None:
        """The records as CSV with a header line (NaN as an empty cell).

        Args:
            path_or_file: a file name, an open text file, or None.

        Returns:
            The CSV text when ``path_or_file`` is None, else None.

        >>> import dpax
        >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
        ...                          grid_step=1e-2, compare_standard=False)
        >>> r.to_csv().splitlines()[1][:30]
        '0.1,10,advantage <= 0.3,0.3,0.'
        """
        return _result_table.write_csv(self, path_or_file)

    def to_dataframe(self):
        """The records as a ``pandas.DataFrame`` (pandas is imported on use; an ImportError
        says so where it is missing).

        Returns:
            A DataFrame with one row per configuration.

        With ``r`` a result, as in :meth:`to_records`:

        >>> df = r.to_dataframe()   # doctest: +SKIP
        """
        return _result_table.dataframe(self)


def _out(values, shape=None):
    """A result field: a Python scalar for one configuration, else an array (any dtype)."""
    return as_result(values, shape, dtype=None)


def _search_settings(rtol, candidates, bounds, bounds_name: str) -> tuple[float, int, tuple[float, float]]:
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


def _leak_probability(sample_rate, num_steps):
    """q = 1 - (1 - p)^T, the probability that a record is used at all (1 at p = 1)."""
    with np.errstate(divide="ignore"):  # log1p(-1) = -inf at p = 1: q = 1, as it should
        return -np.expm1(num_steps * np.log1p(-sample_rate))


def _dpsgd_noise_guess(mu, sample_rate, num_steps):
    """Noise at which the CLT mu of DP-SGD, p sqrt(T (e^{1/s^2} - 1)), equals ``mu``."""
    ratio = (mu / sample_rate) ** 2 / num_steps
    return 1.0 / np.sqrt(np.log1p(ratio))


def _width_key(noise, p, t):
    """Support-width class of DP-SGD rows (CLT mu, mu^2 + 10 mu, a factor 4 per class)."""
    with np.errstate(all="ignore"):
        mu = p * np.sqrt(t * np.expm1(np.minimum(1.0 / noise**2, 700.0)))
    return _batching.width_class(1.0 + mu * (mu + 10.0))


#: fewest rows of the final re-evaluation of the answers worth a kernel call of their own
#: (:func:`_achieved`; the search's groups use :data:`dpax._engine.batching.GROUP_MIN_ROWS`)
ACHIEVED_GROUP_MIN_ROWS = 8


class _Evaluator:
    """Margins of flat arrays of candidate parameters and their rows, one batched kernel
    call per group of rows per round.

    A batch shares one padded support length, so rows of very different support (a small
    noise composed many times next to a large one) are split into groups by an estimated
    support width ``cost(params, rows)`` (a factor 4 apart at most); each group's row count
    is padded to a few fixed sizes and to a multiple of the device count (so it shards
    evenly, see :mod:`dpax._engine.sharding`), and a group over the memory budget is split into
    chunks. Rows are independent, so the grouping changes the cost, not the answers."""

    def __init__(self, build, target, what, cost=None, lengths=None, step=None, seen=None, padding=None):
        self.build, self.target, self.what, self.cost = build, target, what, cost
        self.padding = padding  # the most a length is padded to reuse another round's (None: the sites' own)
        self.seen = seen  # a list: every call's (params, rows, margins) is appended
        self.chunk = {}
        # kernel shapes (support lengths, row counts at this grid step) shared by the rounds
        # of every search of one call: few compilations (see grid.shared_lengths)
        self.lengths = {} if lengths is None else lengths
        self.step = step

    def _run_group(self, params, rows, key):
        with _grid.shared_lengths(self.lengths, self.padding):
            return self._run_shared(params, rows, key)

    def _run_shared(self, params, rows, key):
        n = params.size
        pad = _grid.shared_size(_batching.group_size(n), ("rows", self.step), _grid.SHARED_ROWS) - n
        if pad:
            params = np.concatenate([params, np.repeat(params[-1:], pad)])
            rows = np.concatenate([rows, np.repeat(rows[-1:], pad)])

        def run(a, b):
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

        margins, self.chunk[key] = _sharding.map_chunks(run, params.size, self.chunk.get(key))
        return margins[:n]

    def __call__(self, params, rows):
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
    def around(cls, guess):
        return cls(guess / 2, guess * 2, np.zeros(guess.shape, bool))

    def reopen(self, margin, tol, bounds, anchor):
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

    def run(self, evaluate, tol, k, bounds, what):
        """One phase: the bracket search from the current bracket with ``evaluate``."""
        self.hi, self.lo, ev, self.infeasible = bracket_search(
            evaluate, self.lo, self.hi, bounds=bounds, rtol=tol, candidates=k, what=what, widen=self.widen)
        self.evaluations += ev


def _search(build_at, target, guess, bounds, phases, what, cost=None, anchor=None):
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


@dataclass
class _Rows:
    """calibrate_dpsgd's answers for flat rows (see :class:`CalibrationResult`)."""

    noise: np.ndarray
    failing: np.ndarray
    status: np.ndarray
    reason: np.ndarray
    evaluations: int
    grid_step: float
    optimistic: np.ndarray | None = None  #: with accuracy: the noise interval's optimistic end
    sides: _Sides | None = None  #: with accuracy: both sides at ``noise``


def _calibrate_dpsgd_rows(sample_rate, num_steps, target, grid_step, rtol, candidates, bounds, accuracy=None) -> _Rows:
    rows = sample_rate.shape[0]
    q = _leak_probability(sample_rate, num_steps)
    needs_noise = ~np.asarray(target.met_without_noise(q), bool)
    out = _Rows(np.zeros(rows), np.zeros(rows), np.where(needs_noise, "calibrated", "met_without_noise").astype(object),
                np.where(needs_noise, "", [f"subsampling alone meets the target: a record is used at all with "
                                           f"probability q = 1 - (1 - p)^T = {v:.3g}" for v in q]).astype(object),
                0, COARSE_PHASES[0][0] if grid_step is None else grid_step)  # accuracy, no row searched: coarsest
    idx = np.flatnonzero(needs_noise)
    if accuracy is not None:
        out.optimistic = np.zeros(rows)
        out.sides = _both_sides(out.noise, sample_rate, num_steps, target, 1.0, _accuracy_quantities(target))
    if not idx.size:
        return out
    p, t = sample_rate[idx], num_steps[idx]
    sub_target = target.take(idx)
    with np.errstate(all="ignore"):
        anchor = _dpsgd_noise_guess(np.asarray(sub_target.gdp_mu(), float), p, t)
    guess = np.clip(np.where(np.isfinite(anchor), anchor, 1.0), bounds[0], bounds[1])

    def build_at(step):
        return lambda params, r: dpsgd(params, p[r], t[r], step)

    def width(params, r):  # support width proxy: CLT mu of DP-SGD, mu^2 + 10 mu
        mu = p[r] * np.sqrt(t[r] * np.expm1(np.minimum(1.0 / params**2, 700.0)))
        return 1.0 + mu * (mu + 10.0)

    if accuracy is None:
        hi, lo, out.evaluations, bad = _search(build_at, sub_target, guess, bounds,
                                               _phases(grid_step, rtol, candidates), "calibrate_dpsgd", cost=width,
                                               anchor=anchor)
    else:
        fit = _AccuracyFit(p, t, sub_target, bounds, rtol, candidates, width, anchor, accuracy)
        hi, lo, bad = fit.run(guess)
        out.evaluations, out.grid_step = fit.evaluations, fit.step
        assert out.optimistic is not None and out.sides is not None  # set above: accuracy is given
        out.optimistic[idx] = fit.optimistic
        out.sides.fill(idx, fit.sides)
    out.noise[idx], out.failing[idx] = hi, lo
    at_floor = ~bad & np.isnan(lo)
    out.status[idx[at_floor]] = "met_at_bound"
    out.reason[idx[at_floor]] = f"noise {bounds[0]:g} (the lower end of noise_bounds) already meets the target"
    out.status[idx[bad]] = "infeasible"
    out.reason[idx[bad]] = (f"the target is not met even at noise {bounds[1]:g} (the upper end of noise_bounds); "
                            "raise the bound or relax the target")
    return out


#: the targets ``calibrate_dpsgd(accuracy=...)`` supports, and the quantity whose bracket it narrows
ACCURACY_TARGETS = ("ErrRates, Accuracy, PPV, Reconstruction (beta at the target's alpha), Advantage (advantage), "
                    "Epsilon (epsilon at the target's delta), or a list of these with different quantities")


def _accuracy_quantities(target) -> tuple[str, ...]:
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
    safe: dict
    optimistic: dict

    def widths(self) -> np.ndarray:
        """Per row, the widest bracket of the quantities."""
        with np.errstate(invalid="ignore"):
            return np.max([np.abs(self.safe[k] - self.optimistic[k]) for k in self.safe], 0)

    def width(self) -> float:
        """The widest bracket of the batch (NaN when no row has one)."""
        w = self.widths()
        return float(np.nanmax(w)) if np.any(np.isfinite(w)) else float("nan")

    def fill(self, idx, other: _Sides) -> None:
        """Rows ``idx`` from ``other``."""
        self.margin[idx], self.margin_opt[idx] = other.margin, other.margin_opt
        for k in self.safe:
            self.safe[k][idx], self.optimistic[k][idx] = other.safe[k], other.optimistic[k]


def _both_sides(noise, p, t, target, step, names) -> _Sides:
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

        def run(a, b, sel=sel):
            r = sel[a:b]
            pl, tg = dpsgd(noise[r], p[r], t[r], step), target.take(r)
            (m, ach), (mo, acho) = tg.margin(pl.pair), tg.margin(pl.bounds().pair)
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

    def __init__(self, p, t, target, bounds, rtol, candidates, cost, anchor, accuracy):
        self.p, self.t, self.target, self.bounds, self.rtol, self.k = p, t, target, bounds, rtol, candidates
        self.cost, self.anchor, self.accuracy = cost, anchor, accuracy
        self.names = _accuracy_quantities(target)
        self.lengths = _grid.lengths_in_use()
        self.evaluations, self.history = 0, []
        self.step = self.sides = self.optimistic = self.seen = None

    def _evaluator(self, step, seen=None):
        p, t = self.p, self.t
        return _Evaluator(lambda w, r: dpsgd(w, p[r], t[r], step), self.target, "calibrate_dpsgd", self.cost,
                          self.lengths, step, seen)

    def _phase(self, state, step, tol, k, final=False):
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

    def run(self, guess):
        """The safe search (hi, lo, infeasible); sets ``step``, ``sides``, ``optimistic``."""
        state, margin, step = _Bracket.around(guess), None, None
        for c_step, tol, k, c_margin in COARSE_PHASES:
            if step is not None and step > 1.5 * c_step:
                break
            if margin is not None:
                state.reopen(margin, tol, self.bounds, self.anchor)
            width = self._phase(state, c_step, tol, k).width()
            step, margin = (c_step if width <= self.accuracy else refine_step(c_step, width, self.accuracy)), c_margin
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

    def _optimistic(self, state, seen):
        """Per row, the largest noise verified to fail the target with the optimistic
        companion (the true smallest noise lies above it), searched in a bracket opened just
        below the safe answer; ``bounds[0]`` where the safe answer is at the bound, NaN where
        infeasible."""
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
        p, t, step = self.p[run], self.t[run], self.step  # the companion, as PrivacyLoss.bounds() gives it
        ev = _Evaluator(lambda w, r: dpsgd(w, p[r], t[r], step).bounds(), self.target.take(run), "calibrate_dpsgd",
                        lambda w, r: self.cost(w, run[r]), self.lengths, step)
        sub.run(ev, self.rtol, self.k, self.bounds, "calibrate_dpsgd")
        self.evaluations += sub.evaluations
        out[run] = np.minimum(np.where(np.isnan(sub.lo), self.bounds[0], sub.lo), hi[run])
        return out


def _slopes(seen, hi, lo) -> np.ndarray:
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


def _raise_infeasible(what, status, reason, shape):
    bad = np.flatnonzero(status == "infeasible")
    if bad.size:
        r = int(bad[0])
        where = f"row {[int(i) for i in np.unravel_index(r, shape)]}" if shape else "the target"
        more = f" ({bad.size} rows in all)" if bad.size > 1 else ""
        raise ValueError(f"{what}: {where}: {reason[r]}{more}")


def _on_infeasible(value, shape):
    if value is None:
        return "raise" if shape == () else "mark"
    if not isinstance(value, str) or value not in ("raise", "mark"):
        raise ValueError(f"on_infeasible must be 'raise', 'mark' or None, got {_v.brief(value)}")
    return value


def _calibrate_dpsgd_all(p_rows, t_rows, tgt_rows, step, rtol, candidates, bounds, standard_delta,
                         compare_standard, mode, shape, accuracy=None) -> dict:
    """calibrate_dpsgd on flat rows: the search, the standard comparison and the achieved
    risks; the fields of :class:`CalibrationResult` (flat arrays)."""
    res = _calibrate_dpsgd_rows(p_rows, t_rows, tgt_rows, step, rtol, candidates, bounds, accuracy)
    noise, step, evaluations = res.noise, res.grid_step, res.evaluations
    if mode == "raise":
        _raise_infeasible("calibrate_dpsgd", res.status, res.reason, shape)

    is_eps = isinstance(tgt_rows, _targets.Epsilon)
    delta = tgt_rows.delta if is_eps else np.full(noise.shape, standard_delta)
    with np.errstate(all="ignore"):
        std_eps = np.broadcast_to(np.asarray(tgt_rows.standard_epsilon(delta), float), noise.shape)
    std_noise = np.full(noise.shape, np.nan)
    if compare_standard:
        if is_eps:
            std_noise = noise.copy()
        else:
            finite = np.isfinite(std_eps) & (std_eps > 0)
            if np.any(finite):
                eps_target = _targets.Epsilon(std_eps[finite], delta[finite])
                std = _calibrate_dpsgd_rows(p_rows[finite], t_rows[finite], eps_target, step, rtol, candidates, bounds)
                std_noise[finite] = np.where(std.status == "infeasible", np.nan, std.noise)
                evaluations += std.evaluations

    with _grid.own_lengths():  # the answer's own evaluation, as dpsgd(noise, ...) gives it
        achieved = _achieved(noise, p_rows, t_rows, tgt_rows, delta, step)
    fields = dict(noise_multiplier=noise, noise_multiplier_failing=res.failing, achieved=achieved, delta=delta,
                  standard_epsilon=std_eps, standard_noise_multiplier=std_noise, status=res.status.astype(str),
                  grid_step=step, evaluations=evaluations, reason=res.reason.astype(str))
    if accuracy is not None:
        assert res.sides is not None  # _calibrate_dpsgd_rows sets it when accuracy is given
        fields["noise_interval"] = Interval(noise, res.optimistic)
        exact = _no_noise_quantities(tgt_rows, _leak_probability(p_rows, t_rows))
        zero = noise == 0  # subsampling alone: the curve (1 - q)(1 - alpha) is exact, both sides agree
        fields["achieved_interval"] = {
            n: Interval(np.where(zero, exact[n], res.sides.safe[n]), np.where(zero, exact[n], res.sides.optimistic[n]))
            for n in res.sides.safe}
    return fields


def _no_noise_quantities(target, q) -> dict:
    """The target's quantities (flat rows) without noise, where subsampling alone leaks with
    probability q: the curve (1 - q)(1 - alpha), advantage q, epsilon 0 if q <= delta else inf."""
    out = {}
    for part in target.parts if isinstance(target, _targets.All) else (target,):
        if isinstance(part, _targets.Advantage):
            out["advantage"] = q
        elif isinstance(part, _targets.Epsilon):
            out["epsilon"] = np.where(q <= np.asarray(part.delta).reshape(-1), 0.0, np.inf)
        else:
            # the rest are ErrRates or _ViaErrRates: _accuracy_quantities refused every other kind
            er = part if isinstance(part, _targets.ErrRates) else cast(_targets._ViaErrRates, part).err_rates()
            out["beta"] = (1 - q) * (1 - np.asarray(er.alpha).reshape(-1))
    return out


@float64
def calibrate_dpsgd(
    *,
    sample_rate,
    num_steps,
    target,
    grid_step=None,
    rtol=DEFAULT_RTOL,
    noise_bounds=(0.05, 1000.0),
    standard_delta=DEFAULT_STANDARD_DELTA,
    compare_standard: bool = True,
    candidates: int = DEFAULT_CANDIDATES,
    on_infeasible=None,
    progress: bool | None = None,
    accuracy=None,
) -> CalibrationResult:
    """Smallest DP-SGD noise multiplier meeting ``target`` at ``grid_step``.

    Targets (Kulynych et al. 2024, Table 1, Sec. 2-3): :class:`~dpax.targets.ErrRates` (Eq. 18:
    f(alpha*) >= beta*), :class:`~dpax.targets.Advantage` (Eq. 14),
    :class:`~dpax.targets.Epsilon` (standard calibration, Eq. 2), ``Accuracy``, ``PPV``,
    ``Reconstruction``, ``GDP``, or several at once (a list or ``All``: meet all).
    ``sample_rate``, ``num_steps`` and the target's fields broadcast; the whole batch is
    searched together, each round one batched kernel (sharded over ``jax.devices()``,
    chunked to fit memory). The answer is verified at ``grid_step``: it meets the target
    there, and a noise ``rtol`` (relative) smaller fails there.

    Per-row ``status``: 'calibrated'; 'met_without_noise' (noise 0: subsampling alone
    meets the target, ``reason`` says why); 'met_at_bound' (the lower end of
    ``noise_bounds`` already meets it); 'infeasible' (not met even at the upper end: noise
    NaN, ``reason`` says why). ``on_infeasible``: 'raise' (a ValueError naming the row),
    'mark', or None (raise for a single configuration, mark in a batch). With
    ``compare_standard`` the noise that standard calibration to (epsilon,
    ``standard_delta``) needs for the same bound is computed too. ``progress``: when stderr is
    a terminal, a bar once the search runs longer than 2 s; otherwise plain progress lines, at
    most one every 30 s of long work and a last one (always with True); False: nothing.

    Grid or accuracy: ``grid_step`` (default None: 1e-4) fixes the grid;
    ``accuracy`` instead lets dpax choose it: the grid is refined (coarse phases, then
    :func:`dpax.privacy_loss.refine_step` from the width measured) until the certified
    bracket of the target's quantity at the calibrated noise -- beta at the target's
    alpha (ErrRates, Accuracy, PPV, Reconstruction), advantage (Advantage), epsilon at its
    delta (Epsilon) -- is at most ``accuracy`` wide (absolute) for every row; GDP targets
    are not supported (ValueError). Giving both is a ValueError. The coarsest grid tried
    is 1e-2; the grid is one for the whole batch (the finest any row needs), and the
    standard comparison runs on it too. The
    result then also carries ``noise_interval`` (safe = ``noise_multiplier``; optimistic:
    the truly smallest noise is above it) and ``achieved_interval``; ``grid_step`` is the
    grid chosen. The memory budget or the smallest step (1e-6) stopping the refinement is
    a ValueError giving the width reached and the grid step.

    Args:
        sample_rate, num_steps: DP-SGD's configuration (broadcast with the target's fields).
        target: a :mod:`dpax.targets` target, or a list of them (meet all).
        grid_step: the grid, in [1e-7, 1] (None: 1e-4); not with ``accuracy``.
        rtol: relative width of the final bracket of the noise, in [1e-8, 0.1].
        noise_bounds: (low, high) noise searched.
        standard_delta, compare_standard: the standard (epsilon, delta) comparison.
        candidates: points per row per round, in [2, 1024].
        on_infeasible, progress: see above.
        accuracy: the widest bracket of the target's quantity accepted, > 0 (None: use
            ``grid_step``).

    Returns:
        A :class:`CalibrationResult`.

    >>> import dpax
    >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
    ...                          grid_step=1e-2, compare_standard=False)
    >>> round(r.noise_multiplier, 3), r.status, round(r.achieved["advantage"], 4)
    (0.538, 'calibrated', 0.3)
    >>> a = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.ErrRates(0.1, 0.5),
    ...                          accuracy=1e-2, compare_standard=False)
    >>> a.grid_step, a.achieved_interval["beta"].width <= 1e-2, a.noise_interval.lower <= a.noise_multiplier
    (0.01, True, True)
    """
    target = _targets.as_target(target)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    steps = _v.positive_int_array("num_steps", num_steps)
    step, accuracy = _grid_or_accuracy(grid_step, accuracy, target)
    rtol, candidates, bounds = _search_settings(rtol, candidates, noise_bounds, "noise_bounds")
    standard_delta = _v.scalar("standard_delta", standard_delta, low=0.0, high=1.0, low_open=True, high_open=True)
    compare_standard = _v.flag("compare_standard", compare_standard)

    shape = _v.broadcast_shapes(("sample_rate", p), ("num_steps", steps), ("the target's fields", target.shape()))
    mode = _on_infeasible(on_infeasible, shape)
    flat = lambda a: np.broadcast_to(a, shape).reshape(-1)
    p_rows, t_rows = flat(p), flat(steps)
    tgt_rows = target.flat(shape)

    _progress.check(progress)
    # identical configurations are calibrated once (their answers are the same numbers)
    unique, inverse = _distinct_rows(p_rows, t_rows, tgt_rows) if mode == "mark" else (None, None)
    if unique is not None:
        p_rows, t_rows, tgt_rows = p_rows[unique], t_rows[unique], tgt_rows.take(unique)
    workload = _workload_key(p_rows, t_rows, tgt_rows, step, rtol, candidates, bounds, standard_delta,
                             compare_standard, mode, accuracy)
    with _grid.shared_lengths(workload=workload), _progress.task("dpax calibrate_dpsgd", progress):  # few kernel shapes
        fields = _calibrate_dpsgd_all(p_rows, t_rows, tgt_rows, step, rtol, candidates, bounds, standard_delta,
                                      compare_standard, mode, shape, accuracy)
    if unique is not None:
        fields = {k: (v if k in ("grid_step", "evaluations") else _rows_at(v, inverse)) for k, v in fields.items()}
    out = lambda a: _out(np.asarray(a).reshape(shape))
    for name in ("achieved", "achieved_interval"):
        if name in fields:
            fields[name] = {k: (Interval(out(v.safe), out(v.optimistic)) if isinstance(v, Interval) else out(v))
                            for k, v in fields[name].items()}
    if "noise_interval" in fields:
        fields["noise_interval"] = Interval(*(out(v) for v in fields["noise_interval"]))
    keep = {"achieved", "achieved_interval", "noise_interval", "grid_step", "evaluations"}
    return CalibrationResult(target=target, rtol=rtol, accuracy=accuracy, sample_rate=out(flat(p)),
                             num_steps=out(flat(steps)), **{k: (v if k in keep else out(v)) for k, v in fields.items()})


def _target_columns(target) -> list[np.ndarray] | None:
    """The numeric per-row fields of a flat target (every part of an :class:`~dpax.targets.All`;
    every row has the same parts), or None if one is not numeric."""
    parts = target.parts if isinstance(target, _targets.All) else (target,)
    columns = []
    for part in parts:
        for name in part.__dataclass_fields__:
            column = np.asarray(getattr(part, name))
            if column.ndim != 1 or column.dtype.kind not in "biuf":
                return None
            columns.append(column)
    return columns


def _workload_key(p_rows, t_rows, tgt_rows, *settings) -> tuple | None:
    """A digest of a calibrate_dpsgd call (its rows, target and settings): the same call
    repeated has the same key, whose repeated calls pad nothing
    (:func:`dpax._engine.grid.repeated`); None where a target field is not numeric (then
    every call shares shapes as a first call). Two calls with the same digest but different
    arguments would only share kernel shapes, never answers."""
    columns = _target_columns(tgt_rows)
    if columns is None:
        return None
    parts = tgt_rows.parts if isinstance(tgt_rows, _targets.All) else (tgt_rows,)
    digest = hashlib.sha256(repr(([type(part).__name__ for part in parts], settings)).encode())
    for column in (p_rows, t_rows, *columns):
        digest.update(np.ascontiguousarray(column, float).tobytes())
    return ("calibrate_dpsgd", digest.hexdigest())


def _distinct_rows(p_rows, t_rows, tgt_rows) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(index of the first of each distinct configuration, index of each row's among them), or
    (None, None) when every row is distinct (or a target field is not numeric)."""
    columns = _target_columns(tgt_rows)
    if columns is None or p_rows.size < 2:
        return None, None
    table = np.stack([p_rows, t_rows.astype(float)] + [c.astype(float) for c in columns], -1)
    _, unique, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
    if unique.size == p_rows.size:
        return None, None
    order = np.argsort(unique)  # keep the rows' first-appearance order
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return unique[order], rank[inverse.reshape(-1)]


def _rows_at(value, index):
    """A field of :func:`_calibrate_dpsgd_all` (flat arrays, dicts or Intervals of them) at rows ``index``."""
    if isinstance(value, dict):
        return {k: _rows_at(v, index) for k, v in value.items()}
    if isinstance(value, Interval):
        return Interval(*(_rows_at(v, index) for v in value))
    return np.asarray(value)[index]


def _grid_or_accuracy(grid_step, accuracy, target) -> tuple[float | None, float | None]:
    """The checked (grid_step, accuracy) of calibrate_dpsgd: exactly one is used."""
    if accuracy is None:
        return _v.grid_step(DEFAULT_GRID_STEP if grid_step is None else grid_step), None
    if grid_step is not None:
        raise ValueError(f"give grid_step or accuracy, not both (got grid_step={_v.brief(grid_step)}, accuracy="
                         f"{_v.brief(accuracy)}): with accuracy, calibrate_dpsgd chooses the grid itself")
    accuracy = _v.scalar("accuracy", accuracy, low=0.0, low_open=True)
    _accuracy_quantities(target)
    return None, accuracy


def _achieved(noise, p, t, target, delta, grid_step):
    """Risk values of the calibrated configurations, re-evaluated at the requested grid
    (chunked to fit memory); NaN for infeasible rows."""
    rows = noise.shape[0]
    result = {"advantage": np.full(rows, np.nan), "epsilon": np.full(rows, np.nan)}
    alpha = getattr(target, "alpha", None)
    if alpha is not None:
        result["beta"] = np.full(rows, np.nan)
    have = np.flatnonzero(np.isfinite(noise) & (noise > 0))
    if have.size:

        def run(start, stop):
            r = have[start:stop]
            pair = dpsgd(noise[r], p[r], t[r], grid_step).pair
            a = (alpha[r] if alpha is not None else np.full(r.size, 0.5)).reshape(-1, 1)
            adv, eps, beta = _analyse.risk_summary_kernel(pair, a, delta[r].reshape(-1, 1))
            return np.stack([np.asarray(adv), np.asarray(eps)[:, 0], np.asarray(beta)[:, 0]], -1)

        # rows grouped by support width, so small rows are not padded to the widest
        all_have, keys = have, _width_key(noise[have], p[have], t[have])
        for g in _batching.merge_groups(keys, ACHIEVED_GROUP_MIN_ROWS):
            have = all_have[np.isin(keys, g)]
            vals, _ = _sharding.map_chunks(run, have.size)
            result["advantage"][have] = vals[:, 0]
            result["epsilon"][have] = vals[:, 1]
            if alpha is not None:
                result["beta"][have] = vals[:, 2]
    zero = noise == 0
    q = _leak_probability(p[zero], t[zero])
    result["advantage"][zero] = q
    result["epsilon"][zero] = np.where(q <= delta[zero], 0.0, np.inf)
    if alpha is not None:
        result["beta"][zero] = (1 - q) * (1 - alpha[zero])
    return result


@float64
def calibrate(
    mechanism: Callable[..., PrivacyLoss],
    target,
    *,
    args=(),
    bounds=(1e-2, 1e3),
    rtol=DEFAULT_RTOL,
    candidates: int = DEFAULT_CANDIDATES,
    guess=None,
    privacy: str = "increasing",
    on_infeasible=None,
    full_output: bool = False,
    progress: bool | None = None,
):
    """Parameter w in ``bounds`` meeting ``target`` with the least privacy (Eq. 9), for any
    monotone family ``mechanism(w, *args) -> PrivacyLoss``.

    ``privacy='increasing'``: larger w is more private (noise scale, Laplace scale); the
    answer is the smallest w that meets the target. ``'decreasing'``: larger w is less private
    (sample rate, number of steps, epsilon of randomized response); the answer is the
    largest w that meets it (the search runs on 1/w; a family with an integer parameter
    should round it down inside ``mechanism``). ``mechanism`` receives a 1-D array of
    parameter values and, for each of ``args`` (configuration arrays broadcast against the
    target's fields), the matching 1-D array of values; it returns one batched PrivacyLoss
    with one row per value. The whole batch is searched together, one kernel call per round.

    Returns the verified parameter (a float, or an array in the broadcast shape; NaN where
    infeasible); with ``full_output`` a :class:`CalibrationResult` with per-row ``status``
    ('calibrated', 'met_at_bound', 'infeasible') and ``reason`` (the parameter is in its
    ``noise_multiplier`` field). ``on_infeasible`` and ``progress`` as in
    :func:`calibrate_dpsgd`.

    >>> import dpax
    >>> round(dpax.calibrate(lambda s: dpax.gaussian(s, grid_step=1e-3), dpax.targets.Advantage(0.2)), 3)
    1.974
    """
    if not callable(mechanism):
        raise TypeError(f"mechanism must be a callable parameter -> PrivacyLoss, got {type(mechanism).__name__}")
    target = _targets.as_target(target)
    _v.choice("privacy", privacy, ("increasing", "decreasing"))
    rtol, candidates, (lo_b, hi_b) = _search_settings(rtol, candidates, bounds, "bounds")
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

    def build_at(_step):
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
    reason[at_floor] = (f"{'low' if inc else 'high'} end of bounds ({lo_b if inc else hi_b:g}, the least private) "
                        "already meets the target")
    status[bad] = "infeasible"
    reason[bad] = (
        f"the target is not met even at {'the upper' if inc else 'the lower'} end of bounds "
        f"({hi_b if inc else lo_b:g}, the most private); widen bounds or relax the target"
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


def calibrate_gaussian(target, sensitivity=1.0):
    """Exact noise standard deviation of the (plain) Gaussian mechanism meeting ``target``:
    sigma = sensitivity / mu* with mu* the largest mu-GDP meeting it (Kulynych et al. 2024, App. B).

    Advantage: Corollary B.3, mu* = 2 Phi^-1((1 + eta*) / 2). ErrRates (and Accuracy, PPV,
    Reconstruction via Table 1): Corollary B.4, mu* = Phi^-1(1 - alpha*) - Phi^-1(beta*).
    Epsilon: the analytic Gaussian mechanism (Balle & Wang 2018), Eq. 22 solved for mu.
    GDP: mu*; several targets: the smallest mu*. Arrays broadcast. A noise outside float64's
    positive range (0 or inf after the division) is a ValueError.

    >>> import dpax
    >>> round(dpax.calibrate_gaussian(dpax.targets.Advantage(0.2)), 4)   # Corollary B.3
    1.9736
    """
    target = _targets.as_target(target)
    sens = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True)
    shape = _v.broadcast_shapes(("sensitivity", sens), ("the target's fields", target.shape()))
    mu = np.broadcast_to(np.asarray(target.gdp_mu(), float), shape)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        noise = np.broadcast_to(sens, shape) / mu
    bad = ~(np.isfinite(noise) & (noise > 0))  # a noise of 0 or inf is no calibration
    if np.any(bad):
        i = int(np.argmax(bad.reshape(-1)))
        s_i, m_i = float(np.broadcast_to(sens, shape).reshape(-1)[i]), float(mu.reshape(-1)[i])
        raise ValueError(f"calibrate_gaussian: the noise sensitivity / mu* = {s_i:g} / {m_i:g} is outside float64's "
                         "positive range (about 5e-324 to 1.8e308); scale the sensitivity (the noise scales with it)")
    return _out(noise)


def _tradeoff_lower_bound(alpha, eps, delta):
    """Eq. 20 / Prop. D.1: f(alpha) >= max_i max(0, 1 - delta_i - e^eps_i alpha, e^-eps_i (1 - delta_i - alpha))."""
    eps, delta = np.asarray(eps, float), np.asarray(delta, float)
    ok = np.isfinite(eps)
    e, d = eps[ok], delta[ok]
    if e.size == 0:
        return 0.0
    vals = np.maximum(1 - d - np.exp(e) * alpha, np.exp(-e) * (1 - d - alpha))
    return max(0.0, float(np.max(vals)))


def _accountant_says(fn, which: str, w: float, points: np.ndarray) -> np.ndarray:
    """The black-box accountant's answers at ``points``, checked (one real number per point,
    no NaN; epsilons >= 0 or inf, deltas in [0, 1], each up to 1e-12 of round-off, clipped): a
    NaN or negative answer would otherwise read as a met target."""
    if which == "epsilon":  # round-off of 1e-12 below 0 is clipped, as a profile's (from_privacy_profile)
        eps = _v.returned(f"the accountant epsilon(w={w:g}, deltas)", fn(w, points), points.size, low=-1e-12,
                          infinite_ok=True)
        return np.maximum(eps, 0.0)
    delta = _v.returned(f"the accountant delta(w={w:g}, epsilons)", fn(w, points), points.size, low=-1e-12,
                        high=1.0 + 1e-12)
    return np.clip(delta, 0.0, 1.0)


def _blackbox_margin(target, w, eps_fn, delta_fn, deltas, epsilons):
    """Margin (>= 0: met) of a scalar target from an (epsilon, delta) accountant at parameter w."""
    if isinstance(target, _targets.All):
        return min(_blackbox_margin(t, w, eps_fn, delta_fn, deltas, epsilons) for t in target.parts)

    def profile():
        if eps_fn is not None:
            return _accountant_says(eps_fn, "epsilon", w, deltas), deltas
        return epsilons, _accountant_says(delta_fn, "delta", w, epsilons)

    if isinstance(target, _targets.Epsilon):
        e, d = float(target.epsilon), float(target.delta)
        if eps_fn is not None:
            return e - float(_accountant_says(eps_fn, "epsilon", w, np.array([d]))[0])
        return d - float(_accountant_says(delta_fn, "delta", w, np.array([e]))[0])
    if isinstance(target, _targets.Advantage):
        eps, dl = profile()
        with np.errstate(over="ignore"):
            adv = np.where(np.isfinite(eps), (np.expm1(eps) + 2 * dl) / (np.exp(eps) + 1), 1.0)  # Prop. 2.6
        return float(target.advantage) - float(np.min(np.minimum(adv, 1.0)))
    if isinstance(target, (_targets.ErrRates, _targets._ViaErrRates)):
        er = target if isinstance(target, _targets.ErrRates) else target.err_rates()
        eps, dl = profile()
        return _tradeoff_lower_bound(float(er.alpha), eps, dl) - float(er.beta)
    raise TypeError("black-box calibration supports ErrRates, Accuracy, PPV, Reconstruction, Advantage, Epsilon; "
                    f"got {_v.brief(target)}")


def calibrate_blackbox(
    target,
    *,
    epsilon=None,
    delta=None,
    bounds=(0.05, 100.0),
    rtol=1e-3,
    candidates: int = 8,
    deltas=None,
    epsilons=None,
    on_infeasible=None,
    progress: bool | None = None,
):
    """Smallest parameter (noise) meeting ``target``, from a black-box accountant
    (Kulynych et al. 2024, Appendix A), for a user who has only ``epsilon(w, deltas)`` or
    ``delta(w, epsilons)`` from another library (each maps a scalar parameter w and a 1-D
    array to an array; larger w = more private).

    Advantage: Eq. 19 via Prop. 2.6, exact when ``delta`` is given (delta_w(0)).
    FPR/FNR targets (ErrRates, Accuracy, PPV, Reconstruction): the lower bound of Eq. 20 on
    the trade-off curve from the profile at ``deltas`` (default 200 values, 1e-12..0.9) or
    ``epsilons`` (default 0 and 199 values 1e-3..50) -- pessimistic, tighter with more
    points. Epsilon: the accountant itself. The bracket search is the same as
    :func:`calibrate`'s; each round costs (candidates x profile points) accountant calls per
    row. Target fields may be arrays (rows are searched together). Returns a float or array.
    ``on_infeasible`` and ``progress`` as in :func:`calibrate_dpsgd`.

    >>> import dpax   # a mu-GDP accountant with mu = 1 / w, seen only through epsilon(delta)
    >>> eps = lambda w, deltas: dpax.gdp.epsilon(deltas, 1.0 / w)
    >>> round(dpax.calibrate_blackbox(dpax.targets.Advantage(0.2), epsilon=eps), 2)
    1.97
    """
    if (epsilon is None) == (delta is None):
        raise TypeError("calibrate_blackbox needs exactly one of epsilon=(w, deltas) -> eps "
                        "or delta=(w, epsilons) -> delta")
    fn = epsilon if epsilon is not None else delta
    if not callable(fn):
        raise TypeError(f"{'epsilon' if epsilon is not None else 'delta'} (the accountant) must be a callable "
                        f"(w, array) -> array, got {type(fn).__name__}")
    target = _targets.as_target(target)
    rtol, candidates, (lo_b, hi_b) = _search_settings(rtol, candidates, bounds, "bounds")
    deltas = (np.geomspace(1e-12, 0.9, 200) if deltas is None
              else _v.real_array("deltas", deltas, low=0.0, high=1.0).reshape(-1))
    epsilons = (
        np.concatenate([[0.0], np.geomspace(1e-3, 50.0, 199)]) if epsilons is None
        else _v.real_array("epsilons", epsilons, low=0.0).reshape(-1)
    )
    shape = target.shape()
    mode = _on_infeasible(on_infeasible, shape)
    rows = target.flat(shape)
    n = int(np.prod(shape, dtype=int))

    row_targets = [rows.take(r) for r in range(n)]

    def evaluate(params, rows_of):
        return np.array([_blackbox_margin(row_targets[r], w, epsilon, delta, deltas, epsilons)
                         for w, r in zip(params, rows_of)])

    g = np.full(n, np.sqrt(lo_b * hi_b))
    _progress.check(progress)
    with _progress.task("dpax calibrate_blackbox", progress):
        hi, lo, _, bad = bracket_search(evaluate, g / 2, g * 2, bounds=(lo_b, hi_b), rtol=rtol, candidates=candidates,
                                        what="calibrate_blackbox")
    status = np.where(bad, "infeasible", "calibrated").astype(object)
    reason = np.where(bad, f"the target is not met even at {hi_b:g} (the upper end of bounds); "
                           "widen bounds or relax the target", "").astype(object)
    if mode == "raise":
        _raise_infeasible("calibrate_blackbox", status, reason, shape)
    return _out(np.where(bad, np.nan, hi).reshape(shape))
