"""The ``dpax`` command line's parser and shared options: argument types, the parent parsers
of the options several subcommands take (:class:`Parents`), message capping and the kernel
cache switch.

Every subcommand module (:mod:`dpax.cli.main` lists them) builds its parser with
``parents=[its own options (an :func:`options_parser`), the shared ones from :class:`Parents`]``,
so an option that several subcommands take is defined once, here.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn, TypeAlias

from .._engine import cache as engine_cache
from .._engine.grid import DEFAULT_GRID_STEP

PROG = "dpax"

DEFAULT_ALPHAS = (0.001, 0.01, 0.05, 0.1)
DEFAULT_DELTAS = (1e-5,)

#: Longest error message the command line prints (characters); longer ones end in " ...".
MAX_MESSAGE_CHARS = 500


def cap_message(message: object, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``message`` as one line of at most ``limit`` characters, cut with an ellipsis: a value's
    repr (a long array, a hostile file's row) never floods stderr.

    Args:
        message: anything; its ``str`` is used.
        limit: the most characters of the result (default :data:`MAX_MESSAGE_CHARS`).

    Returns:
        ``str(message)`` stripped, each line break and the spaces around it one space,
        cut to ``limit`` characters ending in " ..." when longer.

    >>> cap_message("x" * 1000, 20)
    'xxxxxxxxxxxxxxxx ...'
    >>> cap_message("got array([0.1, 0.2,\\n       nan])")
    'got array([0.1, 0.2, nan])'
    """
    text = re.sub(r"\s*\n\s*", " ", str(message).strip())
    if len(text) > limit:
        text = text[: max(limit - 4, 0)].rstrip() + " ..."
    return text


# -- the parser ----------------------------------------------------------------------------


@contextlib.contextmanager
def options_named(options: dict[str, str]) -> Iterator[None]:
    """Within the body, a ValueError or TypeError whose message starts with a Python argument
    name in ``options`` is raised again starting with its command-line option instead
    (``rtol must lie in ...`` -> ``--rtol (rtol) must lie in ...``).

    >>> with options_named({"alphas": "--alpha"}):
    ...     raise ValueError("alphas must lie in (0, 1), got 0")
    Traceback (most recent call last):
    ...
    ValueError: --alpha (alphas) must lie in (0, 1), got 0
    """
    try:
        yield
    except (ValueError, TypeError) as exc:
        text = str(exc)
        for name, option in options.items():
            if text.startswith(name) and text[len(name):len(name) + 1] in (" ", ":", ""):
                message = f"{option} ({name}){text[len(name):]}"
                try:
                    renamed = type(exc)(message)
                except Exception:  # noqa: BLE001 - an exception class with its own constructor
                    renamed = ValueError(message) if isinstance(exc, ValueError) else TypeError(message)
                raise renamed from None
        raise


