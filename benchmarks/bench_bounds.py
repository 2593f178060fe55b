"""Certified brackets: the cost of both sides against one side, beside
prv-accountant's epsilon bracket, warm and as the first answer in a fresh process.

DP-SGD with noise 1, p = 1e-3, T = 1e4. Rows:

- dpax, safe side only: ``dpsgd(...).epsilon(1e-5)`` and ``.beta(0.01)``;
- dpax, both sides: the same with ``bounds=True`` (the optimistic companion built and
  composed as well);
- prv-accountant: ``compute_epsilon`` (its [lower, estimate, upper]) at eps_error 0.01.

Warm: best of ``--repeat`` calls in this process after one call that compiles (kernel cache
off, so "cold" in the fresh-process rows is a real compilation). Fresh process: ``python -c``
with the import included, dpax's kernel cache off (the first run ever).

Calibration with ``accuracy=`` (the goal: at most 1.5x the time of the fixed-grid
run): the README's quick start, ``calibrate_dpsgd(sample_rate=0.001,
num_steps=10_000, target=ErrRates(alpha=0.1, beta=0.5))`` (standard comparison on), with
``grid_step=1e-4`` against ``accuracy=1e-4``: warm in this process (best of ``--repeat``),
and as a fresh process (import included) with an empty dpax kernel cache (a new temporary
``DPAX_CACHE_DIR`` per row) and with that cache warm (the same command again: best of
``--repeat``); the ratio accuracy / fixed of each.

    .venv/bin/python benchmarks/bench_bounds.py [--grid-step 1e-4] [--repeat 3] [--no-fresh]
        [--only-calibration | --no-calibration]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

SIGMA, P, T, DELTA, ALPHA = 1.0, 1e-3, 10_000, 1e-5, 0.01

DPAX_ONE = ("import dpax; pl = dpax.dpsgd({s}, {p}, {t}, grid_step={h}); "
            "print(pl.epsilon({d}), pl.beta({a}))")
DPAX_BOTH = ("import dpax; pl = dpax.dpsgd({s}, {p}, {t}, grid_step={h}); "
             "e = pl.epsilon({d}, bounds=True); b = pl.beta({a}, bounds=True); "
             "print(e.lower, e.upper, b.lower, b.upper)")
PRV = ("from prv_accountant.dpsgd import DPSGDAccountant; "
       "acc = DPSGDAccountant(noise_multiplier={s}, sampling_probability={p}, eps_error=0.01, "
       "delta_error=1e-9, max_steps={t}); print(*acc.compute_epsilon(delta={d}, num_steps={t}))")


CALIBRATE = ("import dpax; r = dpax.calibrate_dpsgd(sample_rate=0.001, num_steps=10_000, "
             "target=dpax.targets.ErrRates(alpha=0.1, beta=0.5){extra}); print(r.noise_multiplier, r.grid_step)")
CALIBRATE_ROWS = (("grid_step=1e-4 (fixed)", ""), ("accuracy=1e-4", ", accuracy=1e-4"))


def _best(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _fresh(code, cache_dir=None):
    """Seconds and output of ``python -c code``: kernel cache off, or in ``cache_dir``."""
    env = dict(os.environ, DPAX_CACHE="0")
    if cache_dir is not None:
        env.update(DPAX_CACHE="1", DPAX_CACHE_DIR=cache_dir)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - t0, out.stdout.strip()


def _calibration_rows(repeat, fresh):
    """The quick-start calibration, fixed grid against accuracy (see the module docstring)."""
    import dpax

    dpax.disable_kernel_cache()
    warm = {}
    for name, extra in CALIBRATE_ROWS:
        kw = {} if not extra else {"accuracy": 1e-4}
        call = lambda kw=kw: dpax.calibrate_dpsgd(sample_rate=0.001, num_steps=10_000,
                                                  target=dpax.targets.ErrRates(alpha=0.1, beta=0.5), **kw)
        call()  # compile
        warm[name] = _best(call, repeat)
    cold = {}
    if fresh:
        for name, extra in CALIBRATE_ROWS:
            code = CALIBRATE.format(extra=extra)
            with tempfile.TemporaryDirectory(prefix="dpax-bench-") as tmp:
                empty, _ = _fresh(code, tmp)
                cached, (_, out) = _best(lambda code=code: _fresh(code, tmp), repeat)
            cold[name] = (empty, cached, out)
    print("\nCalibration, the README quick start (p 0.001, T 10,000, ErrRates(0.1, 0.5), standard comparison on)")
    print("| row | warm (s) | fresh, kernel cache empty (s) | fresh, kernel cache warm (s) | noise | grid |")
    print("| --- | --- | --- | --- | --- | --- |")
    base = CALIBRATE_ROWS[0][0]
    for name, _ in CALIBRATE_ROWS:
        t, r = warm[name]
        ratio = "" if name == base else f" ({t / warm[base][0]:.2f}x)"
        cells = ["-", "-"]
        if name in cold:
            cells = [f"{cold[name][i]:.2f}" + ("" if name == base else f" ({cold[name][i] / cold[base][i]:.2f}x)")
                     for i in (0, 1)]
        print(f"| {name} | {t:.2f}{ratio} | {cells[0]} | {cells[1]} | {r.noise_multiplier:.6f} | {r.grid_step:g} |")
    acc = warm[CALIBRATE_ROWS[1][0]][1]
    print(f"accuracy=1e-4: noise interval [{acc.noise_interval.lower:.6f}, {acc.noise_interval.upper:.6f}], "
          f"beta bracket width {acc.achieved_interval['beta'].width:.2g}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid-step", type=float, default=1e-4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-fresh", action="store_true", help="skip the fresh-process rows")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--only-calibration", action="store_true", help="only the calibration rows")
    group.add_argument("--no-calibration", action="store_true", help="skip the calibration rows")
    args = ap.parse_args(argv)
    if args.only_calibration:
        _calibration_rows(args.repeat, not args.no_fresh)
        return 0
    fill = dict(s=SIGMA, p=P, t=T, h=args.grid_step, d=DELTA, a=ALPHA)

    from prv_accountant.dpsgd import DPSGDAccountant

    import dpax

    dpax.disable_kernel_cache()

    def one():
        pl = dpax.dpsgd(SIGMA, P, T, grid_step=args.grid_step)
        return pl.epsilon(DELTA), pl.beta(ALPHA)

    def both():
        pl = dpax.dpsgd(SIGMA, P, T, grid_step=args.grid_step)
        return pl.epsilon(DELTA, bounds=True), pl.beta(ALPHA, bounds=True)

    def prv():
        acc = DPSGDAccountant(noise_multiplier=SIGMA, sampling_probability=P, eps_error=0.01,
                              delta_error=1e-9, max_steps=T)
        return acc.compute_epsilon(delta=DELTA, num_steps=T)

    one(), both()  # compile
    t_one, (eps, beta) = _best(one, args.repeat)
    t_both, (e, b) = _best(both, args.repeat)
    t_prv, (lo, est, up) = _best(prv, args.repeat)
    print(f"DP-SGD sigma {SIGMA}, p {P}, T {T}, grid {args.grid_step:g}")
    print(f"| row | warm (s) | epsilon({DELTA:g}) | beta({ALPHA:g}) |")
    print("| --- | --- | --- | --- |")
    print(f"| dpax, safe side | {t_one:.3f} | {eps:.5f} | {beta:.7f} |")
    print(f"| dpax, both sides | {t_both:.3f} ({t_both / t_one:.2f}x one side) | [{e.lower:.5f}, {e.upper:.5f}] "
          f"| [{b.lower:.7f}, {b.upper:.7f}] |")
    print(f"| prv-accountant | {t_prv:.3f} | [{lo:.4f}, {up:.4f}] | - |")
    if not args.no_fresh:
        print("\n| first answer in a fresh process (import included, no kernel cache) | s |")
        print("| --- | --- |")
        for name, code in (("dpax, safe side", DPAX_ONE), ("dpax, both sides", DPAX_BOTH), ("prv-accountant", PRV)):
            seconds, _ = _fresh(code.format(**fill))
            print(f"| {name} | {seconds:.2f} |")
    if not args.no_calibration:
        _calibration_rows(args.repeat, not args.no_fresh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
