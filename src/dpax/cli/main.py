"""The ``dpax`` command line: the parser of every subcommand, and the entry point :func:`main`.

    dpax curve --noise-multiplier 1 --sample-rate 0.001 --num-steps 10000
    dpax calibrate --sample-rate 0.001 --num-steps 10000 --alpha 0.1 --beta 0.5
    python -m dpax curve ... --json

Every subcommand prints a human-readable table by default and one JSON object with
``--json``. Every failure -- a usage error, bad input (a ValueError or TypeError from dpax),
a file that cannot be read or written, memory running out -- is reported as one line
``dpax: error: <message>`` on stderr (after the usage, for a usage error) with exit status 2,
never a traceback; messages are capped at :data:`dpax.cli.parsing.MAX_MESSAGE_CHARS`
characters. Options cannot be abbreviated, and a mistyped one is answered with the closest
option of its subcommand ("did you mean --alpha?"). Output into a pipe closed early
(``dpax ... | head``) ends quietly with status 141 (128 + SIGPIPE), as Unix tools do; Ctrl-C
ends with status 130. ``DPAX_DEBUG=1`` shows the traceback of an unexpected error.

Compile latency: like the library, the command line keeps the kernels it compiles in dpax's
kernel cache (``$DPAX_CACHE_DIR`` or ``~/.cache/dpax``; see :mod:`dpax._engine.cache`), so a
second invocation loads what the first compiled. ``--no-cache`` keeps this invocation off
the disk (:func:`dpax.cli.parsing.compilation_cache`).

Adding a subcommand: write a module ``dpax/cli/<name>_command.py`` with a function
``add_parser(subparsers, parents)`` that registers the parser with
``subparsers.add_parser(name, parents=[_options(), parents.common], ...)`` and sets ``func``
to a function ``(args) -> dict`` returning the JSON-ready result (plain floats, ints, strings,
lists, dicts) and ``render`` to a function ``(result) -> str`` for the human-readable form.
``_options()`` is the subcommand's own options, on :func:`dpax.cli.parsing.options_parser`; a
DP-SGD configuration is added with :func:`dpax.cli.configuration.dpsgd_args` (or
``configuration_args``), and :func:`main` turns --dataset-size / --batch-size / --epochs into
``args.sample_rate`` / ``args.num_steps`` before ``func`` runs
(:func:`dpax.cli.configuration.resolve_configuration`);
``parents`` (:class:`dpax.cli.parsing.Parents`) holds the options subcommands share
(``common``: --grid-step, --json, --no-cache; ``report``: --alpha / --delta of a curve).
Import the module here and add it to :data:`SUBCOMMANDS`. It imports dpax's public modules
and the shared cli modules at its top; what several subcommands need goes in one of them:
argument types and option groups in :mod:`dpax.cli.parsing`, the DP-SGD configuration in
:mod:`dpax.cli.configuration`, the risk summary and its brackets in :mod:`dpax.cli.brackets`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Sequence

from .. import __version__
from .._text import jsonable
from . import (
    audit_command,
    calibrate_command,
    curve_command,
    epsilon_star_command,
    gdp_command,
    mechanism_command,
    plot_command,
    sweep_command,
)
from .configuration import resolve_configuration, schedule_lines
from .parsing import PROG, Parser, cap_message, compilation_cache, make_parents

#: Subcommand modules, in the order ``dpax --help`` lists them; each has ``add_parser(subparsers, parents)``.
SUBCOMMANDS = (curve_command, calibrate_command, audit_command, epsilon_star_command, sweep_command, plot_command,
               gdp_command, mechanism_command)


#: Exit status of a usage error or a failure; of output into a closed pipe (128 + SIGPIPE); of Ctrl-C.
EXIT_ERROR = 2
EXIT_BROKEN_PIPE = 128 + int(getattr(signal, "SIGPIPE", 13))
EXIT_INTERRUPTED = 130


def build_parser() -> Parser:
    """The parser of the whole command line (every module of :data:`SUBCOMMANDS`).

    >>> build_parser().parse_args(["curve", "--noise-multiplier", "1", "--sample-rate", "0.01",
    ...                            "--num-steps", "1e3"]).num_steps
    1000
    """
    parser = Parser(
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
        0 on success; 2 for a usage error, bad input or any other failure (``dpax: error: ...``
        on stderr); 141 when the output went into a pipe closed early; 130 after Ctrl-C or an
        interrupted sweep.

    >>> main(["--version"])  # doctest: +ELLIPSIS
    dpax ...
    0
    """
    try:
        code = _run(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:  # `dpax ... | head`: the reader is gone; nothing to say to it
        _discard_stdout()
        return EXIT_BROKEN_PIPE


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return _exit_code(exc, 0)
    try:
        resolve_configuration(args)  # --dataset-size / --batch-size / --epochs -> --sample-rate / --num-steps
        with compilation_cache(args.cache):
            t0 = time.perf_counter()
            result = args.func(args)
            result["elapsed_s"] = time.perf_counter() - t0
        if getattr(args, "schedule", None):
            result["schedule"] = args.schedule
        result["dpax_version"] = __version__
        if args.json:
            text = json.dumps(jsonable(result), allow_nan=False)
        else:
            lines = schedule_lines(result) + [args.render(result), "", f"(computed in {result['elapsed_s']:.2f} s)"]
            text = "\n".join(lines)
    except SystemExit as exc:  # parser.error raised while interpreting the arguments
        return _exit_code(exc, EXIT_ERROR)
    except BrokenPipeError:
        raise
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ValueError, TypeError) as exc:
        return _fail(exc)
    except OSError as exc:  # a file the command reads or writes
        return _fail(_os_message(exc))
    except MemoryError:
        return _fail(_OUT_OF_MEMORY.format(command=args.command))
    except Exception as exc:  # a bug: still no traceback unless asked for
        if os.environ.get("DPAX_DEBUG"):
            raise
        if _out_of_memory(exc):  # XLA could not allocate (e.g. under ulimit -v)
            return _fail(_OUT_OF_MEMORY.format(command=args.command))
        return _fail(f"{args.command}: internal error ({type(exc).__name__}: {exc}); "
                     "run again with DPAX_DEBUG=1 for the traceback")
    print(text)
    return 0


_OUT_OF_MEMORY = ("{command}: out of memory; use a coarser --grid-step or fewer configurations "
                  "(DPAX_MEMORY_LIMIT_GB sets dpax's budget, below what the machine can give)")


def _out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is an allocation failure reported by the XLA runtime (not a MemoryError)."""
    text = str(exc)
    return "Out of memory" in text or "RESOURCE_EXHAUSTED" in text


def _exit_code(exc: SystemExit, default: int) -> int:
    """The status a SystemExit asks for (None: ``default``; a message: it is printed, status 2)."""
    if exc.code is None:
        return default
    if isinstance(exc.code, int):
        return exc.code
    return _fail(exc.code)


def _fail(message: object) -> int:
    """Print ``dpax: error: <message>`` (capped) on stderr; the exit status of a failure."""
    print(f"{PROG}: error: {cap_message(message)}", file=sys.stderr)
    return EXIT_ERROR


def _os_message(exc: OSError) -> str:
    """'<file>: <reason>' for an OSError that names its file, else its text."""
    if exc.filename is not None and exc.strerror:
        return f"{exc.filename!r}: {exc.strerror}"
    return str(exc) or type(exc).__name__


def _discard_stdout() -> None:
    """Point stdout at the null device, so that Python's final flush finds no broken pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is no file (e.g. captured in-process)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
