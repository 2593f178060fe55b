"""``dpax mechanism KIND ...``: the attack risk of one mechanism from the library
(:mod:`dpax.mechanisms`), optionally composed ``--count`` times.

    dpax mechanism laplace --scale 2 --count 10
    dpax mechanism randomized-response --epsilon 1 --k 4 --json
    dpax mechanism subsampled-gaussian --noise-multiplier 1 --sample-rate 0.01 --neighbouring substitution
"""

from __future__ import annotations

import argparse

from .. import mechanisms
from .._engine.validation import positive_int_array
from .._text import fmt, pairs
from .brackets import attack_lines, epsilon_lines, risk_summary
from .parsing import Parents, Subparsers, count, number, options_parser

#: kind -> (builder in :mod:`dpax.mechanisms`, the options it takes); builders get keyword arguments.
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

_ALL_OPTIONS = ("noise_multiplier", "sigma", "scale", "sensitivity", "sample_rate", "epsilon", "dp_delta", "k",
                "neighbouring")


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    """Register ``mechanism`` (its ``func`` and ``render``) with ``subparsers``."""
    p = subparsers.add_parser(
        "mechanism",
        parents=[_options(), parents.report, parents.common],
        help="attack risk of a Laplace, randomized-response, discrete, (eps, delta)-DP or Gaussian mechanism",
        description="Trade-off curve (beta at alpha), advantage and epsilon of one mechanism of the library, "
                    "composed --count times. Options a kind does not take are rejected.",
    )
    p.set_defaults(func=run_mechanism, render=render_mechanism)


def _options() -> argparse.ArgumentParser:
    """The options only ``mechanism`` takes (a parent parser, listed before the shared ones)."""
    p = options_parser()
    p.add_argument("kind", choices=sorted(KINDS), help="the mechanism")
    p.add_argument("--noise-multiplier", type=number, metavar="S", help="Gaussian noise standard deviation")
    p.add_argument("--sigma", type=number, metavar="S", help="discrete Gaussian noise parameter")
    p.add_argument("--scale", type=number, metavar="B", help="(discrete) Laplace noise scale")
    p.add_argument("--sensitivity", type=number, metavar="D", help="query sensitivity (default 1)")
    p.add_argument("--sample-rate", type=number, metavar="P", help="Poisson sampling rate, in (0, 1]")
    p.add_argument("--epsilon", type=number, metavar="E",
                   help="epsilon of randomized response / approximate-dp, in [0, 600]")
    p.add_argument("--dp-delta", type=number, metavar="D", help="delta of approximate-dp (default 0)")
    p.add_argument("--k", type=count, metavar="K", help="number of randomized-response categories (default 2)")
    p.add_argument("--neighbouring", choices=("add_remove", "substitution"), help="neighbouring relation")
    p.add_argument("--count", type=count, default=1, metavar="T", help="compose T copies (default 1)")
    return p


def _builder_kwargs(args: argparse.Namespace) -> dict:
    """Keyword arguments of the kind's builder; a ValueError for an option it does not take or lacks."""
    _, takes = KINDS[args.kind]
    given = {name: getattr(args, name) for name in _ALL_OPTIONS if getattr(args, name) is not None}
    extra = sorted(set(given) - set(takes))
    if extra:
        flags = ", ".join("--" + e.replace("_", "-") for e in extra)
        raise ValueError(f"mechanism {args.kind} does not take {flags}; it takes "
                         + ", ".join("--" + t.replace("_", "-") for t in takes))
    missing = [m for m in _REQUIRED[args.kind] if m not in given]
    if missing:
        raise ValueError(f"mechanism {args.kind} needs " + ", ".join("--" + m.replace("_", "-") for m in missing))
    return {("delta" if k == "dp_delta" else k): v for k, v in given.items()}


def run_mechanism(args: argparse.Namespace) -> dict:
    """JSON-ready risk of the mechanism in ``args``, composed ``--count`` times."""
    kwargs = _builder_kwargs(args)
    pl = getattr(mechanisms, KINDS[args.kind][0])(**kwargs, grid_step=args.grid_step)
    n = int(positive_int_array("count", args.count))
    if n > 1:
        pl = pl.self_compose(n)
    return {
        "command": "mechanism",
        "mechanism": args.kind,
        "parameters": dict(kwargs),
        "count": n,
        "description": pl.description,
        **risk_summary(pl, args.alpha, args.delta),
    }


def render_mechanism(r: dict) -> str:
    """The human-readable form of :func:`run_mechanism`'s result."""
    lines = [f"{r['description']} (grid step {fmt(r['grid_step'])}, symmetrised curve)", "",
             "Best membership-inference attack:"]
    lines += attack_lines(r)
    lines += [""] + pairs([("advantage (max TPR - FPR)", fmt(r["advantage"])),
                           ("support length", str(r["support_length"])),
                           ("tail mass", fmt(r["tail_mass"]))]) + [""]
    lines += epsilon_lines(r["delta"], r["epsilon"])
    return "\n".join(lines)
