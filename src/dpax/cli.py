"""The ``dpax`` command line.

    dpax curve --noise-multiplier 1 --sample-rate 0.001 --num-steps 10000
    dpax calibrate --sample-rate 0.001 --num-steps 10000 --alpha 0.1 --beta 0.5
    python -m dpax curve ... --json

Every subcommand prints a human-readable table by default and one JSON object with
``--json``. Bad input (a ValueError or TypeError from dpax) is reported as
``dpax: error: <message>`` on stderr with exit status 2, like a usage error.

Compile latency: the command line (and only the command line; importing the library changes
no global JAX setting) turns on JAX's persistent compilation cache before it computes
anything, in ``$DPAX_CACHE_DIR`` or ``~/.cache/dpax/jax``, so a second invocation reuses the
compiled kernels of the first. ``--no-cache`` turns it off.

Adding a subcommand: write ``_add_<name>(subparsers)`` that registers the parser and sets
``func`` to a function ``(args) -> dict`` returning the JSON-ready result (plain floats,
ints, strings, lists, dicts) and ``render`` to a function ``(result) -> str`` for the
human-readable form, then call it from :func:`build_parser`. A subcommand that belongs to
another stage of the pipeline lives beside it, in a module ``dpax.<stage>_cli`` with a
function ``add_subcommands(subparsers)`` (same ``func`` / ``render`` contract, using
:func:`common_args` for ``--json`` and ``--no-cache``), listed in ``SUBCOMMAND_MODULES``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import sys
import time
from typing import Callable, Sequence

PROG = "dpax"

DEFAULT_ALPHAS = (0.001, 0.01, 0.05, 0.1)
DEFAULT_DELTAS = (1e-5,)
DEFAULT_GRID_STEP = 1e-4

#: JAX options the command line sets while it runs (and restores afterwards).
CACHE_OPTIONS = (
    "jax_compilation_cache_dir",
    "jax_persistent_cache_min_compile_time_secs",
    "jax_persistent_cache_min_entry_size_bytes",
)


# -- argument types ------------------------------------------------------------------------


def _number(text: str) -> float:
    """A real number; range checks are left to dpax, whose messages name the argument."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _count(text: str):
    """An integer, also written as '1e4'; a fractional value is passed on for dpax to reject."""
    try:
        return int(text)
    except ValueError:
        value = _number(text)
        return int(value) if math.isfinite(value) and value == int(value) else value


# -- output helpers ------------------------------------------------------------------------


from ._engine.text import fmt as _fmt, jsonable as _jsonable, pairs as _pairs, table as _table  # noqa: E402


# -- persistent compilation cache ----------------------------------------------------------


def cache_dir() -> str:
    """Where the command line keeps JAX's compiled kernels: $DPAX_CACHE_DIR or ~/.cache/dpax/jax."""
    path = os.environ.get("DPAX_CACHE_DIR") or os.path.join("~", ".cache", "dpax", "jax")
    return os.path.abspath(os.path.expanduser(path))


@contextlib.contextmanager
def compilation_cache(enabled: bool = True):
    """Run the body with JAX's persistent compilation cache on (every kernel is cached),
    and dpax's own store of compiled kernels (:mod:`dpax._engine.cache`), which skips tracing too.

    Sets the JAX options in :data:`CACHE_OPTIONS` and restores them afterwards, so calling
    :func:`main` from Python leaves the caller's JAX configuration as it was. Yields the
    cache directory, or None when the cache is off or its directory cannot be created.
    """
    if not enabled:
        yield None
        return
    import jax
    from jax.experimental.compilation_cache import compilation_cache as jax_cc

    from ._engine import cache as _cache

    path = cache_dir()
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        print(f"{PROG}: warning: compilation cache disabled, cannot create {path}: {exc}", file=sys.stderr)
        yield None
        return
    saved = {name: jax.config.values[name] for name in CACHE_OPTIONS}
    try:
        jax.config.update("jax_compilation_cache_dir", path)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        jax_cc.reset_cache()  # (re)open the cache at this directory on the next compile
        _cache.enable(os.path.join(path, "dpax-executables"))
        yield path
    finally:
        _cache.enable(None)
        for name, value in saved.items():
            jax.config.update(name, value)
        jax_cc.reset_cache()


