"""Calibration through a black-box (epsilon, delta) accountant, :func:`calibrate_blackbox`
(Kulynych et al. 2024, Appendix A): the target's margin from the accountant's privacy
profile, searched by the same bracketing as :func:`dpax.calibrate`."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from .. import targets as _targets
from .._engine import progress as _progress
from .._engine import validation as _v
from .._engine.search import bracket_search
from .result import CalibrationResult, _on_infeasible, _out, _raise_infeasible
from .search import _renamed_bounds, _search_settings

#: a black-box accountant: ``epsilon(w, deltas)`` or ``delta(w, epsilons)``
_Accountant = Callable[[float, np.ndarray], ArrayLike]


def _tradeoff_lower_bound(alpha: float, eps: ArrayLike, delta: ArrayLike) -> float:
    """Eq. 20 / Prop. D.1: f(alpha) >= max_i max(0, 1 - delta_i - e^eps_i alpha, e^-eps_i (1 - delta_i - alpha))."""
    eps, delta = np.asarray(eps, float), np.asarray(delta, float)
    ok = np.isfinite(eps)
    e, d = eps[ok], delta[ok]
    if e.size == 0:
        return 0.0
    vals = np.maximum(1 - d - np.exp(e) * alpha, np.exp(-e) * (1 - d - alpha))
    return max(0.0, float(np.max(vals)))


def _accountant_says(fn: _Accountant, which: str, w: float, points: np.ndarray) -> np.ndarray:
    """The black-box accountant's answers at ``points``, checked (one real number per point,
    no NaN; epsilons >= 0 or inf, deltas in [0, 1], each up to 1e-12 of round-off, clipped): a
    NaN or negative answer would otherwise read as a met target."""
    if which == "epsilon":  # round-off of 1e-12 below 0 is clipped, as a profile's (from_privacy_profile)
        name = f"the accountant epsilon(w={w:g}, deltas)"
        eps = _v.returned(name, fn(w, points), points.size, low=-1e-12, infinite_ok=True)
        return _falling(name, "delta", points, np.maximum(eps, 0.0))
    name = f"the accountant delta(w={w:g}, epsilons)"
    delta = _v.returned(name, fn(w, points), points.size, low=-1e-12, high=1.0 + 1e-12)
    return _falling(name, "epsilon", points, np.clip(delta, 0.0, 1.0))


def _falling(name: str, along: str, points: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values``, refused (ValueError naming ``name``) where they rise with ``points`` by
    more than round-off (1e-9, relative and absolute): a privacy profile's delta falls as
    epsilon grows, and its epsilon as delta grows. A rising one read as a met target.

    >>> _falling("f", "delta", np.array([0.1, 0.01]), np.array([1.0, 2.0]))
    array([1., 2.])
    """
    order = np.argsort(points, kind="stable")
    p, v = points[order], values[order]
    with np.errstate(invalid="ignore"):
        rise = v[1:] - v[:-1] > 1e-9 * (1.0 + np.abs(v[:-1]))
    if np.any(rise):
        i = int(np.argmax(rise))
        raise ValueError(f"{name} must not grow with {along} (a privacy profile falls): it gives "
                         f"{_v.shown(float(v[i]))} at {along} {_v.shown(float(p[i]))} but {_v.shown(float(v[i + 1]))} "
                         f"at {_v.shown(float(p[i + 1]))}")
    return values


