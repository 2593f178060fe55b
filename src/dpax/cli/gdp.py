"""``dpax gdp``: Gaussian-DP report of DP-SGD, or the mu of an (epsilon, delta) guarantee.

    dpax gdp --noise-multiplier 9.4 --sample-rate 0.32768 --num-steps 2000
    dpax gdp --epsilon 8 --delta 1e-5 1e-6 1e-9       # Table 3 conversion
    dpax gdp ... --json
"""

from __future__ import annotations

import argparse

import numpy as np

from .. import conversions, gdp
from .._engine.text import fmt, pairs, table
from ..mechanisms import dpsgd
from .common import Parents, dpsgd_args, epsilon_lines, number, options_parser


def add_parser(subparsers, parents: Parents) -> None:
    """Register ``gdp`` (its ``func`` and ``render``) with ``subparsers``."""
    p = subparsers.add_parser(
        "gdp",
        parents=[_options(), parents.common],
        help="Gaussian-DP report (mu, regret, Tier II curve) of DP-SGD, or mu of (epsilon, delta)",
        description=(
            "With --noise-multiplier/--sample-rate/--num-steps: the two-tier report of Gomez et al. "
            "for DP-SGD (symmetrised add/remove curve): Tier I the tightest mu-GDP guarantee and its "
            "regret Delta (mu alone is faithful when Delta < 0.01), Tier II the FNR of the best "
            "attack at fixed FPRs, and epsilon at the given deltas. With --epsilon only: the mu of "
            "the Gaussian mechanism that is exactly (epsilon, delta)-DP at each --delta (Table 3) "
            "and the mu every epsilon-DP mechanism satisfies (Proposition 6.1)."
        ),
    )
    p.set_defaults(func=run_gdp, render=render_gdp)


def _options() -> argparse.ArgumentParser:
    """The options only ``gdp`` takes (a parent parser, listed before the shared ones)."""
    p = options_parser()
    dpsgd_args(p, required=False)
    p.add_argument("--epsilon", type=number, metavar="E", help="convert an (epsilon, delta) guarantee to mu instead")
    p.add_argument("--delta", type=number, nargs="+", default=[1e-5, 1e-6, 1e-9], metavar="D",
                   help="deltas for epsilon (report) or for the conversion (default: %(default)s)")
    p.add_argument("--tail", type=number, default=1e-10, metavar="A",
                   help="mu covers every attack with FPR and FNR in [A, 1 - A] (default: %(default)s)")
    return p


def run_gdp(args: argparse.Namespace) -> dict:
    """JSON-ready GDP report of DP-SGD, or the (epsilon, delta) -> mu conversion."""
    mech = [args.noise_multiplier, args.sample_rate, args.num_steps]
    if args.epsilon is not None:
        if any(v is not None for v in mech):
            args.parser.error("give either --epsilon (conversion) or the DP-SGD arguments, not both")
        delta = np.asarray(args.delta, dtype=float)
        return {
            "command": "gdp",
            "mode": "conversion",
            "epsilon": float(args.epsilon),
            "delta": delta.tolist(),
            "mu_gaussian": np.atleast_1d(conversions.mu_from_epsilon_delta(args.epsilon, delta)).tolist(),
            "mu_pure_dp": float(conversions.mu_from_epsilon_dp(args.epsilon)),
        }
    if any(v is None for v in mech):
        args.parser.error("give --noise-multiplier, --sample-rate and --num-steps (or --epsilon with --delta)")
    pl = dpsgd(args.noise_multiplier, args.sample_rate, args.num_steps, grid_step=args.grid_step)
    r = gdp.report(pl, deltas=args.delta, tail=args.tail)
    out = {"command": "gdp", "mode": "dpsgd", "noise_multiplier": float(args.noise_multiplier),
           "sample_rate": float(args.sample_rate), "num_steps": int(args.num_steps)}
    out.update(r.to_dict())
    return out


def render_gdp(r: dict) -> str:
    """The human-readable form of :func:`run_gdp`'s result."""
    if r["mode"] == "conversion":
        lines = [f"(epsilon = {fmt(r['epsilon'])}, delta)-DP as Gaussian DP", ""]
        lines += table(("delta", "mu of the Gaussian mechanism"),
                       [(fmt(d), fmt(m, 4)) for d, m in zip(r["delta"], r["mu_gaussian"])])
        lines += ["", f"  any {fmt(r['epsilon'])}-DP mechanism is {fmt(r['mu_pure_dp'], 4)}-GDP (Proposition 6.1)"]
        return "\n".join(lines)
    ok = r["gdp_ok"]
    lines = [
        f"DP-SGD: noise multiplier {fmt(r['noise_multiplier'])}, sample rate {fmt(r['sample_rate'])}, "
        f"{r['num_steps']} steps (grid step {fmt(r['grid_step'])}, symmetrised add/remove curve)",
        "",
        "Tier I: Gaussian DP",
    ]
    lines += pairs([
        ("mu", f"{fmt(r['mu'])}  (every attack with FPR, FNR in [{fmt(r['tail'])}, 1 - {fmt(r['tail'])}])"),
        ("regret Delta", f"{fmt(r['regret'], 3)}  (at FPR {fmt(r['regret_alpha'], 3)})"),
        ("mu-GDP faithful", "yes (regret < 0.01)" if ok else "no (regret >= 0.01): report the curve below"),
        ("advantage", fmt(r["advantage"])),
    ])
    lines += ["", "Tier II: best membership-inference attack"]
    n = len(r["alpha"])
    rows = [(fmt(a, 4) + (" (alpha*)" if i == n - 1 else ""), fmt(b), fmt(1 - b))
            for i, (a, b) in enumerate(zip(r["alpha"], r["beta"]))]
    lines += table(("FPR alpha", "FNR beta", "TPR"), rows)
    lines += [""]
    lines += epsilon_lines(r["deltas"], r["epsilon"])
    return "\n".join(lines)
