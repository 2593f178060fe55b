"""``dpax gdp``: Gaussian-DP report of DP-SGD, or the mu of an (epsilon, delta) guarantee.

    dpax gdp --noise-multiplier 9.4 --sample-rate 0.32768 --num-steps 2000
    dpax gdp --epsilon 8 --delta 1e-5 1e-6 1e-9       # Table 3 conversion
    dpax gdp ... --json
    dpax gdp ... --accuracy 1e-3                      # the grid chosen for brackets <= 1e-3 wide

The DP-SGD report prints each number with its certified bracket: mu's lower end
is the companion's mu, the regret's bracket comes from both sides
(``dpax.gdp.mu_and_regret(pl, bounds=True)``), the other numbers' other side is the
companion's value. The (epsilon, delta) -> mu conversion is a closed form, without a bracket.
"""

from __future__ import annotations

import argparse

import numpy as np
from numpy.typing import ArrayLike

from .. import conversions, gdp
from .._text import fmt, pairs, probability, table
from ..mechanisms import dpsgd
from ..privacy_loss import Interval, PrivacyLoss
from .brackets import bracket_args, bracket_note, bracket_text, choose_grid, epsilon_lines, grid_lines, joint, max_width
from .configuration import dpsgd_args
from .parsing import Parents, Subparsers, number, options_parser

#: What --accuracy applies to in the DP-SGD report (and why not to mu).
ACCURACY_APPLIES_TO = (
    "every number of the report (mu and the regret, Tier II beta and TPR, the advantage, "
    "epsilon at each --delta; mu's bracket, set by the curve's far tail, narrows more slowly than the others "
    "and runs the mu kernel on every grid tried)")


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    """Register ``gdp`` (its ``func`` and ``render``) with ``subparsers``.

    Args:
        subparsers: the subcommands of the ``dpax`` parser.
        parents: the shared options' parent parsers.

    Returns:
        None; ``subparsers`` has the ``gdp`` parser.
    """
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
            "and the mu every epsilon-DP mechanism satisfies (Proposition 6.1). The DP-SGD report prints "
            "each number with its certified bracket (the optimistic side and the width; mu's optimistic "
            "side is a lower bound of mu; the regret's bracket is printed beside it); the conversion is a closed form."
        ),
    )
    p.set_defaults(func=run_gdp, render=render_gdp)


#: --tail unless given: the box of FPRs and FNRs mu covers (:func:`dpax.gdp.mu_and_regret`).
DEFAULT_TAIL = 1e-10


def _options() -> argparse.ArgumentParser:
    """The options only ``gdp`` takes (a parent parser, listed before the shared ones)."""
    p = options_parser()
    dpsgd_args(p, required=False)
    p.add_argument("--epsilon", type=number, metavar="E", help="convert an (epsilon, delta) guarantee to mu instead")
    p.add_argument("--delta", type=number, nargs="+", default=[1e-5, 1e-6, 1e-9], metavar="D",
                   help="deltas for epsilon (report) or for the conversion (default: %(default)s)")
    p.add_argument("--tail", type=number, metavar="A",
                   help=f"mu covers every attack with FPR and FNR in [A, 1 - A] (default: {DEFAULT_TAIL:g}; DP-SGD "
                        "report only)")
    bracket_args(p, ACCURACY_APPLIES_TO)
    return p


def run_gdp(args: argparse.Namespace) -> dict:
    """JSON-ready GDP report of DP-SGD, or the (epsilon, delta) -> mu conversion.

    Args:
        args: the parsed arguments of ``dpax gdp`` (with ``args.parser``, for usage errors).

    Returns:
        JSON-ready: with ``--epsilon``, ``mode`` "conversion", ``epsilon``, ``delta``,
        ``mu_gaussian`` (one per delta) and ``mu_pure_dp``; else ``mode`` "dpsgd", the
        configuration, :meth:`dpax.gdp.GDPReport.to_dict`'s entries, the optimistic side of
        each bracket (unless ``--no-bounds``) and the grid chosen.

    Raises:
        SystemExit: a usage error (both or neither of --epsilon and the DP-SGD options,
            --accuracy with --epsilon or with --grid-step), through ``args.parser.error``.
        ValueError: a value dpax refuses, or an --accuracy the grids cannot reach.
    """
    mech = [args.noise_multiplier, args.sample_rate, args.num_steps]
    if args.epsilon is not None:
        if any(v is not None for v in mech):
            args.parser.error("give either --epsilon (conversion) or the DP-SGD arguments, not both")
        if args.accuracy is not None:
            args.parser.error("--accuracy applies to the DP-SGD report; the --epsilon conversion is a closed form")
        for flag, given in (("--tail", args.tail is not None), ("--grid-step", args.grid_step_given),
                            ("--no-bounds", not getattr(args, "bounds", True))):
            if given:  # it would change nothing
                args.parser.error(f"{flag} applies to the DP-SGD report; the --epsilon conversion is a closed form")
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
        args.parser.error("give --noise-multiplier, --sample-rate and --num-steps (or --dataset-size, --batch-size "
                          "and --epochs in place of --sample-rate and --num-steps; or --epsilon with --delta)")
    tail = DEFAULT_TAIL if args.tail is None else args.tail
    pl, grid = choose_grid(args, lambda h: dpsgd(args.noise_multiplier, args.sample_rate, args.num_steps, grid_step=h),
                           lambda pl: joint(_refined_brackets(pl, args.delta, tail)))
    r = gdp.report(pl, deltas=args.delta, tail=tail)
    out = {"command": "gdp", "mode": "dpsgd", "noise_multiplier": float(args.noise_multiplier),
           "sample_rate": float(args.sample_rate), "num_steps": int(args.num_steps)}
    out.update(r.to_dict())
    if args.bounds:
        out.update(_optimistic(pl, r, tail))
    out.update(grid)
    return out


