"""A sweep's batches: rows grouped by what they share (:func:`make_batches`), each batch one
batched calibration (:func:`dpax.calibrate_dpsgd`) or analysis, and the answers of each row
(:func:`evaluate_batch`); :mod:`dpax.sweep.run` runs them and writes the answers.
"""

from __future__ import annotations

import sys
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .. import gdp
from ..calibration import calibrate_dpsgd
from ..mechanisms import dpsgd
from ..targets import Epsilon, Target
from .rows import Row, _cap, make_target

DEFAULT_DELTA = 1e-5
DEFAULT_BATCH_SIZE = 64


def batch_key(r: Row) -> tuple[float, str, tuple[str, ...]]:
    """The key of the rows that can share one batched call: :meth:`Row.batch_key`.

    Args:
        r: a well-formed row.

    Returns:
        ``(grid_step, mode, target kinds)``: equal keys share a grid step, a kind of work and
        (for rows to calibrate) their target kinds.

    Raises:
        KeyError: a malformed row (no ``grid_step`` in ``params``).

    >>> from dpax.sweep import batch_key, parse_row
    >>> batch_key(parse_row(1, 2, {"noise_multiplier": 1.0, "sample_rate": 0.01, "num_steps": 100}, 1e-3))
    (0.001, 'analyse', ())
    """
    return r.batch_key()


def make_batches(rows: list[Row], batch_size: int) -> list[list[Row]]:
    """The well-formed rows grouped by :func:`batch_key` and cut into batches.

    Each group keeps file order and is cut into batches of at most ``batch_size``; the
    batches are ordered by their first row. They depend on the file only, not on what a
    resumed sweep has done, so every run (and every process of a distributed one) forms
    the same batches.

    Args:
        rows: the rows of a sweep file (:func:`read_config`); malformed ones are left out.
        batch_size: the most rows of one batch, >= 1.

    Returns:
        The batches, each a non-empty list of rows.

    >>> from dpax.sweep import make_batches, parse_row
    >>> rows = [parse_row(i, i + 1, {"noise_multiplier": 1.0, "sample_rate": 0.01, "num_steps": 100,
    ...                              "grid_step": step}, 1e-3) for i, step in enumerate([1e-3, 1e-2, 1e-3], 1)]
    >>> [[r.row for r in b] for b in make_batches(rows, batch_size=64)]
    [[1, 3], [2]]
    """
    groups: dict[tuple[float, str, tuple[str, ...]], list[Row]] = {}
    for r in rows:
        if not r.error:
            groups.setdefault(batch_key(r), []).append(r)
    batches = [g[i:i + batch_size] for g in groups.values() for i in range(0, len(g), batch_size)]
    return sorted(batches, key=lambda b: b[0].row)


def _analyse(noise: np.ndarray, rows: list[Row], step: float) -> dict:
    """Risk of DP-SGD at the given noise values: one batched construction + kernels."""
    n = len(rows)
    out = {k: np.full(n, np.nan) for k in ("out_beta", "out_advantage", "out_epsilon", "out_mu", "out_regret")}
    out["out_delta"] = np.array([r.params.get("delta", DEFAULT_DELTA) for r in rows])
    ok = np.flatnonzero(np.isfinite(noise) & (noise > 0))
    if ok.size:
        p = np.array([rows[i].params["sample_rate"] for i in ok])
        t = np.array([rows[i].params["num_steps"] for i in ok])
        pl = dpsgd(noise[ok], p, t, grid_step=step)
        out["out_advantage"][ok] = pl.advantage()
        deltas = out["out_delta"][ok]
        ud, inv = np.unique(deltas, return_inverse=True)
        out["out_epsilon"][ok] = np.asarray(pl.epsilon(ud)).reshape(ok.size, -1)[np.arange(ok.size), inv]
        has_a = np.array([("alpha" in rows[i].params) for i in ok])
        if np.any(has_a):
            alphas = np.array([rows[i].params.get("alpha", 0.0) for i in ok])
            ua, inv = np.unique(alphas, return_inverse=True)
            b = np.asarray(pl.beta(ua)).reshape(ok.size, -1)[np.arange(ok.size), inv]
            out["out_beta"][ok[has_a]] = b[has_a]
        mu, regret = gdp.mu_and_regret(pl)
        out["out_mu"][ok], out["out_regret"][ok] = mu, regret
    return out


