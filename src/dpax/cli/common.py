"""What the ``dpax`` subcommands share: argument types, the parent parsers of the shared
options, the kernel cache switch, the risk summary of a privacy loss with its certified
brackets, and the grid that ``--accuracy`` chooses.

Every subcommand module (:mod:`dpax.cli.main` lists them) builds its parser with
``parents=[its own options (an :func:`options_parser`), the shared ones from :class:`Parents`]``,
so an option that several subcommands take is defined once, here.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import itertools
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NoReturn, cast

import numpy as np
from numpy.typing import ArrayLike

from .._engine import cache as engine_cache
from .._engine.text import NEAR_ONE, fmt, probability, table  # noqa: F401 (NEAR_ONE re-exported)
from ..privacy_loss import Interval, PrivacyLoss, refine
from ..schedule import dpsgd_schedule

PROG = "dpax"

DEFAULT_ALPHAS = (0.001, 0.01, 0.05, 0.1)
DEFAULT_DELTAS = (1e-5,)
DEFAULT_GRID_STEP = 1e-4

#: Longest error message the command line prints (characters); longer ones end in " ...".
MAX_MESSAGE_CHARS = 500


def cap_message(message: object, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``message`` as one line of at most ``limit`` characters, cut with an ellipsis: a value's
    repr (a long array, a hostile file's row) never floods stderr.

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


class Parser(argparse.ArgumentParser):
    """The ``argparse`` parser of every dpax command: no abbreviated options (``--num-step`` is
    not ``--num-steps``), an unknown option is reported by the subcommand it was given to, with
    that subcommand's usage and the closest option it takes ("did you mean --alpha?"), and every
    usage error ends in one line ``dpax: error: <message>`` (exit status 2).

    Subparsers made by :meth:`add_subparsers` are of this class too.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print the usage and ``dpax: error: <message>`` on stderr; exit with status 2."""
        self.print_usage(sys.stderr)
        self.exit(2, f"{PROG}: error: {cap_message(message)}\n")

    def parse_known_args(self, args=None, namespace=None):
        """Like argparse's, but an unknown option (or a prefix of a known one) is an error of
        this parser, raised before any other check (such as missing required options); a
        parser without subcommands also refuses left-over arguments itself, so that the usage
        printed is the subcommand's."""
        args = list(sys.argv[1:] if args is None else args)
        self._refuse_unknown(args)
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and not self._has_subcommands():
            self.error("unrecognized arguments: " + " ".join(extras))
        return namespace, extras

    def _parse_optional(self, arg_string):
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

    >>> count("1e4"), count("2.5"), count("1e300")
    (10000, 2.5, 1e+300)
    """
    try:
        return int(text)
    except ValueError:
        value = number(text)
        return int(value) if math.isfinite(value) and value == int(value) and abs(value) <= 2**53 else value


def integer(minimum: int, maximum: int | None = None):
    """The argument type of an option that is a whole number in [minimum, maximum] for the
    command line itself (not passed on to dpax): anything else is a usage error naming it.

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


def bounded(low: float, high: float):
    """The argument type of a number in [low, high] for the command line itself.

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

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        namespace.grid_step_given = True


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

    >>> options_parser().add_help, options_parser().allow_abbrev
    (False, False)
    """
    return Parser(add_help=False)


#: How the "DP-SGD" argument group says which options go together.
DPSGD_GROUP = ("--sample-rate P --num-steps T, or --dataset-size N --batch-size B --epochs E (sample rate B / N, "
               "E * ceil(N / B) steps: Opacus' batches per epoch; dpax.dpsgd_schedule)")
_RATE_OPTIONS = ("sample_rate", "num_steps")
_SCHEDULE_OPTIONS = ("dataset_size", "batch_size", "epochs")


def dpsgd_args(p: argparse.ArgumentParser, *, noise: bool = True, required: bool = True) -> None:
    """The "DP-SGD" argument group: --noise-multiplier (if ``noise``) and the configuration
    (:func:`configuration_args`); ``required``: the configuration must be given."""
    g = p.add_argument_group("DP-SGD", DPSGD_GROUP)
    if noise:
        g.add_argument("--noise-multiplier", type=number, required=required, metavar="S",
                       help="noise standard deviation / clipping norm")
    configuration_args(p, g, required=required)


