"""dpax.plot and `dpax plot`: figures checked for content (axes labels and scales, number of
lines, the plotted data equal to dpax's numbers, rendered images not blank)."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import dpax
from dpax import plot
from dpax.cli.main import main

STEP = 1e-3


def _pixels(fig) -> np.ndarray:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    buf.seek(0)
    return matplotlib.image.imread(buf)


def _not_blank(img):
    flat = (img[..., :3] * 255).astype(np.uint8).reshape(-1, 3)
    colours = np.unique(flat, axis=0)
    assert len(colours) > 50  # anti-aliased curves, text, several colours
    assert (flat != 255).any(axis=1).mean() > 0.02  # more than a few dark pixels


def test_tradeoff_curves_content():
    pl = dpax.dpsgd([1.0, 2.0], 0.01, 100, grid_step=STEP)  # the batch of the tests below (their kernels)
    fig = plot.tradeoff_curves(pl, ["s=1", "s=2"], log_scale=True)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "FPR alpha" and ax.get_ylabel() == "FNR beta" and ax.get_xscale() == "log"
    lines = ax.get_lines()
    assert len(lines) == 3  # two curves + the diagonal
    assert [line.get_label() for line in lines[:2]] == ["s=1", "s=2"]
    for i, line in enumerate(lines[:2]):
        x, y = line.get_data()
        assert x.min() <= 1e-6 and x.max() == 1.0
        np.testing.assert_array_equal(y, pl[i].beta(x))
    y0, y1 = lines[0].get_ydata(), lines[1].get_ydata()
    assert np.all(y0 <= y1 + 1e-12) and np.any(y0 < y1 - 1e-3)  # less noise: lower curve
    _not_blank(_pixels(fig))
    lin = plot.tradeoff_curves(dpax.dpsgd(1.0, 0.01, 100, grid_step=STEP)).axes[0]  # test_gdp_fit_content's
    assert lin.get_xscale() == "linear" and len(lin.get_lines()) == 2
    with pytest.raises(ValueError, match="labels"):
        plot.tradeoff_curves(pl, ["only one"])


def test_gdp_fit_content():
    pl = dpax.dpsgd(1.0, 0.01, 100, grid_step=STEP)
    mu, regret = dpax.gdp.mu_and_regret(pl)
    fig = plot.gdp_fit(pl)
    exact, fit, _ = fig.axes[0].get_lines()
    a = exact.get_xdata()
    np.testing.assert_allclose(fit.get_ydata(), dpax.gdp.tradeoff(mu, a), atol=1e-12)
    assert np.all(fit.get_ydata() <= exact.get_ydata() + 1e-9)  # f_mu lies below the exact curve
    assert f"{mu:.4g}-GDP" in fit.get_label()
    _not_blank(_pixels(fig))
    with pytest.raises(ValueError, match="one configuration"):
        plot.gdp_fit(dpax.dpsgd([1.0, 2.0], 0.01, 100, grid_step=STEP))


# slow suite: two calibrations of a batch (17 s of compilation); the other plots stay in the default run
@pytest.mark.slow
def test_calibration_comparison_content():
    fig = plot.calibration_comparison(0.01, 50, target="err_rates", alphas=[0.05, 0.1], tprs=[0.2, 0.4],
                                      grid_step=1e-2)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "noise multiplier" and "TPR" in ax.get_xlabel()
    lines = ax.get_lines()
    assert len(lines) == 4  # standard and attack-aware for each FPR
    res = fig.dpax_result
    noise = np.asarray(res.noise_multiplier)
    std = np.asarray(res.standard_noise_multiplier)
    np.testing.assert_allclose(lines[1].get_ydata(), noise[:2])
    np.testing.assert_allclose(lines[0].get_ydata(), std[:2])
    assert np.all(noise < std)  # attack-aware calibration needs less noise (Kulynych et al. 2024, Figure 4)
    _not_blank(_pixels(fig))


def test_command_line_writes_png_svg_pdf(tmp_path):
    from dpax.cli import main

    png, svg, pdf = (str(tmp_path / f"f.{e}") for e in ("png", "svg", "pdf"))
    common = ["--sample-rate", "0.01", "--num-steps", "100", "--grid-step", str(STEP), "--no-cache"]  # kernels above
    assert main(["plot", "tradeoff", "--noise-multiplier", "1", "2", "--log", "-o", png, *common]) == 0
    img = matplotlib.image.imread(png)
    _not_blank(img)
    assert main(["plot", "gdp", "--noise-multiplier", "1", "-o", svg, *common]) == 0
    text = open(svg).read()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and text.count("<path") > 10
    assert main(["plot", "tradeoff", "--noise-multiplier", "1", "-o", pdf, *common, "--json"]) == 0
    assert open(pdf, "rb").read(5) == b"%PDF-"
    assert main(["plot", "tradeoff", "--noise-multiplier", "1", "-o", str(tmp_path / "f.gif"), *common]) == 2
    assert main(["plot", "gdp", "-o", png, *common]) == 2  # no noise multiplier


def _inside_figure(fig, artist):
    """The rendered extent of ``artist`` lies within the figure (nothing cut off)."""
    fig.canvas.draw()
    box, frame = artist.get_window_extent(), fig.bbox
    assert box.x0 >= frame.x0 - 1 and box.x1 <= frame.x1 + 1 and box.y0 >= frame.y0 - 1 and box.y1 <= frame.y1 + 1, (
        box, frame)


def test_diagonal_is_labelled_perfect_privacy():
    """beta = 1 - alpha is random guessing: perfect privacy, not "no privacy"."""
    pl = dpax.dpsgd(1.0, 0.01, 100, grid_step=STEP)  # test_gdp_fit_content's (its kernels)
    for fig in (plot.tradeoff_curves(pl), plot.gdp_fit(pl)):
        labels = [line.get_label() for line in fig.axes[0].get_lines()]
        assert labels[-1] == plot.RANDOM_GUESSING == "perfect privacy (random guessing)"
        np.testing.assert_allclose(fig.axes[0].get_lines()[-1].get_ydata(),
                                   1.0 - fig.axes[0].get_lines()[-1].get_xdata())
        assert not any("no privacy" in lab for lab in labels)
        legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        assert legend[-1] == plot.RANDOM_GUESSING


def test_titles_and_legends_fit_the_figure():
    """A batch row's long description is wrapped, not cut off; rows are labelled by index."""
    pl = dpax.dpsgd([1.0, 2.0], 0.01, 100, grid_step=STEP)
    fig = plot.gdp_fit(pl[0])
    title = fig.axes[0].title
    assert "\n" in title.get_text() and title.get_text().replace("\n", " ").startswith("GDP fit: dpsgd(")
    _inside_figure(fig, title)
    _inside_figure(fig, fig.axes[0].get_legend())
    fig = plot.tradeoff_curves(pl)
    assert [line.get_label() for line in fig.axes[0].get_lines()[:2]] == ["[0]", "[1]"]
    assert fig.axes[0].get_title().startswith("Trade-off curves: dpsgd(")
    _inside_figure(fig, fig.axes[0].title)
    fig = plot.tradeoff_curves([pl, dpax.dpsgd(1.0, 0.01, 100, grid_step=STEP)])
    _inside_figure(fig, fig.axes[0].get_legend())  # long labels wrapped


