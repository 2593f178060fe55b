"""dpax.plot.calibration_comparison over many configurations (arrays of sample rates / steps,
or a batch CalibrationResult): two panels, noise (attack-aware and standard) and noise
reduction, one tick per configuration and one colour per target; `dpax plot calibration` with
several values. The default tests draw results written out by hand and check what is passed
to calibrate_dpsgd (nothing computed); a real two-configuration figure runs with -m slow."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import dpax
from dpax import plot
from dpax.targets import Advantage

NAN = float("nan")


def _result(shape, *, configuration=True, standard=True):
    """A batch CalibrationResult of ``shape`` = (configurations, targets): configuration i has
    sample rate 0.01 (i + 1) and 100 (i + 1) steps; target j advantage 0.1 (j + 1); noise
    1 + i - j / 10, standard noise twice that."""
    n, m = shape
    i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    noise = 1.0 + i - j / 10
    std = 2 * noise if standard else np.full(shape, NAN)
    extra = dict(sample_rate=0.01 * (i + 1.0), num_steps=100 * (i + 1)) if configuration else {}
    return dpax.CalibrationResult(
        noise_multiplier=noise, noise_multiplier_failing=noise * 0.99, achieved={"advantage": 0.1 * (j + 1.0)},
        delta=np.full(shape, 1e-5), standard_epsilon=np.full(shape, 2.0), standard_noise_multiplier=std,
        status=np.full(shape, "calibrated"), target=Advantage(0.1 * (j + 1.0)), grid_step=0.01, rtol=1e-4,
        reason=np.full(shape, ""), **extra)


def test_a_batch_result_is_drawn_over_its_configurations():
    res = _result((3, 2))
    fig = plot.calibration_comparison(res)
    assert fig.dpax_result is res
    top, bottom = fig.axes
    assert top.get_ylabel() == "noise multiplier" and bottom.get_ylabel() == "noise reduction (%)"
    lines = top.get_lines()
    assert len(lines) == 2 * 2 + 2  # attack-aware and standard per target, two legend keys
    np.testing.assert_allclose(lines[0].get_xdata(), [0, 1, 2])
    np.testing.assert_allclose(lines[0].get_ydata(), res.noise_multiplier[:, 0])
    np.testing.assert_allclose(lines[1].get_ydata(), res.standard_noise_multiplier[:, 0])
    np.testing.assert_allclose(lines[2].get_ydata(), res.noise_multiplier[:, 1])
    assert lines[0].get_color() == lines[1].get_color() != lines[2].get_color()
    assert lines[1].get_linestyle() == "--" and lines[0].get_linestyle() == "-"
    np.testing.assert_allclose(bottom.get_lines()[1].get_ydata(), 50.0)  # 1 - noise / (2 noise)
    ticks = [t.get_text() for t in bottom.get_xticklabels()]
    assert ticks == ["p 0.01\nT 100", "p 0.02\nT 200", "p 0.03\nT 300"]
    legend = [t.get_text().replace("\n", " ") for t in top.get_legend().get_texts()]
    assert legend[:2] == ["advantage <= 0.1", "advantage <= 0.2"] and "standard (epsilon, 1e-05)" in legend[3]
    assert "3 configurations" in top.get_title()


def test_a_result_without_configuration_is_drawn_by_row():
    fig = plot.calibration_comparison(_result((2, 1), configuration=False))
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()] == ["row 0", "row 1"]
    assert fig.axes[1].get_xlabel() == "row of the result"


def test_without_standard_noise_there_is_nothing_to_compare():
    with pytest.raises(ValueError, match="no standard noise.*compare_standard=True"):
        plot.calibration_comparison(_result((2, 1), standard=False))
    with pytest.raises(TypeError, match="takes no num_steps"):
        plot.calibration_comparison(_result((2, 1)), 100)
    with pytest.raises(TypeError, match="needs num_steps"):
        plot.calibration_comparison(0.01)
    with pytest.raises(TypeError, match="pair of axes"):
        plot.calibration_comparison(_result((2, 1)), ax=object())


def test_arrays_of_configurations_are_one_batched_calibration(monkeypatch):
    seen = {}

    def fake(**kw):
        seen.update(kw)
        return _result((3, 2))

    monkeypatch.setattr(plot, "calibrate_dpsgd", fake)
    fig = plot.calibration_comparison([0.01, 0.02, 0.03], [100, 200, 300], advantages=[0.1, 0.2], grid_step=1e-2,
                                      delta=1e-6, progress=False)
    assert seen["sample_rate"].shape == seen["num_steps"].shape == (3, 1)  # configurations x targets
    assert np.shape(seen["target"].advantage) == (1, 2) and seen["standard_delta"] == 1e-6
    assert seen["on_infeasible"] == "mark" and seen["grid_step"] == 1e-2
    assert len(fig.axes) == 2 and len(fig.axes[0].get_lines()) == 6
    monkeypatch.setattr(plot, "calibrate_dpsgd", lambda **kw: seen.update(kw) or _result((2, 6)))
    plot.calibration_comparison(np.array([[0.01], [0.02]]), [100, 200, 300], target="err_rates", alphas=[0.05, 0.1],
                                tprs=[0.2, 0.3, 0.4])  # a 2 x 3 grid of configurations, 6 ErrRates targets
    assert seen["sample_rate"].reshape(-1).tolist() == [0.01] * 3 + [0.02] * 3
    assert seen["num_steps"].reshape(-1).tolist() == [100, 200, 300] * 2
    assert np.shape(seen["target"].alpha) == (1, 6)
    with pytest.raises(ValueError, match="sample_rate must lie in"):
        plot.calibration_comparison([0.5, 1.5], 10)
    with pytest.raises(ValueError, match="num_steps must be a whole number"):
        plot.calibration_comparison([0.5, 0.1], 10.5)


def test_command_line_takes_several_configurations(monkeypatch, tmp_path, capsys):
    from dpax.cli import main

    seen, draw = {}, plot.calibration_comparison

    def fake(sample_rate, num_steps, **kw):
        seen.update(sample_rate=sample_rate, num_steps=num_steps, **kw)
        return draw(_result((4, 1)))

    monkeypatch.setattr(plot, "calibration_comparison", fake)
    png = str(tmp_path / "grid.png")
    args = ["plot", "calibration", "--advantage", "0.1", "-o", png, "--grid-step", "1e-2", "--no-cache"]
    assert main(args + ["--sample-rate", "0.01", "0.02", "--num-steps", "100", "200"]) == 0
    assert seen["sample_rate"] == [0.01, 0.01, 0.02, 0.02] and seen["num_steps"] == [100, 200, 100, 200]
    out = capsys.readouterr().out
    assert "wrote calibration plot" in out and "advantage <= 0.1" in out and "50.0%" in out
    assert main(args + ["--dataset-size", "60000", "--batch-size", "256", "512", "--epochs", "10", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert seen["sample_rate"] == [256 / 60000, 512 / 60000] and seen["num_steps"] == [2350, 1180]
    assert r["schedule"]["batch_size"] == [256, 512] and r["schedule"]["steps_per_epoch"] == [235, 118]
    assert len(r["results"]) == 4 and r["results"][0]["standard_noise_multiplier"] == 2.0
    assert matplotlib.image.imread(png).shape[0] > 100
    # one configuration: as before, the single-configuration figure
    assert main(args + ["--sample-rate", "0.01", "--num-steps", "100"]) == 0
    assert seen["sample_rate"] == 0.01 and seen["num_steps"] == 100
    capsys.readouterr()
    # the other kinds take one configuration
    assert main(["plot", "tradeoff", "--noise-multiplier", "1", "--sample-rate", "0.01", "0.02", "--num-steps", "100",
                 "-o", png, "--no-cache"]) == 2
    assert "plot tradeoff takes one configuration" in capsys.readouterr().err


# slow suite: two configurations calibrated with the standard comparison (kernels of their own)
@pytest.mark.slow
def test_two_configurations_calibrated():
    fig = plot.calibration_comparison([0.05, 0.1], 10, advantages=[0.2, 0.3], grid_step=1e-2, progress=False)
    res = fig.dpax_result
    assert np.shape(res.noise_multiplier) == (2, 2)
    ref = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=Advantage(0.3), grid_step=1e-2)
    assert res.noise_multiplier[1, 1] == pytest.approx(ref.noise_multiplier, rel=1e-12)
    assert res.standard_noise_multiplier[1, 1] == pytest.approx(ref.standard_noise_multiplier, rel=1e-12)
    assert np.all(res.noise_multiplier < res.standard_noise_multiplier)
    np.testing.assert_allclose(fig.axes[1].get_lines()[1].get_ydata(), 100 * res.noise_reduction[:, 1])
