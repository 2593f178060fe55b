"""The ``dpax`` command line: the parser of every subcommand, and the entry point :func:`main`.

    dpax curve --noise-multiplier 1 --sample-rate 0.001 --num-steps 10000
    dpax calibrate --sample-rate 0.001 --num-steps 10000 --alpha 0.1 --beta 0.5
    python -m dpax curve ... --json

Every subcommand prints a human-readable table by default and one JSON object with
``--json``. Bad input (a ValueError or TypeError from dpax) is reported as
``dpax: error: <message>`` on stderr with exit status 2, like a usage error.

Compile latency: like the library, the command line keeps the kernels it compiles in dpax's
kernel cache (``$DPAX_CACHE_DIR`` or ``~/.cache/dpax``; see :mod:`dpax._engine.cache`), so a
second invocation loads what the first compiled. ``--no-cache`` keeps this invocation off
the disk (:func:`dpax.cli.common.compilation_cache`).

Adding a subcommand: write a module ``dpax/cli/<name>.py`` with a function
``add_parser(subparsers, parents)`` that registers the parser with
``subparsers.add_parser(name, parents=[_options(), parents.common], ...)`` and sets ``func``
to a function ``(args) -> dict`` returning the JSON-ready result (plain floats, ints, strings,
lists, dicts) and ``render`` to a function ``(result) -> str`` for the human-readable form.
``_options()`` is the subcommand's own options, on :func:`dpax.cli.common.options_parser`;
``parents`` (:class:`dpax.cli.common.Parents`) holds the options subcommands share
(``common``: --grid-step, --json, --no-cache; ``report``: --alpha / --delta of a curve).
Import the module here and add it to :data:`SUBCOMMANDS`. It imports dpax's public modules
and :mod:`dpax.cli.common` at its top; what several subcommands need (argument types, option
groups, tables, the risk summary) goes in :mod:`dpax.cli.common`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Sequence

from .. import __version__
from .._engine.text import jsonable
from . import audit, calibrate, curve, epsilon_star, gdp, mechanism, plot, sweep
from .common import PROG, compilation_cache, make_parents

#: Subcommand modules, in the order ``dpax --help`` lists them; each has ``add_parser(subparsers, parents)``.
SUBCOMMANDS = (curve, calibrate, audit, epsilon_star, sweep, plot, gdp, mechanism)


def build_parser() -> argparse.ArgumentParser:
    """The parser of the whole command line (every module of :data:`SUBCOMMANDS`).

    >>> build_parser().parse_args(["curve", "--noise-multiplier", "1", "--sample-rate", "0.01",
    ...                            "--num-steps", "1e3"]).num_steps
    1000
    """
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="dpax: exact privacy accounting in JAX: trade-off curves of the best "
                    "membership-inference attack, and noise calibrated to attack risk.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    parents = make_parents()
    for module in SUBCOMMANDS:
        module.add_parser(subparsers, parents)
    # keep each subparser reachable for its own usage errors
    for sub in subparsers.choices.values():
        sub.set_defaults(parser=sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad usage or bad input).

    Args:
        argv: the arguments after ``dpax`` (default: ``sys.argv[1:]``).

    Returns:
        0 on success, 2 for a usage error or bad input (``dpax: error: ...`` on stderr),
        or the status a subcommand exits with (130: an interrupted sweep).

    >>> main(["--version"])  # doctest: +ELLIPSIS
    dpax ...
    0
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
        with compilation_cache(args.cache):
            t0 = time.perf_counter()
            result = args.func(args)
            result["elapsed_s"] = time.perf_counter() - t0
    except SystemExit as exc:  # parser.error raised while interpreting the arguments
        return exc.code if isinstance(exc.code, int) else 2
    except (ValueError, TypeError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    result["dpax_version"] = __version__
    if args.json:
        print(json.dumps(jsonable(result), allow_nan=False))
    else:
        print(args.render(result))
        print(f"\n(computed in {result['elapsed_s']:.2f} s)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
