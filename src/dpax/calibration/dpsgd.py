"""DP-SGD calibration, :func:`calibrate_dpsgd`: the batched rows searched together (identical
configurations once, every call's kernel shapes shared), rows met without noise or at a
bound, the standard (epsilon, delta) comparison and the risks achieved at the answer."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .. import targets as _targets
from .._engine import grid as _grid
from .._engine import progress as _progress
from .._engine import validation as _v
from .._engine.x64 import float64
from ..mechanisms import dpsgd
from ..privacy_loss import Interval, PrivacyLoss
from .accuracy import _accuracy_quantities, _AccuracyFit, _both_sides, _Sides
from .quantities import _achieved, _dpsgd_noise_guess, _leak_probability, _no_noise_quantities
from .result import CalibrationResult, _on_infeasible, _out, _raise_infeasible
from .search import COARSE_PHASES, DEFAULT_CANDIDATES, DEFAULT_RTOL, _phases, _search, _search_settings

DEFAULT_STANDARD_DELTA = 1e-5


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


def _calibrate_dpsgd_rows(sample_rate: np.ndarray, num_steps: np.ndarray, target: _targets.Target,
                          grid_step: float | None, rtol: float, candidates: int, bounds: tuple[float, float],
                          accuracy: float | None = None) -> _Rows:
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

    def build_at(step: float) -> Callable[[np.ndarray, np.ndarray], PrivacyLoss]:
        return lambda params, r: dpsgd(params, p[r], t[r], step)

    def width(params: np.ndarray, r: np.ndarray) -> np.ndarray:  # support width proxy: CLT mu of DP-SGD, mu^2 + 10 mu
        mu = p[r] * np.sqrt(t[r] * np.expm1(np.minimum(1.0 / params**2, 700.0)))
        return 1.0 + mu * (mu + 10.0)

    if accuracy is None:
        assert grid_step is not None  # _grid_or_accuracy gives a grid step when accuracy is None
        hi, lo, out.evaluations, bad = _search(build_at, sub_target, guess, bounds,
                                               _phases(grid_step, rtol, candidates), "calibrate_dpsgd", cost=width,
                                               anchor=anchor)
    else:
        fit = _AccuracyFit(p, t, sub_target, bounds, rtol, candidates, width, anchor, accuracy)
        hi, lo, bad = fit.run(guess)
        assert fit.step is not None and fit.sides is not None  # set by run
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


def _calibrate_dpsgd_all(p_rows: np.ndarray, t_rows: np.ndarray, tgt_rows: _targets.Target, step: float | None,
                         rtol: float, candidates: int, bounds: tuple[float, float], standard_delta: float,
                         compare_standard: bool, mode: str, shape: tuple[int, ...],
                         accuracy: float | None = None) -> dict:
    """calibrate_dpsgd on flat rows: the search, the standard comparison and the achieved
    risks; the fields of :class:`CalibrationResult` (flat arrays)."""
    res = _calibrate_dpsgd_rows(p_rows, t_rows, tgt_rows, step, rtol, candidates, bounds, accuracy)
    noise, step, evaluations = res.noise, res.grid_step, res.evaluations
    if mode == "raise":
        _raise_infeasible("calibrate_dpsgd", res.status, res.reason, shape)

    is_eps = isinstance(tgt_rows, _targets.Epsilon)
    delta = cast(_targets.Epsilon, tgt_rows).delta if is_eps else np.full(noise.shape, standard_delta)
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


@float64
def calibrate_dpsgd(
    *,
    sample_rate: ArrayLike,
    num_steps: ArrayLike,
    target: _targets.Target | list[_targets.Target] | tuple[_targets.Target, ...],
    grid_step: float | None = None,
    rtol: float = DEFAULT_RTOL,
    noise_bounds: tuple[float, float] = (0.05, 1000.0),
    standard_delta: float = DEFAULT_STANDARD_DELTA,
    compare_standard: bool = True,
    candidates: int = DEFAULT_CANDIDATES,
    on_infeasible: str | None = None,
    progress: bool | None = None,
    accuracy: float | None = None,
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
        sample_rate: DP-SGD's Poisson sampling rate p, in (0, 1] (broadcast with
            ``num_steps`` and the target's fields).
        num_steps: the number of steps T, whole numbers >= 1 (broadcast likewise).
        target: a :mod:`dpax.targets` target, or a list / tuple of them (meet all).
        grid_step: the grid, one number in [1e-7, 1] (None: 1e-4); not with ``accuracy``.
        rtol: relative width of the final bracket of the noise, in [1e-8, 0.1] (default 1e-4).
        noise_bounds: ``(low, high)`` noise multipliers searched, 0 < low < high (default
            (0.05, 1000)).
        standard_delta: the delta of the standard (epsilon, delta) comparison, in (0, 1)
            (default 1e-5; an :class:`~dpax.targets.Epsilon` target uses its own delta).
        compare_standard: also calibrate to the standard (epsilon, ``standard_delta``)
            that implies the target (default True).
        candidates: points per row per round, an integer in [2, 1024] (default 3).
        on_infeasible: 'raise', 'mark' or None (see above).
        progress: None, True or False (see above).
        accuracy: the widest bracket of the target's quantity accepted, > 0 (None: use
            ``grid_step``).

    Returns:
        A :class:`CalibrationResult` whose array fields have the broadcast shape of
        ``sample_rate``, ``num_steps`` and the target's fields (Python scalars for one
        configuration). ``noise_multiplier`` is verified at ``grid_step`` with dpax's
        pessimistic pair, so the true mechanism meets the target there too; the
        ``achieved`` risks at it are pessimistic (beta never above, advantage and epsilon
        never below the truth).

    Raises:
        TypeError: ``target`` not a target; ``sample_rate`` or ``num_steps`` not numeric;
            ``grid_step`` not one number; ``candidates`` not an integer;
            ``compare_standard`` not a boolean; ``progress`` not None, True or False.
        ValueError: an argument out of the range above (``sample_rate`` outside (0, 1],
            ``num_steps`` not a whole number >= 1, ``grid_step``, ``rtol``, ``candidates``,
            ``noise_bounds``, ``standard_delta``, ``accuracy``, ``on_infeasible``); the
            arguments do not broadcast together; both ``grid_step`` and ``accuracy``
            given, or ``accuracy`` with a GDP target; a row is infeasible and
            ``on_infeasible`` is 'raise'; ``accuracy`` not reached within the memory
            budget or the smallest grid step.

    >>> import dpax
    >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
    ...                          grid_step=1e-2, compare_standard=False)
    >>> round(r.noise_multiplier, 3), r.status, round(r.achieved["advantage"], 4)
    (0.538, 'calibrated', 0.3)

    With ``accuracy``, dpax chooses the grid: here beta at FPR 0.1 is bracketed to 0.01.

    >>> a = dpax.calibrate_dpsgd(sample_rate=0.05, num_steps=50, target=dpax.targets.ErrRates(0.1, 0.5),
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
        assert inverse is not None  # _distinct_rows gives both or neither
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


def _target_columns(target: _targets.Target) -> list[np.ndarray] | None:
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


def _workload_key(p_rows: np.ndarray, t_rows: np.ndarray, tgt_rows: _targets.Target, *settings: Any) -> tuple | None:
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


def _distinct_rows(p_rows: np.ndarray, t_rows: np.ndarray,
                   tgt_rows: _targets.Target) -> tuple[np.ndarray | None, np.ndarray | None]:
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


def _rows_at(value: Any, index: np.ndarray) -> Any:
    """A field of :func:`_calibrate_dpsgd_all` (flat arrays, dicts or Intervals of them) at rows ``index``."""
    if isinstance(value, dict):
        return {k: _rows_at(v, index) for k, v in value.items()}
    if isinstance(value, Interval):
        return Interval(*(_rows_at(v, index) for v in value))
    return np.asarray(value)[index]


def _grid_or_accuracy(grid_step: float | None, accuracy: float | None,
                      target: _targets.Target) -> tuple[float | None, float | None]:
    """The checked (grid_step, accuracy) of calibrate_dpsgd: exactly one is used."""
    if accuracy is None:
        return _v.grid_step(_grid.DEFAULT_GRID_STEP if grid_step is None else grid_step), None
    if grid_step is not None:
        raise ValueError(f"give grid_step or accuracy, not both (got grid_step={_v.brief(grid_step)}, accuracy="
                         f"{_v.brief(accuracy)}): with accuracy, calibrate_dpsgd chooses the grid itself")
    accuracy = _v.scalar("accuracy", accuracy, low=0.0, low_open=True)
    _accuracy_quantities(target)
    return None, accuracy
