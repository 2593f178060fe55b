"""Progress of long work on stderr, for calibrations, plots and sweeps.

A public function that may run for more than a couple of seconds takes ``progress=None``
and wraps its work in :func:`task`; the loops inside report with :func:`advance`. What is
shown depends on ``progress`` and on the stream (stderr unless the task names another):

* a terminal: a tqdm bar redrawn in place, after :data:`DELAY` seconds with ``None`` (short
  calls stay silent), at once with ``True``;
* not a terminal (a log file, a pipe, a batch job): plain lines, never a redrawn bar. With
  ``None``, a line at most every :data:`INTERVAL` seconds, the first after ``INTERVAL``
  seconds of work, checked whenever the work counts a step, and a last line at the end if
  any was written; with ``True`` the same, and the last line always. A line reads
  ``dpax sweep: 1,234/100,000 rows (1%), 0:05:00 elapsed`` (``... rounds, open 3/64 ...``
  with the status the work reports); the last one starts ``done,`` or, when the work
  raised or counted fewer steps than its total (an interrupted sweep), ``stopped,``;
* ``progress=False``: nothing, for the tasks nested inside too.

Nested tasks report to the outermost one: steps of its unit count there, steps of another
unit (a calibration's rounds inside a sweep's rows) only show their status beside it (and
may write a due line) until the nested task ends. tqdm is imported when a bar is shown.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime
import sys
import time
from collections.abc import Iterator
from typing import Any

#: Seconds before a bar appears on a terminal: short calls stay silent.
DELAY = 2.0
#: Least seconds between two plain lines when the stream is not a terminal.
INTERVAL = 30.0

_OFF = object()  # the outermost task was asked for no progress
_bar: contextvars.ContextVar[Any] = contextvars.ContextVar("dpax_progress_bar", default=None)
_counts: contextvars.ContextVar[bool] = contextvars.ContextVar("dpax_progress_counts", default=True)
_now = time.monotonic  # the clock of plain lines (a module attribute, replaced in tests)


def check(progress) -> bool | None:
    """Validate a ``progress`` argument: None, True or False."""
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None (a bar on a terminal, plain lines in a log), "
                        f"got {progress!r}")
    return progress


def style(progress: bool | None, stream=None) -> str | None:
    """How ``task`` reports on ``stream`` (default stderr): 'bar' on a terminal, 'lines'
    elsewhere, None with ``progress=False``."""
    if check(progress) is False:
        return None
    stream = sys.stderr if stream is None else stream
    try:
        tty = bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed file
        tty = False
    return "bar" if tty else "lines"


@contextlib.contextmanager
def task(description: str, progress: bool | None = None, total: int | None = None, unit: str = "round",
         stream=None, interval: float | None = None) -> Iterator[Any]:
    """Report the body's progress on ``stream`` (default stderr; see the module docstring):
    yields the reporter (a tqdm bar or :class:`Lines`, with ``update``, ``set_postfix`` and
    ``n``), the outermost task's inside another one, or None when nothing is shown.
    ``interval`` (default :data:`INTERVAL`) is the least seconds between plain lines."""
    outer = _bar.get()
    if outer is not None:  # inside another task: report there
        counts = outer is not _OFF and _counts.get() and getattr(outer, "unit", unit) == unit
        token = _counts.set(counts)
        try:
            yield None if outer is _OFF else outer
        finally:
            _counts.reset(token)
            if outer is not _OFF and not counts:
                outer.set_postfix({}, refresh=False)  # its status is over
        return
    how = style(progress, stream)
    stream = sys.stderr if stream is None else stream
    reporter: Any  # _OFF, a tqdm bar or Lines
    if how is None:
        reporter = _OFF
    elif how == "bar":
        from tqdm.auto import tqdm  # imported on use

        reporter = tqdm(total=total, desc=description, unit=unit, file=stream, leave=False,
                        delay=0.0 if progress else DELAY, dynamic_ncols=True)
    else:
        reporter = Lines(description, total, unit, stream, INTERVAL if interval is None else interval,
                         last_line=bool(progress))
    token = _bar.set(reporter)
    finished = False
    try:
        yield None if reporter is _OFF else reporter
        finished = True
    finally:
        _bar.reset(token)
        if isinstance(reporter, Lines):
            reporter.close(finished)
        elif reporter is not _OFF:
            reporter.close()


def advance(n: int = 1, **status) -> None:
    """Count ``n`` steps of the current task and show ``status`` beside it (only the status
    inside a nested task of another unit, until that task ends; nothing without a task)."""
    reporter = _bar.get()
    if reporter is None or reporter is _OFF:
        return
    if status:
        reporter.set_postfix(status, refresh=False)
    reporter.update(n if _counts.get() else 0)  # 0: a bar redrawn, a line written when due


class Lines:
    """Progress as plain lines on a stream that is not a terminal (see the module docstring)."""

    status: dict[str, Any]  #: name -> value, shown in the next line

    def __init__(self, description: str, total: int | None, unit: str, stream, interval: float,
                 last_line: bool = False):
        self.description, self.total, self.unit, self.stream = description, total, unit, stream
        self.interval, self.last_line = float(interval), last_line
        self.n, self.status, self.lines = 0, {}, 0
        self.start = self.last = _now()

    def set_postfix(self, status: dict, refresh: bool = False) -> None:
        """Show ``status`` (name -> value) in the next line."""
        self.status = dict(status)

    def update(self, n: int = 1) -> None:
        """Count ``n`` steps; write a line if :attr:`interval` seconds passed since the last."""
        self.n += n
        now = _now()
        if now - self.last >= self.interval:
            self._write(now, final="")

    def close(self, finished: bool = True) -> None:
        """Write the last line (if a line was written, or ``last_line``): 'done' when the work
        ``finished`` with every step of a known total counted, else 'stopped'."""
        if self.lines or self.last_line:
            done = finished and (not self.total or self.n >= self.total)
            self._write(_now(), final="done" if done else "stopped")

    def line(self, now: float, final: str = "") -> str:
        """The text of a line at time ``now`` (``final``: 'done' or 'stopped' for the last)."""
        if self.total:
            count = f"{self.n:,}/{self.total:,} {self.unit}s ({100 * self.n // self.total}%)"
        else:
            count = f"{self.n:,} {self.unit}{'' if self.n == 1 else 's'}"
        status = "".join(f", {k} {v}" for k, v in self.status.items())
        elapsed = datetime.timedelta(seconds=int(max(now - self.start, 0.0)))
        return f"{self.description}: {final + ', ' if final else ''}{count}{status}, {elapsed} elapsed"

    def _write(self, now: float, final: str) -> None:
        self.last = now
        self.lines += 1
        try:
            print(self.line(now, final), file=self.stream, flush=True)
        except (OSError, ValueError):  # a closed or full log: the work goes on without it
            pass
