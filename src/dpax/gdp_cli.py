"""``dpax gdp``: Gaussian-DP report of DP-SGD, or the mu of an (epsilon, delta) guarantee.

    dpax gdp --noise-multiplier 9.4 --sample-rate 0.32768 --num-steps 2000
    dpax gdp --epsilon 8 --delta 1e-5 1e-6 1e-9       # Table 3 conversion
    dpax gdp ... --json
"""

from __future__ import annotations

from .cli import _count, _fmt, _number, _pairs, _table, common_args


def add_subcommands(subparsers) -> None:
    p = subparsers.add_parser(
        "gdp",
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
    g = p.add_argument_group("DP-SGD")
    g.add_argument("--noise-multiplier", type=_number, metavar="S", help="noise standard deviation / clipping norm")
    g.add_argument("--sample-rate", type=_number, metavar="P", help="Poisson sampling rate, in (0, 1]")
    g.add_argument("--num-steps", type=_count, metavar="T", help="number of steps (integer >= 1)")
    p.add_argument("--epsilon", type=_number, metavar="E", help="convert an (epsilon, delta) guarantee to mu instead")
    p.add_argument("--delta", type=_number, nargs="+", default=[1e-5, 1e-6, 1e-9], metavar="D",
                   help="deltas for epsilon (report) or for the conversion (default: %(default)s)")
    p.add_argument("--tail", type=_number, default=1e-10, metavar="A",
                   help="mu covers every attack with FPR and FNR in [A, 1 - A] (default: %(default)s)")
    common_args(p)
    p.set_defaults(func=run_gdp, render=render_gdp)


def run_gdp(args) -> dict:
    import numpy as np

    import dpax
    from dpax import conversions, gdp

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
    pl = dpax.dpsgd(args.noise_multiplier, args.sample_rate, args.num_steps, grid_step=args.grid_step)
    r = gdp.report(pl, deltas=args.delta, tail=args.tail)
    out = {"command": "gdp", "mode": "dpsgd", "noise_multiplier": float(args.noise_multiplier),
           "sample_rate": float(args.sample_rate), "num_steps": int(args.num_steps)}
    out.update(r.to_dict())
    return out


def render_gdp(r: dict) -> str:
    if r["mode"] == "conversion":
        lines = [f"(epsilon = {_fmt(r['epsilon'])}, delta)-DP as Gaussian DP", ""]
        lines += _table(("delta", "mu of the Gaussian mechanism"),
                        [(_fmt(d), _fmt(m, 4)) for d, m in zip(r["delta"], r["mu_gaussian"])])
        lines += ["", f"  any {_fmt(r['epsilon'])}-DP mechanism is {_fmt(r['mu_pure_dp'], 4)}-GDP (Proposition 6.1)"]
        return "\n".join(lines)
    ok = r["gdp_ok"]
    lines = [
        f"DP-SGD: noise multiplier {_fmt(r['noise_multiplier'])}, sample rate {_fmt(r['sample_rate'])}, "
        f"{r['num_steps']} steps (grid step {_fmt(r['grid_step'])}, symmetrised add/remove curve)",
        "",
        "Tier I: Gaussian DP",
    ]
    lines += _pairs([
        ("mu", f"{_fmt(r['mu'])}  (every attack with FPR, FNR in [{_fmt(r['tail'])}, 1 - {_fmt(r['tail'])}])"),
        ("regret Delta", f"{_fmt(r['regret'], 3)}  (at FPR {_fmt(r['regret_alpha'], 3)})"),
        ("mu-GDP faithful", "yes (regret < 0.01)" if ok else "no (regret >= 0.01): report the curve below"),
        ("advantage", _fmt(r["advantage"])),
    ])
    lines += ["", "Tier II: best membership-inference attack"]
    n = len(r["alpha"])
    rows = [(_fmt(a, 4) + (" (alpha*)" if i == n - 1 else ""), _fmt(b), _fmt(1 - b))
            for i, (a, b) in enumerate(zip(r["alpha"], r["beta"]))]
    lines += _table(("FPR alpha", "FNR beta", "TPR"), rows)
    lines += [""]
    lines += _table(("delta", "epsilon"), [(_fmt(d), _fmt(e)) for d, e in zip(r["deltas"], r["epsilon"])])
    return "\n".join(lines)
