"""``dpax audit`` and ``dpax epsilon-star``: the auditing stage on the command line.

    dpax audit --false-positives 174 --negatives 100000 --false-negatives 95078 \\
               --positives 100000 --confidence 0.9999999999 --claim-epsilon 0.21 --claim-delta 1e-5
    dpax epsilon-star train_losses.npy test_losses.npy --delta 1e-5 --method both

Registered by :mod:`dpax.cli` through ``SUBCOMMAND_MODULES`` (``func`` / ``render`` contract).
"""

from __future__ import annotations

from .cli import _count, _fmt, _number, _pairs, _table, common_args


def add_subcommands(subparsers) -> None:
    _add_audit(subparsers)
    _add_epsilon_star(subparsers)


# -- audit ---------------------------------------------------------------------------------


def _add_audit(subparsers) -> None:
    p = subparsers.add_parser(
        "audit",
        help="confidence bounds from membership-inference attack counts; check a privacy claim",
        description=(
            "From an attack's false positives out of NEGATIVES trials (target absent) and false "
            "negatives out of POSITIVES trials (target present): Clopper-Pearson upper limits on "
            "its FPR and FNR (jointly at --confidence, each one-sided at 1 - (1 - confidence)/2), "
            "the epsilon (at --delta) and Gaussian-DP mu they prove, and whether a claimed "
            "guarantee is contradicted."
        ),
    )
    g = p.add_argument_group("attack outcomes")
    g.add_argument("--false-positives", type=_count, required=True, metavar="FP")
    g.add_argument("--negatives", type=_count, required=True, metavar="N", help="trials without the target")
    g.add_argument("--false-negatives", type=_count, required=True, metavar="FN")
    g.add_argument("--positives", type=_count, required=True, metavar="M", help="trials with the target")
    p.add_argument("--confidence", type=_number, default=0.95, metavar="C",
                   help="joint confidence level, in (0, 1) (default: %(default)s)")
    p.add_argument("--delta", type=_number, default=None, metavar="D",
                   help="delta of the epsilon lower bound (default: --claim-delta, else 0)")
    c = p.add_argument_group("claim (at most one)")
    c.add_argument("--claim-epsilon", type=_number, metavar="E", help="claimed (E, --claim-delta)-DP")
    c.add_argument("--claim-delta", type=_number, metavar="D")
    c.add_argument("--claim-mu", type=_number, metavar="MU", help="claimed mu-GDP")
    c.add_argument("--claim-dpsgd", type=_number, nargs=3, metavar=("SIGMA", "RATE", "STEPS"),
                   help="claimed DP-SGD (noise multiplier, sample rate, steps), accounted by dpax at --grid-step")
    common_args(p)
    p.set_defaults(func=run_audit, render=render_audit)


