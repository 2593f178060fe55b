"""The processes of a ``jax.distributed`` run: joining with bounded waits, heartbeats that
name a dead process, and barriers (:func:`wait_for_all`); a batch's rows are divided and
gathered by :mod:`dpax.distributed.shares`. See :mod:`dpax.distributed`.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any, NotRequired, TypedDict

import jax
import numpy as np

from .._engine import validation as _v

#: Defaults of :func:`initialize` (seconds).
DEFAULT_JOIN_TIMEOUT = 300.0
DEFAULT_HEARTBEAT_TIMEOUT = 60.0
#: Exit status of a process that gave up waiting for the others to join.
JOIN_EXIT_STATUS = 2


class _State(TypedDict):
    heartbeat_timeout: float
    beat: threading.Thread | None
    calls: int
    stop_beat: NotRequired[threading.Event | None]
    leave: NotRequired[bool]


_state: _State = {"heartbeat_timeout": DEFAULT_HEARTBEAT_TIMEOUT, "beat": None, "calls": 0}


class DistributedError(RuntimeError):
    """A distributed run cannot go on: a process died, never joined, or raised an error."""


@dataclasses.dataclass(frozen=True)
class Process:
    """Where this process stands: its ``index`` among ``count`` processes."""

    index: int
    count: int


def process() -> Process:
    """This process's index and the number of processes (``Process(0, 1)`` without
    ``jax.distributed``).

    Returns:
        ``Process(index, count)``: ``jax.process_index()`` and ``jax.process_count()`` once
        ``jax.distributed`` is initialised.

    >>> process()
    Process(index=0, count=1)
    """
    if not initialized():
        return Process(0, 1)
    return Process(jax.process_index(), jax.process_count())


def initialized() -> bool:
    """Whether ``jax.distributed`` has been initialised in this process.

    Returns:
        True once :func:`initialize` (or ``jax.distributed.initialize``) has run.

    >>> initialized()
    False
    """
    return bool(jax.distributed.is_initialized())


def _client() -> Any:
    from jax._src import distributed as _jd  # the coordinator's key-value store (no public name)

    return _jd.global_state.client


def initialize(
    coordinator: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    *,
    join_timeout: float = DEFAULT_JOIN_TIMEOUT,
    heartbeat_timeout: float = DEFAULT_HEARTBEAT_TIMEOUT,
) -> Process:
    """Join this process to a multi-process run (``jax.distributed.initialize``), with bounded waits.

    Arguments left ``None`` come from the environment as JAX reads it (SLURM, a TPU pod,
    ``JAX_COORDINATOR_ADDRESS``...). Already initialised: nothing changes (dpax uses it).

    Args:
        coordinator: ``host:port`` of process 0 (the coordinator).
        num_processes: how many processes take part (>= 1).
        process_id: this process's id, in [0, num_processes).
        join_timeout: seconds to wait for every process to join (> 0); past it this process
            prints an error naming the processes it waited for and exits with status
            :data:`JOIN_EXIT_STATUS` (the JAX runtime would abort it anyway).
        heartbeat_timeout: seconds without a heartbeat after which a process counts as dead (> 0).

    Returns:
        This process's :class:`Process`.

    Raises:
        TypeError: ``join_timeout`` or ``heartbeat_timeout`` is not a number.
        ValueError: ``join_timeout`` or ``heartbeat_timeout`` is not finite or not > 0;
            ``num_processes`` is not an integer >= 1; ``process_id`` is not an integer in
            [0, num_processes); ``coordinator`` is not ``'host:port'``; nothing is given
            and no cluster is found in the environment.

    Past ``join_timeout`` the process exits (status :data:`JOIN_EXIT_STATUS`) instead of
    raising: JAX would abort it anyway.

    >>> import dpax
    >>> dpax.distributed.process()      # not initialised: one process
    Process(index=0, count=1)
    >>> dpax.distributed.initialize(join_timeout=0)   # refused before anything is started
    Traceback (most recent call last):
    ...
    ValueError: join_timeout must lie in (0, inf), got 0
    """
    join_timeout = _v.scalar("join_timeout", join_timeout, low=0.0, low_open=True)
    heartbeat_timeout = _v.scalar("heartbeat_timeout", heartbeat_timeout, low=0.0, low_open=True)
    _state["heartbeat_timeout"] = heartbeat_timeout
    if initialized():  # by the caller (jax.distributed.initialize): dpax joins in
        _join_in()
        return process()
    coordinator, num_processes, process_id = _checked_ids(coordinator, num_processes, process_id)
    jax.config.update("jax_enable_recoverability", True)
    watchdog = threading.Timer(join_timeout, _never_joined, (coordinator, num_processes, process_id, join_timeout))
    watchdog.daemon = True
    watchdog.start()
    try:
        try:
            with _no_recoverability_notice():
                jax.distributed.initialize(coordinator, num_processes, process_id,
                                           initialization_timeout=int(join_timeout) + 10,
                                           heartbeat_timeout_seconds=max(1, int(round(heartbeat_timeout))))
        except ValueError as exc:  # nothing given and no cluster in the environment
            raise ValueError(f"distributed: {exc} No cluster was found in the environment (SLURM, a TPU pod, "
                             "JAX_COORDINATOR_ADDRESS ...): give the coordinator ('host:port' of process 0), "
                             "num_processes and process_id (--coordinator, --num-processes, --process-id)") from None
        jax.devices()  # the backend's start is collective too (devices are exchanged): within the wait
    finally:
        watchdog.cancel()
    _join_in()
    return process()


#: C++ log levels of JAX's ``jax_logging_level`` names (0 info, 1 warning, 2 error, 3 fatal).
_CPP_LOG_LEVELS = {"DEBUG": 0, "INFO": 0, "WARNING": 1, "ERROR": 2, "CRITICAL": 3}


def _cpp_log_level() -> int:
    """The minimum level of JAX's C++ log: ``jax_logging_level`` when it names one, else
    ``TF_CPP_MIN_LOG_LEVEL`` (which ``import jax`` sets to 1, warnings and errors, when unset)."""
    named = _CPP_LOG_LEVELS.get(str(getattr(jax.config, "jax_logging_level", None) or "").upper())
    if named is not None:
        return named
    try:
        return int(os.environ.get("TF_CPP_MIN_LOG_LEVEL", "1"))
    except ValueError:
        return 1


@contextlib.contextmanager
def _no_recoverability_notice() -> Iterator[None]:
    """Run the body (``jax.distributed.initialize``) with JAX's C++ log at errors only, then
    restore its level (:func:`_cpp_log_level`).

    With ``jax_enable_recoverability`` on, the coordination service logs a C++ warning
    ("Using experimental recoverable task feature. The default shutdown barrier will only
    block non-recoverable tasks. If a synchronized shutdown is desired, the user / library
    should invoke WaitAtBarrier explicitly"), on process 0 with JAX 0.10 and on every process
    with JAX 0.8, once per run. It is not a Python warning (``warnings.filterwarnings`` does
    not see it), and JAX has no recoverable mode that is not experimental. It is safe to
    hide: dpax does the synchronized shutdown it asks for (:func:`_leave`: every process
    waits at exit until the others have finished or died, and the others disconnect before
    process 0). Only warnings are hidden, only during the call (errors still print), and a
    process that never joins is named by dpax's own watchdog. A level already at errors or
    above is left as it is; without ``absl_set_min_log_level`` in this jaxlib nothing changes.
    """
    from jax._src.lib import utils  # absl's minimum log level; JAX's public setting cannot be undone

    set_level = getattr(utils, "absl_set_min_log_level", None)
    level = _cpp_log_level()
    if set_level is None or level >= 2:
        yield
        return
    set_level(2)
    try:
        yield
    finally:
        set_level(level)


def _checked_ids(coordinator: str | None, num_processes: int | None,
                 process_id: int | None) -> tuple[str | None, int | None, int | None]:
    """The arguments of :func:`initialize` checked (None stays None: from the environment)."""
    if num_processes is not None:
        _v.positive_int_array("num_processes", num_processes)
        num_processes = int(num_processes)
    if process_id is not None:
        if isinstance(process_id, bool) or not isinstance(process_id, (int, np.integer)) or process_id < 0:
            raise ValueError(f"process_id must be an integer >= 0, got {_v.brief(process_id)}")
        process_id = int(process_id)
        if num_processes is not None and process_id >= num_processes:
            raise ValueError(f"process_id must be in [0, num_processes = {num_processes}), got {process_id}")
    if coordinator is not None and (not isinstance(coordinator, str) or ":" not in coordinator):
        raise ValueError(f"coordinator must be 'host:port' (process 0's address), got {_v.brief(coordinator)}")
    return coordinator, num_processes, process_id


def _join_in() -> None:
    """Start this process's heartbeat and its orderly exit (once; also when the caller
    initialised ``jax.distributed`` without dpax: every dpax step calls this first)."""
    _start_heartbeat()
    if not _state.get("leave") and process().count > 1:
        atexit.register(_leave)  # runs before JAX's own shutdown (registered when jax was imported)
        _state["leave"] = True


def _leave() -> None:
    """At exit: wait for the others (or their death), then disconnect in order, every other
    process before process 0, whose coordinator must outlive their disconnection (in the
    recoverable mode JAX's own shutdown does not wait, and a process that disconnects from a
    coordinator already gone is aborted)."""
    if not initialized() or process().count < 2:
        return
    try:
        wait_for_all("exit")
    except Exception:  # noqa: BLE001 - a dead process: the others leave anyway
        pass
    _stop_heartbeat()
    try:
        if jax.process_index() == 0:
            _client().get_live_nodes(list(range(jax.process_count())))  # returns once the others have left
        jax.distributed.shutdown()
    except Exception:  # noqa: BLE001 - nothing more to do at exit
        pass


def _never_joined(coordinator: str | None, num_processes: int | None, process_id: int | None, timeout: float) -> None:
    """The join wait is over: say who was missing and exit (from the watchdog thread)."""
    me = "this process" if process_id is None else f"process {process_id}"
    if num_processes is None:
        others = "the other processes"
    else:
        ids = [i for i in range(num_processes) if i != process_id]
        others = (f"process {ids[0]}" if len(ids) == 1 else f"one or more of processes {_ids(ids)}")
    sys.stderr.write(
        f"dpax: error: distributed run: {me} waited {timeout:g} s at the coordinator "
        f"{coordinator or '(from the environment)'} but {others} of {num_processes or '?'} never joined; "
        f"start every process with the same coordinator and number of processes, each with its own process id "
        f"(0..N-1). Nothing was computed.\n")
    sys.stderr.flush()
    os._exit(JOIN_EXIT_STATUS)


def _ids(ids: Iterable[int]) -> str:
    ids = list(ids)
    return ", ".join(map(str, ids[:10])) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")


def _start_heartbeat() -> None:
    """A daemon thread refreshing this process's heartbeat key (a counter) in the store."""
    if _state["beat"] is not None or process().count < 2:
        return
    client, me = _client(), jax.process_index()
    period = max(0.05, min(1.0, _state["heartbeat_timeout"] / 10))
    stop = threading.Event()

    def beat() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                client.key_value_set(f"dpax/heartbeat/{me}", str(n), allow_overwrite=True)
            except Exception:  # noqa: BLE001 - the coordinator is gone: nothing left to tell
                return
            stop.wait(period)

    thread = threading.Thread(target=beat, name="dpax-heartbeat", daemon=True)
    _state["beat"] = thread
    _state["stop_beat"] = stop
    thread.start()


