"""dpax engine benchmark: dpax and the anchor (dp-accounting + riskcal) side by side.

Every workload runs both libraries in this one process, on the same grid, and prints the
time ratio. dpax is timed cold (first call in the process, compilation included) and warm
(best of ``--repeat`` later calls). Run from the repository root:

    .venv/bin/python benchmarks/bench_engine.py            # all workloads (~5-10 min: riskcal is slow)
    .venv/bin/python benchmarks/bench_engine.py --quick    # skip the grid-1e-4 riskcal calibration

Results are printed as a Markdown table and written to benchmarks/results/engine.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore", category=DeprecationWarning)


def _time(fn, repeat=1):
    best = np.inf
    value = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the slowest anchor run (riskcal at grid 1e-4)")
    parser.add_argument("--repeat", type=int, default=3, help="warm repetitions (best is reported)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "engine.json"))
    args = parser.parse_args(argv)
    import dpax as _dpax

    _dpax.disable_kernel_cache()  # "cold" = compilation included (bench_cold_start.py measures the cache)

    import jax
    from dp_accounting.pld import privacy_loss_distribution as pld_module
    from riskcal.analysis import get_beta_from_pld
    from riskcal.calibration.dpsgd import find_noise_multiplier_for_advantage, find_noise_multiplier_for_err_rates

    import dpax

    p, steps, sigma = 0.001, 10_000, 1.0
    alphas = np.array([0.01, 0.05, 0.1])
    rows = []

    def record(workload, grid, dpax_cold, dpax_warm, anchor, anchor_value, dpax_value):
        ratio_warm = anchor / dpax_warm if dpax_warm else float("nan")
        ratio_cold = anchor / dpax_cold if dpax_cold else float("nan")
        rows.append(
            dict(
                workload=workload, grid_step=grid, dpax_cold_s=dpax_cold, dpax_warm_s=dpax_warm, anchor_s=anchor,
                speedup_warm=ratio_warm, speedup_cold=ratio_cold, dpax_value=dpax_value, anchor_value=anchor_value,
            )
        )
        print(f"  {workload} @ {grid:g}: dpax cold {dpax_cold:.3f}s warm {dpax_warm:.3f}s | anchor {anchor:.3f}s "
              f"| x{ratio_warm:.1f} warm, x{ratio_cold:.1f} cold", flush=True)

    # 1. beta at three alphas for DP-SGD
    for grid in (1e-4,):
        cold, b = _time(lambda grid=grid: dpax.dpsgd(sigma, p, steps, grid_step=grid).beta(alphas))
        warm, b = _time(lambda grid=grid: dpax.dpsgd(sigma, p, steps, grid_step=grid).beta(alphas), args.repeat)

        def anchor_beta(grid=grid):
            pld = pld_module.from_gaussian_mechanism(
                standard_deviation=sigma, sampling_prob=p, use_connect_dots=True, value_discretization_interval=grid
            ).self_compose(steps)
            return get_beta_from_pld(pld, alpha=alphas)

        anchor, rb = _time(anchor_beta)
        record("beta(3 alphas), DP-SGD p=0.001 T=10k sigma=1", grid, cold, warm, anchor, list(map(float, rb)),
               list(map(float, b)))

    # 2. calibration to (alpha, beta) = (0.1, 0.5)
    target = dpax.targets.ErrRates(alpha=0.1, beta=0.5)
    grids = (1e-3,) if args.quick else (1e-3, 1e-4)
    for grid in grids:
        run = lambda grid=grid: dpax.calibrate_dpsgd(sample_rate=p, num_steps=steps, target=target, grid_step=grid,
                                                     compare_standard=False)
        cold, r = _time(run)
        warm, r = _time(run, args.repeat)
        anchor, rs = _time(lambda grid=grid: find_noise_multiplier_for_err_rates(alpha=0.1, beta=0.5, sample_rate=p,
                                                                                 num_steps=steps, grid_step=grid))
        record("calibrate to alpha=0.1, beta=0.5", grid, cold, warm, anchor, float(rs), float(r.noise_multiplier))

    # 3. calibration to advantage 0.1 (riskcal's default grid 1e-4 for the anchor)
    grid = 1e-4
    run = lambda: dpax.calibrate_dpsgd(sample_rate=p, num_steps=steps, target=dpax.targets.Advantage(0.1),
                                       grid_step=grid, compare_standard=False)
    cold, r = _time(run)
    warm, r = _time(run, args.repeat)
    anchor, rs = _time(lambda: find_noise_multiplier_for_advantage(advantage=0.1, sample_rate=p, num_steps=steps,
                                                                   grid_step=grid))
    record("calibrate to advantage 0.1", grid, cold, warm, anchor, float(rs), float(r.noise_multiplier))

    # 4. the FFT floor on this machine
    import jax.numpy as jnp

    with jax.enable_x64(True):
        x = jnp.asarray(np.random.default_rng(0).random(2**18))
        f = jax.jit(lambda v: jnp.fft.irfft(jnp.fft.rfft(v) ** 3, n=v.shape[0]))
        f(x).block_until_ready()
        floor, _ = _time(lambda: f(x).block_until_ready(), 5)
    print(f"  FFT floor (rfft+power+irfft, 2^18 float64): {floor * 1e3:.1f} ms")

    device = jax.devices()[0]
    meta = dict(
        machine=platform.machine(), processor=platform.processor(), cpu_count=os.cpu_count(),
        python=sys.version.split()[0], jax=jax.__version__, device=f"{device.platform}:{device.device_kind}",
        fft_floor_ms=floor * 1e3,
    )
    print()
    print(f"Machine: {meta['cpu_count']} CPU cores ({meta['machine']}), device {meta['device']}, jax {meta['jax']}")
    print()
    print("| workload | grid | dpax cold (s) | dpax warm (s) | anchor (s) | speed-up warm | speed-up cold |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['workload']} | {r['grid_step']:g} | {r['dpax_cold_s']:.3f} | {r['dpax_warm_s']:.3f} | "
              f"{r['anchor_s']:.2f} | {r['speedup_warm']:.1f}x | {r['speedup_cold']:.1f}x |")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(dict(meta=meta, rows=rows), fh, indent=2)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
