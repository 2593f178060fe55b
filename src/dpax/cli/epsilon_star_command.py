"""``dpax epsilon-star``: Epsilon* of one trained model from its per-example losses on training
and held-out data (:func:`dpax.audit.epsilon_star`).

    dpax epsilon-star train_losses.npy test_losses.npy --delta 1e-5 --method both
"""

from __future__ import annotations

import argparse

import numpy as np

from .._text import fmt, table
from ..audit import epsilon_star, goodness_of_fit, read_losses
from .parsing import Parents, Subparsers, integer, number, options_parser

#: Largest --goodness-of-fit (mixtures of 1..K Gaussians are fitted, each costing more).
MAX_COMPONENTS = 20


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    """Register ``epsilon-star`` (its ``func`` and ``render``) with ``subparsers``.

    Args:
        subparsers: the subcommands of the ``dpax`` parser.
        parents: the shared options' parent parsers.

    Returns:
        None; ``subparsers`` has the ``epsilon-star`` parser.
    """
    p = subparsers.add_parser(
        "epsilon-star",
        parents=[_options(), parents.common],
        help="Epsilon* of one trained model from its losses on training and held-out data",
        description=(
            "Epsilon* (Negoescu et al.): a lower bound on the empirical (epsilon, delta)-privacy "
            "of one model from its per-example losses on training data (TRAIN) and held-out data "
            "(TEST), each a .npy, .npz, .csv or .parquet file (.parquet needs pyarrow). The "
            "parametric estimate (Gaussian fits to transformed losses) is smooth but can err "
            "either way when the fit is poor (see --goodness-of-fit); the empirical one (rates "
            "in (0.001, 0.999)) errs low."
        ),
    )
    p.set_defaults(func=run_epsilon_star, render=render_epsilon_star)


def _options() -> argparse.ArgumentParser:
    """The options only ``epsilon-star`` takes (a parent parser, listed before the shared ones)."""
    p = options_parser()
    p.add_argument("train", metavar="TRAIN", help="losses on the training data")
    p.add_argument("test", metavar="TEST", help="losses on held-out (population) data")
    p.add_argument("--delta", type=number, default=1e-5, metavar="D", help="delta (default: %(default)s)")
    p.add_argument("--method", choices=("parametric", "empirical", "both"), default="both",
                   help="estimator (default: %(default)s)")
    p.add_argument("--column", default=None, metavar="NAME",
                   help="array (.npz) or column (.csv, .parquet) holding the losses, in both files")
    p.add_argument("--train-column", default=None, metavar="NAME", help="column for TRAIN only")
    p.add_argument("--test-column", default=None, metavar="NAME", help="column for TEST only")
    p.add_argument("--goodness-of-fit", type=integer(0, MAX_COMPONENTS), default=0, metavar="K",
                   help="also report KS p-values of Gaussian mixtures with 1..K components (Appendix 8.2; "
                        f"K <= {MAX_COMPONENTS})")
    p.add_argument("--seed", type=integer(0), metavar="S",
                   help="seed of the goodness-of-fit split (with --goodness-of-fit; default: 0)")
    return p


def run_epsilon_star(args: argparse.Namespace) -> dict:
    """JSON-ready Epsilon* of the loss files in ``args`` (and the goodness of fit if asked).

    Args:
        args: the parsed arguments of ``dpax epsilon-star``.

    Returns:
        JSON-ready: the files, their sizes, ``delta``, ``results`` (per method: Epsilon*,
        the term and threshold attaining it, its FPR and FNR) and, with
        ``--goodness-of-fit``, the KS p-values.

    Raises:
        ValueError: a loss file that cannot be read (the message names it), or values
            :func:`dpax.audit.epsilon_star` refuses.
    """
    for flag, given, why in (  # each would change nothing
            ("--grid-step", getattr(args, "grid_step_given", False), "epsilon-star computes no privacy loss"),
            ("--seed", args.seed is not None and not args.goodness_of_fit, "it seeds --goodness-of-fit's split"),
            ("--column", args.column is not None and args.train_column is not None and args.test_column is not None,
             "--train-column and --test-column name both files' columns")):
        if given:
            raise ValueError(f"{flag} is not used here: {why}")
    train = _losses(args.train, args.train_column if args.train_column is not None else args.column)
    test = _losses(args.test, args.test_column if args.test_column is not None else args.column)
    methods = ("parametric", "empirical") if args.method == "both" else (args.method,)
    out = {"command": "epsilon-star", "train": args.train, "test": args.test, "n_train": int(train.size),
           "n_test": int(test.size), "delta": float(args.delta), "results": {}}
    for m in methods:
        r = epsilon_star(train, test, delta=args.delta, method=m)
        i = r.index
        out["results"][m] = {
            "epsilon_star": r.value, "term": r.term, "term_name": r.term_name,
            "threshold": r.threshold, "fpr": None if i < 0 else float(r.fpr[i]),
            "fnr": None if i < 0 else float(r.fnr[i]), "pairs": int(r.fpr.size),
        }
    if args.goodness_of_fit:
        k = int(args.goodness_of_fit)
        n_samples = int(min(1000, max(10, min(train.size, test.size) // 2)))
        seed = 0 if args.seed is None else args.seed
        g = goodness_of_fit(train, test, max_components=k, n_samples=n_samples, seed=seed)
        out["goodness_of_fit"] = {"components": g["components"], "n_samples": n_samples,
                                  "train_pvalues": list(map(float, g["train"])),
                                  "test_pvalues": list(map(float, g["test"]))}
    return out


def _losses(path: str, column: str | None) -> np.ndarray:
    """:func:`dpax.audit.read_losses`, its every error naming the file (a corrupt or pickled
    .npy, text that is not UTF-8, ...)."""
    try:
        return read_losses(path, column)
    except (ValueError, TypeError) as exc:
        if path in str(exc):
            raise
        raise ValueError(f"{path}: cannot read losses: {exc}") from None


def render_epsilon_star(r: dict) -> str:
    """The human-readable form of :func:`run_epsilon_star`'s result.

    Args:
        r: :func:`run_epsilon_star`'s result.

    Returns:
        The text: a table of the methods' Epsilon* and, if computed, the goodness of fit.
    """
    lines = [f"Epsilon* at delta {fmt(r['delta'])}: {r['n_train']} training losses ({r['train']}), "
             f"{r['n_test']} held-out losses ({r['test']})", ""]
    rows = []
    for m, v in r["results"].items():
        rows.append((m, fmt(v["epsilon_star"]), fmt(v["threshold"]), fmt(v["fpr"]), fmt(v["fnr"]), v["term_name"]))
    lines += table(("method", "Epsilon*", "threshold", "FPR", "FNR", "attained by"), rows)
    if "goodness_of_fit" in r:
        g = r["goodness_of_fit"]
        lines += ["", f"Goodness of fit (KS p-values, {g['n_samples']} held-out samples; > 0.05: fit not rejected):"]
        lines += table(("components", "train", "test"), [
            (str(k), fmt(a, 3), fmt(b, 3)) for k, a, b in zip(g["components"], g["train_pvalues"], g["test_pvalues"])])
    return "\n".join(lines)