def configuration_args(p: argparse.ArgumentParser, group, *, required: bool = True, several: bool = False) -> None:
    """DP-SGD's configuration in ``group`` (of the parser ``p``): --sample-rate and
    --num-steps, or --dataset-size, --batch-size and --epochs (:func:`dpax.dpsgd_schedule`),
    one pair or the other (:func:`resolve_configuration` checks them).

    Args:
        p: the parser (its defaults say whether the configuration is required and several).
        group: where the options go (an argument group of ``p``, or ``p``).
        required: the configuration must be given.
        several: each option takes one or more values; the configurations are every combination.

    >>> p = options_parser()
    >>> configuration_args(p, p.add_argument_group("DP-SGD"))
    >>> p.parse_args(["--dataset-size", "1000", "--batch-size", "100", "--epochs", "2"]).epochs
    2
    """
    more = {"nargs": "+"} if several else {}
    each = " (one or more: every combination)" if several else ""
    group.add_argument("--sample-rate", type=number, metavar="P", help="Poisson sampling rate, in (0, 1]" + each,
                       **more)
    group.add_argument("--num-steps", type=count, metavar="T", help="number of steps (integer >= 1)" + each, **more)
    group.add_argument("--dataset-size", type=count, metavar="N",
                       help="instead of --sample-rate / --num-steps: number of training records" + each, **more)
    group.add_argument("--batch-size", type=count, metavar="B",
                       help="expected batch size, in [1, N]: sample rate B / N" + each, **more)
    group.add_argument("--epochs", type=count, metavar="E",
                       help="number of epochs: E * ceil(N / B) steps" + each, **more)
    p.set_defaults(dpsgd_required=required, dpsgd_several=several, schedule=None)


def _options_text(names) -> str:
    return " ".join("--" + n.replace("_", "-") for n in names)


def resolve_configuration(args: argparse.Namespace) -> None:
    """Check the DP-SGD configuration options of ``args`` (a usage error unless exactly one
    of the pairs is complete, or neither where it is optional) and, from --dataset-size,
    --batch-size and --epochs, set ``args.sample_rate`` and ``args.num_steps`` (lists for a
    subcommand taking several: every combination) and ``args.schedule`` (the JSON of the
    schedule). A namespace without these options is left as it is.

    Args:
        args: the parsed arguments, with ``args.parser`` the subcommand's parser.

    Raises:
        SystemExit: a usage error (through ``args.parser.error``).
        ValueError: a value out of its range (a fractional --num-steps, a batch larger than
            the dataset, ...), naming it.

    >>> p = Parser()
    >>> configuration_args(p, p)
    >>> args = p.parse_args(["--dataset-size", "1000", "--batch-size", "100", "--epochs", "2"])
    >>> args.parser = p
    >>> resolve_configuration(args)
    >>> args.sample_rate, args.num_steps, args.schedule["steps_per_epoch"]
    (0.1, 20, 10)
    """
    if not hasattr(args, "dataset_size"):
        return
    rate = [o for o in _RATE_OPTIONS if getattr(args, o) is not None]
    sched = [o for o in _SCHEDULE_OPTIONS if getattr(args, o) is not None]
    if rate and sched:
        args.parser.error(f"give --sample-rate and --num-steps, or --dataset-size, --batch-size and --epochs, not "
                          f"both (got {_options_text(rate + sched)})")
    if sched:
        missing = [o for o in _SCHEDULE_OPTIONS if o not in sched]
        if missing:
            args.parser.error(f"--dataset-size, --batch-size and --epochs go together: {_options_text(missing)} is "
                              "missing")
        values = [getattr(args, o) for o in _SCHEDULE_OPTIONS]
        if args.dpsgd_several:
            values = [list(c) for c in zip(*itertools.product(*values))]
        s = dpsgd_schedule(*values)
        args.sample_rate, args.num_steps = s.sample_rate, s.num_steps
        if args.dpsgd_several:
            # DPSGDSchedule types its fields as object: arrays here (Python numbers for one schedule)
            args.sample_rate, args.num_steps = (np.atleast_1d(cast(ArrayLike, s.sample_rate)).tolist(),
                                                np.atleast_1d(cast(ArrayLike, s.num_steps)).tolist())
        args.schedule = {k: (np.asarray(v).tolist()) for k, v in dataclasses.asdict(s).items()}
        return
    if len(rate) == 1:
        other = _options_text(o for o in _RATE_OPTIONS if o not in rate)
        args.parser.error(f"--sample-rate and --num-steps go together: {other} is missing (or give --dataset-size, "
                          "--batch-size and --epochs)")
    if not rate and args.dpsgd_required:
        args.parser.error("the following arguments are required: --sample-rate and --num-steps, or --dataset-size, "
                          "--batch-size and --epochs")
    for t in np.atleast_1d(np.asarray(args.num_steps if rate else [], dtype=object)).tolist():
        if isinstance(t, float) and math.isfinite(t) and t != round(t):
            raise ValueError(f"num_steps (--num-steps) must be a whole number >= 1, got {t:g}; to train for a "
                             "number of epochs, give --dataset-size N --batch-size B --epochs E in place of "
                             "--sample-rate and --num-steps (E * ceil(N / B) steps)")
    if rate and args.dpsgd_several:
        combos = list(itertools.product(args.sample_rate, args.num_steps))
        args.sample_rate, args.num_steps = [c[0] for c in combos], [c[1] for c in combos]