def _refined_brackets(pl: PrivacyLoss, deltas: ArrayLike, tail: float) -> list[Interval]:
    """The brackets --accuracy applies to: mu and the regret, beta at the Tier II FPRs (the
    advantage-maximising attack's, (1 - advantage) / 2, included), the advantage, epsilon at ``deltas``."""
    mu, regret = gdp.mu_and_regret(pl, tail, bounds=True)
    adv = pl.advantage(bounds=True)
    assert isinstance(adv, Interval)  # bounds=True
    alphas = np.append(gdp.TIER2_ALPHAS, 0.5 * (1.0 - adv.safe))
    return [mu, regret, pl.beta(alphas, bounds=True), adv, pl.epsilon(np.asarray(deltas, dtype=float), bounds=True)]


def _optimistic(pl: PrivacyLoss, r: gdp.GDPReport, tail: float) -> dict:
    """The other side of each bracket of the report ``r`` of ``pl``: the companion's mu (a
    lower bound of mu), the regret's two ends (``regret_lower``, ``regret_upper``: the point
    regret lies between them), the companion's advantage, beta at the report's FPRs and
    epsilon at its deltas; and ``max_width``, the widest bracket (mu's and the regret's
    included)."""
    companion = pl.optimistic_companion()
    mu, regret = gdp.mu_and_regret(pl, tail, bounds=True)
    brackets = [mu, regret, Interval(r.beta, np.asarray(companion.beta(np.asarray(r.alpha)))),
                Interval(r.advantage, companion.advantage()),
                Interval(r.epsilon, np.asarray(companion.epsilon(r.deltas)))]
    return {"bounds": True, "mu_optimistic": float(mu.optimistic), "regret_lower": float(regret.lower),
            "regret_upper": float(regret.upper), "beta_optimistic": np.ravel(brackets[2].optimistic).tolist(),
            "advantage_optimistic": float(brackets[3].optimistic),
            "epsilon_optimistic": np.ravel(brackets[4].optimistic).tolist(), "max_width": max_width(brackets)}


def render_gdp(r: dict) -> str:
    """The human-readable form of :func:`run_gdp`'s result.

    Args:
        r: :func:`run_gdp`'s result.

    Returns:
        The text: the conversion's table, or Tier I, Tier II and epsilon of the DP-SGD report.
    """
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
        *grid_lines(r),
        *bracket_note(r),
        "",
        "Tier I: Gaussian DP",
    ]
    items = [("mu", f"{fmt(r['mu'])}  (every attack with FPR, FNR in [{fmt(r['tail'])}, 1 - {fmt(r['tail'])}])")]
    regret = f"{fmt(r['regret'], 3)}  (at FPR {fmt(r['regret_alpha'], 3)})"
    if r.get("bounds"):
        items.append(("mu, optimistic", f"{fmt(r['mu_optimistic'])}  (a lower bound of mu; width "
                                        f"{fmt(r['mu'] - r['mu_optimistic'], 2)})"))
        regret = (f"{fmt(r['regret'], 3)}  (at FPR {fmt(r['regret_alpha'], 3)}; the true regret lies in "
                  f"[{fmt(r['regret_lower'], 4)}, {fmt(r['regret_upper'], 4)}], width "
                  f"{fmt(r['regret_upper'] - r['regret_lower'], 2)})")
    items += [
        ("regret Delta", regret),
        ("mu-GDP faithful", "yes (regret < 0.01)" if ok else "no (regret >= 0.01): report the curve below"),
        ("advantage", bracket_text(r["advantage"], r, "advantage_optimistic")),
    ]
    lines += pairs(items)
    lines += ["", "Tier II: best membership-inference attack"]
    lines += _tier2_lines(r)
    lines += [""]
    lines += epsilon_lines(r["deltas"], r["epsilon"], r.get("epsilon_optimistic"))
    return "\n".join(lines)


#: The label of the Tier II row at alpha* = (1 - advantage) / 2 (the report's last FPR): the
#: FPR of the attack with the largest TPR - FPR, the advantage of Tier I.
MAX_ADVANTAGE_LABEL = " (max advantage)"


def _tier2_lines(r: dict) -> list[str]:
    """The Tier II table (FPR alpha, FNR beta, TPR; the optimistic beta and the width if ``r``
    has them). Its last row, the advantage-maximising attack, is labelled
    :data:`MAX_ADVANTAGE_LABEL`; probabilities within 1e-4 of 1 print as "1 - q"
    (:func:`dpax._text.probability`), so an FNR never reads "1" beside a small TPR."""
    n = len(r["alpha"])
    rows: list[tuple[str, ...]] = [
        (fmt(a, 4) + (MAX_ADVANTAGE_LABEL if i == n - 1 else ""), probability(b), probability(1 - b, complement=b))
        for i, (a, b) in enumerate(zip(r["alpha"], r["beta"]))]
    if "beta_optimistic" not in r:
        return table(("FPR alpha", "FNR beta", "TPR"), rows)
    rows = [row + (probability(o), fmt(abs(b - o), 2)) for row, b, o in zip(rows, r["beta"], r["beta_optimistic"])]
    return table(("FPR alpha", "FNR beta", "TPR", "optimistic beta", "width"), rows)