class Parser(argparse.ArgumentParser):
    """The ``argparse`` parser of every dpax command: no abbreviated options (``--num-step`` is
    not ``--num-steps``), an unknown option is reported by the subcommand it was given to, with
    that subcommand's usage and the closest option it takes ("did you mean --alpha?"), and every
    usage error ends in one line ``dpax: error: <message>`` (exit status 2).

    Subparsers made by :meth:`add_subparsers` are of this class too.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print the usage and ``dpax: error: <message>`` on stderr; exit with status 2.

        Args:
            message: the error, capped by :func:`cap_message`.

        Returns:
            Never returns.

        Raises:
            SystemExit: always, with status 2.
        """
        self.print_usage(sys.stderr)
        self.exit(2, f"{PROG}: error: {cap_message(message)}\n")

    def parse_known_args(self, args: Iterable[str] | None = None, namespace: Any = None
                         ) -> tuple[Any, list[str]]:
        """Like argparse's, but an unknown option (or a prefix of a known one) is an error of
        this parser, raised before any other check (such as missing required options); a
        parser without subcommands also refuses left-over arguments itself, so that the usage
        printed is the subcommand's.

        Args:
            args: the arguments (default ``sys.argv[1:]``).
            namespace: the object to set the values on (default a new ``argparse.Namespace``).

        Returns:
            ``(namespace, extras)``: the parsed values and the arguments left over (none for
            a parser without subcommands).

        Raises:
            SystemExit: a usage error (status 2, see :meth:`error`), or ``--help``.
        """
        args = list(sys.argv[1:] if args is None else args)
        self._refuse_unknown(args)
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and not self._has_subcommands():
            self.error("unrecognized arguments: " + " ".join(extras))
        return namespace, extras

    def _parse_optional(self, arg_string: str) -> Any:
        # a number such as '-inf' or '-1e-3' is a value (argparse itself knows only '-1', '-.5')
        if not _looks_like_option(arg_string) and arg_string not in self._option_string_actions:
            return None
        return super()._parse_optional(arg_string)

    def _has_subcommands(self) -> bool:
        return any(isinstance(a, argparse._SubParsersAction) for a in self._actions)

    def _options(self) -> list[str]:
        return sorted(o for o in self._option_string_actions if o.startswith("--"))

    def _refuse_unknown(self, args: list[str]) -> None:
        sub = next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)
        for tok in args:
            if tok == "--":
                return
            if not _looks_like_option(tok):
                if sub is not None:  # the command name: what follows is the subcommand's
                    if tok not in sub.choices:
                        close = difflib.get_close_matches(tok, list(sub.choices), n=1)
                        hint = f" (did you mean {close[0]}?)" if close else ""
                        self.error(f"unknown command {tok!r}{hint}; choose from {', '.join(sub.choices)}")
                    return
                continue
            name = tok.split("=", 1)[0] if tok.startswith("--") else tok[:2]
            if name in self._option_string_actions:
                continue
            self.error(f"unrecognized arguments: {tok.split('=', 1)[0]}{self._suggest(name)}")

    def _suggest(self, name: str) -> str:
        """' (did you mean --x?)' for the known option closest to ``name``, or ''."""
        options = self._options()
        prefixed = [o for o in options if o.startswith(name)] if name.startswith("--") else []
        close = prefixed[:1] if len(prefixed) == 1 else difflib.get_close_matches(name, options, n=1, cutoff=0.6)
        return f" (did you mean {close[0]}?)" if close else ""


def _looks_like_option(tok: str) -> bool:
    """Whether argparse would read ``tok`` as an option string, not a value: '--name...' or
    '-x...' with a letter after the dashes, and not a number such as '-inf' or '-1e-3'."""
    if tok.startswith("--"):
        return len(tok) > 2 and tok[2].isalpha()
    if not tok.startswith("-") or len(tok) < 2 or not tok[1].isalpha() or " " in tok:
        return False
    try:
        float(tok)
    except ValueError:
        return True
    return False


# -- argument types ------------------------------------------------------------------------


def number(text: str) -> float:
    """A real number; range checks are left to dpax, whose messages name the argument.

    Args:
        text: the command-line value.

    Returns:
        ``float(text)``.

    Raises:
        argparse.ArgumentTypeError: ``text`` is not a number.

    >>> number("1e-3")
    0.001
    """
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {cap_message(repr(text), 60)}") from None


def count(text: str) -> int | float:
    """An integer, also written as '1e4'; a fractional value (or one beyond 2**53) is passed
    on as a float for dpax to reject.

    Args:
        text: the command-line value.

    Returns:
        An int where ``text`` is a whole number (at most 2**53 in size when written as a
        float), else the float.

    Raises:
        argparse.ArgumentTypeError: ``text`` is not a number.

    >>> count("1e4"), count("2.5"), count("1e300")
    (10000, 2.5, 1e+300)
    """
    try:
        return int(text)
    except ValueError:
        value = number(text)
        return int(value) if math.isfinite(value) and value == int(value) and abs(value) <= 2**53 else value


def integer(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """The argument type of an option that is a whole number in [minimum, maximum] for the
    command line itself (not passed on to dpax): anything else is a usage error naming it.

    Args:
        minimum: the smallest value allowed.
        maximum: the largest value allowed (None: no upper limit).

    Returns:
        The argument type: a function of the command-line text returning the int, raising
        ``argparse.ArgumentTypeError`` for anything else (not a whole number, or out of range).

    >>> integer(0)("1e3"), integer(1, 20)("20")
    (1000, 20)
    >>> integer(0)("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a whole number >= 0, got 'nan'
    """
    allowed = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"

    def parse(text: str) -> int:
        value = count(text)
        if not isinstance(value, int) or value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"must be a whole number {allowed}, got {cap_message(repr(text), 60)}")
        return value

    parse.__name__ = "integer"
    return parse


