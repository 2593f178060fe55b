"""Figures: trade-off curves, the GDP fit over the exact curve, standard vs attack-aware
calibration (Figures 3a and 4 of Kulynych et al. 2024). Each function returns a matplotlib
``Figure`` (nothing is shown; save it with ``fig.savefig('x.png' | '.svg' | '.pdf')``).

matplotlib is imported on first use; the command line (``dpax plot``) uses the Agg backend.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import ArrayLike

from . import gdp, targets
from ._engine import validation as _v
from ._engine.x64 import float64
from .calibration import CalibrationResult, calibrate_dpsgd
from .gdp.mu_regret import check_loss
from .privacy_loss import PrivacyLoss

if TYPE_CHECKING:  # matplotlib is imported on first use
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Figure size of a new figure, in inches (the command line saves PNGs at 150 dpi: 780 x 630 px).
FIGSIZE = (5.2, 4.2)
#: Label of the diagonal beta = 1 - alpha: the curve of random guessing, i.e. of perfect privacy.
RANDOM_GUESSING = "perfect privacy (random guessing)"
#: Default targets of :func:`calibration_comparison`: the advantages of Figure 3a of
#: Kulynych et al. 2024 ...
DEFAULT_ADVANTAGES = tuple(np.round(np.linspace(0.01, 0.25, 7), 10))
#: ... and Figure 4's FPRs and attack TPRs. Every TPR exceeds every FPR: a TPR bound at or below the
#: FPR is met only by random guessing (no finite noise), so the paper's axis start 0.1 becomes 0.15.
DEFAULT_ALPHAS = (0.01, 0.05, 0.1)
DEFAULT_TPRS = (0.15, 0.2, 0.3, 0.4, 0.5)


def _figure(ax: Axes | None) -> tuple[Any, Axes]:  # the figure is Any: dpax sets its dpax_result
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state

    fig = Figure(figsize=FIGSIZE, layout="constrained")
    return fig, fig.add_subplot()


def _set_title(ax: Axes, text: str, fontsize: str = "medium") -> None:
    """``text`` as the title of ``ax``, wrapped to the width of the axes (a long mechanism
    description must not run off the figure)."""
    fig_width = ax.figure.get_figwidth()  # type: ignore[union-attr]  # a SubFigure has no width of its own
    width_in = min(0.95 * fig_width, 1.15 * ax.get_position().width * fig_width)  # the title may overhang the axes
    from matplotlib.font_manager import FontProperties

    points = FontProperties(size=fontsize).get_size_in_points()
    chars = max(20, int(width_in * 72.0 / (0.6 * points)))  # a character is at most ~0.6 em wide on average
    ax.set_title(textwrap.fill(text, chars, break_long_words=False, break_on_hyphens=False), fontsize=fontsize)


def _alpha_grid(log_scale: bool, points: int = 400) -> np.ndarray:
    points = _v.one_integer("points", points, minimum=2)
    if log_scale:
        return np.unique(np.concatenate([np.logspace(-6, 0, points), [0.0]]))
    return np.linspace(0.0, 1.0, points)


def _rows(pl: PrivacyLoss, *, alone: bool = False) -> list[tuple[PrivacyLoss, str]]:
    """(row, label) for each configuration of ``pl``. A row of a batch is labelled by its index
    (the description names the whole batch's parameters), ``alone``: by its index only."""
    if not pl.batch_shape:
        return [(pl, pl.description)]
    prefix = "" if alone else f"{pl.description} "
    return [(pl[idx], f"{prefix}[{', '.join(map(str, idx))}]") for idx in np.ndindex(pl.batch_shape)]


def _legend(ax: Axes, fontsize: str = "small") -> None:
    """The legend of ``ax``, long labels wrapped (they must not run off the figure)."""
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, [textwrap.fill(lab, 48, break_long_words=False) for lab in labels], fontsize=fontsize)


def _tradeoff_axes(ax: Axes, alpha: np.ndarray, log_scale: bool) -> None:
    """Axis labels and limits of a trade-off plot: FPR alpha (log-scaled on request), FNR beta."""
    ax.set_xlabel("FPR alpha")
    ax.set_ylabel("FNR beta")
    if log_scale:
        ax.set_xscale("log")
        ax.set_xlim(alpha[alpha > 0][0], 1.0)
    else:
        ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.0)


