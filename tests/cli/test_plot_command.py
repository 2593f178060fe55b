"""``dpax plot`` (:mod:`dpax.cli.plot_command`): an ``-o`` that cannot be written and a
``--dpi`` outside its range are refused, naming the option, before anything is computed.
"""

from __future__ import annotations

import pytest
from cli_helpers import fail

CHEAP = ["--grid-step", "1e-2", "--no-cache"]


def test_plot_output_that_cannot_be_written(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    args = ["plot", "tradeoff", "--noise-multiplier", "1", "--sample-rate", "0.1", "--num-steps", "5", *CHEAP]
    target = tmp_path / "nowhere" / "x.png"
    msg = fail(args + ["-o", str(target)], capsys)  # refused before anything is computed
    assert "--output" in msg and str(target) in msg
    folder = tmp_path / "taken.png"  # a directory where the figure should go
    folder.mkdir()
    msg = fail(args + ["-o", str(folder)], capsys)
    assert "--output" in msg and str(folder) in msg


def test_plot_dpi_is_bounded(tmp_path, capsys):
    msg = fail(["plot", "tradeoff", "--noise-multiplier", "1", "--sample-rate", "0.1", "--num-steps", "5",
                "-o", str(tmp_path / "x.png"), "--dpi", "1e6", *CHEAP], capsys)
    assert "--dpi" in msg and "1200" in msg


def test_plot_dpi_of_a_vector_figure_and_options_named(tmp_path, capsys):
    """--dpi sets a PNG's resolution: with SVG or PDF it changed nothing; a bad --delta or
    --advantage is named as the option, not as calibration_comparison's argument."""
    base = ["--sample-rate", "0.01", "--num-steps", "10", "--grid-step", "1e-2", "--no-cache"]
    msg = fail(["plot", "tradeoff", "--noise-multiplier", "2", *base, "-o", str(tmp_path / "a.svg"), "--dpi", "10"],
               capsys)
    assert "--dpi sets a PNG's resolution; SVG is a vector format" in msg
    msg = fail(["plot", "calibration", *base, "-o", str(tmp_path / "a.png"), "--delta", "0"], capsys)
    assert "--delta (delta) must lie in (0, 1), got 0" in msg
    msg = fail(["plot", "calibration", *base, "-o", str(tmp_path / "a.png"), "--advantage", "0"], capsys)
    assert "--advantage (advantages) must lie in (0, 1)" in msg
