"""Running a sweep: rows grouped into batches, each batch one batched calibration or
analysis, answers written as each batch finishes, SIGINT / SIGTERM honoured between batches.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import IO, Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .. import distributed as _dist
from .. import gdp
from .._engine import progress as _progress
from .._engine import validation as _v
from .._engine.grid import DEFAULT_GRID_STEP
from ..calibration import calibrate_dpsgd
from ..mechanisms import dpsgd
from ..targets import Epsilon
from . import parts as _parts
from . import results as _results
from .config import SweepConfigError, read_config
from .results import OUTPUT_COLUMNS, _brief
from .rows import KNOWN_COLUMNS, Row, _cap, make_target

#: Malformed rows listed one by one: in the log (on_error='skip') and in the error ('reject').
MAX_REPORTED_ROWS = 20
MAX_REJECTED_LISTED = 3

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


def _analyse(noise, rows: list[Row], step: float) -> dict:
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


def _meets(p: dict, res: dict):
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


def _standard(rows: list[Row], target, noise: np.ndarray, step: float, rtol: float) -> dict:
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


class _StopFlag:
    """SIGINT / SIGTERM set a flag checked between batches (handlers restored on exit)."""

    def __init__(self):
        self.signal = None
        self._saved = {}

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._saved[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: no handlers, Ctrl-C behaves as usual
                pass
        return self

    def _handle(self, signum, frame):
        self.signal = signum

    def __exit__(self, *exc):
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)
        return False


def run_sweep(
    config: str,
    output: str,
    *,
    grid_step: float = DEFAULT_GRID_STEP,
    batch_size: int = DEFAULT_BATCH_SIZE,
    resume: bool = False,
    overwrite: bool = False,
    on_error: str = "skip",
    rtol: float = 1e-4,
    progress: bool | None = None,
    distributed: bool = False,
    log: IO[str] | None = None,
    compare_standard: bool = True,
) -> dict[str, Any]:
    """Evaluate every row of ``config`` and append the answers to ``output`` batch by batch.

    Args:
        config: the sweep file (.csv, .json, .jsonl, .yaml, .yml).
        output: the results file (.csv, or .jsonl / .json for JSON lines).
        grid_step: grid step of rows that do not give their own.
        batch_size: most rows per batched call.
        resume: keep ``output`` and skip the rows already in it; otherwise an existing
            ``output`` needs ``overwrite``. The kept file must be one a sweep of ``config``
            writes (see :mod:`dpax.sweep.results`: its rows this config's, each once and in the
            writer's order and form; a last line cut short by a crash is dropped), else a
            ValueError names the file, the line and the reason and nothing is written.
        overwrite: start ``output`` again (not with ``resume``: a ValueError).
        on_error: 'skip' (report each malformed row with its line number on ``log``, default
            stderr, and write it with status 'invalid') or 'reject' (raise
            :class:`SweepConfigError` listing them, before computing anything).
        rtol: relative tolerance of the calibrations.
        progress: report progress on ``log`` (see :mod:`dpax._engine.progress`): None (default)
            draws a bar when ``log`` is a terminal and otherwise writes a plain line at most every
            30 s of a long sweep (``dpax sweep: 1,234/100,000 rows (1%), 0:05:00 elapsed``) and
            one at its end; True the same, with the last line even for a short sweep; False
            nothing (nor from the calibrations inside).
        distributed: run as one process of a ``jax.distributed`` job (every process calls
            this with the same arguments; :func:`dpax.distributed.initialize` first, or it is
            called here from the environment): each process evaluates its share of the
            batches into ``output.part-<i>-of-<n>``, and process 0 merges the parts into
            ``output``, in the order one process would write it (see :mod:`dpax.sweep.parts`).
        log: where messages and progress go (default stderr).
        compare_standard: calibrated rows also get the standard (epsilon, delta) comparison,
            as :func:`dpax.calibrate_dpsgd` gives it: ``out_standard_epsilon`` (the epsilon at
            the row's ``delta``, default 1e-5, that standard calibration needs for the same
            bound), ``out_standard_noise_multiplier`` (the noise that meets it) and
            ``out_noise_reduction`` (1 - noise / standard noise); one more batched calibration
            per batch (about doubles the time of calibrated rows). False: those columns stay
            empty. Analysed rows leave them empty.

    Returns:
        A summary dict: config, output, rows, invalid, already_done, written, batches,
        interrupted, signal, remaining (a distributed sweep adds process, processes and
        stopped_processes).

    Raises:
        SweepConfigError: the config file cannot be read as a whole, or has malformed rows
            with ``on_error='reject'``.
        ValueError: an argument out of range (``batch_size``, ``on_error``, both ``resume``
            and ``overwrite``, an extension), ``output`` is the config file, exists without
            ``resume`` or ``overwrite``, cannot be written, or cannot be resumed.
        TypeError: ``compare_standard`` or ``progress`` not a bool.

    >>> import os, tempfile
    >>> from dpax.sweep import read_results, run_sweep
    >>> with tempfile.TemporaryDirectory() as d:
    ...     config, output = os.path.join(d, "sweep.csv"), os.path.join(d, "out.csv")
    ...     with open(config, "w") as fh:
    ...         _ = fh.write("noise_multiplier,sample_rate,num_steps,alpha\\n1.0,0.01,100,0.1\\n")
    ...     summary = run_sweep(config, output, grid_step=1e-3, progress=False)
    ...     (result,) = read_results(output)
    >>> summary["written"], summary["interrupted"], result["status"], round(float(result["out_beta"]), 4)
    (1, False, 'analysed', 0.8729)
    """
    log = sys.stderr if log is None else log
    _progress.check(progress)
    if resume and overwrite:
        raise ValueError(_results._BOTH)
    if on_error not in ("skip", "reject"):
        raise ValueError(f"on_error must be 'skip' or 'reject', got {on_error!r}")
    if isinstance(batch_size, bool) or not (isinstance(batch_size, int) and batch_size >= 1):
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    compare_standard = _v.flag("compare_standard", compare_standard)
    _results._out_format(output)  # validates the output file's extension
    if os.path.exists(output) and os.path.exists(config) and os.path.samefile(config, output):
        raise ValueError(f"output {output!r} is the config file itself: write the results to another file")
    rows = read_config(config, grid_step=grid_step)
    bad = _report_bad_rows(config, rows, on_error, log)
    header = _header(rows, log)
    batches = make_batches(rows, batch_size)
    if distributed:
        return _run_distributed(config, output, rows, bad, header, batches, resume=resume, overwrite=overwrite,
                                rtol=rtol, progress=progress, log=log, compare_standard=compare_standard)
    done, append = _results._prepare(output, header, rows, config, resume=resume, overwrite=overwrite)
    todo = [b for b in batches if any(r.row not in done for r in b)]
    invalid_todo = [r for r in bad if r.row not in done]
    n_todo = sum(len(b) for b in todo) + len(invalid_todo)
    with _progress.task("dpax sweep", progress, total=n_todo, unit="row", stream=log):
        written, interrupted = _write_rows(output, header, append, invalid_todo, todo, done, rtol=rtol,
                                          compare_standard=compare_standard)
    return {
        "config": config, "output": output, "rows": len(rows), "invalid": len(bad), "already_done": len(done),
        "written": written, "batches": len(batches), "interrupted": bool(interrupted),
        "signal": None if interrupted is None else signal.Signals(interrupted).name, "remaining": n_todo - written,
    }


def _write_rows(output: str, header: list[str], append: bool, invalid: list[Row], todo: list[list[Row]],
               done: set[int], *, rtol: float, compare_standard: bool = True) -> tuple[int, int | None]:
    """Write the ``invalid`` rows, then evaluate and write the batches ``todo`` (rows in ``done``
    skipped), one flushed write per batch (counted as progress of the current task, see
    :mod:`dpax._engine.progress`), stopping between batches on SIGINT / SIGTERM.
    Returns (rows written, the signal that stopped it or None)."""
    written, interrupted = 0, None
    try:
        fh = open(output, "a" if append else "w", newline="", encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"output: cannot write the results file {output!r}: {exc.strerror or exc}") from None
    with fh, _StopFlag() as stop:
        writer = _results._ResultsWriter(fh, _results._out_format(output), header, write_header=not append)
        if invalid:
            writer.emit([{**r.raw, "row": r.row, "line": r.line, "mode": "", "status": "invalid", "reason": r.error}
                         for r in invalid])
            written += _advance(len(invalid))
        for batch in todo:
            if stop.signal is not None:
                interrupted = stop.signal
                break
            by_row = {r.row: r for r in batch}
            records = [{**by_row[res["row"]].raw, **res} for res in _evaluate_safely(batch, rtol, compare_standard)
                       if res["row"] not in done]
            writer.emit(records)
            written += _advance(len(records))
    return written, interrupted


def _start_parts(config: str, output: str, header: list[str], rows: list[Row], resume: bool, overwrite: bool,
                 me) -> tuple[set[int], bool]:
    """Check (and for process 0 clear) the results and part files before any process writes:
    (rows already done, whether this process appends to its part)."""
    parts = _parts._existing_parts(output)
    exists = (os.path.exists(output) and os.path.getsize(output) > 0) or bool(parts)
    if exists and not (resume or overwrite):
        raise ValueError(f"results file {output!r} (or its part files) exists: pass resume=True (--resume) to "
                         "continue it or overwrite=True (--overwrite) to start again")
    if not (exists and resume):
        if me.index == 0:
            for path in parts + ([output] if os.path.exists(output) else []):
                os.unlink(path)
        return set(), False
    if me.index == 0 and os.path.exists(output) and os.path.getsize(output) > 0:
        _results._prepare(output, header, rows, config, resume=True, overwrite=False)  # checked, torn line dropped
    mine = _parts._part_path(output, me.index, me.count)
    if os.path.exists(mine) and os.path.getsize(mine) > 0:
        _results._prepare(mine, header, rows, config, resume=True, overwrite=False)  # checked, torn line dropped
    return (_parts._done_rows(output, parts, header, rows, config),
            os.path.exists(mine) and os.path.getsize(mine) > 0)


def _checked(tag: str, work):
    """``work()`` in every process, then a wait for all: an error in one is raised in all
    (ValueError naming the process); returns (this process's value, {process: status})."""
    try:
        value, status = work(), "ok"
    except (ValueError, TypeError, OSError) as exc:
        value, status = None, f"error\n{exc}"
    statuses = _dist.wait_for_all(tag, status)
    failed = {i: s.split("\n", 1)[1] for i, s in statuses.items() if s.startswith("error")}
    if failed:
        i = min(failed)
        raise ValueError(f"process {i} of {len(statuses)}: {failed[i]}")
    return value, statuses


def _run_distributed(config, output, rows, bad, header, batches, *, resume, overwrite, rtol, progress, log,
                     compare_standard=True) -> dict:
    """One process's part of a distributed sweep (see :mod:`dpax.sweep.parts`)."""
    if not _dist.initialized():
        _dist.initialize()  # from the environment (SLURM, TPU, JAX_COORDINATOR_ADDRESS ...)
    me = _dist.process()
    tag = f"sweep/{_dist.next_call()}"
    start = lambda: _start_parts(config, output, header, rows, resume, overwrite, me)
    (done, append), _ = _checked(tag + "/start", start)
    mine = _parts._share_batches(batches, me.index, me.count)
    todo = [b for b in mine if any(r.row not in done for r in b)]
    invalid_todo = [r for r in bad if r.row not in done] if me.index == 0 else []
    n_todo = sum(len(b) for b in todo) + len(invalid_todo)
    part = _parts._part_path(output, me.index, me.count)
    written, interrupted = 0, None
    if n_todo or append:
        with _progress.task(f"dpax sweep (process {me.index} of {me.count})", progress, total=n_todo, unit="row",
                            stream=log):
            written, interrupted = _write_rows(part, header, append, invalid_todo, todo, done, rtol=rtol,
                                              compare_standard=compare_standard)
    try:
        statuses = _dist.wait_for_all(tag + "/end", f"{'interrupted' if interrupted else 'done'} {written} {n_todo}")
    except _dist.DistributedError as exc:
        raise _dist.DistributedError(f"sweep of {config}: {exc}. The rows written so far are kept in "
                                     f"{_parts._part_path(output, '*', me.count)}: "
                                     "run the same command again with --resume") from None
    counts = {i: s.split() for i, s in statuses.items()}
    stopped = sorted(i for i, c in counts.items() if c[0] == "interrupted")
    total_written = sum(int(c[1]) for c in counts.values())
    remaining = sum(int(c[2]) - int(c[1]) for c in counts.values())
    if not stopped:
        order = [r.row for r in bad] + [r.row for b in batches for r in b]

        def merge() -> None:
            if me.index == 0:
                _parts._merge(output, header, order, _parts._existing_parts(output), keep_output=resume)

        _checked(tag + "/merged", merge)
    return {
        "config": config, "output": output, "rows": len(rows), "invalid": len(bad), "already_done": len(done),
        "written": total_written, "batches": len(batches), "interrupted": bool(stopped),
        "signal": None if interrupted is None else signal.Signals(interrupted).name, "remaining": remaining,
        "process": me.index, "processes": me.count, "stopped_processes": stopped,
    }


def _report_bad_rows(config: str, rows: list[Row], on_error: str, log) -> list[Row]:
    """The malformed rows: raised together ('reject') or each reported on ``log`` ('skip')."""
    bad = [r for r in rows if r.error]
    if bad and on_error == "reject":
        listed = bad[:MAX_REJECTED_LISTED]
        more = f"; ... and {len(bad) - len(listed)} more" if len(bad) > len(listed) else ""
        raise SweepConfigError(f"{config}: {len(bad)} malformed row(s): " +
                               "; ".join(f"line {r.line} (row {r.row}): {_cap(r.error, 100)}" for r in listed)
                               + more)
    for r in bad[:MAX_REPORTED_ROWS]:
        print(f"dpax sweep: {config}: line {r.line} (row {r.row}) skipped: {r.error}", file=log)
    if len(bad) > MAX_REPORTED_ROWS:
        print(f"dpax sweep: {config}: {len(bad) - MAX_REPORTED_ROWS} more malformed row(s) skipped (each is "
              "written to the results with status 'invalid' and its reason)", file=log)
    return bad


def _header(rows: list[Row], log) -> list[str]:
    """Columns of the results: row, line, the input columns in file order, the answers."""
    columns = list(dict.fromkeys(k for r in rows for k in r.raw))  # none is an answer's (read_config)
    unknown = [c for c in columns if c not in KNOWN_COLUMNS]
    if unknown:
        shown = ", ".join(_brief(c) if len(c) > 40 else c for c in unknown[:20])
        more = f" and {len(unknown) - 20} more" if len(unknown) > 20 else ""
        print(f"dpax sweep: columns not used by dpax (carried to the results): {shown}{more}", file=log)
    return ["row", "line"] + columns + list(OUTPUT_COLUMNS[2:])


def _advance(n: int) -> int:
    _progress.advance(n)
    return n