@float64
def tradeoff_curves(losses: PrivacyLoss | Iterable[PrivacyLoss], labels: Iterable[str] | None = None, *,
                    log_scale: bool = False, ax: Axes | None = None, points: int = 400,
                    title: str | None = None) -> Figure:
    """The trade-off curves of the best membership-inference attack, one line per configuration.

    FNR beta against FPR alpha (Kulynych, Gomez et al., "Attack-aware noise calibration for
    differential privacy", NeurIPS 2024, Algorithm 1; the symmetrised curve,
    :meth:`dpax.PrivacyLoss.beta`), with the diagonal beta = 1 - alpha of random guessing
    (perfect privacy) for reference.

    Args:
        losses: a :class:`dpax.PrivacyLoss` (a batch gives one line per configuration, labelled
            by its index) or several.
        labels: one legend label per line (default: the descriptions, or the batch indices).
        log_scale: a logarithmic FPR axis (from 1e-6), where low-FPR attacks are visible.
        ax: matplotlib axes to draw on (None: a new figure).
        points: the number of FPR values each curve is evaluated at.
        title: the axes' title (None: one naming the curves).

    Returns:
        The matplotlib Figure (nothing is shown).

    Raises:
        TypeError: ``losses`` not PrivacyLoss values.
        ValueError: no PrivacyLoss, ``labels`` not one per line, or ``points`` not an
            integer of at least 2.

    >>> import dpax
    >>> from dpax.plot import tradeoff_curves
    >>> fig = tradeoff_curves(dpax.dpsgd([1.0, 2.0], 0.01, 100, grid_step=1e-3), ["sigma 1", "sigma 2"])
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['sigma 1', 'sigma 2', 'perfect privacy (random guessing)']
    """
    if isinstance(losses, PrivacyLoss):
        losses = [losses]
    if not isinstance(losses, Iterable) or isinstance(losses, (str, bytes)):
        raise TypeError(f"losses must be a dpax.PrivacyLoss or several, got {type(losses).__name__}")
    losses = list(losses)
    for k, pl in enumerate(losses):
        check_loss(pl, f"losses[{k}]")
    _alpha_grid(log_scale, points)  # points checked before anything is drawn
    one_batch = len(losses) == 1 and bool(losses[0].batch_shape)  # rows labelled by index, the title names it
    rows = [row for pl in losses for row in _rows(pl, alone=one_batch)]
    if not rows:
        raise ValueError("tradeoff_curves needs at least one PrivacyLoss")
    if title is None:
        title = "Trade-off curve of the best membership-inference attack"
        if one_batch:
            title = f"Trade-off curves: {losses[0].description}"
    curves = [c for c, _ in rows]
    if labels is None:
        labels = [lab for _, lab in rows]
    labels = list(labels)
    if len(labels) != len(curves):
        raise ValueError(f"labels must have one entry per curve ({len(curves)}), got {len(labels)}")
    fig, ax = _figure(ax)
    alpha = _alpha_grid(log_scale, points)
    for c, lab in zip(curves, labels):
        ax.plot(alpha, c.beta(alpha), label=lab)
    ax.plot(alpha, 1.0 - alpha, color="0.6", linestyle=":", linewidth=1, label=RANDOM_GUESSING)
    _tradeoff_axes(ax, alpha, log_scale)
    _set_title(ax, title)
    _legend(ax)
    return fig


@float64
def gdp_fit(pl: PrivacyLoss, *, log_scale: bool = False, ax: Axes | None = None, points: int = 400,
            title: str | None = None) -> Figure:
    """The exact (symmetrised) trade-off curve of one configuration and the tight mu-GDP curve below it.

    mu and the regret Delta(h, f_mu) are :func:`dpax.gdp.mu_and_regret`'s (Gomez et al.,
    "(epsilon, delta) considered harmful: report Gaussian DP", 2025, Eq. 11 and 13), shown
    in the legend; the diagonal of random guessing is drawn for reference.

    Args:
        pl: a :class:`dpax.PrivacyLoss` of one configuration.
        log_scale: a logarithmic FPR axis (from 1e-6).
        ax: matplotlib axes to draw on (None: a new figure).
        points: the number of FPR values each curve is evaluated at.
        title: the axes' title (None: "GDP fit: " and the description).

    Returns:
        The matplotlib Figure (nothing is shown).

    Raises:
        TypeError: ``pl`` is not a PrivacyLoss.
        ValueError: ``pl`` is a batch (index it: ``pl[i]``), or ``points`` not an integer
            of at least 2.

    >>> import dpax
    >>> from dpax.plot import gdp_fit
    >>> fig = gdp_fit(dpax.dpsgd(1.0, 0.01, 100, grid_step=1e-3))
    >>> [line.get_label() for line in fig.axes[0].get_lines()]  # doctest: +ELLIPSIS
    ['exact curve (dpax)', '0.358...-GDP (regret 0.046)', 'perfect privacy (random guessing)']
    """
    check_loss(pl)
    _alpha_grid(log_scale, points)  # points checked before anything is computed
    if pl.batch_shape:
        raise ValueError("gdp_fit takes one configuration; index a batch (pl[i])")
    mu, regret = gdp.mu_and_regret(pl)
    fig, ax = _figure(ax)
    alpha = _alpha_grid(log_scale, points)
    ax.plot(alpha, pl.beta(alpha), label="exact curve (dpax)")
    ax.plot(alpha, gdp.tradeoff(mu, alpha), linestyle="--", label=f"{mu:.4g}-GDP (regret {regret:.2g})")
    ax.plot(alpha, 1.0 - alpha, color="0.6", linestyle=":", linewidth=1, label=RANDOM_GUESSING)
    _tradeoff_axes(ax, alpha, log_scale)
    _set_title(ax, title or f"GDP fit: {pl.description}", fontsize="small")
    _legend(ax)
    return fig


