"""``python -m benchmarks run --quick|--full``: the dpax benchmark suite (benchmarks/suite.py);
``python -m benchmarks compare REF``: speed at a git revision against the working tree
(benchmarks/compare.py); ``python -m benchmarks batch-curve``: cost per row of a calibration
batch (benchmarks/batch_curve.py); ``python -m benchmarks census [PYTEST ARGS]``: the default
test run's time and XLA compilations per test module (benchmarks/census.py). All four end with
the verdicts of benchmarks/goals.toml.

--quick (default) takes a few minutes on a 2-core CPU; --full adds riskcal's grid-1e-4
calibration, grid 1e-5 for the exact Gaussian, the num_steps series at grid 1e-4, more batch
sizes and repetitions. Writes benchmarks/results/suite-<mode>.json and .md (or --out DIR)
and prints the Markdown report. A --quick run without --out also writes the committed report,
benchmarks/RESULTS.md, and the result it is generated from, benchmarks/RESULTS.json (unless
--no-publish): the one place the suite's figures are written down.
"""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks",
                                     description="dpax benchmarks: the suite (run), compare REF, batch-curve, census")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the suite and write JSON + Markdown results")
    mode = run.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="the documented quick set (default)")
    mode.add_argument("--full", dest="mode", action="store_const", const="full", help="the full set")
    mode.add_argument("--smoke", dest="mode", action="store_const", const="smoke", help="a seconds-long set (tests)")
    run.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    run.add_argument("--no-publish", dest="publish", action="store_false",
                     help="do not rewrite benchmarks/RESULTS.md and RESULTS.json (a --quick run without --out does)")
    run.set_defaults(mode="quick")

    cmp = sub.add_parser("compare",
                         help="dpax's speed at a git revision against the working tree (benchmarks/compare.py)")
    cmp.add_argument("ref", metavar="REF", help="any git revision (checked out in a temporary worktree)")
    cmp.add_argument("--repeat", type=int, default=5, help="timed warm calls per process (default 5)")
    cmp.add_argument("--rounds", type=int, default=3, help="alternating REF, HEAD rounds (default 3)")
    cmp.add_argument("--workloads", default=None,
                     help="comma-separated workloads of benchmarks/workloads.py (default: all, table64 included)")
    cmp.add_argument("--no-cold", dest="cold", action="store_false", help="warm only: no fresh-process runs")
    cmp.add_argument("--out", default=None, help="JSON path (default benchmarks/results/compare-<REF>.json)")
    cmp.add_argument("--smoke", action="store_true",
                     help="the workloads' tiny-grid variants: checks the machinery in a minute; its times mean nothing")
    cmp.add_argument("--strict", action="store_true", help="exit status 1 when a goal of benchmarks/goals.toml FAILs")

    bc = sub.add_parser("batch-curve",
                        help="warm seconds per row of an N-row calibration batch (benchmarks/batch_curve.py)")
    bc.add_argument("--sizes", default=None, help="comma-separated batch sizes (default 1,2,4,...,1024)")
    bc.add_argument("--kind", choices=("alike", "unlike", "both"), default="both",
                    help="rows alike, unlike, or both (default)")
    bc.add_argument("--repeat", type=int, default=3, help="timed warm calls per size below 256 rows (default 3)")
    bc.add_argument("--out", default=None, help="JSON path (default benchmarks/results/batch-curve.json)")
    bc.add_argument("--strict", action="store_true", help="exit status 1 when a goal of benchmarks/goals.toml FAILs")

    census = sub.add_parser("census", help="the test run's time and XLA compilations per test module "
                                           "(benchmarks/census.py); other arguments go to pytest")
    census.add_argument("--out", default=None, help="JSON path (default benchmarks/results/census.json)")
    args, rest = parser.parse_known_args(argv)
    if args.command != "census" and rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "census":
        from benchmarks import census as census_module

        args.pytest_args = rest
        return census_module.main(args)

    if args.command == "compare":
        from benchmarks import compare

        return compare.main(args)
    if args.command == "batch-curve":
        from benchmarks import batch_curve

        return batch_curve.main(args)

    from benchmarks import suite

    with suite._quiet_absl():
        result = suite.run(args.mode, log=lambda *a, **k: print(*a, **{**k, "file": sys.stderr}))
    paths = suite.write(result, args.out or suite.RESULTS_DIR)
    with open(paths[1]) as fh:
        print(fh.read())
    print(f"wrote {paths[0]} and {paths[1]}", file=sys.stderr)
    if args.publish and args.out is None and args.mode == suite.PUBLISHED_MODE:
        published = suite.publish(result)
        print(f"wrote {published[1]} (the committed report) and {published[0]}", file=sys.stderr)
    return 0 if result["summary"]["dpax_violations"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
