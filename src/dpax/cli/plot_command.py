"""``dpax plot``: trade-off curves, the GDP fit, standard vs attack-aware calibration, saved
as PNG / SVG / PDF (by the extension of ``-o``) with matplotlib's Agg backend (:mod:`dpax.plot`).

    dpax plot tradeoff --noise-multiplier 0.8 1.2 --sample-rate 0.01 --num-steps 1000 -o curves.png
    dpax plot calibration --dataset-size 60000 --batch-size 256 512 --epochs 10 30 --advantage 0.1 -o grid.png
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from .. import plot
from ..mechanisms import dpsgd
from ..result_table import records_text
from .configuration import DPSGD_GROUP, configuration_args
from .parsing import Parents, Subparsers, bounded, number, options_named, options_parser

FORMATS = (".png", ".svg", ".pdf")
#: Allowed --dpi: a PNG of the default 6.4 x 4.8 inches stays under 8,000 x 6,000 pixels.
DPI_RANGE = (10.0, 1200.0)
#: --dpi unless given (PNG only: SVG and PDF are vector figures).
DEFAULT_DPI = 150
#: delta of the standard calibration ``plot calibration`` compares with, unless --delta is given.
DEFAULT_DELTA = 1e-5


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    """Register ``plot`` (its ``func`` and ``render``) with ``subparsers``.

    Args:
        subparsers: the subcommands of the ``dpax`` parser.
        parents: the shared options' parent parsers.

    Returns:
        None; ``subparsers`` has the ``plot`` parser.
    """
    p = subparsers.add_parser(
        "plot",
        parents=[_options(), parents.common],
        help="plot trade-off curves, the GDP fit, or standard vs attack-aware calibration of DP-SGD",
        description=(
            "KIND: 'tradeoff' (beta against alpha for each --noise-multiplier), 'gdp' (the exact curve and "
            "its tight mu-GDP fit, one --noise-multiplier), 'calibration' (noise from attack-aware vs standard "
            "calibration: --target advantage as in Figure 3a of Kulynych et al. 2024, --target err_rates as in its "
            "Figure 4; with several values of --sample-rate / --num-steps, or of --dataset-size / --batch-size / "
            "--epochs, every combination is a configuration, and the figure shows the noise and the noise "
            "reduction of each). The figure is written to -o FILE (.png, .svg or .pdf)."
        ),
    )
    p.set_defaults(func=run_plot, render=render_plot)


def _options() -> argparse.ArgumentParser:
    """The options only ``plot`` takes (a parent parser, listed before the shared ones)."""
    p = options_parser()
    p.add_argument("kind", choices=("tradeoff", "gdp", "calibration"), metavar="KIND",
                   help="tradeoff | gdp | calibration")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="figure file: .png, .svg or .pdf")
    g = p.add_argument_group("DP-SGD", DPSGD_GROUP + "; several values (every combination) only for KIND calibration")
    g.add_argument("--noise-multiplier", type=number, nargs="+", metavar="S",
                   help="noise multiplier(s) (tradeoff: one curve each; gdp: one)")
    configuration_args(p, g, several=True)
    p.add_argument("--log", action="store_true", help="logarithmic FPR axis (tradeoff, gdp)")
    p.add_argument("--target", choices=("advantage", "err_rates"),
                   help="calibration: advantage (Figure 3a) or err_rates (Figure 4) (default: advantage)")
    p.add_argument("--advantage", type=number, nargs="+", metavar="E",
                   help=f"calibration targets, each in (0, 1) (advantage; default: {_fmt(plot.DEFAULT_ADVANTAGES)})")
    p.add_argument("--alpha", type=number, nargs="+", metavar="A",
                   help=f"calibration FPRs (err_rates; default: {_fmt(plot.DEFAULT_ALPHAS)})")
    p.add_argument("--tpr", type=number, nargs="+", metavar="X",
                   help="calibration target TPRs, each above every FPR "
                        f"(err_rates; default: {_fmt(plot.DEFAULT_TPRS)})")
    p.add_argument("--delta", type=number, metavar="D",
                   help=f"calibration: delta of the standard calibration (default: {DEFAULT_DELTA:g})")
    p.add_argument("--dpi", type=bounded(*DPI_RANGE),
                   help=f"resolution of a PNG, in [{DPI_RANGE[0]:g}, {DPI_RANGE[1]:g}] (default: {DEFAULT_DPI})")
    return p


#: calibration_comparison's arguments (and dpsgd's) as this command's options.
_OPTIONS = {"advantages": "--advantage", "alphas": "--alpha", "tprs": "--tpr", "delta": "--delta",
            "noise_multiplier": "--noise-multiplier", "sample_rate": "--sample-rate", "num_steps": "--num-steps",
            "grid_step": "--grid-step"}
#: The options each KIND reads (beside -o, --dpi, the configuration and the shared ones); any
#: other given is refused by :func:`_check_options`, never ignored.
KIND_OPTIONS = {
    "tradeoff": ("noise_multiplier", "log"),
    "gdp": ("noise_multiplier", "log"),
    "calibration": ("target", "advantage", "alpha", "tpr", "delta"),
}
#: The options of ``--target advantage`` and of ``--target err_rates``.
TARGET_OPTIONS = {"advantage": ("advantage",), "err_rates": ("alpha", "tpr")}


def _check_options(args: argparse.Namespace) -> None:
    """Refuse an option KIND (or calibration's --target) does not read, naming it: a value
    that changes nothing would be a silent accept."""
    used = KIND_OPTIONS[args.kind]
    for name in sorted({n for names in KIND_OPTIONS.values() for n in names}):
        given = getattr(args, name, None) not in (None, False)
        flag = "--" + name.replace("_", "-")
        if given and name not in used:
            users = " and ".join(k for k, names in KIND_OPTIONS.items() if name in names)
            raise ValueError(f"{flag} is not used by plot {args.kind} (only by plot {users})")
    if args.kind == "calibration":
        target = getattr(args, "target", None) or "advantage"
        for other, names in TARGET_OPTIONS.items():
            for name in names:
                if other != target and getattr(args, name, None) is not None:
                    raise ValueError(f"--{name} is not used with --target {target} (only with --target {other})")


def _fmt(values: Iterable[float]) -> str:
    """Numbers of a help text or title: ``0.01 0.05 0.1``."""
    return " ".join(f"{v:g}" for v in values)


def _figure(args: argparse.Namespace) -> Any:  # a Figure, with dpax_result for calibration
    """The matplotlib figure the arguments ask for (one configuration, or for ``calibration``
    several: the lists ``args.sample_rate`` and ``args.num_steps``, pairwise)."""
    _check_options(args)
    rates, steps = np.atleast_1d(args.sample_rate).tolist(), np.atleast_1d(args.num_steps).tolist()
    if args.kind == "calibration":
        one = len(rates) == 1
        return plot.calibration_comparison(rates[0] if one else rates, steps[0] if one else steps,
                                           target=args.target or "advantage", advantages=args.advantage,
                                           alphas=args.alpha, tprs=args.tpr,
                                           delta=DEFAULT_DELTA if args.delta is None else args.delta,
                                           grid_step=args.grid_step)
    if len(rates) != 1:
        raise ValueError(f"plot {args.kind} takes one configuration (one --sample-rate and one --num-steps, or one "
                         f"value of each of --dataset-size, --batch-size, --epochs); got {len(rates)}: several only "
                         "with KIND calibration")
    sample_rate, num_steps = rates[0], steps[0]
    if not args.noise_multiplier:
        raise ValueError(f"plot {args.kind} needs --noise-multiplier")
    if args.kind == "gdp" and len(args.noise_multiplier) != 1:
        raise ValueError("plot gdp takes one --noise-multiplier")
    setting = f"sample rate {sample_rate:g}, {num_steps:,} steps"
    if args.kind == "gdp":
        (s,) = args.noise_multiplier
        pl = dpsgd(s, sample_rate, num_steps, grid_step=args.grid_step)
        return plot.gdp_fit(pl, log_scale=args.log, title=f"GDP fit of DP-SGD: noise multiplier {s:g}, {setting}")
    pl = dpsgd(args.noise_multiplier, sample_rate, num_steps, grid_step=args.grid_step)
    labels = [f"noise multiplier {s:g}" for s in args.noise_multiplier]
    return plot.tradeoff_curves(pl, labels, log_scale=args.log, title=f"DP-SGD, {setting}")


def run_plot(args: argparse.Namespace) -> dict:
    """Write the figure to ``--output``; returns what was written.

    Args:
        args: the parsed arguments of ``dpax plot``.

    Returns:
        JSON-ready: ``command``, ``kind``, ``output`` (the absolute path), ``format``,
        ``lines`` (of the first axes) and, for ``calibration``, ``results`` (a record per
        configuration and target).

    Raises:
        ValueError: ``--output`` without a known extension, in no existing directory or not
            writable; a configuration or an option the kind does not take; the values dpax
            refuses.
    """
    import matplotlib  # optional dependency, imported on use

    matplotlib.use("Agg")
    ext = os.path.splitext(args.output)[1].lower()
    if ext not in FORMATS:
        raise ValueError(f"--output must end in {', '.join(FORMATS)}, got {args.output!r}")
    if args.dpi is not None and ext != ".png":  # it would change nothing
        raise ValueError(f"--dpi sets a PNG's resolution; {ext[1:].upper()} is a vector format "
                         f"(--output {args.output!r})")
    folder = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(folder):  # before computing anything
        raise ValueError(f"--output {args.output!r}: no such directory {folder!r}")
    with options_named(_OPTIONS):
        fig = _figure(args)
    try:
        fig.savefig(args.output, dpi=DEFAULT_DPI if args.dpi is None else args.dpi)
    except OSError as exc:
        raise ValueError(f"--output {args.output!r}: cannot write the figure: {exc.strerror or exc}") from None
    out = {"command": "plot", "kind": args.kind, "output": os.path.abspath(args.output), "format": ext[1:],
           "lines": len(fig.axes[0].get_lines())}
    if args.kind == "calibration":  # the numbers behind the figure, one record per configuration and target
        out["results"] = fig.dpax_result.to_records()
    return out


def render_plot(r: dict) -> str:
    """The human-readable form of :func:`run_plot`'s result.

    Args:
        r: :func:`run_plot`'s result.

    Returns:
        The text: the file written and, for ``calibration``, the table of results.
    """
    lines = [f"wrote {r['kind']} plot ({r['lines']} lines) to {r['output']}"]
    if r.get("results"):
        lines += ["", records_text(r["results"])]
    return "\n".join(lines)
