"""Batched calibration with the rows divided among the processes of a ``jax.distributed``
run: the same arguments and the same answer, row for row, on every process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .. import targets as _targets
from .._engine import validation as _v
from .._engine.x64 import as_result
from ..calibration import CalibrationResult
from ..calibration import calibrate as _calibrate
from ..calibration import calibrate_dpsgd as _calibrate_dpsgd
from ..privacy_loss import PrivacyLoss
from .shares import _run_shares


def _result_fields(r: CalibrationResult) -> dict[str, np.ndarray]:
    one = lambda a: np.atleast_1d(np.asarray(a))
    out = {"noise_multiplier": one(r.noise_multiplier), "noise_multiplier_failing": one(r.noise_multiplier_failing),
           "delta": one(r.delta), "standard_epsilon": one(r.standard_epsilon),
           "standard_noise_multiplier": one(r.standard_noise_multiplier), "status": one(r.status).astype(str),
           "reason": one(r.reason).astype(str), "+evaluations": np.array([r.evaluations])}
    out.update({f"achieved:{k}": one(v) for k, v in r.achieved.items()})
    return out


def _result(got: dict[str, np.ndarray], shape: tuple[int, ...], target: _targets.Target, grid_step: float,
            rtol: float) -> CalibrationResult:
    out = lambda a: as_result(np.asarray(a).reshape(shape), None, dtype=None)
    return CalibrationResult(
        noise_multiplier=out(got["noise_multiplier"]), noise_multiplier_failing=out(got["noise_multiplier_failing"]),
        achieved={k.split(":", 1)[1]: out(v) for k, v in got.items() if k.startswith("achieved:")},
        delta=out(got["delta"]), standard_epsilon=out(got["standard_epsilon"]),
        standard_noise_multiplier=out(got["standard_noise_multiplier"]), status=out(got["status"]),
        target=target, grid_step=grid_step, rtol=rtol, evaluations=int(got["+evaluations"][0]),
        reason=out(got["reason"]))


def _mode(on_infeasible: str | None, shape: tuple[int, ...]) -> str:
    if on_infeasible is None:
        return "raise" if shape == () else "mark"
    return _v.choice("on_infeasible", on_infeasible, ("raise", "mark"))


def calibrate_dpsgd(
    *,
    sample_rate: ArrayLike,
    num_steps: ArrayLike,
    target: _targets.Target | list[_targets.Target] | tuple[_targets.Target, ...],
    on_infeasible: str | None = None,
    **options: Any,
) -> CalibrationResult:
    """:func:`dpax.calibrate_dpsgd` with the rows divided among the processes of a
    ``jax.distributed`` run (same arguments, same answer, row for row, on every process).

    Args:
        sample_rate: Poisson sampling rate(s), in (0, 1], broadcast with ``num_steps`` and
            the target's fields.
        num_steps: number(s) of steps, whole numbers >= 1.
        target: a target (or a list / tuple of them: meet all), as for
            :func:`dpax.calibrate_dpsgd`.
        on_infeasible: 'raise', 'mark' or None (raise for one configuration, mark in a batch).
        options: the other keyword arguments of :func:`dpax.calibrate_dpsgd` (``grid_step``, ``rtol``...),
            except ``accuracy`` (a ValueError: the processes must share one grid step).

    Returns:
        The :class:`dpax.CalibrationResult` of the whole batch (``evaluations`` summed over
        processes), the same on every process and row for row equal to a one-process
        :func:`dpax.calibrate_dpsgd` of the batch (its noise verified with the
        pessimistic pair). It does not record ``sample_rate`` and ``num_steps`` (None).

    Raises:
        ValueError: ``accuracy`` given; an argument out of range or the arguments do not
            broadcast (as :func:`dpax.calibrate_dpsgd`); an infeasible row with
            ``on_infeasible='raise'``. An error in one process is raised in every process
            (a ValueError or TypeError as itself, naming the process and its rows).
        TypeError: as :func:`dpax.calibrate_dpsgd` (a bad target, a non-numeric argument,
            an unknown option).
        DistributedError: another process died, left, or raised an error of another kind.

    >>> import dpax
    >>> r = dpax.distributed.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
    ...                                      grid_step=1e-2, compare_standard=False)
    >>> round(r.noise_multiplier, 3)
    0.538
    """
    if options.get("accuracy") is not None:  # each process would refine its own grid
        raise ValueError("accuracy is not supported here: the processes must share one grid step; choose it "
                         "with dpax.calibrate_dpsgd(accuracy=...) on one process and pass its grid_step")
    target = _targets.as_target(target)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    steps = _v.positive_int_array("num_steps", num_steps)
    shape = _v.broadcast_shapes(("sample_rate", p), ("num_steps", steps), ("the target's fields", target.shape()))
    mode = _mode(on_infeasible, shape)
    p_rows, t_rows = (np.broadcast_to(a, shape).reshape(-1) for a in (p, steps))
    tgt_rows = target.flat(shape)
    meta: dict[str, float] = {}

    def run(idx: np.ndarray) -> dict[str, np.ndarray]:
        r = _calibrate_dpsgd(sample_rate=p_rows[idx], num_steps=t_rows[idx], target=tgt_rows.take(idx),
                             on_infeasible=mode, **options)
        meta.update(grid_step=r.grid_step, rtol=r.rtol)
        return _result_fields(r)

    got = _run_shares(run, p_rows.size, "calibrate_dpsgd")
    if not meta:  # this process had no rows: the settings as calibrate_dpsgd checks them
        meta.update(grid_step=_v.grid_step(options.get("grid_step", 1e-4)), rtol=float(options.get("rtol", np.nan)))
    return _result(got, shape, target, meta["grid_step"], meta["rtol"])


def calibrate(
    mechanism: Callable[..., PrivacyLoss],
    target: _targets.Target | list[_targets.Target] | tuple[_targets.Target, ...],
    *,
    args: tuple[ArrayLike, ...] | list[ArrayLike] | ArrayLike = (),
    guess: ArrayLike | None = None,
    on_infeasible: str | None = None,
    full_output: bool = False,
    **options: Any,
) -> float | np.ndarray | CalibrationResult:
    """:func:`dpax.calibrate` with the rows divided among the processes of a
    ``jax.distributed`` run (same arguments, same answer, row for row, on every process).

    Args:
        mechanism: ``mechanism(w, *args) -> PrivacyLoss``, batched over rows.
        target: the target, or a list / tuple of them (its fields broadcast with ``args``
            and ``guess``).
        args: configuration arrays passed to ``mechanism`` (this process's rows of each; a
            single array-like that is not a tuple or list is one argument).
        guess: starting value(s) of the search, > 0 (None: the geometric middle of
            ``param_bounds``).
        on_infeasible: 'raise', 'mark' or None (raise for one configuration, mark in a batch).
        full_output: return a :class:`dpax.CalibrationResult` instead of the parameters
            (default False).
        options: the other keyword arguments of :func:`dpax.calibrate` (``param_bounds``,
            ``rtol``, ``candidates``, ``privacy``, ``progress``).

    Returns:
        The parameters (a float for one configuration, else a float64 array of the
        broadcast shape; NaN where infeasible) or, with ``full_output``, the
        :class:`dpax.CalibrationResult`; the same on every process, row for row equal to
        a one-process :func:`dpax.calibrate` (verified against the PrivacyLoss
        ``mechanism`` returns).

    Raises:
        ValueError: an argument out of range, or ``args``, ``guess`` and the target's
            fields do not broadcast; an infeasible row with ``on_infeasible='raise'``; as
            :func:`dpax.calibrate`. An error in one process is raised in every process (a
            ValueError or TypeError as itself, naming the process and its rows).
        TypeError: ``target`` not a target; as :func:`dpax.calibrate`.
        DistributedError: another process died, left, or raised an error of another kind.

    >>> import dpax
    >>> w = dpax.distributed.calibrate(lambda s: dpax.gaussian(s, grid_step=1e-2),
    ...                                dpax.targets.Advantage([0.2, 0.3, 0.4]))
    >>> w.round(3).tolist()
    [1.974, 1.298, 0.954]
    """
    target = _targets.as_target(target)
    if not isinstance(args, (tuple, list)):
        args = (args,)
    arg_arrays = [np.asarray(a) for a in args]
    shapes = [("the target's fields", target.shape())] + [(f"args[{i}]", a.shape) for i, a in enumerate(arg_arrays)]
    if guess is not None:
        shapes.append(("guess", np.shape(guess)))
    shape = _v.broadcast_shapes(*shapes)
    full_output = _v.flag("full_output", full_output)
    mode = _mode(on_infeasible, shape)
    arg_rows = [np.broadcast_to(a, shape).reshape(-1) for a in arg_arrays]
    g_rows = None if guess is None else np.broadcast_to(np.asarray(guess, float), shape).reshape(-1)
    tgt_rows = target.flat(shape)
    meta: dict[str, float] = {}

    def run(idx: np.ndarray) -> dict[str, np.ndarray]:
        r = cast(CalibrationResult,  # full_output=True
                 _calibrate(mechanism, tgt_rows.take(idx), args=tuple(a[idx] for a in arg_rows),
                            guess=None if g_rows is None else g_rows[idx], on_infeasible=mode, full_output=True,
                            **options))
        meta["rtol"] = r.rtol
        return _result_fields(r)

    got = _run_shares(run, int(np.prod(shape, dtype=int)), "calibrate")
    result = _result(got, shape, target, float("nan"), meta.get("rtol", float(options.get("rtol", np.nan))))
    return result if full_output else result.noise_multiplier
