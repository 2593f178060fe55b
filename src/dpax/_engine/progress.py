"""Progress of long work on stderr (tqdm), for calibrations, plots and sweeps.

A public function that may run for more than a couple of seconds takes ``progress=None``
and wraps its work in :func:`task`; the loops inside report with :func:`advance`. The bar
appears only after :data:`DELAY` seconds, only when stderr is a terminal (``progress=None``)
or when asked (``progress=True``), never with ``progress=False``; nested tasks report to the
outermost bar. tqdm is imported when a bar is shown.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from typing import Any, Iterator

#: Seconds before a bar appears: short calls stay silent.
DELAY = 2.0

_bar: contextvars.ContextVar[Any] = contextvars.ContextVar("dpax_progress_bar", default=None)


def check(progress) -> bool | None:
    """Validate a ``progress`` argument: None, True or False."""
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None (on when stderr is a terminal), got {progress!r}")
    return progress


def wanted(progress: bool | None) -> bool:
    """Whether to show a bar: ``progress``, or (None) whether stderr is a terminal."""
    if check(progress) is not None:
        return progress
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def task(description: str, progress: bool | None = None, total: int | None = None,
         unit: str = "round") -> Iterator[Any]:
    """Show one bar on stderr for the body (see the module docstring); yields it or None."""
    if _bar.get() is not None or not wanted(progress):  # inside another task, or off
        yield _bar.get()
        return
    from tqdm.auto import tqdm  # imported on use

    bar = tqdm(total=total, desc=description, unit=unit, file=sys.stderr, leave=False,
               delay=0.0 if progress else DELAY, dynamic_ncols=True)
    token = _bar.set(bar)
    try:
        yield bar
    finally:
        _bar.reset(token)
        bar.close()


def advance(n: int = 1, **status) -> None:
    """Count ``n`` steps of the current task and show ``status`` beside the bar (no-op
    without a bar)."""
    bar = _bar.get()
    if bar is not None:
        if status:
            bar.set_postfix(status, refresh=False)
        bar.update(n)