def schedule_lines(r: dict) -> list[str]:
    """What a result computed from --dataset-size, --batch-size and --epochs says about the
    sample rate and steps they give (else nothing).

    Args:
        r: a subcommand's JSON-ready result, with the key ``schedule`` when the options were given.

    Returns:
        Lines of text: one for one configuration, a table for several.

    >>> schedule_lines({"schedule": {"sample_rate": 0.1, "num_steps": 20, "steps_per_epoch": 10,
    ...                              "dataset_size": 1000, "batch_size": 100, "epochs": 2}})
    ['from 2 epochs of batches of 100 out of 1,000 records: sample rate 0.1 (= 100 / 1,000), 20 steps (10 per epoch) (dpax.dpsgd_schedule)']
    """  # noqa: E501 (a doctest's expected output, kept verbatim on one line)
    s = r.get("schedule")
    if not s:
        return []
    if not isinstance(s["num_steps"], list):
        epochs = f"{s['epochs']:,} epoch{'' if s['epochs'] == 1 else 's'}"
        return [f"from {epochs} of batches of {s['batch_size']:,} out of {s['dataset_size']:,} records: "
                f"sample rate {fmt(s['sample_rate'])} (= {s['batch_size']:,} / {s['dataset_size']:,}), "
                f"{s['num_steps']:,} steps ({s['steps_per_epoch']:,} per epoch) (dpax.dpsgd_schedule)"]
    rows = [(f"{n:,}", f"{b:,}", f"{e:,}", fmt(p), f"{k:,}", f"{t:,}") for n, b, e, p, k, t in
            zip(s["dataset_size"], s["batch_size"], s["epochs"], s["sample_rate"], s["steps_per_epoch"],
                s["num_steps"])]
    return ["DP-SGD configurations from epochs (dpax.dpsgd_schedule):"] + table(
        ("dataset size", "batch size", "epochs", "sample rate", "steps per epoch", "steps"), rows)


def bracket_args(p: argparse.ArgumentParser, applies_to: str, *, no_bounds: bool = True,
                 also_prints: str = "") -> None:
    """The "certified brackets" argument group: --accuracy (refine the grid until the brackets
    of ``applies_to`` are that narrow; ``also_prints``: what the command then prints beside
    the grid chosen) and, if ``no_bounds``, --no-bounds (safe side only)."""
    g = p.add_argument_group("certified brackets")
    g.add_argument("--accuracy", type=positive, metavar="A", help=(
        "instead of --grid-step: refine the grid (from 1e-2; widths shrink about as the step squared) until "
        f"the certified bracket of {applies_to} is at most A wide (absolute, on each number: epsilon's, the "
        f"widest, usually decides); prints the grid chosen{also_prints}. A refinement stopped by the memory "
        "budget is an error that gives the width reached"))
    if no_bounds:
        g.add_argument("--no-bounds", dest="bounds", action="store_false", help=(
            "print each number on the safe side only, without its certified bracket (by default the "
            "optimistic side and the width are printed too: the truth lies in between)"))


