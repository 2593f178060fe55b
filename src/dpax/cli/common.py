"""What the ``dpax`` subcommands share: argument types, the parent parsers of the shared
options, the kernel cache switch, and the risk summary of a privacy loss.

Every subcommand module (:mod:`dpax.cli.main` lists them) builds its parser with
``parents=[its own options (an :func:`options_parser`), the shared ones from :class:`Parents`]``,
so an option that several subcommands take is defined once, here.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
from typing import Iterator, Sequence

import numpy as np

from .._engine import cache as engine_cache
from .._engine.text import fmt, table
from ..privacy_loss import PrivacyLoss

PROG = "dpax"

DEFAULT_ALPHAS = (0.001, 0.01, 0.05, 0.1)
DEFAULT_DELTAS = (1e-5,)
DEFAULT_GRID_STEP = 1e-4

# -- argument types ------------------------------------------------------------------------


def number(text: str) -> float:
    """A real number; range checks are left to dpax, whose messages name the argument.

    >>> number("1e-3")
    0.001
    """
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def count(text: str) -> int | float:
    """An integer, also written as '1e4'; a fractional value is passed on for dpax to reject.

    >>> count("1e4"), count("2.5")
    (10000, 2.5)
    """
    try:
        return int(text)
    except ValueError:
        value = number(text)
        return int(value) if math.isfinite(value) and value == int(value) else value


# -- shared options ------------------------------------------------------------------------


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
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--grid-step", type=number, default=DEFAULT_GRID_STEP, metavar="H",
                        help="privacy-loss discretisation interval (default: %(default)s)")
    common.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    common.add_argument("--no-cache", dest="cache", action="store_false",
                        help="neither read nor write dpax's kernel cache ($DPAX_CACHE_DIR or ~/.cache/dpax)")
    report = argparse.ArgumentParser(add_help=False)
    report.add_argument("--alpha", type=number, nargs="+", default=list(DEFAULT_ALPHAS), metavar="A",
                        help="FPRs at which to report beta (default: %(default)s)")
    report.add_argument("--delta", type=number, nargs="+", default=list(DEFAULT_DELTAS), metavar="D",
                        help="deltas at which to report epsilon (default: %(default)s)")
    return Parents(common=common, report=report)


def options_parser() -> argparse.ArgumentParser:
    """An empty parent parser for a subcommand's own options.

    A subcommand lists it first in ``parents=[...]``, before the shared parents, so that its
    usage line and ``--help`` show its own options before the shared ones.

    >>> options_parser().add_help
    False
    """
    return argparse.ArgumentParser(add_help=False)


def dpsgd_args(p: argparse.ArgumentParser, *, noise: bool = True, required: bool = True) -> None:
    """The "DP-SGD" argument group: --noise-multiplier (if ``noise``), --sample-rate, --num-steps."""
    g = p.add_argument_group("DP-SGD")
    if noise:
        g.add_argument("--noise-multiplier", type=number, required=required, metavar="S",
                       help="noise standard deviation / clipping norm")
    g.add_argument("--sample-rate", type=number, required=required, metavar="P",
                   help="Poisson sampling rate, in (0, 1]")
    g.add_argument("--num-steps", type=count, required=required, metavar="T", help="number of steps (integer >= 1)")


# -- risk summary --------------------------------------------------------------------------


def risk_summary(pl: PrivacyLoss, alpha: Sequence[float], delta: Sequence[float]) -> dict:
    """JSON-ready risk of ``pl``: beta and TPR at each FPR ``alpha``, the advantage, epsilon at
    each ``delta``, with the grid step, support length and tail mass.

    Args:
        pl: one (not a batch of) privacy loss.
        alpha: FPRs at which to report the FNR beta of the best attack.
        delta: deltas at which to report epsilon.

    Returns:
        dict with keys grid_step, alpha, beta, tpr, advantage, delta, epsilon, support_length,
        tail_mass (plain floats, ints and lists).

    >>> import dpax
    >>> r = risk_summary(dpax.gaussian(2.0, grid_step=1e-2), [0.1], [1e-5])
    >>> sorted(r) == sorted(["grid_step", "alpha", "beta", "tpr", "advantage", "delta", "epsilon",
    ...                      "support_length", "tail_mass"])
    True
    """
    alpha = np.asarray(alpha, dtype=float)
    delta = np.asarray(delta, dtype=float)
    beta = np.atleast_1d(pl.beta(alpha))
    return {
        "grid_step": float(pl.grid_step),
        "alpha": alpha.tolist(),
        "beta": beta.tolist(),
        "tpr": (1.0 - beta).tolist(),
        "advantage": float(pl.advantage()),
        "delta": delta.tolist(),
        "epsilon": np.atleast_1d(pl.epsilon(delta)).tolist(),
        "support_length": int(pl.support_length),
        "tail_mass": float(pl.tail_mass),
    }


def attack_lines(r: dict) -> list[str]:
    """Table of the best attack (FPR alpha, FNR beta, TPR) of a :func:`risk_summary`."""
    rows = [(fmt(a), fmt(b), fmt(t)) for a, b, t in zip(r["alpha"], r["beta"], r["tpr"])]
    return table(("FPR alpha", "FNR beta", "TPR 1-beta"), rows)


def epsilon_lines(deltas: Sequence[float], epsilons: Sequence[float]) -> list[str]:
    """Table of epsilon at each delta."""
    return table(("delta", "epsilon"), [(fmt(d), fmt(e)) for d, e in zip(deltas, epsilons)])


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