def _meets(p: dict, res: dict) -> bool | None:
    """Whether the answers ``res`` of an analysed row meet the targets it carries (None if none)."""
    checks = []
    if "beta" in p and "alpha" in p:
        checks.append(res["out_beta"] >= p["beta"])
    if "advantage" in p:
        checks.append(res["out_advantage"] <= p["advantage"])
    if "epsilon" in p:
        checks.append(res["out_epsilon"] <= p["epsilon"])
    if "mu" in p:
        checks.append(res["out_mu"] <= p["mu"])
    return bool(all(checks)) if checks else None


def _standard(rows: list[Row], target: Target, noise: np.ndarray, step: float, rtol: float) -> dict:
    """The standard comparison of calibrated rows: the epsilon at the row's ``delta`` (default
    1e-5; an Epsilon target's own) that standard calibration needs for the same bound
    (:meth:`dpax.targets.Target.standard_epsilon`), the noise that meets it (one batched
    calibration; an Epsilon target's is the noise itself) and 1 - noise / standard noise."""
    n = len(rows)
    delta = np.array([r.params.get("delta", DEFAULT_DELTA) for r in rows], float)
    with np.errstate(all="ignore"):
        eps = np.broadcast_to(np.asarray(target.standard_epsilon(delta), float), (n,)).copy()
    std = np.full(n, np.nan)
    if isinstance(target, Epsilon):
        std = noise.copy()
    else:
        ok = np.flatnonzero(np.isfinite(eps) & (eps > 0))
        if ok.size:
            res = calibrate_dpsgd(sample_rate=np.array([rows[i].params["sample_rate"] for i in ok]),
                                  num_steps=np.array([rows[i].params["num_steps"] for i in ok]),
                                  target=Epsilon(eps[ok], delta[ok]), grid_step=step, rtol=rtol,
                                  compare_standard=False, on_infeasible="mark")
            # per-row arrays here (CalibrationResult types its fields as object: scalars for scalar input)
            status, noise_ok = cast(ArrayLike, res.status), cast(ArrayLike, res.noise_multiplier)
            std[ok] = np.where(np.atleast_1d(status) == "infeasible", np.nan, np.atleast_1d(noise_ok))
    with np.errstate(all="ignore"):
        reduction = 1.0 - noise / std
    return {"out_standard_epsilon": eps, "out_standard_noise_multiplier": std, "out_noise_reduction": reduction}


#: The answers of the standard comparison (empty where it is not computed).
STANDARD_COLUMNS = ("out_standard_epsilon", "out_standard_noise_multiplier", "out_noise_reduction")


