"""Each kernel compiled with XLA:CPU's MLIR fusion emitters and with its classic emitters:
compile time and warm run time, per kernel, over the workloads named (benchmarks/workloads.py).

dpax compiles a kernel with the classic emitters where they do not lengthen its run time
(``fusion_emitters=False`` in ``dpax._engine.cache.kernel``); this is the measurement that
choice rests on. Every compilation the workloads make (kernel cache off) is compiled again
both ways from the same lowered module, and the two executables are run alternately on the
call's own arguments; the table sums each kernel name's compilations and median run times.

    python -m benchmarks.compile_options beta,epsilon,accountant,mu,calibrate --repeat 40
"""

from __future__ import annotations

import argparse
import collections
import time

#: the two ways, each with the rest of dpax's options (cache.compile_options)
OPTIONS = ("fusion", "classic")


def measure(names, repeat=40) -> dict:
    """{(kernel name, the emitters dpax compiled it with): {compile_fusion, compile_classic,
    run_fusion, run_classic, calls}} (seconds) over the compilations of the workloads
    ``names`` (a kernel that chooses its emitters per call, as the FFT composition, has a
    row for each choice)."""
    import jax
    import numpy as np

    from benchmarks.workloads import WORKLOADS
    from dpax._engine import cache

    cache.disable()
    cache.AHEAD_WORKERS = 0  # every compilation on the call's own arguments (none ahead, from shapes)
    compile_kernel = cache._compile
    calls = []

    def record(jitted, key, args, static, call, store, fusion_emitters=True):
        calls.append((call["kernel"], jitted, args, static, fusion_emitters))
        return compile_kernel(jitted, key, args, static, call, store, fusion_emitters)

    cache._compile = record
    try:
        for name in names:
            WORKLOADS[name].build(False)()
    finally:
        cache._compile = compile_kernel
    out: dict = collections.defaultdict(lambda: collections.defaultdict(float))
    with jax.enable_x64(True):
        for kernel, jitted, args, static, fusion_emitters in calls:
            lowered = cache._fresh_jit(jitted, static).lower(*args, **static)
            row, executables = out[(kernel, "fusion" if fusion_emitters else "classic")], {}
            for option in OPTIONS:
                flags = cache.compile_options(option == "fusion")
                t = time.perf_counter()
                executables[option] = lowered.compile(flags)
                row["compile_" + option] += time.perf_counter() - t
                jax.block_until_ready(executables[option](*args))
            times: dict = {option: [] for option in OPTIONS}
            for _ in range(repeat):
                for option, executable in executables.items():
                    t = time.perf_counter()
                    jax.block_until_ready(executable(*args))
                    times[option].append(time.perf_counter() - t)
            for option in OPTIONS:
                row["run_" + option] += float(np.median(times[option]))
            row["calls"] += 1
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", help="comma-separated names from benchmarks/workloads.py")
    parser.add_argument("--repeat", type=int, default=40, help="timed runs of each executable")
    args = parser.parse_args(argv)
    rows = measure(args.workloads.split(","), args.repeat)
    print("| kernel | compilations | compile fusion (ms) | compile classic (ms) | run fusion (ms) "
          "| run classic (ms) | classic / fusion run | dpax uses |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (kernel, uses), r in sorted(rows.items()):
        print(f"| {kernel} | {int(r['calls'])} | {r['compile_fusion'] * 1e3:.0f} | {r['compile_classic'] * 1e3:.0f} "
              f"| {r['run_fusion'] * 1e3:.2f} | {r['run_classic'] * 1e3:.2f} "
              f"| {r['run_classic'] / r['run_fusion']:.2f} | {uses} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