def _comparison_targets(target: str, advantages: ArrayLike | None, alphas: ArrayLike | None, tprs: ArrayLike | None,
                        shape: tuple[int, ...] | None
                        ) -> tuple[targets.Target, list[tuple[str, slice]], np.ndarray, str]:
    """The targets of :func:`calibration_comparison` (fields of ``shape``), its series (label,
    index into the flat targets), the x values and the x label."""
    unused = {"advantage": ("alphas", alphas), "err_rates": ("advantages", advantages)}.get(target)
    if target == "advantage" and tprs is not None:
        unused = ("tprs", tprs)
    if unused is not None and unused[1] is not None:  # a value that would change nothing
        other = "advantage" if unused[0] == "advantages" else "err_rates"
        raise ValueError(f"{unused[0]} is not used with target={target!r} (only with target={other!r})")
    if target == "advantage":
        x = _v.probabilities("advantages", DEFAULT_ADVANTAGES if advantages is None else advantages,
                             low_open=True, high_open=True).reshape(-1)
        return (targets.Advantage(x.reshape(shape or x.shape)), [("", slice(None))], x,
                "target advantage (max TPR - FPR)")
    if target == "err_rates":
        a = _v.probabilities("alphas", DEFAULT_ALPHAS if alphas is None else alphas,
                             low_open=True, high_open=True).reshape(-1)
        x = _v.probabilities("tprs", DEFAULT_TPRS if tprs is None else tprs, low_open=True, high_open=True).reshape(-1)
        if x.size and a.size and x.min() <= a.max():
            raise ValueError(
                "tprs: every target TPR must exceed every FPR in alphas (random guessing has TPR = FPR, so no "
                f"finite noise keeps an attack below it); got TPR {x.min():g} at FPR {a.max():g}")
        aa, xx = (m.reshape(-1) for m in np.meshgrid(a, x, indexing="ij"))
        tgt = targets.ErrRates(alpha=aa.reshape(shape or aa.shape), beta=(1.0 - xx).reshape(shape or aa.shape))
        series = [(f"FPR {ai:g}", slice(i * x.size, (i + 1) * x.size)) for i, ai in enumerate(a)]
        return tgt, series, x, "target attack TPR (1 - beta) at the FPR"
    raise ValueError(f"target must be 'advantage' or 'err_rates', got {target!r}")


