"""``dpax mechanism KIND ...``: the attack risk of one mechanism from the library
(:mod:`dpax.mechanisms`), optionally composed ``--count`` times.

    dpax mechanism laplace --scale 2 --count 10
    dpax mechanism randomized-response --epsilon 1 --k 4 --json
    dpax mechanism subsampled-gaussian --noise-multiplier 1 --sample-rate 0.01 --neighbouring substitution
"""

from __future__ import annotations

from .cli import _count, _fmt, _number, _pairs, _table, common_args, report_args

#: kind -> (builder, the options it takes); builders get keyword arguments.
KINDS = {
    "gaussian": ("gaussian", ("noise_multiplier", "sensitivity", "neighbouring")),
    "subsampled-gaussian": ("subsampled_gaussian", ("noise_multiplier", "sample_rate", "neighbouring")),
    "laplace": ("laplace", ("scale", "sensitivity", "neighbouring")),
    "subsampled-laplace": ("subsampled_laplace", ("scale", "sample_rate", "sensitivity")),
    "randomized-response": ("randomized_response", ("epsilon", "k")),
    "approximate-dp": ("approximate_dp", ("epsilon", "dp_delta")),
    "discrete-laplace": ("discrete_laplace", ("scale", "sensitivity", "neighbouring")),
    "discrete-gaussian": ("discrete_gaussian", ("sigma", "sensitivity", "neighbouring")),
}

_REQUIRED = {
    "gaussian": ("noise_multiplier",),
    "subsampled-gaussian": ("noise_multiplier", "sample_rate"),
    "laplace": ("scale",),
    "subsampled-laplace": ("scale", "sample_rate"),
    "randomized-response": ("epsilon",),
    "approximate-dp": ("epsilon",),
    "discrete-laplace": ("scale",),
    "discrete-gaussian": ("sigma",),
}


def add_subcommands(subparsers) -> None:
    p = subparsers.add_parser(
        "mechanism",
        help="attack risk of a Laplace, randomized-response, discrete, (eps, delta)-DP or Gaussian mechanism",
        description="Trade-off curve (beta at alpha), advantage and epsilon of one mechanism of the library, "
                    "composed --count times. Options a kind does not take are rejected.",
    )
    p.add_argument("kind", choices=sorted(KINDS), help="the mechanism")
    p.add_argument("--noise-multiplier", type=_number, metavar="S", help="Gaussian noise standard deviation")
    p.add_argument("--sigma", type=_number, metavar="S", help="discrete Gaussian noise parameter")
    p.add_argument("--scale", type=_number, metavar="B", help="(discrete) Laplace noise scale")
    p.add_argument("--sensitivity", type=_number, metavar="D", help="query sensitivity (default 1)")
    p.add_argument("--sample-rate", type=_number, metavar="P", help="Poisson sampling rate, in (0, 1]")
    p.add_argument("--epsilon", type=_number, metavar="E", help="epsilon of randomized response / approximate-dp")
    p.add_argument("--dp-delta", type=_number, metavar="D", help="delta of approximate-dp (default 0)")
    p.add_argument("--k", type=_count, metavar="K", help="number of randomized-response categories (default 2)")
    p.add_argument("--neighbouring", choices=("add_remove", "substitution"), help="neighbouring relation")
    p.add_argument("--count", type=_count, default=1, metavar="T", help="compose T copies (default 1)")
    report_args(p)
    common_args(p)
    p.set_defaults(func=run_mechanism, render=render_mechanism)


_ALL_OPTIONS = ("noise_multiplier", "sigma", "scale", "sensitivity", "sample_rate", "epsilon", "dp_delta", "k",
                "neighbouring")


def run_mechanism(args) -> dict:
    import numpy as np

    import dpax

    from ._engine.validation import positive_int_array

    builder, takes = KINDS[args.kind]
    given = {name: getattr(args, name) for name in _ALL_OPTIONS if getattr(args, name) is not None}
    extra = sorted(set(given) - set(takes))
    if extra:
        flags = ", ".join("--" + e.replace("_", "-") for e in extra)
        raise ValueError(f"mechanism {args.kind} does not take {flags}; it takes "
                         + ", ".join("--" + t.replace("_", "-") for t in takes))
    missing = [m for m in _REQUIRED[args.kind] if m not in given]
    if missing:
        raise ValueError(f"mechanism {args.kind} needs " + ", ".join("--" + m.replace("_", "-") for m in missing))
    kwargs = {("delta" if k == "dp_delta" else k): v for k, v in given.items()}
    pl = getattr(dpax, builder)(**kwargs, grid_step=args.grid_step)
    count = positive_int_array("count", args.count)
    if int(count) > 1:
        pl = pl.self_compose(int(count))
    alpha = np.asarray(args.alpha, dtype=float)
    delta = np.asarray(args.delta, dtype=float)
    beta = np.atleast_1d(pl.beta(alpha))
    return {
        "command": "mechanism",
        "mechanism": args.kind,
        "parameters": {k: v for k, v in kwargs.items()},
        "count": int(count),
        "description": pl.description,
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


def render_mechanism(r: dict) -> str:
    lines = [f"{r['description']} (grid step {_fmt(r['grid_step'])}, symmetrised curve)", "",
             "Best membership-inference attack:"]
    lines += _table(("FPR alpha", "FNR beta", "TPR 1-beta"),
                    [(_fmt(a), _fmt(b), _fmt(t)) for a, b, t in zip(r["alpha"], r["beta"], r["tpr"])])
    lines += [""] + _pairs([("advantage (max TPR - FPR)", _fmt(r["advantage"])),
                            ("support length", str(r["support_length"])),
                            ("tail mass", _fmt(r["tail_mass"]))]) + [""]
    lines += _table(("delta", "epsilon"), [(_fmt(d), _fmt(e)) for d, e in zip(r["delta"], r["epsilon"])])
    return "\n".join(lines)