def _blackbox_margin(target: _targets.Target, w: float, eps_fn: _Accountant | None, delta_fn: _Accountant | None,
                     deltas: np.ndarray, epsilons: np.ndarray) -> float:
    """Margin (>= 0: met) of a scalar target from an (epsilon, delta) accountant at parameter w."""
    if isinstance(target, _targets.All):
        return min(_blackbox_margin(t, w, eps_fn, delta_fn, deltas, epsilons) for t in target.parts)

    def profile() -> tuple[np.ndarray, np.ndarray]:
        if eps_fn is not None:
            return _accountant_says(eps_fn, "epsilon", w, deltas), deltas
        return epsilons, _accountant_says(cast(_Accountant, delta_fn), "delta", w, epsilons)  # given: eps_fn is None

    if isinstance(target, _targets.Epsilon):
        e, d = float(target.epsilon), float(target.delta)
        if eps_fn is not None:
            return e - float(_accountant_says(eps_fn, "epsilon", w, np.array([d]))[0])
        return d - float(_accountant_says(cast(_Accountant, delta_fn), "delta", w, np.array([e]))[0])
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
    target: _targets.Target | list[_targets.Target] | tuple[_targets.Target, ...],
    *,
    epsilon: Callable[[float, np.ndarray], ArrayLike] | None = None,
    delta: Callable[[float, np.ndarray], ArrayLike] | None = None,
    noise_bounds: tuple[float, float] | None = None,
    rtol: float = 1e-3,
    candidates: int = 8,
    deltas: ArrayLike | None = None,
    epsilons: ArrayLike | None = None,
    on_infeasible: str | None = None,
    progress: bool | None = None,
    bounds: tuple[float, float] | None = None,
    full_output: bool = False,
) -> float | np.ndarray | CalibrationResult:
    """Smallest parameter (noise) in ``noise_bounds`` (default (0.05, 100)) meeting ``target``,
    from a black-box accountant
    (Kulynych et al. 2024, Appendix A), for a user who has only ``epsilon(w, deltas)`` or
    ``delta(w, epsilons)`` from another library (each maps a scalar parameter w and a 1-D
    array to an array; larger w = more private).

    Advantage: Eq. 19 via Prop. 2.6, exact when ``delta`` is given (delta_w(0)).
    FPR/FNR targets (ErrRates, Accuracy, PPV, Reconstruction): the lower bound of Eq. 20 on
    the trade-off curve from the profile at ``deltas`` (default 200 values, 1e-12..0.9) or
    ``epsilons`` (default 0 and 199 values 1e-3..50) -- pessimistic, tighter with more
    points. Epsilon: the accountant itself. The bracket search is the same as
    :func:`dpax.calibrate`'s; each round costs (candidates x profile points) accountant calls per
    row. Target fields may be arrays (rows are searched together).

    Args:
        target: an ErrRates, Accuracy, PPV, Reconstruction, Advantage or Epsilon target
            (:mod:`dpax.targets`), or a list / tuple of them (meet all); GDP is not
            supported.
        epsilon: the accountant as ``epsilon(w, deltas)``: the epsilon at each delta of a
            1-D array, >= 0 or inf (round-off down to -1e-12 is clipped to 0). Give exactly
            one of ``epsilon`` and ``delta``.
        delta: the accountant as ``delta(w, epsilons)``: the delta at each epsilon of a 1-D
            array, in [0, 1] (round-off of 1e-12 beyond it is clipped).
        noise_bounds: ``(low, high)`` parameters searched, 0 < low < high (None: (0.05, 100)).
        rtol: relative width of the final bracket, hi / lo - 1, in [1e-8, 0.1] (default 1e-3).
        candidates: parameters tried per row per round, an integer in [2, 1024] (default 8).
        deltas: the deltas, in [0, 1], at which ``epsilon`` is asked for the profile (None:
            200 values geometrically spaced from 1e-12 to 0.9).
        epsilons: the epsilons, >= 0, at which ``delta`` is asked for the profile (None: 0
            and 199 values geometrically spaced from 1e-3 to 50).
        on_infeasible: 'raise' (a ValueError naming the row), 'mark' (NaN) or None (raise
            for a single configuration, mark in a batch), as in :func:`dpax.calibrate_dpsgd`.
        progress: as in :func:`dpax.calibrate_dpsgd`: None (a bar on a terminal, plain
            lines in a log), True or False (nothing).
        bounds: the deprecated name of ``noise_bounds`` (a DeprecationWarning), kept for
            one release.
        full_output: return a :class:`dpax.CalibrationResult` instead of the parameters:
            per row ``status`` ('calibrated', 'met_at_bound' where the low end of
            ``noise_bounds`` already meets the target, 'infeasible') and ``reason``, the
            bracket's failing end and the accountant calls' count (``evaluations``, in
            parameters); ``achieved`` is empty and ``grid_step`` NaN (the accountant is a
            black box).

    Returns:
        The parameter: a float for one configuration, else a float64 array of the
        target's shape; NaN where the target is not met even at the upper end of
        ``noise_bounds`` (with ``on_infeasible='mark'``). It is a verified upper end of
        the search's bracket: it meets the target by the accountant's answers (through the
        pessimistic bound of Eq. 20 or Prop. 2.6 where the target needs the profile), and
        a parameter ``rtol`` smaller was seen to fail. With ``full_output``, a
        :class:`dpax.CalibrationResult` holding it as ``noise_multiplier``.

    Raises:
        TypeError: not exactly one of ``epsilon`` and ``delta`` given, or it is not
            callable; ``epsilons`` with ``epsilon`` or ``deltas`` with ``delta`` (the other
            accountant's points); ``target`` not a supported target; ``candidates`` not an integer;
            ``full_output`` not a boolean;
            ``progress`` not None, True or False; both ``noise_bounds`` and ``bounds``
            given; the accountant returns something that is not real numbers.
        ValueError: ``rtol``, ``candidates``, ``noise_bounds``, ``deltas``, ``epsilons`` or
            ``on_infeasible`` out of range; the accountant returns the wrong number of
            values, NaN, values out of range, or values that grow with its points (no
            privacy profile); a row is infeasible and
            ``on_infeasible`` is 'raise'.

    >>> import dpax   # a mu-GDP accountant with mu = 1 / w, seen only through epsilon(delta)
    >>> eps = lambda w, deltas: dpax.gdp.epsilon(deltas, 1.0 / w)
    >>> round(dpax.calibrate_blackbox(dpax.targets.Advantage(0.2), epsilon=eps), 2)
    1.97
    >>> dl = lambda w, epsilons: dpax.gdp.delta(epsilons, 1.0 / w)   # or through delta(epsilon)
    >>> dpax.calibrate_blackbox(dpax.targets.Advantage([0.2, 0.3]), delta=dl).round(2)
    array([1.97, 1.3 ])
    """
    if (epsilon is None) == (delta is None):
        raise TypeError("calibrate_blackbox needs exactly one of epsilon=(w, deltas) -> eps "
                        "or delta=(w, epsilons) -> delta")
    fn = epsilon if epsilon is not None else delta
    if not callable(fn):
        raise TypeError(f"{'epsilon' if epsilon is not None else 'delta'} (the accountant) must be a callable "
                        f"(w, array) -> array, got {type(fn).__name__}")
    unused = ("epsilons", "epsilon", "deltas") if epsilon is not None and epsilons is not None else (
        ("deltas", "delta", "epsilons") if delta is not None and deltas is not None else None)
    if unused is not None:  # it would change nothing
        raise TypeError(f"{unused[0]} is not used with {unused[1]}=...: that accountant is asked at {unused[2]}")
    target = _targets.as_target(target)
    noise_bounds = _renamed_bounds("noise_bounds", noise_bounds, bounds, (0.05, 100.0))
    rtol, candidates, (lo_b, hi_b) = _search_settings(rtol, candidates, noise_bounds, "noise_bounds")
    full_output = _v.flag("full_output", full_output)
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

    def evaluate(params: np.ndarray, rows_of: np.ndarray) -> np.ndarray:
        return np.array([_blackbox_margin(row_targets[r], w, epsilon, delta, deltas, epsilons)
                         for w, r in zip(params, rows_of)])

    g = np.full(n, np.sqrt(lo_b * hi_b))
    _progress.check(progress)
    with _progress.task("dpax calibrate_blackbox", progress):
        hi, lo, evaluations, bad = bracket_search(evaluate, g / 2, g * 2, bounds=(lo_b, hi_b), rtol=rtol,
                                                  candidates=candidates, what="calibrate_blackbox")
    status = np.where(bad, "infeasible", "calibrated").astype(object)
    reason = np.where(bad, f"the target is not met even at {hi_b:g} (the upper end of noise_bounds); "
                           "widen noise_bounds or relax the target", "").astype(object)
    at_floor = ~bad & np.isnan(lo)
    status[at_floor] = "met_at_bound"
    reason[at_floor] = f"the low end of noise_bounds ({lo_b:g}) already meets the target"
    if mode == "raise":
        _raise_infeasible("calibrate_blackbox", status, reason, shape)
    out = lambda a: _out(np.asarray(a).reshape(shape))
    noise = out(np.where(bad, np.nan, hi))
    if not full_output:
        return noise
    nan = out(np.full(n, np.nan))
    return CalibrationResult(
        noise_multiplier=noise, noise_multiplier_failing=out(lo), achieved={}, delta=nan, standard_epsilon=nan,
        standard_noise_multiplier=nan, status=out(status.astype(str)), target=target, grid_step=float("nan"),
        rtol=rtol, evaluations=evaluations, reason=out(reason.astype(str)),
    )