def test_command_line_gdp_title_formats_numbers(tmp_path):
    """`dpax plot gdp` titles read the numbers (not '<(1,) array>') and fit the figure."""
    import argparse

    from dpax.cli import main
    from dpax.cli import plot_command as cli_plot

    # the examples' `dpax plot gdp` (1, 0.01, 1,000 steps) at grid 1e-3: kernels that other test
    # files compile (10,000 steps at grid 1e-2 compiled 4 of its own, a mu kernel among them)
    args = argparse.Namespace(kind="gdp", noise_multiplier=[1.0], sample_rate=0.01, num_steps=1_000, grid_step=1e-3,
                              log=False)
    fig = cli_plot._figure(args)
    title = fig.axes[0].get_title()
    assert "array" not in title and "<" not in title
    assert title.replace("\n", " ") == "GDP fit of DP-SGD: noise multiplier 1, sample rate 0.01, 1,000 steps"
    _inside_figure(fig, fig.axes[0].title)
    png = str(tmp_path / "gdp.png")
    assert main(["plot", "gdp", "--noise-multiplier", "1", "--sample-rate", "0.01", "--num-steps", "1000",
                 "--grid-step", "1e-3", "-o", png]) == 0  # the same kernels as above
    height, width = matplotlib.image.imread(png).shape[:2]
    assert width >= 700 and height >= 550  # readable at the default 150 dpi