# -- curve ---------------------------------------------------------------------------------


def _add_curve(subparsers) -> None:
    p = subparsers.add_parser(
        "curve",
        help="trade-off curve, advantage and epsilon of DP-SGD",
        description=(
            "Risk of DP-SGD (Poisson-subsampled Gaussian, add/remove neighbours, symmetrised): "
            "the FNR beta of the best membership-inference attack at each FPR alpha (and its "
            "TPR = 1 - beta), the largest advantage TPR - FPR, and epsilon at each delta. Every "
            "number is on the safe side: beta never above, advantage and epsilon never below "
            "the truth."
        ),
    )
    _mechanism_args(p, noise=True)
    report_args(p)
    common_args(p)
    p.set_defaults(func=run_curve, render=render_curve)


def run_curve(args) -> dict:
    import numpy as np

    import dpax

    pl = dpax.dpsgd(args.noise_multiplier, args.sample_rate, args.num_steps, grid_step=args.grid_step)
    alpha = np.asarray(args.alpha, dtype=float)
    delta = np.asarray(args.delta, dtype=float)
    beta = np.atleast_1d(pl.beta(alpha))
    eps = np.atleast_1d(pl.epsilon(delta))
    return {
        "command": "curve",
        "mechanism": "dpsgd",
        "noise_multiplier": float(args.noise_multiplier),
        "sample_rate": float(args.sample_rate),
        "num_steps": int(args.num_steps),
        "grid_step": float(pl.grid_step),
        "alpha": alpha.tolist(),
        "beta": beta.tolist(),
        "tpr": (1.0 - beta).tolist(),
        "advantage": float(pl.advantage()),
        "delta": delta.tolist(),
        "epsilon": eps.tolist(),
        "support_length": int(pl.support_length),
        "tail_mass": float(pl.tail_mass),
    }


def render_curve(r: dict) -> str:
    lines = [
        f"DP-SGD: noise multiplier {_fmt(r['noise_multiplier'])}, sample rate {_fmt(r['sample_rate'])}, "
        f"{r['num_steps']} steps (grid step {_fmt(r['grid_step'])}, symmetrised add/remove curve)",
        "",
        "Best membership-inference attack:",
    ]
    rows = [(_fmt(a), _fmt(b), _fmt(t)) for a, b, t in zip(r["alpha"], r["beta"], r["tpr"])]
    lines += _table(("FPR alpha", "FNR beta", "TPR 1-beta"), rows)
    lines += ["", f"  advantage (max TPR - FPR)  {_fmt(r['advantage'])}", ""]
    lines += _table(("delta", "epsilon"), [(_fmt(d), _fmt(e)) for d, e in zip(r["delta"], r["epsilon"])])
    return "\n".join(lines)


# -- calibrate -----------------------------------------------------------------------------

_TARGET_HELP = "exactly one of: --alpha A --beta B | --alpha A --tpr X | --advantage E | --epsilon E --delta D"


def _add_calibrate(subparsers) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="smallest DP-SGD noise multiplier meeting an attack-risk target",
        description=(
            "Smallest DP-SGD noise multiplier that meets a risk target at the given grid step, "
            "and the noise that standard (epsilon, delta) calibration would need for the same "
            "bound. Target: " + _TARGET_HELP + "."
        ),
    )
    _mechanism_args(p, noise=False)
    t = p.add_argument_group("target (" + _TARGET_HELP + ")")
    t.add_argument("--alpha", type=_number, metavar="A", help="FPR of the attack (with --beta or --tpr)")
    t.add_argument("--beta", type=_number, metavar="B", help="smallest FNR allowed at FPR alpha")
    t.add_argument("--tpr", type=_number, metavar="X", help="largest TPR allowed at FPR alpha (beta = 1 - X)")
    t.add_argument("--advantage", type=_number, metavar="E", help="largest attack advantage TPR - FPR allowed")
    t.add_argument("--epsilon", type=_number, metavar="E", help="(epsilon, delta)-DP target (with --delta)")
    t.add_argument("--delta", type=_number, metavar="D", help="delta of the --epsilon target")
    p.add_argument("--rtol", type=_number, default=1e-4, metavar="R",
                   help="relative tolerance of the noise multiplier (default: %(default)s)")
    p.add_argument("--standard-delta", type=_number, default=1e-5, metavar="D",
                   help="delta of the standard calibration shown for comparison (default: %(default)s)")
    p.add_argument("--no-compare-standard", dest="compare_standard", action="store_false",
                   help="skip the standard-calibration comparison (about halves the run time)")
    common_args(p)
    p.set_defaults(func=run_calibrate, render=render_calibrate)


