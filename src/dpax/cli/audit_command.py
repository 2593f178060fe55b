"""``dpax audit``: confidence bounds from membership-inference attack counts, and whether they
contradict a privacy claim (:func:`dpax.audit.audit`).

    dpax audit --false-positives 174 --negatives 100000 --false-negatives 95078 \\
               --positives 100000 --confidence 0.9999999999 --claim-epsilon 0.21 --claim-delta 1e-5
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from .._engine.validation import shown
from .._text import fmt, pairs, table
from ..audit import audit as audit_counts
from ..mechanisms import dpsgd
from ..privacy_loss import PrivacyLoss
from .parsing import Parents, Subparsers, count, number, options_parser


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    """Register ``audit`` (its ``func`` and ``render``) with ``subparsers``.

    Args:
        subparsers: the subcommands of the ``dpax`` parser.
        parents: the shared options' parent parsers.

    Returns:
        None; ``subparsers`` has the ``audit`` parser.
    """
    p = subparsers.add_parser(
        "audit",
        parents=[_options(), parents.common],
        help="confidence bounds from membership-inference attack counts; check a privacy claim",
        description=(
            "From an attack's false positives out of NEGATIVES trials (target absent) and false "
            "negatives out of POSITIVES trials (target present): Clopper-Pearson upper limits on "
            "its FPR and FNR (jointly at --confidence, each one-sided at 1 - (1 - confidence)/2), "
            "the epsilon (at --delta) and Gaussian-DP mu they prove, and whether a claimed "
            "guarantee is contradicted."
        ),
    )
    p.set_defaults(func=run_audit, render=render_audit)


def _options() -> argparse.ArgumentParser:
    """The options only ``audit`` takes (a parent parser, listed before the shared ones)."""
    p = options_parser()
    g = p.add_argument_group("attack outcomes")
    g.add_argument("--false-positives", type=count, required=True, metavar="FP",
                   help="trials without the target that the attack flagged (at most --negatives)")
    g.add_argument("--negatives", type=count, required=True, metavar="N", help="trials without the target")
    g.add_argument("--false-negatives", type=count, required=True, metavar="FN",
                   help="trials with the target that the attack missed (at most --positives)")
    g.add_argument("--positives", type=count, required=True, metavar="M", help="trials with the target")
    p.add_argument("--confidence", type=number, default=0.95, metavar="C",
                   help="joint confidence level, in (0, 1) (default: %(default)s)")
    p.add_argument("--delta", type=number, default=None, metavar="D",
                   help="delta of the epsilon lower bound (default: --claim-delta, else 0)")
    c = p.add_argument_group("claim (at most one)")
    c.add_argument("--claim-epsilon", type=number, metavar="E", help="claimed (E, --claim-delta)-DP")
    c.add_argument("--claim-delta", type=number, metavar="D",
                   help="delta of the --claim-epsilon claim, in [0, 1] (default: 0)")
    c.add_argument("--claim-mu", type=number, metavar="MU", help="claimed mu-GDP")
    c.add_argument("--claim-dpsgd", type=number, nargs=3, metavar=("SIGMA", "RATE", "STEPS"),
                   help="claimed DP-SGD (noise multiplier, sample rate, steps), accounted by dpax at --grid-step")
    return p


def _claim(args: argparse.Namespace) -> tuple[PrivacyLoss | None, Any]:  # the claim's JSON: a dict, or None
    """The claimed DP-SGD privacy loss (or None) and the claim's JSON form (or None)."""
    if args.claim_dpsgd is None and getattr(args, "grid_step_given", False):  # it would change nothing
        raise ValueError("--grid-step applies only to --claim-dpsgd (the DP-SGD claim dpax accounts for)")
    if args.claim_dpsgd is not None:
        s, q, t = args.claim_dpsgd
        if not math.isfinite(t) or t != int(t) or t < 1:
            raise ValueError(f"--claim-dpsgd STEPS must be a whole number >= 1, got {shown(t)}")
        try:
            pl = dpsgd(s, q, int(t), grid_step=args.grid_step)
        except (ValueError, TypeError) as exc:  # name the option the numbers came from
            raise type(exc)(f"--claim-dpsgd SIGMA RATE STEPS: {exc}") from None
        return pl, {
            "type": "dpsgd", "noise_multiplier": s, "sample_rate": q, "num_steps": int(t), "grid_step": args.grid_step}
    if args.claim_mu is not None:
        return None, {"type": "gdp", "mu": args.claim_mu}
    if args.claim_epsilon is not None or args.claim_delta is not None:
        delta = 0.0 if args.claim_delta is None and args.claim_epsilon is not None else args.claim_delta
        return None, {"type": "epsilon_delta", "epsilon": args.claim_epsilon, "delta": delta}
    return None, None


