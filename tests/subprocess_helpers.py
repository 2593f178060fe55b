"""Helpers of the tests that start Python processes of their own and run two of them side by side
(tests/distributed/conftest.py, tests/sweep/test_run.py): a free local port for a coordinator,
the environment of such a process, and processes 0 and 1 run to their end with their logs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys


def free_port() -> int:
    """A free local port (for a coordinator)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_env():
    """The environment of a process the tests start."""
    return {**os.environ, "PYTHONUNBUFFERED": "1", "DPAX_DEBUG": ""}


def start(args, log):
    """``python args``, its output and errors into the open file ``log``."""
    return subprocess.Popen([sys.executable, *args], stdout=log, stderr=subprocess.STDOUT, env=worker_env())


def pair(argv_of, tmp_path, timeout=300):
    """Run processes 0 and 1 (``argv_of(pid)``); (return codes, logs)."""
    logs = [open(tmp_path / f"log{i}.txt", "w+") for i in range(2)]
    procs = [start(argv_of(i), logs[i]) for i in range(2)]
    try:
        codes = [p.wait(timeout) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    texts = []
    for f in logs:
        f.seek(0)
        texts.append(f.read())
        f.close()
    return codes, texts