def _target(args, parser: argparse.ArgumentParser):
    import dpax

    given = {k for k in ("alpha", "beta", "tpr", "advantage", "epsilon", "delta") if getattr(args, k) is not None}
    if given == {"alpha", "beta"}:
        return dpax.targets.ErrRates(alpha=args.alpha, beta=args.beta), {"type": "err_rates", "alpha": args.alpha, "beta": args.beta}
    if given == {"alpha", "tpr"}:
        tgt = dpax.targets.ErrRates.from_tpr(args.alpha, args.tpr)
        return tgt, {"type": "err_rates", "alpha": args.alpha, "beta": float(tgt.beta), "tpr": args.tpr}
    if given == {"advantage"}:
        return dpax.targets.Advantage(args.advantage), {"type": "advantage", "advantage": args.advantage}
    if given == {"epsilon", "delta"}:
        return dpax.targets.Epsilon(args.epsilon, args.delta), {"type": "epsilon", "epsilon": args.epsilon, "delta": args.delta}
    got = " ".join(f"--{k}" for k in sorted(given)) or "none"
    parser.error(f"give {_TARGET_HELP} (got: {got})")


def run_calibrate(args) -> dict:
    import dpax

    target, target_json = _target(args, args.parser)
    res = dpax.calibrate_dpsgd(
        sample_rate=args.sample_rate,
        num_steps=args.num_steps,
        target=target,
        grid_step=args.grid_step,
        rtol=args.rtol,
        compare_standard=args.compare_standard,
        standard_delta=args.standard_delta,
    )
    return {
        "command": "calibrate",
        "mechanism": "dpsgd",
        "sample_rate": float(args.sample_rate),
        "num_steps": int(args.num_steps),
        "target": target_json,
        "grid_step": float(res.grid_step),
        "rtol": float(res.rtol),
        "status": str(res.status),
        "noise_multiplier": float(res.noise_multiplier),
        "noise_multiplier_failing": float(res.noise_multiplier_failing),
        "achieved": {k: float(v) for k, v in res.achieved.items()},
        "delta": float(res.delta),
        "compare_standard": bool(args.compare_standard),
        "standard_epsilon": float(res.standard_epsilon),
        "standard_noise_multiplier": float(res.standard_noise_multiplier),
        "noise_reduction": float(res.noise_reduction),
        "evaluations": int(res.evaluations),
    }


def _describe_target(t: dict) -> str:
    if t["type"] == "err_rates":
        return (f"every attack with FPR <= {_fmt(t['alpha'])} has FNR >= {_fmt(t['beta'])} "
                f"(TPR <= {_fmt(1 - t['beta'])})")
    if t["type"] == "advantage":
        return f"attack advantage TPR - FPR <= {_fmt(t['advantage'])}"
    return f"({_fmt(t['epsilon'])}, {_fmt(t['delta'])})-DP"


