"""``dpax curve``: trade-off curve, advantage and epsilon of DP-SGD.

    dpax curve --noise-multiplier 1 --sample-rate 0.001 --num-steps 10000
    dpax curve ... --accuracy 1e-3      # the grid chosen so that every bracket is <= 1e-3 wide
    dpax curve ... --no-bounds          # safe side only

Each number is printed with its certified bracket: the same quantity from the
optimistic companion (:meth:`dpax.PrivacyLoss.bounds`), on the other side of the truth.
"""

from __future__ import annotations

import argparse

from .._text import fmt
from ..mechanisms import dpsgd
from .brackets import (
    attack_lines,
    bracket_args,
    bracket_note,
    bracket_text,
    choose_grid,
    epsilon_lines,
    grid_lines,
    joint,
    risk_brackets,
    risk_summary,
)
from .configuration import dpsgd_args
from .parsing import Parents, Subparsers, options_parser


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    """Register ``curve`` (its ``func`` and ``render``) with ``subparsers``."""
    p = subparsers.add_parser(
        "curve",
        parents=[_options(), parents.report, parents.common],
        help="trade-off curve, advantage and epsilon of DP-SGD",
        description=(
            "Risk of DP-SGD (Poisson-subsampled Gaussian, add/remove neighbours, symmetrised): "
            "the FNR beta of the best membership-inference attack at each FPR alpha (and its "
            "TPR = 1 - beta), the largest advantage TPR - FPR, and epsilon at each delta. Every "
            "number is on the safe side: beta never above, advantage and epsilon never below "
            "the truth; beside it, the optimistic side of its certified bracket (the truth lies in "
            "between) and the bracket's width."
        ),
    )
    p.set_defaults(func=run_curve, render=render_curve)


def _options() -> argparse.ArgumentParser:
    """The options only ``curve`` takes (a parent parser, listed before the shared ones)."""
    p = options_parser()
    dpsgd_args(p)
    bracket_args(p, "every number reported (beta and TPR at each --alpha, the advantage, epsilon at each --delta)")
    return p


def run_curve(args: argparse.Namespace) -> dict:
    """JSON-ready risk of the DP-SGD configuration in ``args``."""
    pl, grid = choose_grid(args, lambda h: dpsgd(args.noise_multiplier, args.sample_rate, args.num_steps, grid_step=h),
                           lambda pl: joint(risk_brackets(pl, args.alpha, args.delta).values()))
    return {
        "command": "curve",
        "mechanism": "dpsgd",
        "noise_multiplier": float(args.noise_multiplier),
        "sample_rate": float(args.sample_rate),
        "num_steps": int(args.num_steps),
        **risk_summary(pl, args.alpha, args.delta, bounds=args.bounds),
        **grid,
    }


def render_curve(r: dict) -> str:
    """The human-readable form of :func:`run_curve`'s result."""
    lines = [
        f"DP-SGD: noise multiplier {fmt(r['noise_multiplier'])}, sample rate {fmt(r['sample_rate'])}, "
        f"{r['num_steps']} steps (grid step {fmt(r['grid_step'])}, symmetrised add/remove curve)",
        *grid_lines(r),
        *bracket_note(r),
        "",
        "Best membership-inference attack:",
    ]
    lines += attack_lines(r)
    lines += ["", f"  advantage (max TPR - FPR)  {bracket_text(r['advantage'], r, 'advantage_optimistic')}", ""]
    lines += epsilon_lines(r["delta"], r["epsilon"], r.get("epsilon_optimistic"))
    return "\n".join(lines)