def choose_grid(args: argparse.Namespace, build: Callable[[float], PrivacyLoss],
                evaluate: Callable[[PrivacyLoss], Interval]) -> tuple[PrivacyLoss, dict]:
    """The privacy loss at ``--grid-step``, or on the grid :func:`dpax.refine` chooses for
    ``--accuracy`` (``evaluate`` gives the brackets the accuracy applies to, as one Interval),
    and the JSON keys of that choice (``accuracy``, ``grid_steps_tried``: [step, widest
    bracket] of each grid tried). Giving both options is a usage error."""
    accuracy = getattr(args, "accuracy", None)
    if accuracy is None:
        return build(args.grid_step), {}
    if args.grid_step_given:
        args.parser.error("give either --grid-step or --accuracy, not both")
    try:
        r = refine(build, evaluate, accuracy)
    except ValueError as exc:
        raise ValueError(f"--accuracy: {exc}; ask for a larger --accuracy") from exc
    return r.privacy_loss, {"accuracy": float(accuracy), "grid_steps_tried": [[h, w] for h, w in r.history]}


def joint(brackets: Iterable[Interval]) -> Interval:
    """One Interval of every value of ``brackets`` (flattened): its widest width is theirs.

    >>> joint([Interval(0.5, 0.75), Interval([1.0, 2.0], [1.0, 1.5])]).width.tolist()
    [0.25, 0.0, 0.5]
    """
    flat = [(np.ravel(b.safe), np.ravel(b.optimistic)) for b in brackets]
    return Interval(np.concatenate([s for s, _ in flat]), np.concatenate([o for _, o in flat]))


def grid_lines(r: dict) -> list[str]:
    """What a result computed with ``--accuracy`` says about the grid chosen (else nothing)."""
    if "accuracy" not in r:
        return []
    tried = ", ".join(f"{fmt(h, 2)} -> {fmt(w, 2)}" for h, w in r["grid_steps_tried"])
    return [f"grid step {fmt(r['grid_step'])} chosen by --accuracy {fmt(r['accuracy'])} "
            f"(widest bracket at each grid tried: {tried})"]


def bracket_note(r: dict) -> list[str]:
    """The line that says how to read the brackets, when ``r`` has them."""
    if not r.get("bounds"):
        return []
    return ["Each number is on the safe side; the truth lies between it and the optimistic value beside it",
            "(certified bracket; width = |safe - optimistic|, what the grid step costs)."]


# -- risk summary --------------------------------------------------------------------------


def risk_brackets(pl: PrivacyLoss, alpha: ArrayLike, delta: ArrayLike) -> dict[str, Interval]:
    """The certified brackets of beta at each ``alpha``, the advantage and epsilon at each ``delta``.

    >>> import dpax
    >>> b = risk_brackets(dpax.gaussian(1.0, grid_step=1e-2), [0.1], [1e-5])
    >>> sorted(b), bool(b["beta"].safe[0] <= b["beta"].optimistic[0])
    (['advantage', 'beta', 'epsilon'], True)
    """
    beta = pl.beta(np.atleast_1d(np.asarray(alpha, dtype=float)), bounds=True)
    advantage = pl.advantage(bounds=True)
    epsilon = pl.epsilon(np.atleast_1d(np.asarray(delta, dtype=float)), bounds=True)
    assert isinstance(beta, Interval) and isinstance(advantage, Interval) and isinstance(epsilon, Interval)  # bounds
    return {"beta": beta, "advantage": advantage, "epsilon": epsilon}




