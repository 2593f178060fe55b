"""dpax.distributed.processes: joining, heartbeats and the orderly exit. At exit the heartbeat
stops before the process disconnects; a process that never joins is named within the join
wait (exit status JOIN_EXIT_STATUS); a process that leaves is named by the other's next call
(-m slow, two processes: tests/distributed/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from dpax import distributed
from dpax.distributed import processes


def test_the_heartbeat_has_stopped_before_the_exit_disconnects(monkeypatch):
    """_leave (at exit) stops the heartbeat thread and waits until it is out of the coordinator
    client before disconnecting: a daemon thread still inside that C++ call when the interpreter
    finalises aborts the process (SIGABRT, "exception not rethrown") after its work is done;
    under load it did so in 2 of 8 two-process runs. Here with a stand-in client whose calls
    are slow, in one process."""
    import jax

    sets, alive_at_shutdown = [], []

    class Client:
        def key_value_set(self, key, value, allow_overwrite=False):
            sets.append(value)
            time.sleep(0.05)  # a call in flight most of the time

        def get_live_nodes(self, ids):
            return ids

    monkeypatch.setattr(processes, "_client", Client)
    monkeypatch.setattr(processes, "process", lambda: processes.Process(0, 2))
    monkeypatch.setattr(processes, "initialized", lambda: True)
    monkeypatch.setattr(processes, "wait_for_all", lambda tag: {0: "ok", 1: "ok"})
    monkeypatch.setattr(jax, "process_index", lambda: 0)
    monkeypatch.setattr(jax, "process_count", lambda: 2)
    monkeypatch.setattr(jax.distributed, "shutdown",
                        lambda: alive_at_shutdown.append(processes._state["beat"].is_alive()))
    monkeypatch.setitem(processes._state, "beat", None)
    monkeypatch.setitem(processes._state, "stop_beat", None)
    processes._start_heartbeat()
    while len(sets) < 3:
        time.sleep(0.01)
    processes._leave()
    assert alive_at_shutdown == [False]
    count = len(sets)
    time.sleep(0.2)
    assert len(sets) == count  # no beat after the exit


def test_a_process_that_never_joins_is_named_within_the_wait(tmp_path, free_port, worker_env):
    t0 = time.monotonic()
    code = f"import dpax; dpax.distributed.initialize('127.0.0.1:{free_port()}', 2, 0, join_timeout=3)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=worker_env())
    assert r.returncode == distributed.JOIN_EXIT_STATUS, r.stderr[-2000:]
    assert "process 0 waited 3 s" in r.stderr and "process 1 of 2 never joined" in r.stderr
    assert time.monotonic() - t0 < 60


# slow suite (a second two-process run, ~20 s): the default run's two-process test exercises
# the same orderly exit; this one has a process leave early, named by the other's next call
@pytest.mark.slow
def test_a_process_that_leaves_is_named_by_the_others_next_call(tmp_path, two_processes):
    """A process that leaves (exits) is named by the other's next call instead of a wait
    without end."""
    codes, logs = two_processes(tmp_path, "leave")
    assert codes == [0, 3], logs
    assert "process 1 of 2 left the run" in (tmp_path / "r.left.txt").read_text()
