"""Batched calibration benchmark: dpax against riskcal, same process, same grid.

Workloads (DP-SGD, FNR/FPR targets, Kulynych et al. 2024, Eq. 18):

1. one calibration: p = 0.001, T = 10,000, alpha = 0.1, beta = 0.5;
2. the 64-row table (sample rates 1e-4..0.1, steps 100..50,000, alpha in
   {0.01, 0.05, 0.1}, TPR bounds 0.1..0.5) in one dpax call, against riskcal looped row by
   row. riskcal takes 15 s to 2 min per row at grid 1e-3, so by default it runs on a
   measured subset of the rows dpax calibrates (``--riskcal-rows``, spread evenly over
   them) and the loop total is ESTIMATED as the subset's mean time x the number of such
   rows; the output says so. Rows that need no noise (subsampling alone meets the target)
   are left out of both sides: riskcal has no answer for them (it searches for ~200 s and
   raises), dpax flags them at once;
3. cost against batch size: 1, 8, 64, 512 rows of the same kind of table.

dpax is timed cold (first call in the process, compilation included) and warm (a later call).
Run from the repository root:

    .venv/bin/python benchmarks/bench_calibrate.py                  # grid 1e-3 (~15-30 min on 2 cores)
    .venv/bin/python benchmarks/bench_calibrate.py --riskcal-rows 16 --scaling-grid 1e-2   # what the README quotes

Results are printed as Markdown and written to benchmarks/results/calibrate.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")


def dpsgd_table(n=64, seed=0):
    """Same generator as tests/calibration/test_calibration_dpsgd.py."""
    rng = np.random.default_rng(seed)
    p = 10 ** rng.uniform(-4, -1, n)
    t = np.round(10 ** rng.uniform(2, np.log10(50000), n)).astype(int)
    alpha = rng.choice([0.01, 0.05, 0.1], n)
    tpr = rng.uniform(np.maximum(0.1, alpha + 0.05), 0.5)
    return p, t, alpha, tpr


def _timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=float, default=1e-3, help="grid step for both libraries (default 1e-3)")
    parser.add_argument("--riskcal-rows", type=int, default=4,
                        help="table rows riskcal is timed on (the rest is estimated)")
    parser.add_argument("--sizes", default="1,8,64,512", help="batch sizes for the scaling table")
    parser.add_argument("--scaling-grid", type=float, default=None,
                        help="grid step of the scaling table (default: --grid)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "calibrate.json"))
    args = parser.parse_args(argv)
    import dpax as _dpax

    _dpax.disable_kernel_cache()  # "cold" = compilation included (bench_cold_start.py measures the cache)

    import jax
    from riskcal.calibration.dpsgd import find_noise_multiplier_for_err_rates

    import dpax
    from dpax.targets import ErrRates

    step = args.grid
    cal = lambda p, t, target: dpax.calibrate_dpsgd(sample_rate=p, num_steps=t, target=target, grid_step=step,
                                                    compare_standard=False)
    riskcal = lambda a, b, p, t: find_noise_multiplier_for_err_rates(
        alpha=float(a), beta=float(b), sample_rate=float(p), num_steps=int(t), grid_step=step, beta_tol=1e-4,
        noise_max=200.0,
    )
    result = {"grid_step": step, "jax": jax.__version__, "devices": [str(d) for d in jax.devices()],
              "cpu_count": os.cpu_count(), "platform": platform.platform()}

    # 1. one calibration
    cold, one = _timed(lambda: cal(0.001, 10_000, ErrRates(0.1, 0.5)))
    warm, one = _timed(lambda: cal(0.001, 10_000, ErrRates(0.1, 0.5)))
    t_rc, ref = _timed(lambda: riskcal(0.1, 0.5, 0.001, 10_000))
    result["single"] = dict(dpax_cold_s=cold, dpax_warm_s=warm, riskcal_s=t_rc, dpax_noise=one.noise_multiplier,
                            riskcal_noise=ref, speedup_warm=t_rc / warm, speedup_cold=t_rc / cold)
    print(f"\n## one calibration (p=0.001, T=10000, alpha=0.1, beta=0.5, grid {step:g})\n")
    print("| | dpax cold | dpax warm | riskcal | speed-up warm (cold) |\n|---|---|---|---|---|")
    print(f"| time (s) | {cold:.2f} | {warm:.2f} | {t_rc:.1f} | {t_rc / warm:.0f}x ({t_rc / cold:.0f}x) |")
    print(f"| noise | {one.noise_multiplier:.5f} | | {ref:.5f} | rel. diff {one.noise_multiplier / ref - 1:+.2e} |")

    # 2. the 64-row table
    p, t, alpha, tpr = dpsgd_table(64)
    target = ErrRates.from_tpr(alpha, tpr)
    cold, res = _timed(lambda: cal(p, t, target))
    warm, res = _timed(lambda: cal(p, t, target))
    calibrated = np.flatnonzero(res.status == "calibrated")
    subset = calibrated[np.linspace(0, calibrated.size - 1, min(args.riskcal_rows, calibrated.size)).astype(int)]
    times, diffs = [], []
    for i in subset:
        dt, ref = _timed(lambda i=i: riskcal(alpha[i], 1 - tpr[i], p[i], t[i]))
        times.append(dt)
        diffs.append(res.noise_multiplier[i] / ref - 1)
        print(f"  riskcal row {i}: {dt:.1f} s, dpax {res.noise_multiplier[i]:.5f} vs riskcal {ref:.5f}")
    est = float(np.mean(times)) * calibrated.size
    measured_all = len(subset) == calibrated.size
    result["table64"] = dict(dpax_cold_s=cold, dpax_warm_s=warm, riskcal_rows_timed=subset.tolist(),
                             riskcal_row_s=times, riskcal_total_s=est, riskcal_total_estimated=not measured_all,
                             riskcal_rows_in_total=int(calibrated.size), max_rel_diff=float(np.max(np.abs(diffs))),
                             statuses={s: int(np.sum(res.status == s)) for s in np.unique(res.status)},
                             speedup_warm=est / warm, speedup_cold=est / cold)
    print(f"\n## 64-row table in one call (grid {step:g})\n")
    print("| | dpax cold | dpax warm | riskcal loop | speed-up warm (cold) |\n|---|---|---|---|---|")
    label = ("measured" if measured_all
             else f"estimated: {len(subset)} rows timed, mean {np.mean(times):.1f} s x {calibrated.size}")
    print(f"| time (s) | {cold:.1f} | {warm:.1f} | {est:.0f} ({label}) | {est / warm:.0f}x ({est / cold:.0f}x) |")
    print(f"| max rel. noise diff on timed rows | {np.max(np.abs(diffs)):.2e} | | | |")
    print(f"\n{calibrated.size} of 64 rows calibrated; the other {64 - calibrated.size} need no noise "
          "(dpax flags them; riskcal has no answer for them and is not timed on them).")

    # 3. cost against batch size
    step = args.scaling_grid or step
    result["scaling_grid_step"] = step
    print(f"\n## cost against batch size (grid {step:g}; rows from the same generator, seed 1)\n")
    print("| rows | dpax first call (s) | dpax repeat (s) | s per row (repeat) | kernel evaluations |\n"
          "|---|---|---|---|---|")
    result["scaling"] = []
    for n in [int(x) for x in args.sizes.split(",")]:
        p, t, alpha, tpr = dpsgd_table(n, seed=1)
        target = ErrRates.from_tpr(alpha, tpr)
        first, res = _timed(lambda p=p, t=t, target=target: cal(p, t, target))
        again, res = _timed(lambda p=p, t=t, target=target: cal(p, t, target)) if n <= 64 else (float("nan"), res)
        per = (again if np.isfinite(again) else first) / n
        result["scaling"].append(dict(rows=n, first_s=first, repeat_s=again, per_row_s=per,
                                      evaluations=res.evaluations))
        print(f"| {n} | {first:.2f} | {again:.2f} | {per:.3f} | {res.evaluations} |")

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=2, default=float)
    print(f"\nwritten {args.out}")


if __name__ == "__main__":
    main()
