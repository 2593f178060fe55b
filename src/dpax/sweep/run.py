"""Running a sweep: the batches of :mod:`dpax.sweep.evaluate` in turn (or divided among the
processes of a distributed job), answers written as each batch finishes, SIGINT / SIGTERM
honoured between batches.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import IO, Any, Literal

from .. import distributed as _dist
from .._engine import progress as _progress
from .._engine import validation as _v
from .._engine.grid import DEFAULT_GRID_STEP
from . import parts as _parts
from . import results as _results
from .config import SweepConfigError, read_config
from .evaluate import DEFAULT_BATCH_SIZE, _evaluate_safely, make_batches
from .results import OUTPUT_COLUMNS, _brief
from .rows import KNOWN_COLUMNS, Row, _cap

#: Malformed rows listed one by one: in the log (on_error='skip') and in the error ('reject').
MAX_REPORTED_ROWS = 20
MAX_REJECTED_LISTED = 3


class _StopFlag:
    """SIGINT / SIGTERM set a flag checked between batches (handlers restored on exit)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._saved: dict[signal.Signals, Any] = {}

    def __enter__(self) -> _StopFlag:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._saved[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: no handlers, Ctrl-C behaves as usual
                pass
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.signal = signum

    def __exit__(self, *exc: object) -> Literal[False]:
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
        rtol: relative tolerance of the calibrations, in [1e-8, 0.1].
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
        ValueError: an argument out of range (``batch_size``, ``rtol``, ``on_error``, both ``resume``
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
    rtol = _v.scalar("rtol", rtol, low=1e-8, high=0.1)  # the calibrations' own range, checked before any row runs
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
                 me: _dist.Process) -> tuple[set[int], bool]:
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


def _checked(tag: str, work: Callable[[], Any]) -> tuple[Any, dict[int, str]]:
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


def _run_distributed(config: str, output: str, rows: list[Row], bad: list[Row], header: list[str],
                     batches: list[list[Row]], *, resume: bool, overwrite: bool, rtol: float, progress: bool | None,
                     log: IO[str], compare_standard: bool = True) -> dict:
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


def _report_bad_rows(config: str, rows: list[Row], on_error: str, log: IO[str]) -> list[Row]:
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


def _header(rows: list[Row], log: IO[str]) -> list[str]:
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
