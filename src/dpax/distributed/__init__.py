"""Beyond one machine: batched calibration and evaluation across processes joined by
``jax.distributed`` (JAX's multi-controller runtime: a GPU cluster, a TPU pod, or several
processes on one host).

Rows of a batch are independent, so the work divides by rows: with ``P`` processes, process
``i`` takes the contiguous share of rows ``[i * n // P, (i + 1) * n // P)``, runs the ordinary
single-process code on it (over its local devices, :func:`dpax.use_devices`), and the shares
are gathered (``multihost_utils.process_allgather``) in process order, so every process gets
the whole answer, equal row for row to a single-process run of the same batch.

Start every process with :func:`initialize` (or ``jax.distributed.initialize`` yourself),
then call the same functions with the same arguments on every process::

    import dpax
    dpax.distributed.initialize("10.0.0.1:1234", num_processes=2, process_id=0)  # 1 on the other
    r = dpax.distributed.calibrate_dpsgd(sample_rate=q, num_steps=T, target=t)

Waits are bounded. A process that never joins ends :func:`initialize` after ``join_timeout``
seconds with an error naming who is missing; a process that dies is noticed by the others
when its heartbeat (a key dpax refreshes in the coordinator's key-value store) stops for
``heartbeat_timeout`` seconds, and they raise :class:`DistributedError` naming it. An error
raised in one process (a bad argument, an infeasible target with ``on_infeasible='raise'``)
is raised in every process. Importing this module changes no JAX setting; :func:`initialize`
turns on ``jax_enable_recoverability`` (so that a dead peer is an error dpax can report, not
an abort of the whole job), without the C++ notice JAX logs for that mode (dpax does the
synchronized shutdown the notice asks for: :func:`.processes._no_recoverability_notice`).
"""

from .calibration import calibrate, calibrate_dpsgd
from .processes import (
    DEFAULT_HEARTBEAT_TIMEOUT,
    DEFAULT_JOIN_TIMEOUT,
    JOIN_EXIT_STATUS,
    DistributedError,
    Process,
    initialize,
    initialized,
    process,
    wait_for_all,
)
from .shares import evaluate, next_call, share

__all__ = [
    "DEFAULT_HEARTBEAT_TIMEOUT",
    "DEFAULT_JOIN_TIMEOUT",
    "DistributedError",
    "JOIN_EXIT_STATUS",
    "Process",
    "calibrate",
    "calibrate_dpsgd",
    "evaluate",
    "initialize",
    "initialized",
    "next_call",
    "process",
    "share",
    "wait_for_all",
]
