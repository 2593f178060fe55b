"""First-call latency in a fresh process: dpax (empty vs warm persistent compilation cache,
as the ``dpax`` command uses it) against the anchor (dp-accounting + riskcal).

Each measurement is a new Python process that imports its library first (not timed) and then
times its first computation of beta at 3 alphas for DP-SGD p=0.001, T=10,000, sigma=1,
grid 1e-4. Run from the repository root:

    .venv/bin/python benchmarks/bench_cold_start.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

DPAX = r"""
import json, os, sys, time
os.environ["DPAX_CACHE_DIR"] = sys.argv[1]
from dpax.cli.common import compilation_cache
import dpax
with compilation_cache():
    t = time.perf_counter()
    dpax.dpsgd(1.0, 0.001, 10000, grid_step=1e-4).beta([0.01, 0.05, 0.1])
    print(json.dumps(time.perf_counter() - t))
"""

ANCHOR = r"""
import json, time, warnings
warnings.filterwarnings("ignore")
import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_module
from riskcal.analysis import get_beta_from_pld
t = time.perf_counter()
pld = pld_module.from_gaussian_mechanism(standard_deviation=1.0, sampling_prob=0.001, use_connect_dots=True,
                                         value_discretization_interval=1e-4).self_compose(10000)
get_beta_from_pld(pld, alpha=np.array([0.01, 0.05, 0.1]))
print(json.dumps(time.perf_counter() - t))
"""


def run(code, *args):
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    rows = {"dpax, empty cache": [], "dpax, warm cache (second invocation)": [], "anchor, fresh process": []}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as cache:
            rows["dpax, empty cache"].append(run(DPAX, cache))
            rows["dpax, warm cache (second invocation)"].append(run(DPAX, cache))
        rows["anchor, fresh process"].append(run(ANCHOR))
    print("| first call in a fresh process | best (s) | all rounds (s) |")
    print("|---|---|---|")
    for name, times in rows.items():
        print(f"| {name} | {min(times):.3f} | {', '.join(f'{t:.3f}' for t in times)} |")


if __name__ == "__main__":
    main()
