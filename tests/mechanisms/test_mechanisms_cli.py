"""The ``dpax mechanism`` command (dpax.cli.mechanism_command): randomized response's beta and
epsilon as JSON against the closed form, a composed Laplace as text, and arguments a mechanism
does not take or needs refused with exit status 2."""

from __future__ import annotations

import numpy as np
import pytest
from mechanism_refs import ALPHAS, approx_dp_beta


def test_cli_mechanism_subcommand(capsys):
    import json

    from dpax.cli import main

    # at ALPHAS: the beta kernel tests/mechanisms/test_mechanisms_atoms.py::
    # test_approximate_dp_worst_case_curve[1.0-*] compiles for this support (the computing calls use the
    # run's kernel store, so that they load those kernels; --no-cache: tests/cli/test_parsing.py)
    assert main(["mechanism", "randomized-response", "--epsilon", "1", "--grid-step", "1e-3",
                 "--alpha", *map(repr, ALPHAS.tolist()), "--delta", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mechanism"] == "randomized-response"
    np.testing.assert_allclose(out["beta"], approx_dp_beta(ALPHAS, 1.0), atol=1e-12)
    assert out["epsilon"] == [pytest.approx(1.0, abs=1e-12)]
    # scale 1 (0.5 until 2026-11-27, 2 before): three steps on 6144 points, whose beta,
    # advantage and epsilon kernels tests/cli/test_curve_command.py, tests/cli/test_calibrate_command.py and
    # tests/accountants/test_opacus_style.py compile
    assert main(["mechanism", "laplace", "--scale", "1", "--count", "3", "--grid-step", "1e-3"]) == 0
    text = capsys.readouterr().out
    assert "laplace(scale=1, sensitivity=1) x 3" in text and "advantage" in text
    assert main(["mechanism", "laplace", "--epsilon", "1", "--no-cache"]) == 2
    assert "does not take --epsilon" in capsys.readouterr().err
    assert main(["mechanism", "discrete-gaussian", "--no-cache"]) == 2
    assert "needs --sigma" in capsys.readouterr().err
