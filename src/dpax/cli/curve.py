"""``dpax curve``: trade-off curve, advantage and epsilon of DP-SGD.

    dpax curve --noise-multiplier 1 --sample-rate 0.001 --num-steps 10000
"""

from __future__ import annotations

import argparse

from .._engine.text import fmt
from ..mechanisms import dpsgd
from .common import Parents, attack_lines, dpsgd_args, epsilon_lines, options_parser, risk_summary


def add_parser(subparsers, parents: Parents) -> None:
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
            "the truth."
        ),
    )
    p.set_defaults(func=run_curve, render=render_curve)


def _options() -> argparse.ArgumentParser:
    """The options only ``curve`` takes (a parent parser, listed before the shared ones)."""
    p = options_parser()
    dpsgd_args(p)
    return p


def run_curve(args: argparse.Namespace) -> dict:
    """JSON-ready risk of the DP-SGD configuration in ``args``."""
    pl = dpsgd(args.noise_multiplier, args.sample_rate, args.num_steps, grid_step=args.grid_step)
    return {
        "command": "curve",
        "mechanism": "dpsgd",
        "noise_multiplier": float(args.noise_multiplier),
        "sample_rate": float(args.sample_rate),
        "num_steps": int(args.num_steps),
        **risk_summary(pl, args.alpha, args.delta),
    }


def render_curve(r: dict) -> str:
    """The human-readable form of :func:`run_curve`'s result."""
    lines = [
        f"DP-SGD: noise multiplier {fmt(r['noise_multiplier'])}, sample rate {fmt(r['sample_rate'])}, "
        f"{r['num_steps']} steps (grid step {fmt(r['grid_step'])}, symmetrised add/remove curve)",
        "",
        "Best membership-inference attack:",
    ]
    lines += attack_lines(r)
    lines += ["", f"  advantage (max TPR - FPR)  {fmt(r['advantage'])}", ""]
    lines += epsilon_lines(r["delta"], r["epsilon"])
    return "\n".join(lines)
