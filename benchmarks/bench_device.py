"""``python -m benchmarks.bench_device``: the suite's batched workloads on whatever device JAX
finds (a GPU when one is there), in one short process, with the card recorded.

Workloads (parameters from benchmarks/workloads.py and the suite's batch series):

* ``beta4096``: 4,096 DP-SGD rows, noise 0.8..3 (linspace), p 1e-3, T 1000, grid 1e-2, beta
  at alpha 0.1: the suite's largest batch-size point, one call;
* ``beta``, ``mu``, ``calibrate``, ``table64``: ``python -m benchmarks.workloads``'s workloads
  of those names (beta at 3 alphas at grid 1e-4; mu and regret of De et al.'s DP-SGD; one
  calibration at grid 1e-3; the 64-row calibration table in one call).

Per workload: the first call (compilation included, with an empty kernel cache unless
``DPAX_CACHE_DIR`` points at a filled one), the second and third, the median of ``--repeat``
warm calls after them (benchmarks.workloads.time_calls), and the answer, so that a run on a
GPU can be checked against a run on the CPU (both float64). Each workload's line is appended
to ``--out`` as soon as it is measured, so a run cut short keeps what it measured. Prints a
Markdown table last.

Run here (CPU) and on a GPU machine with the same command::

    python -m benchmarks.bench_device --out benchmarks/results/device.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

_START = time.time()

#: the suite's largest batch point (benchmarks/suite.py, scaling series "batch size")
BATCH = dict(rows=4096, low=0.8, high=3.0, rate=1e-3, steps=1000, grid=1e-2, alpha=0.1)
DEFAULT = ("beta4096", "beta", "mu", "calibrate", "table64")


def card() -> dict:
    """The device JAX uses, the GPU's name, memory and driver where ``nvidia-smi`` answers, and
    the versions."""
    import jax
    import numpy as np
    import scipy

    info = dict(host=platform.node(), python=platform.python_version(), jax=jax.__version__, numpy=np.__version__,
                scipy=scipy.__version__, backend=jax.default_backend(),
                devices=[f"{d.platform}:{getattr(d, 'device_kind', '')}" for d in jax.devices()],
                cpu_count=os.cpu_count())
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version,clocks.max.sm",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        if smi.returncode == 0:
            info["nvidia_smi"] = smi.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def _beta4096():
    import numpy as np

    import dpax

    b = BATCH
    noise = np.linspace(b["low"], b["high"], b["rows"])

    def run():
        beta = dpax.dpsgd(noise, b["rate"], b["steps"], grid_step=b["grid"]).beta(b["alpha"])
        return np.asarray(beta, dtype=float).ravel().tolist()

    return run


def build(name: str):
    if name == "beta4096":
        return _beta4096()
    from benchmarks import workloads

    return workloads.WORKLOADS[name].build(False)


def measure(name: str, repeat: int) -> dict:
    """benchmarks.workloads.time_calls of the workload (warm: after its first calls)."""
    from benchmarks.workloads import time_calls

    timed = time_calls(build(name), repeat)
    return dict(workload=name, warm_s=timed.pop("median"), **timed)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_device", description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", default=list(DEFAULT), choices=list(DEFAULT))
    parser.add_argument("--repeat", type=int, default=3, help="warm calls timed per workload (median reported)")
    parser.add_argument("--out", default=None, help="JSON-lines file the card and each workload are appended to")
    args = parser.parse_args(argv)
    import warnings

    warnings.filterwarnings("ignore")
    t_import = time.time()
    import dpax  # noqa: F401

    head = dict(kind="card", import_s=time.time() - t_import, **card())

    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)

    def emit(rec):
        print(json.dumps({k: v for k, v in rec.items() if k != "answer"}), file=sys.stderr, flush=True)
        if args.out:
            with open(args.out, "a") as fh:
                fh.write(json.dumps(rec) + "\n")

    emit(head)
    rows = []
    for name in args.workloads:
        try:
            rec = dict(kind="workload", **measure(name, args.repeat))
        except Exception as exc:  # keep measuring the others; the line says what failed
            rec = dict(kind="workload", workload=name, error=f"{type(exc).__name__}: {exc}")
        emit(rec)
        rows.append(rec)
    print(f"\ndevice: {head['backend']} {head['devices'][0]} {head.get('nvidia_smi', '')} "
          f"(jax {head['jax']}, import {head['import_s']:.1f} s)")
    print("| workload | first call (s) | warm median (s) |\n| --- | --- | --- |")
    for r in rows:
        if "error" in r:
            print(f"| {r['workload']} | {r['error'][:80]} | |")
        else:
            print(f"| {r['workload']} | {r['first_call_s']:.3f} | {r['warm_s']:.4f} |")
    print(f"total {time.time() - _START:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