def bounded(low: float, high: float) -> Callable[[str], float]:
    """The argument type of a number in [low, high] for the command line itself.

    Args:
        low: the smallest value allowed.
        high: the largest value allowed.

    Returns:
        The argument type: a function of the command-line text returning the float, raising
        ``argparse.ArgumentTypeError`` for anything else (not a number, or outside [low, high]).

    >>> bounded(10, 1200)("300")
    300.0
    """

    def parse(text: str) -> float:
        value = number(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must lie in [{low:g}, {high:g}], got {cap_message(repr(text), 60)}")
        return value

    parse.__name__ = "number"
    return parse


def positive(text: str) -> float:
    """The argument type of a finite number > 0 for the command line itself.

    Args:
        text: the command-line value.

    Returns:
        The number, finite and > 0.

    Raises:
        argparse.ArgumentTypeError: ``text`` is not a finite number > 0.

    >>> positive("1e-3")
    0.001
    >>> positive("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number > 0, got '0'
    """
    value = number(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {cap_message(repr(text), 60)}")
    return value


# -- shared options ------------------------------------------------------------------------


class _GridStep(argparse.Action):
    """Store --grid-step and note that it was given (``--accuracy`` refuses it)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.grid_step_given = True


#: What ``ArgumentParser.add_subparsers`` returns: each subcommand's ``add_parser`` adds its parser to it.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


@dataclasses.dataclass(frozen=True)
class Parents:
    """Parent parsers (``add_parser(..., parents=[...])``) of the options subcommands share.

    Attributes:
        common: --grid-step, --json and --no-cache, taken by every subcommand.
        report: --alpha (FPRs at which beta is reported) and --delta (deltas at which
            epsilon is), taken by the subcommands that report a whole trade-off curve.
    """

    common: argparse.ArgumentParser
    report: argparse.ArgumentParser


def make_parents() -> Parents:
    """The parent parsers of the shared options (see :class:`Parents`).

    Returns:
        The :class:`Parents`: ``common`` (--grid-step, --json, --no-cache) and ``report``
        (--alpha, --delta).

    >>> make_parents().common.parse_args(["--json"]).grid_step
    0.0001
    """
    common = Parser(add_help=False)
    common.add_argument("--grid-step", type=number, default=DEFAULT_GRID_STEP, metavar="H", action=_GridStep,
                        help="privacy-loss discretisation interval (default: %(default)s)")
    common.set_defaults(grid_step_given=False)
    common.add_argument("--json", action="store_true", help="print one JSON object instead of the text output")
    common.add_argument("--no-cache", dest="cache", action="store_false",
                        help="neither read nor write dpax's kernel cache ($DPAX_CACHE_DIR, else "
                             "$XDG_CACHE_HOME/dpax, else ~/.cache/dpax)")
    report = Parser(add_help=False)
    report.add_argument("--alpha", type=number, nargs="+", default=list(DEFAULT_ALPHAS), metavar="A",
                        help="FPRs at which to report beta (default: %(default)s)")
    report.add_argument("--delta", type=number, nargs="+", default=list(DEFAULT_DELTAS), metavar="D",
                        help="deltas at which to report epsilon (default: %(default)s)")
    return Parents(common=common, report=report)


def options_parser() -> argparse.ArgumentParser:
    """An empty parent parser for a subcommand's own options.

    A subcommand lists it first in ``parents=[...]``, before the shared parents, so that its
    usage line and ``--help`` show its own options before the shared ones.

    Returns:
        A :class:`Parser` without ``--help`` (and, like every dpax parser, without
        abbreviated options).

    >>> options_parser().add_help, options_parser().allow_abbrev
    (False, False)
    """
    return Parser(add_help=False)


#: How the "DP-SGD" argument group says which options go together.


# -- kernel cache --------------------------------------------------------------------------


@contextlib.contextmanager
def compilation_cache(enabled: bool = True) -> Iterator[str | None]:
    """Run the body with dpax's store of compiled kernels (:mod:`dpax._engine.cache`) as the
    library has it (on by default, in ``$DPAX_CACHE_DIR`` or ``~/.cache/dpax``), or off
    (``--no-cache``: nothing read from or written to disk, restored afterwards). No JAX
    setting is touched. Yields the directory in use, or None.

    Args:
        enabled: use the kernel cache (default True); False: suspend it for the body.

    Returns:
        A context manager yielding the cache directory in use, or None (off).
    """
    if enabled:
        yield engine_cache.directory()
        return
    with engine_cache.suspended():
        yield None
