"""What the risk-reporting subcommands print: the risk summary of a privacy loss with its
certified brackets (``--bounds``), and the grid that ``--accuracy`` chooses.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._text import fmt, probability, table
from ..privacy_loss import Interval, PrivacyLoss, refine
from .parsing import positive


def bracket_args(p: argparse.ArgumentParser, applies_to: str, *, no_bounds: bool = True,
                 also_prints: str = "") -> None:
    """The "certified brackets" argument group: --accuracy (refine the grid until the brackets
    of ``applies_to`` are that narrow; ``also_prints``: what the command then prints beside
    the grid chosen) and, if ``no_bounds``, --no-bounds (safe side only)."""
    g = p.add_argument_group("certified brackets")
    g.add_argument("--accuracy", type=positive, metavar="A", help=(
        "instead of --grid-step: refine the grid (from 1e-2; widths shrink about as the step squared) until "
        f"the certified bracket of {applies_to} is at most A wide (absolute, on each number: epsilon's, the "
        f"widest, usually decides); prints the grid chosen{also_prints}. A refinement stopped by the memory "
        "budget is an error that gives the width reached"))
    if no_bounds:
        g.add_argument("--no-bounds", dest="bounds", action="store_false", help=(
            "print each number on the safe side only, without its certified bracket (by default the "
            "optimistic side and the width are printed too: the truth lies in between)"))


def choose_grid(args: argparse.Namespace, build: Callable[[float], PrivacyLoss],
                evaluate: Callable[[PrivacyLoss], Interval]) -> tuple[PrivacyLoss, dict]:
    """The privacy loss at ``--grid-step``, or on the grid :func:`dpax.refine` chooses for
    ``--accuracy`` (``evaluate`` gives the brackets the accuracy applies to, as one Interval),
    and the JSON keys of that choice (``accuracy``, ``grid_steps_tried``: [step, widest
    bracket] of each grid tried). Giving both options is a usage error."""
    accuracy = getattr(args, "accuracy", None)
    if accuracy is None:
        return build(args.grid_step), {}
    if args.grid_step_given:
        args.parser.error("give either --grid-step or --accuracy, not both")
    try:
        r = refine(build, evaluate, accuracy)
    except ValueError as exc:
        raise ValueError(f"--accuracy: {exc}; ask for a larger --accuracy") from exc
    return r.privacy_loss, {"accuracy": float(accuracy), "grid_steps_tried": [[h, w] for h, w in r.history]}


def joint(brackets: Iterable[Interval]) -> Interval:
    """One Interval of every value of ``brackets`` (flattened): its widest width is theirs.

    >>> joint([Interval(0.5, 0.75), Interval([1.0, 2.0], [1.0, 1.5])]).width.tolist()
    [0.25, 0.0, 0.5]
    """
    flat = [(np.ravel(b.safe), np.ravel(b.optimistic)) for b in brackets]
    return Interval(np.concatenate([s for s, _ in flat]), np.concatenate([o for _, o in flat]))


def grid_lines(r: dict) -> list[str]:
    """What a result computed with ``--accuracy`` says about the grid chosen (else nothing)."""
    if "accuracy" not in r:
        return []
    tried = ", ".join(f"{fmt(h, 2)} -> {fmt(w, 2)}" for h, w in r["grid_steps_tried"])
    return [f"grid step {fmt(r['grid_step'])} chosen by --accuracy {fmt(r['accuracy'])} "
            f"(widest bracket at each grid tried: {tried})"]


def bracket_note(r: dict) -> list[str]:
    """The line that says how to read the brackets, when ``r`` has them."""
    if not r.get("bounds"):
        return []
    return ["Each number is on the safe side; the truth lies between it and the optimistic value beside it",
            "(certified bracket; width = |safe - optimistic|, what the grid step costs)."]


# -- risk summary --------------------------------------------------------------------------


def risk_brackets(pl: PrivacyLoss, alpha: ArrayLike, delta: ArrayLike) -> dict[str, Interval]:
    """The certified brackets of beta at each ``alpha``, the advantage and epsilon at each ``delta``.

    >>> import dpax
    >>> b = risk_brackets(dpax.gaussian(1.0, grid_step=1e-2), [0.1], [1e-5, 1e-6])
    >>> sorted(b), bool(b["beta"].safe[0] <= b["beta"].optimistic[0])
    (['advantage', 'beta', 'epsilon'], True)
    """
    beta = pl.beta(np.atleast_1d(np.asarray(alpha, dtype=float)), bounds=True)
    advantage = pl.advantage(bounds=True)
    epsilon = pl.epsilon(np.atleast_1d(np.asarray(delta, dtype=float)), bounds=True)
    assert isinstance(beta, Interval) and isinstance(advantage, Interval) and isinstance(epsilon, Interval)  # bounds
    return {"beta": beta, "advantage": advantage, "epsilon": epsilon}




def risk_summary(pl: PrivacyLoss, alpha: ArrayLike, delta: ArrayLike, bounds: bool = False) -> dict:
    """JSON-ready risk of ``pl``: beta and TPR at each FPR ``alpha``, the advantage, epsilon at
    each ``delta``, with the grid step, support length and tail mass.

    Args:
        pl: one (not a batch of) privacy loss.
        alpha: FPRs at which to report the FNR beta of the best attack.
        delta: deltas at which to report epsilon.
        bounds: also give each number's certified bracket: the keys ``bounds`` (True),
            ``beta_optimistic``, ``tpr_optimistic``, ``advantage_optimistic``,
            ``epsilon_optimistic`` (the other side of each number, from
            :meth:`PrivacyLoss.bounds`) and ``max_width`` (the widest bracket).

    Returns:
        dict with keys grid_step, alpha, beta, tpr, advantage, delta, epsilon, support_length,
        tail_mass (plain floats, ints and lists), and with ``bounds`` those above.

    >>> import dpax
    >>> r = risk_summary(dpax.gaussian(1.0, grid_step=1e-2), [0.1], [1e-5])
    >>> sorted(r) == sorted(["grid_step", "alpha", "beta", "tpr", "advantage", "delta", "epsilon",
    ...                      "support_length", "tail_mass"])
    True
    """
    alpha = np.asarray(alpha, dtype=float)
    delta = np.asarray(delta, dtype=float)
    if bounds:
        b = risk_brackets(pl, alpha, delta)
        beta, advantage, epsilon = b["beta"].safe, b["advantage"].safe, b["epsilon"].safe
    else:
        beta, advantage, epsilon = pl.beta(alpha), pl.advantage(), pl.epsilon(delta)
    beta = np.atleast_1d(beta)
    out = {
        "grid_step": float(pl.grid_step),
        "alpha": alpha.tolist(),
        "beta": beta.tolist(),
        "tpr": (1.0 - beta).tolist(),
        "advantage": float(advantage),
        "delta": delta.tolist(),
        "epsilon": np.atleast_1d(epsilon).tolist(),
        "support_length": int(pl.support_length),
        "tail_mass": float(pl.tail_mass),
    }
    if bounds:
        beta_o = np.atleast_1d(b["beta"].optimistic)
        out.update(bounds=True, beta_optimistic=beta_o.tolist(), tpr_optimistic=(1.0 - beta_o).tolist(),
                   advantage_optimistic=float(b["advantage"].optimistic),
                   epsilon_optimistic=np.atleast_1d(b["epsilon"].optimistic).tolist(),
                   max_width=max_width(b.values()))
    return out


def max_width(brackets: Iterable[Interval]) -> float:
    """The widest of ``brackets`` (Intervals; NaN widths, both ends infinite, left out; 0 if none)."""
    w = np.atleast_1d(np.asarray(joint(list(brackets)).width, dtype=float))
    w = w[~np.isnan(w)]
    return float(w.max()) if w.size else 0.0


def _width(safe: float, optimistic: float) -> str:
    return fmt(abs(safe - optimistic), 2)  # inf - inf: NaN, shown as '-'


def attack_lines(r: dict) -> list[str]:
    """Table of the best attack (FPR alpha, FNR beta, TPR) of a :func:`risk_summary`, with the
    optimistic beta and the bracket's width when ``r`` has them; probabilities near 1 as
    "1 - q" (:func:`probability`)."""
    rows: list[tuple[str, ...]] = [(fmt(a), probability(b), probability(t, complement=b))
            for a, b, t in zip(r["alpha"], r["beta"], r["tpr"])]
    if "beta_optimistic" not in r:
        return table(("FPR alpha", "FNR beta", "TPR 1-beta"), rows)
    rows = [row + (probability(o), _width(b, o)) for row, b, o in zip(rows, r["beta"], r["beta_optimistic"])]
    return table(("FPR alpha", "FNR beta", "TPR 1-beta", "optimistic beta", "width"), rows)


def epsilon_lines(deltas: Sequence[float], epsilons: Sequence[float],
                  optimistic: Sequence[float] | None = None) -> list[str]:
    """Table of epsilon at each delta (with the optimistic epsilon and the bracket's width if given)."""
    if optimistic is None:
        return table(("delta", "epsilon"), [(fmt(d), fmt(e)) for d, e in zip(deltas, epsilons)])
    rows = [(fmt(d), fmt(e), fmt(o), _width(e, o)) for d, e, o in zip(deltas, epsilons, optimistic)]
    return table(("delta", "epsilon", "optimistic epsilon", "width"), rows)


def bracket_text(safe: float, r: dict, key: str) -> str:
    """``safe`` formatted, followed by ``(optimistic X, width W)`` when ``r`` has ``key``."""
    if key not in r:
        return fmt(safe)
    return f"{fmt(safe)}  (optimistic {fmt(r[key])}, width {_width(safe, r[key])})"
