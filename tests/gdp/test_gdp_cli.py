"""The ``dpax gdp`` command (dpax.cli.gdp_command) on DP-SGD and on an (epsilon, delta) guarantee:
its JSON output is dpax.gdp's mu and regret, its table quotes Proposition 6.1, incomplete or
invalid input exits with status 2. (Its certified brackets: tests/cli/test_gdp_command.py.)"""

from __future__ import annotations

import json

import pytest
from gdp_losses import _dpsgd

from dpax import gdp


def test_cli_gdp(capsys):
    from dpax import cli

    assert cli.main(["gdp", "--noise-multiplier", "1", "--sample-rate", "0.3", "--num-steps", "100",
                     "--grid-step", "1e-3", "--json", "--no-bounds"]) == 0
    # (--no-bounds: the plumbing here; the brackets:
    # tests/cli/test_gdp_command.py::test_gdp_brackets_hold_the_gaussian_truth. The run's kernel store on:
    # this DP-SGD's kernels are tests/gdp/test_gdp_mu_regret.py::test_dpsgd_matches_gdpnum's, loaded, not
    # compiled again; --no-cache: tests/cli/test_parsing.py)
    out = json.loads(capsys.readouterr().out)
    mu, regret = gdp.mu_and_regret(_dpsgd(1.0, 0.3, 100))
    assert out["mu"] == pytest.approx(mu) and out["regret"] == pytest.approx(regret)
    assert out["gdp_ok"] is False and len(out["beta"]) == 8 and len(out["epsilon"]) == 3
    assert cli.main(["gdp", "--epsilon", "8", "--delta", "1e-5", "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "1.666" in text and "Proposition 6.1" in text
    assert cli.main(["gdp", "--noise-multiplier", "2", "--no-cache"]) == 2  # incomplete mechanism
    assert cli.main(["gdp", "--epsilon", "1", "--delta", "0", "--no-cache"]) == 2
    assert "delta" in capsys.readouterr().err
