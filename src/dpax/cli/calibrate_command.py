"""``dpax calibrate``: the smallest DP-SGD noise multiplier meeting an attack-risk target.

    dpax calibrate --sample-rate 0.001 --num-steps 10000 --alpha 0.1 --beta 0.5
    dpax calibrate --sample-rate 0.001 --num-steps 10000 --advantage 0.1 --json
    dpax calibrate ... --accuracy 1e-4     # dpax chooses the grid; prints the noise interval
    dpax calibrate --dataset-size 60000 --batch-size 256 --epochs 60 --advantage 0.1   # from epochs

Without ``--accuracy`` the output is that of a fixed grid (``--grid-step``, default 1e-4);
with it (:func:`dpax.calibrate_dpsgd`'s ``accuracy=``) the noise is printed with its
certified interval and the target's quantity with its bracket.
"""

from __future__ import annotations

import argparse
from typing import Any, SupportsFloat, cast

from .._text import fmt, pairs
from ..calibration import calibrate_dpsgd
from ..targets import Advantage, Epsilon, ErrRates, Target
from .brackets import bracket_args
from .configuration import dpsgd_args
from .parsing import Parents, Subparsers, number, options_parser

TARGET_HELP = "exactly one of: --alpha A --beta B | --alpha A --tpr X | --advantage E | --epsilon E --delta D"


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    """Register ``calibrate`` (its ``func`` and ``render``) with ``subparsers``.

    Args:
        subparsers: the subcommands of the ``dpax`` parser.
        parents: the shared options' parent parsers.

    Returns:
        None; ``subparsers`` has the ``calibrate`` parser.
    """
    p = subparsers.add_parser(
        "calibrate",
        parents=[_options(), parents.common],
        help="smallest DP-SGD noise multiplier meeting an attack-risk target",
        description=(
            "Smallest DP-SGD noise multiplier that meets a risk target at the given grid step, "
            "and the noise that standard (epsilon, delta) calibration would need for the same "
            "bound. Target: " + TARGET_HELP + ". With --accuracy dpax chooses the grid and prints the "
            "noise's certified interval: the truly smallest noise lies between the noise that fails the "
            "target with the optimistic companion and the noise printed."
        ),
    )
    p.set_defaults(func=run_calibrate, render=render_calibrate)


def _options() -> argparse.ArgumentParser:
    """The options only ``calibrate`` takes (a parent parser, listed before the shared ones)."""
    p = options_parser()
    dpsgd_args(p, noise=False)
    t = p.add_argument_group("target (" + TARGET_HELP + ")")
    t.add_argument("--alpha", type=number, metavar="A", help="FPR of the attack (with --beta or --tpr)")
    t.add_argument("--beta", type=number, metavar="B", help="smallest FNR allowed at FPR alpha")
    t.add_argument("--tpr", type=number, metavar="X", help="largest TPR allowed at FPR alpha (beta = 1 - X)")
    t.add_argument("--advantage", type=number, metavar="E", help="largest attack advantage TPR - FPR allowed")
    t.add_argument("--epsilon", type=number, metavar="E", help="(epsilon, delta)-DP target (with --delta)")
    t.add_argument("--delta", type=number, metavar="D", help="delta of the --epsilon target")
    p.add_argument("--rtol", type=number, default=1e-4, metavar="R",
                   help="relative tolerance of the noise multiplier (default: %(default)s)")
    p.add_argument("--standard-delta", type=number, default=1e-5, metavar="D",
                   help="delta of the standard calibration shown for comparison (default: %(default)s)")
    p.add_argument("--no-compare-standard", dest="compare_standard", action="store_false",
                   help="skip the standard-calibration comparison (about halves the run time)")
    bracket_args(p, "the target's quantity at the calibrated noise (beta at --alpha, the advantage, or epsilon at "
                    "--delta)", no_bounds=False, also_prints=" and the noise's certified interval")
    return p