def run_audit(args: argparse.Namespace) -> dict:
    """JSON-ready audit of the attack counts in ``args``.

    Args:
        args: the parsed arguments of ``dpax audit``.

    Returns:
        JSON-ready: the counts, the confidence, the observed rates and their upper limits,
        ``delta``, ``epsilon_lower`` and ``mu_lower``; with a claim, the claim, the error
        rates it requires and whether the counts contradict it.

    Raises:
        ValueError: counts, a confidence or a claim :func:`dpax.audit.audit` refuses (a
            --claim-dpsgd error names that option).
        TypeError: a --claim-dpsgd value dpax refuses for its type (naming the option).
    """
    claim, claim_json = _claim(args)
    r = audit_counts(
        args.false_positives, args.negatives, args.false_negatives, args.positives,
        confidence=args.confidence, delta=args.delta, claim_epsilon=args.claim_epsilon,
        claim_delta=args.claim_delta, claim_mu=args.claim_mu, claim=claim,
    )
    out = {
        "command": "audit",
        "false_positives": int(args.false_positives), "negatives": int(args.negatives),
        "false_negatives": int(args.false_negatives), "positives": int(args.positives),
        "confidence": r.confidence,
        "fpr": r.fpr, "fnr": r.fnr, "fpr_upper": r.fpr_upper, "fnr_upper": r.fnr_upper,
        "delta": r.delta, "epsilon_lower": r.epsilon_lower, "mu_lower": r.mu_lower,
    }
    if r.claim is not None:
        out["claim"] = dict(claim_json, description=r.claim)
        out.update(required_fnr=r.required_fnr, required_fpr=r.required_fpr, contradicted=r.contradicted)
    return out


def render_audit(r: dict) -> str:
    """The human-readable form of :func:`run_audit`'s result.

    Args:
        r: :func:`run_audit`'s result.

    Returns:
        The text: the counts, the table of rates and limits, the lower bounds and, with a
        claim, the verdict.
    """
    lines = [
        f"Attack: {r['false_positives']} false positives of {r['negatives']} negatives, "
        f"{r['false_negatives']} false negatives of {r['positives']} positives",
        f"Clopper-Pearson limits, jointly at confidence {fmt(r['confidence'], 12)}:",
        "",
    ]
    lines += table(("rate", "observed", "upper limit"), [
        ("FPR", fmt(r["fpr"]), fmt(r["fpr_upper"])),
        ("FNR", fmt(r["fnr"]), fmt(r["fnr_upper"])),
    ])
    lines += [""]
    items = [(f"epsilon lower bound at delta {fmt(r['delta'])}", fmt(r["epsilon_lower"])),
             ("Gaussian-DP mu lower bound", fmt(r["mu_lower"]))]
    if "claim" in r:
        verdict = "CONTRADICTED" if r["contradicted"] else "not contradicted"
        items += [
            ("claim", r["claim"]["description"]),
            ("claim needs FNR at FPR upper limit >=", f"{fmt(r['required_fnr'])}  (limit {fmt(r['fnr_upper'])})"),
            ("claim needs FPR at FNR upper limit >=", f"{fmt(r['required_fpr'])}  (limit {fmt(r['fpr_upper'])})"),
            ("verdict", verdict),
        ]
    lines += pairs(items)
    return "\n".join(lines)