def risk_summary(pl: PrivacyLoss, alpha: ArrayLike, delta: ArrayLike, bounds: bool = False) -> dict:
    """JSON-ready risk of ``pl``: beta and TPR at each FPR ``alpha``, the advantage, epsilon at
    each ``delta``, with the grid step, support length and tail mass.

    Args:
        pl: one (not a batch of) privacy loss.
        alpha: FPRs at which to report the FNR beta of the best attack.
        delta: deltas at which to report epsilon.
        bounds: also give each number's certified bracket: the keys ``bounds`` (True),
            ``beta_optimistic``, ``tpr_optimistic``, ``advantage_optimistic``,
            ``epsilon_optimistic`` (the other side of each number, from
            :meth:`PrivacyLoss.bounds`) and ``max_width`` (the widest bracket).

    Returns:
        dict with keys grid_step, alpha, beta, tpr, advantage, delta, epsilon, support_length,
        tail_mass (plain floats, ints and lists), and with ``bounds`` those above.

    >>> import dpax
    >>> r = risk_summary(dpax.gaussian(1.0, grid_step=1e-2), [0.1], [1e-5])
    >>> sorted(r) == sorted(["grid_step", "alpha", "beta", "tpr", "advantage", "delta", "epsilon",
    ...                      "support_length", "tail_mass"])
    True
    """
    alpha = np.asarray(alpha, dtype=float)
    delta = np.asarray(delta, dtype=float)
    if bounds:
        b = risk_brackets(pl, alpha, delta)
        beta, advantage, epsilon = b["beta"].safe, b["advantage"].safe, b["epsilon"].safe
    else:
        beta, advantage, epsilon = pl.beta(alpha), pl.advantage(), pl.epsilon(delta)
    beta = np.atleast_1d(beta)
    out = {
        "grid_step": float(pl.grid_step),
        "alpha": alpha.tolist(),
        "beta": beta.tolist(),
        "tpr": (1.0 - beta).tolist(),
        "advantage": float(advantage),
        "delta": delta.tolist(),
        "epsilon": np.atleast_1d(epsilon).tolist(),
        "support_length": int(pl.support_length),
        "tail_mass": float(pl.tail_mass),
    }
    if bounds:
        beta_o = np.atleast_1d(b["beta"].optimistic)
        out.update(bounds=True, beta_optimistic=beta_o.tolist(), tpr_optimistic=(1.0 - beta_o).tolist(),
                   advantage_optimistic=float(b["advantage"].optimistic),
                   epsilon_optimistic=np.atleast_1d(b["epsilon"].optimistic).tolist(),
                   max_width=max_width(b.values()))
    return out


def max_width(brackets) -> float:
    """The widest of ``brackets`` (Intervals; NaN widths, both ends infinite, left out; 0 if none)."""
    w = np.atleast_1d(np.asarray(joint(list(brackets)).width, dtype=float))
    w = w[~np.isnan(w)]
    return float(w.max()) if w.size else 0.0


def _width(safe: float, optimistic: float) -> str:
    return fmt(abs(safe - optimistic), 2)  # inf - inf: NaN, shown as '-'


def attack_lines(r: dict) -> list[str]:
    """Table of the best attack (FPR alpha, FNR beta, TPR) of a :func:`risk_summary`, with the
    optimistic beta and the bracket's width when ``r`` has them; probabilities near 1 as
    "1 - q" (:func:`probability`)."""
    rows: list[tuple[str, ...]] = [(fmt(a), probability(b), probability(t, complement=b))
            for a, b, t in zip(r["alpha"], r["beta"], r["tpr"])]
    if "beta_optimistic" not in r:
        return table(("FPR alpha", "FNR beta", "TPR 1-beta"), rows)
    rows = [row + (probability(o), _width(b, o)) for row, b, o in zip(rows, r["beta"], r["beta_optimistic"])]
    return table(("FPR alpha", "FNR beta", "TPR 1-beta", "optimistic beta", "width"), rows)


def epsilon_lines(deltas: Sequence[float], epsilons: Sequence[float],
                  optimistic: Sequence[float] | None = None) -> list[str]:
    """Table of epsilon at each delta (with the optimistic epsilon and the bracket's width if given)."""
    if optimistic is None:
        return table(("delta", "epsilon"), [(fmt(d), fmt(e)) for d, e in zip(deltas, epsilons)])
    rows = [(fmt(d), fmt(e), fmt(o), _width(e, o)) for d, e, o in zip(deltas, epsilons, optimistic)]
    return table(("delta", "epsilon", "optimistic epsilon", "width"), rows)


def bracket_text(safe: float, r: dict, key: str) -> str:
    """``safe`` formatted, followed by ``(optimistic X, width W)`` when ``r`` has ``key``."""
    if key not in r:
        return fmt(safe)
    return f"{fmt(safe)}  (optimistic {fmt(r[key])}, width {_width(safe, r[key])})"


# -- kernel cache --------------------------------------------------------------------------


@contextlib.contextmanager
def compilation_cache(enabled: bool = True) -> Iterator[str | None]:
    """Run the body with dpax's store of compiled kernels (:mod:`dpax._engine.cache`) as the
    library has it (on by default, in ``$DPAX_CACHE_DIR`` or ``~/.cache/dpax``), or off
    (``--no-cache``: nothing read from or written to disk, restored afterwards). No JAX
    setting is touched. Yields the directory in use, or None.
    """
    if enabled:
        yield engine_cache.directory()
        return
    with engine_cache.suspended():
        yield None