def render_calibrate(r: dict) -> str:
    a = r["achieved"]
    lines = [
        f"DP-SGD: sample rate {_fmt(r['sample_rate'])}, {r['num_steps']} steps "
        f"(grid step {_fmt(r['grid_step'])}, rtol {_fmt(r['rtol'])})",
        f"target: {_describe_target(r['target'])}",
        "",
    ]
    if r["status"] == "met_without_noise":
        noise = "0  (subsampling alone meets the target)"
    else:
        noise = f"{_fmt(r['noise_multiplier'])}  (meets the target; {_fmt(r['noise_multiplier_failing'])} fails)"
    pairs = [("noise multiplier", noise)]
    if "beta" in a:
        t = r["target"]
        pairs.append((f"achieved FNR beta at FPR {_fmt(t['alpha'])}", f"{_fmt(a['beta'])}  (TPR {_fmt(1 - a['beta'])})"))
    pairs.append(("achieved advantage", _fmt(a["advantage"])))
    pairs.append((f"achieved epsilon at delta {_fmt(r['delta'])}", _fmt(a["epsilon"])))
    if r["target"]["type"] != "epsilon":
        if r["compare_standard"]:
            pairs.append((
                "standard calibration",
                f"epsilon {_fmt(r['standard_epsilon'])} at delta {_fmt(r['delta'])} "
                f"-> noise multiplier {_fmt(r['standard_noise_multiplier'])}",
            ))
            red = r["noise_reduction"]
            pairs.append(("noise reduction", "-" if red is None else f"{100 * red:.1f}%  (1 - noise / standard noise)"))
        else:
            pairs.append(("standard calibration", f"epsilon {_fmt(r['standard_epsilon'])} at delta {_fmt(r['delta'])} (noise not computed)"))
    lines += _pairs(pairs)
    return "\n".join(lines)


# -- shared arguments ----------------------------------------------------------------------


def _mechanism_args(p: argparse.ArgumentParser, *, noise: bool) -> None:
    g = p.add_argument_group("DP-SGD")
    if noise:
        g.add_argument("--noise-multiplier", type=_number, required=True, metavar="S",
                       help="noise standard deviation / clipping norm")
    g.add_argument("--sample-rate", type=_number, required=True, metavar="P", help="Poisson sampling rate, in (0, 1]")
    g.add_argument("--num-steps", type=_count, required=True, metavar="T", help="number of steps (integer >= 1)")


def report_args(p: argparse.ArgumentParser) -> None:
    """--alpha (FPRs at which beta is reported) and --delta (deltas at which epsilon is)."""
    p.add_argument("--alpha", type=_number, nargs="+", default=list(DEFAULT_ALPHAS), metavar="A",
                   help="FPRs at which to report beta (default: %(default)s)")
    p.add_argument("--delta", type=_number, nargs="+", default=list(DEFAULT_DELTAS), metavar="D",
                   help="deltas at which to report epsilon (default: %(default)s)")


def common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--grid-step", type=_number, default=DEFAULT_GRID_STEP, metavar="H",
                   help="privacy-loss discretisation interval (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--no-cache", dest="cache", action="store_false",
                   help="do not use the persistent compilation cache ($DPAX_CACHE_DIR or ~/.cache/dpax/jax)")


#: Modules (``dpax.<stage>_cli``) whose ``add_subcommands(subparsers)`` registers more subcommands.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "dpax.audit_cli",
    "dpax.sweep_cli",
    "dpax.plot_cli",
    "dpax.gdp_cli",
    "dpax.mechanism_cli",
)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="dpax: exact privacy accounting in JAX: trade-off curves of the best "
                    "membership-inference attack, and noise calibrated to attack risk.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_curve(subparsers)
    _add_calibrate(subparsers)
    for module in SUBCOMMAND_MODULES:
        importlib.import_module(module).add_subcommands(subparsers)
    # keep each subparser reachable for its own usage errors
    for name, sub in subparsers.choices.items():
        sub.set_defaults(parser=sub)
    return parser


# -- entry point ---------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad usage or bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    func: Callable = args.func
    try:
        with compilation_cache(args.cache):
            t0 = time.perf_counter()
            result = func(args)
            result["elapsed_s"] = time.perf_counter() - t0
    except SystemExit as exc:  # parser.error raised while interpreting the arguments
        return exc.code if isinstance(exc.code, int) else 2
    except (ValueError, TypeError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    result["dpax_version"] = _version()
    if args.json:
        print(json.dumps(_jsonable(result), allow_nan=False))
    else:
        print(args.render(result))
        print(f"\n(computed in {result['elapsed_s']:.2f} s)")
    return 0


def _version() -> str:
    from . import __version__

    return __version__


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