def run_audit(args) -> dict:
    import dpax

    claim = None
    claim_json = None
    if args.claim_dpsgd is not None:
        s, q, t = args.claim_dpsgd
        if t != int(t):
            raise ValueError(f"--claim-dpsgd STEPS must be a whole number, got {t:g}")
        claim = dpax.dpsgd(s, q, int(t), grid_step=args.grid_step)
        claim_json = {"type": "dpsgd", "noise_multiplier": s, "sample_rate": q, "num_steps": int(t),
                      "grid_step": args.grid_step}
    elif args.claim_mu is not None:
        claim_json = {"type": "gdp", "mu": args.claim_mu}
    elif args.claim_epsilon is not None or args.claim_delta is not None:
        claim_json = {"type": "epsilon_delta", "epsilon": args.claim_epsilon, "delta": args.claim_delta}
    r = dpax.audit.audit(
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
    lines = [
        f"Attack: {r['false_positives']} false positives of {r['negatives']} negatives, "
        f"{r['false_negatives']} false negatives of {r['positives']} positives",
        f"Clopper-Pearson limits, jointly at confidence {_fmt(r['confidence'], 12)}:",
        "",
    ]
    lines += _table(("rate", "observed", "upper limit"), [
        ("FPR", _fmt(r["fpr"]), _fmt(r["fpr_upper"])),
        ("FNR", _fmt(r["fnr"]), _fmt(r["fnr_upper"])),
    ])
    lines += [""]
    pairs = [(f"epsilon lower bound at delta {_fmt(r['delta'])}", _fmt(r["epsilon_lower"])),
             ("Gaussian-DP mu lower bound", _fmt(r["mu_lower"]))]
    if "claim" in r:
        verdict = "CONTRADICTED" if r["contradicted"] else "not contradicted"
        pairs += [
            ("claim", r["claim"]["description"]),
            ("claim needs FNR at FPR upper limit >=", f"{_fmt(r['required_fnr'])}  (limit {_fmt(r['fnr_upper'])})"),
            ("claim needs FPR at FNR upper limit >=", f"{_fmt(r['required_fpr'])}  (limit {_fmt(r['fpr_upper'])})"),
            ("verdict", verdict),
        ]
    lines += _pairs(pairs)
    return "\n".join(lines)


# -- epsilon-star --------------------------------------------------------------------------


def _add_epsilon_star(subparsers) -> None:
    p = subparsers.add_parser(
        "epsilon-star",
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
    p.add_argument("train", metavar="TRAIN", help="losses on the training data")
    p.add_argument("test", metavar="TEST", help="losses on held-out (population) data")
    p.add_argument("--delta", type=_number, default=1e-5, metavar="D", help="delta (default: %(default)s)")
    p.add_argument("--method", choices=("parametric", "empirical", "both"), default="both",
                   help="estimator (default: %(default)s)")
    p.add_argument("--column", default=None, metavar="NAME",
                   help="array (.npz) or column (.csv, .parquet) holding the losses, in both files")
    p.add_argument("--train-column", default=None, metavar="NAME", help="column for TRAIN only")
    p.add_argument("--test-column", default=None, metavar="NAME", help="column for TEST only")
    p.add_argument("--goodness-of-fit", type=_count, default=0, metavar="K",
                   help="also report KS p-values of Gaussian mixtures with 1..K components (Appendix 8.2)")
    p.add_argument("--seed", type=_count, default=0, metavar="S", help="seed of the goodness-of-fit split (default: 0)")
    common_args(p)
    p.set_defaults(func=run_epsilon_star, render=render_epsilon_star)


def run_epsilon_star(args) -> dict:
    import dpax

    A = dpax.audit
    train = A.read_losses(args.train, args.train_column if args.train_column is not None else args.column)
    test = A.read_losses(args.test, args.test_column if args.test_column is not None else args.column)
    methods = ("parametric", "empirical") if args.method == "both" else (args.method,)
    out = {"command": "epsilon-star", "train": args.train, "test": args.test, "n_train": int(train.size),
           "n_test": int(test.size), "delta": float(args.delta), "results": {}}
    for m in methods:
        r = A.epsilon_star(train, test, delta=args.delta, method=m)
        i = r.index
        out["results"][m] = {
            "epsilon_star": r.value, "term": r.term, "term_name": r.term_name,
            "threshold": r.threshold, "fpr": None if i < 0 else float(r.fpr[i]),
            "fnr": None if i < 0 else float(r.fnr[i]), "pairs": int(r.fpr.size),
        }
    if args.goodness_of_fit:
        k = int(args.goodness_of_fit)
        n_samples = int(min(1000, max(10, min(train.size, test.size) // 2)))
        g = A.goodness_of_fit(train, test, max_components=k, n_samples=n_samples, seed=args.seed)
        out["goodness_of_fit"] = {"components": g["components"], "n_samples": n_samples,
                                  "train_pvalues": list(map(float, g["train"])),
                                  "test_pvalues": list(map(float, g["test"]))}
    return out


def render_epsilon_star(r: dict) -> str:
    lines = [f"Epsilon* at delta {_fmt(r['delta'])}: {r['n_train']} training losses ({r['train']}), "
             f"{r['n_test']} held-out losses ({r['test']})", ""]
    rows = []
    for m, v in r["results"].items():
        rows.append((m, _fmt(v["epsilon_star"]), _fmt(v["threshold"]), _fmt(v["fpr"]), _fmt(v["fnr"]), v["term_name"]))
    lines += _table(("method", "Epsilon*", "threshold", "FPR", "FNR", "attained by"), rows)
    if "goodness_of_fit" in r:
        g = r["goodness_of_fit"]
        lines += ["", f"Goodness of fit (KS p-values, {g['n_samples']} held-out samples; > 0.05: fit not rejected):"]
        lines += _table(("components", "train", "test"), [
            (str(k), _fmt(a, 3), _fmt(b, 3)) for k, a, b in zip(g["components"], g["train_pvalues"], g["test_pvalues"])])
    return "\n".join(lines)