def evaluate_batch(rows: list[Row], *, rtol: float = 1e-4, compare_standard: bool = True) -> list[dict[str, Any]]:
    """The answers for one batch: one batched calibration (rows to calibrate) and one
    batched analysis.

    Rows to calibrate get the least noise that meets their targets
    (:func:`dpax.calibrate_dpsgd`); every row is then analysed at its noise: beta at its
    ``alpha`` (Algorithm 1 of Kulynych, Gomez et al., "Attack-aware noise calibration for
    differential privacy", NeurIPS 2024), the advantage (their Algorithm 3), epsilon at its
    ``delta`` (default 1e-5), and mu with its regret (:func:`dpax.gdp.mu_and_regret`).

    Args:
        rows: well-formed rows with one :func:`batch_key` (as :func:`make_batches` forms them).
        rtol: relative tolerance of the calibrations.
        compare_standard: calibrated rows also get the standard (epsilon, delta) comparison
            (see :func:`run_sweep`).

    Returns:
        One dict per row, in order: ``row``, ``line``, ``mode``, ``status``, ``reason`` and
        the ``out_*`` answers (NaN or None where a row has none).

    Raises:
        ValueError, TypeError: a configuration the calibration or the analysis refuses
            (:func:`run_sweep` then evaluates the batch row by row and marks the row 'error').

    >>> from dpax.sweep import evaluate_batch, parse_row
    >>> row = parse_row(1, 2, {"noise_multiplier": 1.0, "sample_rate": 0.01, "num_steps": 100, "alpha": 0.1}, 1e-3)
    >>> (res,) = evaluate_batch([row])
    >>> res["status"], round(res["out_epsilon"], 4), round(res["out_beta"], 4), round(res["out_mu"], 3)
    ('analysed', 0.7181, 0.8729, 0.358)
    """
    step = rows[0].params["grid_step"]
    n = len(rows)
    status = np.full(n, "analysed", object)
    reason = np.full(n, "", object)
    standard = {k: np.full(n, np.nan) for k in STANDARD_COLUMNS}
    if rows[0].mode == "analyse":
        noise = np.array([r.params["noise_multiplier"] for r in rows])
    else:
        target = make_target([r.params for r in rows])
        res = calibrate_dpsgd(sample_rate=np.array([r.params["sample_rate"] for r in rows]),
                              num_steps=np.array([r.params["num_steps"] for r in rows]),
                              target=target, grid_step=step, rtol=rtol, compare_standard=False, on_infeasible="mark")
        noise = np.atleast_1d(np.asarray(res.noise_multiplier, float))
        status = np.atleast_1d(np.asarray(res.status)).astype(object)
        reason = np.atleast_1d(np.asarray(res.reason)).astype(object)
        if compare_standard:
            standard = _standard(rows, target, noise, step, rtol)
    out = _analyse(noise, rows, step)
    results = []
    for i, r in enumerate(rows):
        d = {"row": r.row, "line": r.line, "mode": r.mode, "status": str(status[i]), "reason": str(reason[i]),
             "out_noise_multiplier": float(noise[i]), "out_grid_step": step}
        for k in ("out_beta", "out_advantage", "out_delta", "out_epsilon", "out_mu", "out_regret"):
            d[k] = float(out[k][i])
        for k in STANDARD_COLUMNS:
            d[k] = float(standard[k][i])
        if r.mode == "calibrate" and noise[i] == 0:  # met without noise: the leak-probability bounds
            ach = {k: np.atleast_1d(v)[i] for k, v in res.achieved.items()}
            d["out_advantage"], d["out_epsilon"] = float(ach["advantage"]), float(ach["epsilon"])
            if "beta" in ach:
                d["out_beta"] = float(ach["beta"])
        d["out_meets_target"] = _meets(r.params, d) if r.mode == "analyse" else (str(status[i]) != "infeasible")
        results.append(d)
    return results


def _evaluate_safely(batch: list[Row], rtol: float, compare_standard: bool = True) -> list[dict]:
    """:func:`evaluate_batch`, falling back to row by row when the batch fails, so one bad
    configuration (e.g. a noise too small for float64) marks only its own row 'error'."""
    try:
        return evaluate_batch(batch, rtol=rtol, compare_standard=compare_standard)
    except (ValueError, TypeError, FloatingPointError, MemoryError):
        if len(batch) == 1:
            r = batch[0]
            return [{"row": r.row, "line": r.line, "mode": r.mode, "status": "error",
                     "reason": _cap(str(sys.exc_info()[1]))}]
    out = []
    for r in batch:
        out += _evaluate_safely([r], rtol, compare_standard)
    return out


# -- the sweep -------------------------------------------------------------------------------