def test_calibration_defaults_are_feasible_and_impossible_targets_are_named(capsys):
    """The defaults (the README's `dpax plot calibration --target err_rates`) are all feasible:
    every TPR above every FPR; a TPR at or below an FPR (random guessing meets it only with
    infinite noise: alpha + beta >= 1) is a clear error, before any computation."""
    from dpax.cli import main

    assert min(plot.DEFAULT_TPRS) > max(plot.DEFAULT_ALPHAS)
    assert all(0 < a < 1 for a in plot.DEFAULT_ADVANTAGES)
    with pytest.raises(ValueError, match=r"tprs: every target TPR must exceed every FPR.*TPR 0.1 at FPR 0.1"):
        plot.calibration_comparison(0.001, 10_000, target="err_rates", tprs=[0.1, 0.5])  # the old default TPR
    with pytest.raises(ValueError, match="tprs"):
        plot.calibration_comparison(0.001, 10_000, target="err_rates", alphas=[0.3], tprs=[0.2])
    with pytest.raises(ValueError, match="advantages"):
        plot.calibration_comparison(0.001, 10_000, advantages=[0.0, 0.1])
    rc = main(["plot", "calibration", "--target", "err_rates", "--tpr", "0.05", "--sample-rate", "0.001",
               "--num-steps", "10000", "-o", "unused.png"])
    err = capsys.readouterr().err
    assert rc == 2 and "TPR 0.05 at FPR 0.1" in err and "Traceback" not in err


def test_one_configuration_refuses_a_pair_of_axes():
    """The figure of one configuration has one panel: a pair of axes (the many-configuration
    figure's) is a TypeError naming ax, before any calibration runs."""
    from matplotlib.figure import Figure

    pair = tuple(Figure().subplots(2, 1))
    with pytest.raises(TypeError, match="ax: the figure of one configuration has one panel"):
        plot.calibration_comparison(0.01, 50, advantages=[0.2], ax=pair)


# slow suite: 15 calibrations (over a minute of compilation on 2 cores); the default run checks
# the defaults' feasibility above
@pytest.mark.slow
def test_calibration_comparison_defaults_run():
    """Every default err_rates target is calibrated (small DP-SGD, coarse grid)."""
    fig = plot.calibration_comparison(0.01, 50, target="err_rates", grid_step=1e-2, progress=False)
    res = fig.dpax_result
    assert np.all(np.isin(res.status, ["calibrated", "met_without_noise"]))  # none infeasible
    assert np.all(np.isfinite(res.noise_multiplier)) and np.all(np.isfinite(res.standard_noise_multiplier))
    lines = fig.axes[0].get_lines()
    assert len(lines) == 2 * len(plot.DEFAULT_ALPHAS)
    np.testing.assert_allclose(lines[0].get_xdata(), plot.DEFAULT_TPRS)
    _inside_figure(fig, fig.axes[0].get_legend())


def test_notebook_figures_are_readable():
    """The committed notebooks' figures are drawn at a readable size (they were 330 x 216 px),
    and the GDP notebook's Figure 3 legend sits beside the axes, off the sigma=1, T=400 peak."""
    import base64
    import os
    import struct

    nbformat = pytest.importorskip("nbformat")
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "notebooks")
    names = sorted(n for n in os.listdir(root) if n.endswith(".ipynb"))
    assert names
    sizes = []
    for name in names:
        nb = nbformat.read(os.path.join(root, name), as_version=4)
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                png = out.get("data", {}).get("image/png")
                if png:
                    head = base64.b64decode(png)[:24]
                    assert head[:8] == b"\x89PNG\r\n\x1a\n"
                    sizes.append((name, *struct.unpack(">II", head[16:24])))
    assert len(sizes) >= 5
    for name, width, height in sizes:
        assert width >= 600 and height >= 380, (name, width, height)
    fig3 = next(c.source for c in nbformat.read(os.path.join(root, "02_gdp_reporting.ipynb"), as_version=4).cells
                if c.cell_type == "code" and 'title="Fig. 3"' in c.source)
    assert 'loc="center left", bbox_to_anchor=(1.01, 0.5)' in fig3


