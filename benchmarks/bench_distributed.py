"""Rows per second of batched DP-SGD calibration on 1 and 2 processes joined by jax.distributed.

Workload: a table of ``--rows`` DP-SGD configurations (sample rates 1e-3..0.1, 10..1,000
steps, FNR targets at alpha in {0.01, 0.05, 0.1}; the generator of bench_calibrate.py with
fewer steps) calibrated with :func:`dpax.distributed.calibrate_dpsgd` at ``--grid``. Each
run is a fresh set of processes (CPU, gloo collectives, coordinator on 127.0.0.1): process
``i`` calibrates its share of the rows and the answers are gathered on every process. Timed
per process: start-up (``import dpax`` and ``initialize``), the first call (compilation
included: "cold") and a second, identical call ("warm": the kernels are compiled). Rows per
second = rows / the slowest process's time. The answers of the two runs are checked equal.

    .venv/bin/python benchmarks/bench_distributed.py                    # 32 rows, grid 1e-2
    .venv/bin/python benchmarks/bench_distributed.py --rows 64 --grid 1e-3

Results are printed as Markdown and written to benchmarks/results/distributed.json. On a
machine with P cores (or P GPUs) and P processes, warm throughput grows with P until the
cores are shared; see benchmarks/README.md for the plan at 10^6 configurations.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np


def table(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    p = 10 ** rng.uniform(-3, -1, n)
    t = np.round(10 ** rng.uniform(1, 3, n)).astype(int)
    alpha = rng.choice([0.01, 0.05, 0.1], n)
    beta = 1 - rng.uniform(np.maximum(0.1, alpha + 0.05), 0.5)
    return p, t, alpha, beta


def worker(pid: int, count: int, port: int, rows: int, grid: float, out: str) -> None:
    t0 = time.perf_counter()
    import dpax

    if count > 1:
        dpax.distributed.initialize(f"127.0.0.1:{port}", count, pid, join_timeout=120, heartbeat_timeout=30)
    start = time.perf_counter() - t0
    p, t, alpha, beta = table(rows)
    target = dpax.targets.ErrRates(alpha=alpha, beta=beta)
    times, answers = [], None
    for _ in range(2):
        t1 = time.perf_counter()
        r = dpax.distributed.calibrate_dpsgd(sample_rate=p, num_steps=t, target=target, grid_step=grid,
                                             compare_standard=False)
        times.append(time.perf_counter() - t1)
        answers = np.asarray(r.noise_multiplier)
    np.save(out + f".{pid}.npy", answers)
    with open(out + f".{pid}.json", "w") as fh:
        json.dump({"start_s": start, "cold_s": times[0], "warm_s": times[1]}, fh)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(count: int, rows: int, grid: float, folder: str) -> dict:
    port, out = _free_port(), os.path.join(folder, f"p{count}")
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(i), str(count), str(port), str(rows),
                               str(grid), out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for i in range(count)]
    errors = [p.communicate()[1] for p in procs]
    wall = time.perf_counter() - t0
    if any(p.returncode for p in procs):
        raise SystemExit(f"a worker failed:\n{errors}")
    per = [json.load(open(out + f".{i}.json")) for i in range(count)]
    answers = [np.load(out + f".{i}.npy") for i in range(count)]
    assert all(np.array_equal(a, answers[0], equal_nan=True) for a in answers)
    slow = {k: max(p[k] for p in per) for k in ("start_s", "cold_s", "warm_s")}
    return {"processes": count, "rows": rows, "grid_step": grid, "wall_s": wall, **slow,
            "rows_per_s_cold": rows / slow["cold_s"], "rows_per_s_warm": rows / slow["warm_s"],
            "answers": answers[0].tolist()}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=32, help="configurations in the table (default 32)")
    parser.add_argument("--grid", type=float, default=1e-2, help="grid step (default 1e-2)")
    parser.add_argument("--processes", default="1,2", help="process counts to run (default 1,2)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "distributed.json"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        results = [run(int(c), args.rows, args.grid, folder) for c in args.processes.split(",")]
    same = all(np.array_equal(r["answers"], results[0]["answers"], equal_nan=True) for r in results)
    print(f"# dpax.distributed.calibrate_dpsgd: {args.rows} DP-SGD rows, grid {args.grid:g}, "
          f"{os.cpu_count()} CPU cores ({platform.processor() or platform.machine()})\n")
    print("| processes | start-up s | cold s | warm s | rows/s cold | rows/s warm | whole run s |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['processes']} | {r['start_s']:.1f} | {r['cold_s']:.1f} | {r['warm_s']:.2f} | "
              f"{r['rows_per_s_cold']:.2f} | {r['rows_per_s_warm']:.1f} | {r['wall_s']:.1f} |")
    print(f"\nanswers identical across process counts: {same}")
    for r in results:
        r.pop("answers")
    record = {"benchmark": "distributed", "rows": args.rows, "grid_step": args.grid, "cpu_count": os.cpu_count(),
              "identical": same, "results": results}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(record, fh, indent=1)
    return record


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        pid, count, port, rows = (int(x) for x in sys.argv[2:6])
        worker(pid, count, port, rows, float(sys.argv[6]), sys.argv[7])
    else:
        main()