@float64
def calibration_comparison(sample_rate: ArrayLike | CalibrationResult, num_steps: ArrayLike | None = None, *,
                           target: str = "advantage", advantages: ArrayLike | None = None,
                           alphas: ArrayLike | None = None, tprs: ArrayLike | None = None, delta: float = 1e-5,
                           grid_step: float = 1e-3, ax: Axes | tuple[Axes, Axes] | None = None,
                           title: str | None = None, progress: bool | None = None) -> Figure:
    """Noise multiplier from attack-aware vs standard calibration of DP-SGD, for one
    configuration or many.

    One configuration (``sample_rate`` and ``num_steps`` single numbers):
    ``target='advantage'`` (Kulynych et al. 2024, Figure 3a): for each advantage in ``advantages``
    (default :data:`DEFAULT_ADVANTAGES`, 0.01..0.25; each in (0, 1)), the smallest noise
    meeting it (Eq. 14) and the noise standard (epsilon, ``delta``) calibration needs for the
    same bound (Eq. 2 + Proposition 2.6).
    ``target='err_rates'`` (Figure 4): for each FPR in ``alphas`` (default
    :data:`DEFAULT_ALPHAS`, 0.01, 0.05, 0.1) and attack TPR 1 - beta in ``tprs`` (default
    :data:`DEFAULT_TPRS`, 0.15..0.5), the smallest noise with TPR <= 1 - beta at that FPR
    (Eq. 18) and the standard one. Every TPR must exceed every FPR: random guessing already
    has TPR = FPR, so a lower bound needs infinite noise (``ValueError``). All points are one
    batched calibration (``progress`` as in :func:`dpax.calibrate_dpsgd`).

    Many configurations (``sample_rate`` and ``num_steps`` arrays, broadcast like NumPy: pass
    ``p[:, None]`` and ``T[None, :]`` for a grid): every configuration is calibrated to every
    target above in one batched call, and the figure has two panels over the configurations
    (one tick each, labelled by its sample rate and steps): the noise (attack-aware: solid,
    standard: dashed; one colour per target) and the noise reduction 1 - noise / standard
    noise, in percent. A :class:`dpax.CalibrationResult` of a batch computed with
    ``compare_standard=True`` in place of ``sample_rate`` (no ``num_steps``) is drawn the
    same way without computing anything: one tick per configuration it records (per row
    where it records none), one colour per target. ``ax``: None, or with two panels a pair
    of axes.

    Args:
        sample_rate: Poisson sampling rate(s) in (0, 1], or a :class:`dpax.CalibrationResult`.
        num_steps: number(s) of steps, integers >= 1 (None with a result).
        target, advantages, alphas, tprs: the targets, as above.
        delta: delta of the standard calibration, in (0, 1).
        grid_step: the grid of the calibrations.
        ax: axes to draw on (None: a new figure).
        title: the figure's title (None: one naming the configuration(s)).
        progress: as in :func:`dpax.calibrate_dpsgd`.

    Returns:
        A matplotlib Figure; its ``dpax_result`` is the :class:`dpax.CalibrationResult` drawn.

    Raises:
        ValueError: a TPR at or below an FPR, ``target`` unknown, an argument out of range or
            one ``target`` does not use (``alphas`` or ``tprs`` with "advantage",
            ``advantages`` with "err_rates"), or a result without the standard comparison.
        TypeError: ``num_steps`` missing (or given with a result, as are the targets and
            ``delta``), ``ax`` not a pair of axes
            for the two-panel figure, or a pair for the one-panel figure.

    >>> fig = calibration_comparison(0.01, 50, target="err_rates", alphas=[0.1], tprs=[0.1])
    Traceback (most recent call last):
    ...
    ValueError: tprs: every target TPR must exceed every FPR in alphas (random guessing has TPR = FPR, so no finite noise keeps an attack below it); got TPR 0.1 at FPR 0.1
    """  # noqa: E501 (a doctest's expected exception message, kept verbatim on one line)
    delta = _v.scalar("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)  # (calibrate's standard_delta)
    if isinstance(sample_rate, CalibrationResult):
        if num_steps is not None:
            raise TypeError("calibration_comparison(result) takes no num_steps: the result holds its configurations")
        given = [name for name, value in (("advantages", advantages), ("alphas", alphas), ("tprs", tprs))
                 if value is not None]
        given += [name for name, value, default in (("target", target, "advantage"), ("delta", delta, 1e-5))
                  if not (isinstance(value, type(default)) and value == default)]
        if given:  # each would change nothing: the result holds its targets and standard delta
            raise TypeError(f"calibration_comparison(result) takes no {', '.join(given)}: the result holds its "
                            "targets and its standard calibration's delta")
        return _configurations_figure(sample_rate, ax, title)
    if num_steps is None:
        raise TypeError("calibration_comparison needs num_steps (or a CalibrationResult in place of sample_rate)")
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    t = _v.positive_int_array("num_steps", num_steps)
    shape = _v.broadcast_shapes(("sample_rate", p), ("num_steps", t))
    if int(np.prod(shape, dtype=int)) > 1:
        tgt, _, _, _ = _comparison_targets(target, advantages, alphas, tprs, (1, -1))
        res = calibrate_dpsgd(sample_rate=np.broadcast_to(p, shape).reshape(-1, 1),
                              num_steps=np.broadcast_to(t, shape).reshape(-1, 1), target=tgt, grid_step=grid_step,
                              standard_delta=delta, on_infeasible="mark", progress=progress)
        return _configurations_figure(res, ax, title)
    if isinstance(ax, (tuple, list)):  # checked before the calibration runs
        raise TypeError("ax: the figure of one configuration has one panel; pass one axes or None (a pair of "
                        f"axes is for many configurations), got a {type(ax).__name__}")
    rate, steps = float(p.reshape(-1)[0]), int(t.reshape(-1)[0])
    tgt, series, x, xlabel = _comparison_targets(target, advantages, alphas, tprs, None)
    res = calibrate_dpsgd(sample_rate=rate, num_steps=steps, target=tgt, grid_step=grid_step, standard_delta=delta,
                          on_infeasible="mark", progress=progress)
    # CalibrationResult types its fields as object: arrays or scalars
    noise = np.atleast_1d(cast(ArrayLike, res.noise_multiplier))
    std = np.atleast_1d(cast(ArrayLike, res.standard_noise_multiplier))
    fig, panel = _figure(ax)
    colors = [f"C{i}" for i in range(len(series))]
    for (name, sl), col in zip(series, colors):
        sep = ", " if name else ""
        panel.plot(x, std[sl], color=col, linestyle="--", marker="o", markersize=3,
                   label=f"standard (epsilon, {delta:g})-calibration{sep}{name}")
        panel.plot(x, noise[sl], color=col, marker="s", markersize=3, label=f"attack-aware calibration{sep}{name}")
    panel.set_xlabel(xlabel)
    panel.set_ylabel("noise multiplier")
    _set_title(panel, title or f"DP-SGD, sample rate {rate:g}, {steps:,} steps", fontsize="small")
    _legend(panel, fontsize="x-small")
    fig.dpax_result = res  # the calibration behind the figure
    return fig


def _two_axes(ax: Any) -> tuple[Any, Axes, Axes]:
    """(figure, noise axes, reduction axes): a new figure of two panels, or the pair ``ax``."""
    if ax is None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(FIGSIZE[0] * 1.25, FIGSIZE[1] * 1.4), layout="constrained")
        top, bottom = fig.subplots(2, 1, sharex=True)
        return fig, top, bottom
    try:
        top, bottom = ax
    except (TypeError, ValueError):
        raise TypeError("ax: the figure of many configurations has two panels (noise, noise reduction); pass a pair "
                        "of axes or None") from None
    return top.figure, top, bottom


