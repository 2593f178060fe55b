"""First answer in a fresh Python process (import included): dpax with an empty kernel cache
(a first run ever), dpax with a warm kernel cache (the second run of the same script), and
the reference library's fresh process, alternated in the same run.

Every measurement is a new ``python -c`` process that starts its clock before importing
anything and prints the seconds to its first answer. dpax's bytecode is written first
(:func:`compile_bytecode`), as an installed package's is. dpax's kernel cache goes to a new
temporary directory per round (``DPAX_CACHE_DIR``): the first dpax process of a round finds it
empty, the second finds what the first stored. Run from the repository root (the anchors
come with the test extra):

    .venv/bin/python benchmarks/bench_cold_start.py            # every row, 1 round (~3 min)
    .venv/bin/python benchmarks/bench_cold_start.py --rounds 3 --json out.json
    .venv/bin/python benchmarks/bench_cold_start.py --only epsilon mu

The 64-row calibration table has no reference run (riskcal takes ~20 min for it, see
README); its row reports dpax alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CLOCK = "import time; _t0 = time.perf_counter()\n"
DONE = "\nimport json as _j; print('RESULT ' + _j.dumps(time.perf_counter() - _t0))\n"

#: name -> (description, dpax snippet, reference snippet or None, reference name)
ROWS = {
    "epsilon": (
        "epsilon(1e-5), DP-SGD p=1e-3 T=1e4 sigma=1, grid 1e-4",
        "import dpax\ndpax.dpsgd(1.0, 1e-3, 10_000, grid_step=1e-4).epsilon(1e-5)",
        "from dp_accounting.pld import privacy_loss_distribution as P\n"
        "P.from_gaussian_mechanism(1.0, sampling_prob=1e-3, value_discretization_interval=1e-4,"
        " use_connect_dots=True).self_compose(10_000).get_epsilon_for_delta(1e-5)",
        "dp-accounting",
    ),
    "beta": (
        "beta at 3 alphas, same DP-SGD",
        "import dpax\ndpax.dpsgd(1.0, 1e-3, 10_000, grid_step=1e-4).beta([0.01, 0.05, 0.1])",
        "import warnings; warnings.filterwarnings('ignore')\nimport numpy as np\n"
        "from dp_accounting.pld import privacy_loss_distribution as P\n"
        "from riskcal.analysis import get_beta_from_pld\n"
        "pld = P.from_gaussian_mechanism(1.0, sampling_prob=1e-3, value_discretization_interval=1e-4,"
        " use_connect_dots=True).self_compose(10_000)\n"
        "get_beta_from_pld(pld, alpha=np.array([0.01, 0.05, 0.1]))",
        "dp-accounting + riskcal",
    ),
    "accountant": (
        "accountant: 1000 steps (1.1, 0.01), get_epsilon(1e-5)",
        "from dpax.accountants import PLDAccountant\na = PLDAccountant()\n"
        "for _ in range(1000): a.step(noise_multiplier=1.1, sample_rate=0.01)\na.get_epsilon(1e-5)",
        "import dp_accounting\nfrom dp_accounting.pld import PLDAccountant\na = PLDAccountant()\n"
        "a.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)), 1000)\n"
        "a.get_epsilon(1e-5)",
        "dp-accounting PLDAccountant",
    ),
    "events": (
        "DpEvent accountant: 10,003 events, epsilon(1e-5), grid 1e-4",
        "import sys; sys.path.insert(0, '.')\nfrom benchmarks.workloads import dp_events\n"
        "from dpax.accountants import DpEventAccountant\na = DpEventAccountant()\n"
        "for e in dp_events(): a.compose(e)\na.get_epsilon(1e-5)",
        "import sys; sys.path.insert(0, '.')\nfrom benchmarks.workloads import dp_events\n"
        "from dp_accounting.pld import PLDAccountant\nfrom itertools import groupby\na = PLDAccountant()\n"
        "for e, g in groupby(dp_events()): a.compose(e, len(list(g)))\na.get_epsilon(1e-5)",
        "dp-accounting PLDAccountant (events grouped)",
    ),
    "mu": (
        "mu and regret, sigma 9.4, p 16384/50000, T 2000, grid 1e-4",
        "import dpax\ndpax.gdp.mu_and_regret(dpax.dpsgd(9.4, 16384 / 50000, 2000, grid_step=1e-4))",
        "from gdpnum.dpsgd import get_mu_and_regret_for_dpsgd\n"
        "get_mu_and_regret_for_dpsgd(9.4, 16384 / 50000, 2000, grid_step=1e-4)",
        "gdpnum",
    ),
    "calibration": (
        "one calibration alpha 0.1 beta 0.5 (p 1e-3, T 1e4), grid 1e-3",
        "import dpax\ndpax.calibrate_dpsgd(sample_rate=1e-3, num_steps=10_000,"
        " target=dpax.targets.ErrRates(0.1, 0.5), grid_step=1e-3)",
        "import warnings; warnings.filterwarnings('ignore')\n"
        "from riskcal.calibration.dpsgd import find_noise_multiplier_for_err_rates\n"
        "find_noise_multiplier_for_err_rates(alpha=0.1, beta=0.5, sample_rate=1e-3, num_steps=10_000,"
        " grid_step=1e-3)",
        "riskcal",
    ),
    "table": (
        "64-row calibration table (benchmarks/bench_calibrate.py), grid 1e-3",
        "import sys; sys.path.insert(0, 'benchmarks')\nimport dpax\nfrom bench_calibrate import dpsgd_table\n"
        "p, t, alpha, tpr = dpsgd_table()\n"
        "dpax.calibrate_dpsgd(sample_rate=p, num_steps=t, target=dpax.targets.ErrRates.from_tpr(alpha, tpr),"
        " grid_step=1e-3, compare_standard=False)",
        None,
        "riskcal (not run: ~20 min)",
    ),
}


def run(code: str, env: dict) -> float:
    """Seconds to the first answer of a fresh process running ``code`` (import included)."""
    out = subprocess.run([sys.executable, "-c", CLOCK + code + DONE], capture_output=True, text=True, env=env)
    if out.returncode:
        raise RuntimeError(f"benchmark process failed:\n{code}\n{out.stderr[-3000:]}")
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def compile_bytecode(package_dir: str | None = None) -> str:
    """Write the bytecode of dpax's modules (default: the dpax the children will import), as
    ``pip install`` does for an installed package and as a first import does unless
    ``PYTHONDONTWRITEBYTECODE`` is set. The anchors were installed by pip with their
    bytecode; without this, an editable dpax in an environment that sets that variable
    would compile its Python source (~0.1 s) in every fresh process, which a user of an
    installed dpax never pays. Returns the directory compiled."""
    import compileall
    import importlib.util

    if package_dir is None:
        package_dir = os.path.dirname(importlib.util.find_spec("dpax").origin)
    if not compileall.compile_dir(package_dir, quiet=1):
        raise RuntimeError(f"could not compile the bytecode of {package_dir}")
    return package_dir


def measure(names, rounds: int) -> dict:
    results = {}
    compile_bytecode()
    base = {k: v for k, v in os.environ.items() if k not in ("DPAX_CACHE", "DPAX_CACHE_DIR")}
    for name in names:
        desc, dpax_code, ref_code, ref_name = ROWS[name]
        row = {"description": desc, "reference": ref_name, "empty": [], "warm": [], "ref": []}
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as tmp:
                env = dict(base, DPAX_CACHE_DIR=os.path.join(tmp, "dpax"))
                row["empty"].append(run(dpax_code, env))
                if ref_code:
                    row["ref"].append(run(ref_code, base))
                row["warm"].append(run(dpax_code, env))
            print(f"  {name}: empty {row['empty'][-1]:.2f} s, warm {row['warm'][-1]:.2f} s"
                  + (f", {ref_name} {row['ref'][-1]:.2f} s" if ref_code else ""), file=sys.stderr)
        results[name] = row
    return results


def report(results: dict) -> str:
    lines = [
        "| first answer in a fresh process | dpax, empty cache | dpax, warm cache | reference | "
        "reference, fresh | empty / ref | warm / ref |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in results.values():
        e, w = min(row["empty"]), min(row["warm"])
        if row["ref"]:
            r = min(row["ref"])
            ref, ratios = f"{r:.2f} s", f"{e / r:.2f} | {w / r:.2f}"
        else:
            ref, ratios = "-", "- | -"
        lines.append(f"| {row['description']} | {e:.2f} s | {w:.2f} s | {row['reference']} | {ref} | {ratios} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="fresh-cache rounds per row (best is reported)")
    parser.add_argument("--only", nargs="+", choices=sorted(ROWS), help="rows to run (default: all)")
    parser.add_argument("--json", help="also write the raw times here")
    args = parser.parse_args(argv)
    names = args.only or list(ROWS)
    t0 = time.perf_counter()
    results = measure(names, max(1, args.rounds))
    print(report(results))
    print(f"\n(ratios below 1: dpax answers first; best of {max(1, args.rounds)} round(s); "
          f"benchmark took {time.perf_counter() - t0:.0f} s)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