def _target(args: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[Target, dict[str, Any]]:
    """The target the arguments name and its JSON form; a usage error unless exactly one is named."""
    given = {k for k in ("alpha", "beta", "tpr", "advantage", "epsilon", "delta") if getattr(args, k) is not None}
    if given == {"alpha", "beta"}:
        return ErrRates(alpha=args.alpha, beta=args.beta), {"type": "err_rates", "alpha": args.alpha, "beta": args.beta}
    if given == {"alpha", "tpr"}:
        tgt = ErrRates.from_tpr(args.alpha, args.tpr)
        return tgt, {"type": "err_rates", "alpha": args.alpha, "beta": float(tgt.beta), "tpr": args.tpr}
    if given == {"advantage"}:
        return Advantage(args.advantage), {"type": "advantage", "advantage": args.advantage}
    if given == {"epsilon", "delta"}:
        return Epsilon(args.epsilon, args.delta), {"type": "epsilon", "epsilon": args.epsilon, "delta": args.delta}
    got = " ".join(f"--{k}" for k in sorted(given)) or "none"
    parser.error(f"give {TARGET_HELP} (got: {got})")


def _float(value: object) -> float:
    """``float(value)`` of a result field: CalibrationResult types them as object, one configuration's are numbers."""
    return float(cast(SupportsFloat, value))


def run_calibrate(args: argparse.Namespace) -> dict:
    """JSON-ready calibration of DP-SGD to the target in ``args``.

    Args:
        args: the parsed arguments of ``dpax calibrate`` (with ``args.parser``, for usage
            errors).

    Returns:
        JSON-ready: the configuration, the target, the grid step, ``status``, the noise
        multiplier (and the one that fails), what it achieves, the standard comparison and,
        with ``--accuracy``, the optimistic side of the noise's interval and of what it achieves.

    Raises:
        SystemExit: a usage error (not exactly one target, or both --grid-step and
            --accuracy), through ``args.parser.error``.
        ValueError: a value :func:`dpax.calibrate_dpsgd` refuses, or a target it cannot meet.
    """
    target, target_json = _target(args, args.parser)
    if args.accuracy is not None and args.grid_step_given:
        args.parser.error("give either --grid-step or --accuracy, not both")
    res = calibrate_dpsgd(
        sample_rate=args.sample_rate,
        num_steps=args.num_steps,
        target=target,
        grid_step=None if args.accuracy is not None else args.grid_step,
        accuracy=args.accuracy,
        rtol=args.rtol,
        compare_standard=args.compare_standard,
        standard_delta=args.standard_delta,
    )
    out = {
        "command": "calibrate",
        "mechanism": "dpsgd",
        "sample_rate": float(args.sample_rate),
        "num_steps": int(args.num_steps),
        "target": target_json,
        "grid_step": float(res.grid_step),
        "rtol": float(res.rtol),
        "status": str(res.status),
        "noise_multiplier": _float(res.noise_multiplier),
        "noise_multiplier_failing": _float(res.noise_multiplier_failing),
        "achieved": {k: float(v) for k, v in res.achieved.items()},
        "delta": _float(res.delta),
        "compare_standard": bool(args.compare_standard),
        "standard_epsilon": _float(res.standard_epsilon),
        "standard_noise_multiplier": _float(res.standard_noise_multiplier),
        "noise_reduction": float(res.noise_reduction),
        "evaluations": int(res.evaluations),
    }
    if args.accuracy is not None:
        assert res.noise_interval is not None and res.achieved_interval is not None  # set when accuracy is given
        out.update(accuracy=float(args.accuracy), noise_multiplier_optimistic=float(res.noise_interval.optimistic),
                   achieved_optimistic={k: float(v.optimistic) for k, v in res.achieved_interval.items()})
    return out


def _describe_target(t: dict) -> str:
    if t["type"] == "err_rates":
        return (f"every attack with FPR <= {fmt(t['alpha'])} has FNR >= {fmt(t['beta'])} "
                f"(TPR <= {fmt(1 - t['beta'])})")
    if t["type"] == "advantage":
        return f"attack advantage TPR - FPR <= {fmt(t['advantage'])}"
    return f"({fmt(t['epsilon'])}, {fmt(t['delta'])})-DP"


def render_calibrate(r: dict) -> str:
    """The human-readable form of :func:`run_calibrate`'s result.

    Args:
        r: :func:`run_calibrate`'s result.

    Returns:
        The text: the configuration, the target, the noise multiplier, what it achieves and
        the comparison with standard calibration.
    """
    a = r["achieved"]
    lines = [
        f"DP-SGD: sample rate {fmt(r['sample_rate'])}, {r['num_steps']} steps "
        f"(grid step {fmt(r['grid_step'])}, rtol {fmt(r['rtol'])})",
        f"target: {_describe_target(r['target'])}",
        "",
    ]
    if r["status"] == "met_without_noise":
        noise = "0  (subsampling alone meets the target)"
    else:
        noise = f"{fmt(r['noise_multiplier'])}  (meets the target; {fmt(r['noise_multiplier_failing'])} fails)"
    items = [("noise multiplier", noise)]
    opt = r.get("achieved_optimistic", {})
    if "accuracy" in r:
        lines.insert(1, f"grid step {fmt(r['grid_step'])} chosen by --accuracy {fmt(r['accuracy'])}")
        low = r["noise_multiplier_optimistic"]
        if r["status"] != "met_without_noise":  # no noise needed: 0 is exact, there is no interval
            items.append(("noise, optimistic", f"{fmt(low)}  (fails the target with the optimistic companion: the "
                                               f"smallest noise lies in [{fmt(low)}, {fmt(r['noise_multiplier'])}])"))
    if "beta" in a:
        t = r["target"]
        items.append((f"achieved FNR beta at FPR {fmt(t['alpha'])}",
                      f"{fmt(a['beta'])}  (TPR {fmt(1 - a['beta'])}{_optimistic(a, opt, 'beta')})"))
    items.append(("achieved advantage", fmt(a["advantage"]) + _bracket(a, opt, "advantage")))
    items.append((f"achieved epsilon at delta {fmt(r['delta'])}", fmt(a["epsilon"]) + _bracket(a, opt, "epsilon")))
    if r["target"]["type"] != "epsilon":
        items += _standard_items(r)
    return "\n".join(lines + pairs(items))


def _optimistic(a: dict, opt: dict, key: str) -> str:
    """'; optimistic X, width W' for a quantity the accuracy applies to, else ''."""
    return f"; optimistic {fmt(opt[key])}, width {fmt(abs(a[key] - opt[key]), 2)}" if key in opt else ""


def _bracket(a: dict, opt: dict, key: str) -> str:
    """'  (optimistic X, width W)' for a quantity the accuracy applies to, else ''."""
    return f"  ({_optimistic(a, opt, key)[2:]})" if key in opt else ""


def _standard_items(r: dict) -> list[tuple[str, str]]:
    """The lines comparing with standard (epsilon, delta) calibration."""
    if not r["compare_standard"]:
        return [("standard calibration",
                 f"epsilon {fmt(r['standard_epsilon'])} at delta {fmt(r['delta'])} (noise not computed)")]
    red = r["noise_reduction"]
    return [
        ("standard calibration", f"epsilon {fmt(r['standard_epsilon'])} at delta {fmt(r['delta'])} "
                                 f"-> noise multiplier {fmt(r['standard_noise_multiplier'])}"),
        ("noise reduction", "-" if red is None else f"{100 * red:.1f}%  (1 - noise / standard noise)"),
    ]