def _configurations_figure(res: CalibrationResult, ax: Axes | tuple[Axes, Axes] | None, title: str | None) -> Figure:
    """The two-panel figure of a batch result (see :func:`calibration_comparison`)."""
    records: list[dict[str, Any]] = res.to_records()
    if all(math.isnan(r["standard_noise_multiplier"]) for r in records):
        raise ValueError("calibration_comparison: the result holds no standard noise to compare with (calibrate_dpsgd "
                         "computes it with compare_standard=True, its default)")
    known = "sample_rate" in records[0]
    ticks: dict = {}
    series: dict = {}
    for i, r in enumerate(records):
        key = (r["sample_rate"], r["num_steps"]) if known else i
        x = ticks.setdefault(key, len(ticks))
        series.setdefault(r["target"], []).append((x, r))
    fig, top, bottom = _two_axes(ax)
    deltas = sorted({r["delta"] for r in records if not math.isnan(r["delta"])})
    for k, (name, points) in enumerate(series.items()):
        col = f"C{k % 10}"
        xs = [x for x, _ in points]
        top.plot(xs, [r["noise_multiplier"] for _, r in points], color=col, marker="s", markersize=3, label=name)
        top.plot(xs, [r["standard_noise_multiplier"] for _, r in points], color=col, linestyle="--", marker="o",
                 markersize=3, label="_nolegend_")
        bottom.plot(xs, [100 * r["noise_reduction"] for _, r in points], color=col, marker="s", markersize=3,
                    label=name)
    at = ", ".join(f"{d:g}" for d in deltas)
    top.plot([], [], color="0.4", label="attack-aware calibration (solid)")
    top.plot([], [], color="0.4", linestyle="--", label=f"standard (epsilon, {at or 'delta'})-calibration (dashed)")
    top.set_ylabel("noise multiplier")
    bottom.set_ylabel("noise reduction (%)")
    labels = [f"p {key[0]:g}\nT {key[1]:,}" if known else f"row {key}" for key in ticks]
    bottom.set_xticks(range(len(labels)), labels, fontsize="x-small", rotation=0 if len(labels) <= 6 else 90)
    bottom.set_xlabel("configuration (sample rate p, steps T)" if known else "row of the result")
    top.set_xlim(-0.5, len(labels) - 0.5)
    _set_title(top, title or f"Attack-aware vs standard calibration of DP-SGD, {len(labels)} configurations",
               fontsize="small")
    handles, names = top.get_legend_handles_labels()  # beside the panels: it hides no point
    top.legend(handles, [textwrap.fill(n, 30, break_long_words=False) for n in names], fontsize="x-small",
               loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.dpax_result = res  # the calibration behind the figure
    return fig
