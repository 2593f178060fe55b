"""The two-process runs of the distributed tests: two local CPU processes (gloo collectives,
coordinator on 127.0.0.1, a free port) run the same calls. Spawning processes that import JAX
and compile kernels costs tens of seconds here, so grids are coarse (1e-2), batches tiny, and
the larger runs are marked slow. The helpers are session fixtures (each returns a function):
``free_port()``, ``worker_env()`` (the environment of a process the tests start) and
``two_processes(tmp_path, *extra)`` (processes 0 and 1 of ``WORKER``: their return codes and
logs); each test starts its own processes."""

from __future__ import annotations

import textwrap

import pytest
import subprocess_helpers

HEARTBEAT = 4  # seconds: how soon a dead process is noticed in these tests

WORKER = textwrap.dedent("""
    import sys, numpy as np, dpax
    port, pid, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    dpax.distributed.initialize(f"127.0.0.1:{port}", 2, pid, join_timeout=60, heartbeat_timeout=%d)
    r = dpax.distributed.calibrate_dpsgd(sample_rate=[0.02, 0.05, 0.1], num_steps=10,
                                         target=dpax.targets.Advantage(0.25), grid_step=1e-2, compare_standard=False)
    e = dpax.distributed.evaluate(lambda s: dpax.gaussian(s, grid_step=1e-2).epsilon(1e-5), [0.8, 1.0, 1.5])
    try:  # row 0 (process 0's) needs no noise (leak probability 0.18 < 0.25: no kernel), row 1 is infeasible
        dpax.distributed.calibrate_dpsgd(sample_rate=[0.02, 0.1], num_steps=10,
                                         target=dpax.targets.Advantage([0.25, 0.01]), grid_step=1e-2,
                                         noise_bounds=(0.05, 2.0), on_infeasible="raise", compare_standard=False)
        error = ""
    except ValueError as exc:
        error = str(exc)
    w = dpax.distributed.calibrate(lambda s: dpax.gaussian(s, grid_step=1e-2), dpax.targets.Advantage([0.2, 0.3, 0.4]))
    np.savez(f"{out}.{pid}.npz", noise=r.noise_multiplier, adv=r.achieved["advantage"], status=r.status,
             eps=e, error=error, w=w)
    if pid == 1 and sys.argv[4:] == ["leave"]:
        sys.exit(3)  # leaves the run: process 0's next call must not wait for it forever
    try:
        dpax.distributed.evaluate(lambda s: dpax.gaussian(s, grid_step=1e-2).epsilon(1e-5), [0.8, 1.0, 1.5])
    except dpax.distributed.DistributedError as exc:
        open(f"{out}.left.txt", "w").write(str(exc))
""" % HEARTBEAT)  # noqa: UP031 -- the template is Python source with f-string braces of its own


def _two_processes(tmp_path, *extra):
    port, script = subprocess_helpers.free_port(), tmp_path / "worker.py"
    script.write_text(WORKER)
    return subprocess_helpers.pair(lambda i: [str(script), str(port), str(i), str(tmp_path / "r"), *extra], tmp_path)


@pytest.fixture(scope="session")
def free_port():
    """A function returning a free local port (for a coordinator)."""
    return subprocess_helpers.free_port


@pytest.fixture(scope="session")
def worker_env():
    """A function returning the environment of a process the tests start."""
    return subprocess_helpers.worker_env


@pytest.fixture(scope="session")
def two_processes():
    """A function running processes 0 and 1 of ``WORKER`` in ``tmp_path`` (``extra``: more
    arguments of both): (return codes, logs)."""
    return _two_processes