def _stop_heartbeat(timeout: float = 10.0) -> None:
    """Stop the heartbeat thread and wait (up to ``timeout`` seconds) until it has left the
    coordinator client. A daemon thread still inside that C++ call when the interpreter
    finalises is unwound by ``pthread_exit`` through frames that swallow the unwinding, and
    the process aborts ("FATAL: exception not rethrown", SIGABRT) after its work is done."""
    beat, stop = _state.get("beat"), _state.get("stop_beat")
    if beat is None or stop is None:
        return
    stop.set()
    beat.join(timeout)


def wait_for_all(tag: str, status: str = "ok", timeout: float | None = None) -> dict[int, str]:
    """Publish this process's ``status`` under ``tag`` and wait until every process has published
    its own; returns {process index: status}.

    A process whose heartbeat stops for ``heartbeat_timeout`` seconds before it publishes
    raises :class:`DistributedError` naming it (here, in every surviving process); with
    ``timeout`` (seconds) the wait is bounded even while the others are alive.

    Args:
        tag: the name of this barrier, the same on every process and new for each one
            (e.g. with :func:`next_call`).
        status: what this process publishes (default ``'ok'``).
        timeout: the longest wait in seconds while the others are alive (None: no limit
            but their heartbeats).

    Returns:
        ``{process index: status}`` for every process (``{0: status}`` with one process).

    Raises:
        DistributedError: a process stopped (no heartbeat for ``heartbeat_timeout``
            seconds) or left the run before publishing, or ``timeout`` passed.

    >>> wait_for_all("example")   # one process: nobody to wait for
    {0: 'ok'}
    """
    me = process()
    if me.count < 2:
        return {0: status}
    _join_in()
    client, prefix = _client(), f"dpax/{tag}/"
    client.key_value_set(prefix + str(me.index), status, allow_overwrite=True)
    seen: dict[int, tuple[str | None, float]] = {}
    start = time.monotonic()
    pause = 0.01
    while True:
        got = {int(k.rsplit("/", 1)[1]): v for k, v in client.key_value_dir_get(prefix)}
        missing = [i for i in range(me.count) if i not in got]
        if not missing:
            return got
        now = time.monotonic()
        left = [i for i in missing if tag != "exit" and _get(client, f"dpax/exit/{i}") is not None]
        if left:
            raise DistributedError(f"process {_ids(left)} of {me.count} left the run (it is exiting, e.g. after an "
                                   f"error of its own) before it reached this step ({tag})")
        dead = []
        for i in missing:
            beat = _get(client, f"dpax/heartbeat/{i}")
            last, since = seen.get(i, (None, now))
            if beat != last:
                seen[i] = (beat, now)
            elif now - since > _state["heartbeat_timeout"]:
                dead.append(i)
        if dead:
            raise DistributedError(
                f"process {_ids(dead)} of {me.count} stopped (no heartbeat for {_state['heartbeat_timeout']:g} s) "
                f"before it finished ({tag}); the processes that finished: {_ids(sorted(got)) or 'none'}")
        if timeout is not None and now - start > timeout:
            raise DistributedError(f"waited {timeout:g} s for process {_ids(missing)} of {me.count} ({tag})")
        time.sleep(pause)
        pause = min(0.5, pause * 2)


def _get(client: Any, key: str) -> str | None:
    try:
        return client.key_value_try_get(key)
    except Exception:  # noqa: BLE001 - NOT_FOUND
        return None