def test_bad_losses_and_points_are_named_before_anything_is_drawn():
    """tradeoff_curves and gdp_fit name a non-PrivacyLoss argument and a points count below 2
    (NumPy's own message named neither)."""
    import dpax

    pl = dpax.gaussian(1.0, grid_step=1e-2)
    with pytest.raises(ValueError, match="points must be an integer >= 2"):
        plot.tradeoff_curves(pl, points=-5)
    with pytest.raises(ValueError, match="points"):
        plot.gdp_fit(pl, points=1)
    with pytest.raises(TypeError, match="losses must be a dpax.PrivacyLoss"):
        plot.tradeoff_curves(3)
    with pytest.raises(TypeError, match=r"losses\[1\] must be a dpax.PrivacyLoss"):
        plot.tradeoff_curves([pl, "x"])
    with pytest.raises(TypeError, match="pl must be a dpax.PrivacyLoss"):
        plot.gdp_fit(3)


def test_options_a_figure_does_not_use_are_refused(capsys):
    """A value that would change nothing is refused naming it: the targets of the other
    --target, targets or delta beside a CalibrationResult (which holds its own), and on the
    command line the options of another KIND (--noise-multiplier for calibration,
    --advantage for tradeoff)."""
    with pytest.raises(ValueError, match=r"alphas is not used with target='advantage'"):
        plot.calibration_comparison(0.01, 50, alphas=[0.1])
    with pytest.raises(ValueError, match=r"tprs is not used with target='advantage'"):
        plot.calibration_comparison(0.01, 50, tprs=[0.5])
    with pytest.raises(ValueError, match=r"advantages is not used with target='err_rates'"):
        plot.calibration_comparison(0.01, 50, target="err_rates", advantages=[0.1])
    # a result as calibrate_dpsgd(sample_rate=0.01, num_steps=50, target=Advantage(0.3), grid_step=1e-2)
    # returns it (noise 0.75): the options are refused before it is read (its calibration compiled
    # ~16 kernels of its own)
    res = dpax.CalibrationResult(
        noise_multiplier=0.75, noise_multiplier_failing=0.7499, achieved={"advantage": 0.2999}, delta=1e-5,
        standard_epsilon=2.0, standard_noise_multiplier=1.5, status="calibrated", target=dpax.targets.Advantage(0.3),
        grid_step=1e-2, rtol=1e-4, reason="", sample_rate=0.01, num_steps=50)
    with pytest.raises(TypeError, match=r"takes no advantages, delta: the result holds"):
        plot.calibration_comparison(res, advantages=[0.1], delta=1e-6)
    base = ["--sample-rate", "0.01", "--num-steps", "50", "--grid-step", "1e-2", "--no-cache", "-o", "x.png"]
    for argv, name in ((["plot", "calibration", "--noise-multiplier", "2.0"], "--noise-multiplier is not used by "
                        "plot calibration (only by plot tradeoff and gdp)"),
                       (["plot", "tradeoff", "--noise-multiplier", "2.0", "--advantage", "0.1"],
                        "--advantage is not used by plot tradeoff (only by plot calibration)"),
                       (["plot", "gdp", "--noise-multiplier", "2.0", "--delta", "1e-6"], "--delta is not used by "
                        "plot gdp"),
                       (["plot", "calibration", "--log"], "--log is not used by plot calibration"),
                       (["plot", "calibration", "--tpr", "0.5"], "--tpr is not used with --target advantage")):
        assert main([*argv, *base]) == 2
        assert name in capsys.readouterr().err, argv
