"""``python -m benchmarks run --quick|--full``: the dpax benchmark suite (benchmarks/suite.py).

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
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the suite and write JSON + Markdown results")
    mode = run.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick", help="the documented quick set (default)")
    mode.add_argument("--full", dest="mode", action="store_const", const="full", help="the full set")
    mode.add_argument("--smoke", dest="mode", action="store_const", const="smoke", help="a seconds-long set (tests)")
    run.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    run.add_argument("--no-publish", dest="publish", action="store_false",
                     help="do not rewrite benchmarks/RESULTS.md and RESULTS.json (a --quick run without --out does)")
    run.set_defaults(mode="quick")
    args = parser.parse_args(argv)

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
