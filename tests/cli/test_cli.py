"""The ``dpax`` command line: output against the Python API, errors, the compilation cache.

Small configurations and coarse grids keep the file fast; the numbers the command line prints
must be exactly the ones the Python API returns for the same arguments.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

import dpax
from dpax import cli

P, T, SIGMA, GRID = 0.01, 100, 1.0, 1e-3
CURVE_ARGS = ["curve", "--noise-multiplier", str(SIGMA), "--sample-rate", str(P), "--num-steps", str(T),
              "--grid-step", str(GRID)]


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    """Keep the kernel cache of every test run out of the user's home."""
    path = tmp_path / "jax-cache"
    monkeypatch.setenv("DPAX_CACHE_DIR", str(path))
    return path


def run_json(capsys, args):
    code = cli.main(args + ["--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def check_curve_json(out, alphas, deltas):
    pl = dpax.dpsgd(SIGMA, P, T, grid_step=GRID)
    assert out["command"] == "curve"
    assert out["noise_multiplier"] == SIGMA and out["sample_rate"] == P and out["num_steps"] == T
    assert out["grid_step"] == GRID
    assert out["alpha"] == pytest.approx(alphas, rel=0, abs=0)
    assert out["delta"] == pytest.approx(deltas, rel=0, abs=0)
    beta = np.atleast_1d(pl.beta(np.array(alphas)))
    np.testing.assert_allclose(out["beta"], beta, rtol=1e-12, atol=0)
    np.testing.assert_allclose(out["tpr"], 1 - beta, rtol=1e-12, atol=1e-15)
    assert out["advantage"] == pytest.approx(pl.advantage(), rel=1e-12)
    np.testing.assert_allclose(out["epsilon"], np.atleast_1d(pl.epsilon(np.array(deltas))), rtol=1e-12)
    for key in ("beta", "tpr", "epsilon"):
        assert all(isinstance(v, float) for v in out[key]), key
    assert isinstance(out["advantage"], float)
    # the curve is a real one: more FPR, fewer misses; somewhat private at sigma = 1
    assert np.all(np.diff(out["beta"]) < 0)
    assert 0 < out["advantage"] < 0.5


def test_curve_json_matches_api(capsys):
    alphas, deltas = [0.001, 0.02, 0.3], [1e-6, 1e-3]
    out = run_json(capsys, CURVE_ARGS + ["--alpha", *map(str, alphas), "--delta", *map(str, deltas)])
    check_curve_json(out, alphas, deltas)


def test_curve_defaults_and_table(capsys):
    code = cli.main(CURVE_ARGS)
    out, err = capsys.readouterr()
    assert code == 0, err
    pl = dpax.dpsgd(SIGMA, P, T, grid_step=GRID)
    for header in ("FPR alpha", "FNR beta", "TPR 1-beta", "advantage", "epsilon"):
        assert header in out
    beta = pl.beta(np.array(cli.DEFAULT_ALPHAS))
    for a, b in zip(cli.DEFAULT_ALPHAS, beta):
        row = next(line.split() for line in out.splitlines() if line.split()[:1] == [f"{a:g}"])
        assert float(row[1]) == pytest.approx(b, rel=1e-5)
        assert float(row[2]) == pytest.approx(1 - b, rel=1e-5)
    assert f"{pl.advantage():.6g}" in out
    assert f"{pl.epsilon(1e-5):.6g}" in out


def test_python_m_dpax_subprocess(tmp_path):
    cache = tmp_path / "subprocess-cache"
    env = dict(os.environ, DPAX_CACHE_DIR=str(cache))
    proc = subprocess.run(
        # --no-bounds: the brackets are tested in-process (tests/cli/test_cli_bounds.py)
        # four alphas (query counts are padded to a power of two): the beta kernel of the tests
        # above (three alphas, the four defaults) checks the output here; two compiled one of its own
        [sys.executable, "-m", "dpax", *CURVE_ARGS, "--alpha", "0.01", "0.1", "0.2", "0.4", "--json", "--no-bounds"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    check_curve_json(json.loads(proc.stdout), [0.01, 0.1, 0.2, 0.4], list(cli.DEFAULT_DELTAS))
    # the command line turned the persistent compilation cache on, in DPAX_CACHE_DIR
    assert cache.is_dir() and any(cache.iterdir())


def test_bad_sample_rate_is_a_clean_error(capsys):
    code = cli.main(["curve", "--noise-multiplier", "1", "--sample-rate", "1.5", "--num-steps", "10", "--no-cache"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.startswith("dpax: error:") and "sample_rate" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "args, name",
    [
        (["--noise-multiplier", "-1", "--sample-rate", "0.1", "--num-steps", "10"], "noise_multiplier"),
        (["--noise-multiplier", "nan", "--sample-rate", "0.1", "--num-steps", "10"], "noise_multiplier"),
        (["--noise-multiplier", "1", "--sample-rate", "0.1", "--num-steps", "2.5"], "num_steps"),
        # CURVE_ARGS' configuration (the pair is built before alpha is read: its kernels, not new ones)
        (["--noise-multiplier", str(SIGMA), "--sample-rate", str(P), "--num-steps", str(T), "--grid-step", str(GRID),
          "--alpha", "1.5"], "alpha"),
    ],
)
def test_curve_bad_input(capsys, args, name):
    assert cli.main(["curve", *args, "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpax: error:") and name in err and "Traceback" not in err


def test_calibrate_err_rates_meets_target(capsys):
    alpha, beta, grid = 0.1, 0.5, 1e-2
    out = run_json(capsys, ["calibrate", "--sample-rate", str(P), "--num-steps", str(T), "--alpha", str(alpha),
                            "--beta", str(beta), "--grid-step", str(grid), "--rtol", "1e-3", "--no-compare-standard"])
    assert out["command"] == "calibrate" and out["status"] == "calibrated"
    noise = out["noise_multiplier"]
    assert isinstance(noise, float) and 0.05 < noise < 10
    assert out["target"] == {"type": "err_rates", "alpha": alpha, "beta": beta}
    # it meets the target at the requested grid, and the bracket's lower end does not
    assert dpax.dpsgd(noise, P, T, grid_step=grid).beta(alpha) >= beta
    assert dpax.dpsgd(out["noise_multiplier_failing"], P, T, grid_step=grid).beta(alpha) < beta
    assert noise / out["noise_multiplier_failing"] - 1 <= 1e-3 * (1 + 1e-9)
    assert out["achieved"]["beta"] >= beta
    # no comparison was asked for: NaN becomes null, not a non-JSON NaN
    assert out["standard_noise_multiplier"] is None and out["noise_reduction"] is None


def test_calibrate_tpr_target_and_table(capsys):
    code = cli.main(["calibrate", "--sample-rate", str(P), "--num-steps", str(T), "--alpha", "0.1", "--tpr", "0.5",
                     "--grid-step", "1e-2", "--rtol", "1e-3", "--no-compare-standard"])
    out, err = capsys.readouterr()
    assert code == 0, err
    for text in ("noise multiplier", "achieved FNR beta at FPR 0.1", "TPR <= 0.5", "noise not computed"):
        assert text in out


@pytest.mark.slow  # 13 s; CLI calibration also in test_calibrate_err_rates_meets_target
def test_calibrate_advantage_json(capsys):
    target, grid = 0.2, 1e-2
    out = run_json(capsys, ["calibrate", "--sample-rate", str(P), "--num-steps", str(T), "--advantage", str(target),
                            "--grid-step", str(grid), "--rtol", "1e-3"])
    noise = out["noise_multiplier"]
    assert dpax.dpsgd(noise, P, T, grid_step=grid).advantage() <= target
    assert out["achieved"]["advantage"] <= target
    # attack-aware calibration needs no more noise than standard calibration for the same bound
    assert 0 < noise <= out["standard_noise_multiplier"]
    assert out["noise_reduction"] == pytest.approx(1 - noise / out["standard_noise_multiplier"])
    # the table shows the same comparison
    table = cli.render_calibrate(out)
    for text in ("advantage TPR - FPR <= 0.2", "standard calibration", "noise reduction",
                 f"{100 * out['noise_reduction']:.1f}%"):
        assert text in table


@pytest.mark.parametrize(
    "target",
    [
        ["--alpha", "0.1"],
        ["--beta", "0.5"],
        ["--alpha", "0.1", "--beta", "0.5", "--tpr", "0.5"],
        ["--advantage", "0.1", "--alpha", "0.1", "--beta", "0.5"],
        ["--epsilon", "1"],
        [],
    ],
)
def test_calibrate_needs_exactly_one_target(capsys, target):
    code = cli.main(["calibrate", "--sample-rate", "0.01", "--num-steps", "100", *target, "--no-cache"])
    assert code == 2
    err = capsys.readouterr().err
    assert "exactly one of" in err and "Traceback" not in err


def test_calibrate_bad_target_is_a_clean_error(capsys):
    code = cli.main(["calibrate", "--sample-rate", "0.01", "--num-steps", "100", "--alpha", "0.6", "--beta", "0.5",
                     "--no-cache"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("dpax: error:") and "alpha + beta" in err


def test_probabilities_near_one_print_as_one_minus_their_complement():
    # an FNR of 1 - 4e-9 beside a TPR of 4e-9 prints as such, never as "1" (dpax gdp's Tier II,
    # the attack tables of dpax curve and dpax mechanism); no kernel runs
    from dpax._text import probability
    from dpax.cli.brackets import attack_lines

    assert probability(1 - 4e-9) == "1 - 4e-09" and probability(1 - 1e-12, complement=1e-12) == "1 - 1e-12"
    assert probability(0.999826) == "0.999826"  # 1.7e-4 from 1: six digits keep three of the complement
    assert (probability(1.0), probability(0.0), probability(0.25), probability(None)) == ("1", "0", "0.25", "-")
    lines = attack_lines({"alpha": [1e-10, 0.1], "beta": [1 - 4e-9, 2e-13], "tpr": [4e-9, 1 - 2e-13]})
    assert lines[1].split() == ["1e-10", "1", "-", "4e-09", "4e-09"]
    assert lines[2].split() == ["0.1", "2e-13", "1", "-", "2e-13"]


def test_usage_errors_and_help(capsys):
    assert cli.main([]) == 2
    assert cli.main(["curve", "--sample-rate", "abc"]) == 2
    assert cli.main(["--help"]) == 0
    assert "calibrate" in capsys.readouterr().out


def test_no_cache_keeps_the_call_off_the_disk_and_touches_no_jax_setting(capsys, _cache_dir):
    from dpax._engine import cache

    before = dict(jax.config.values)
    cache.follow_environment()
    with cli.compilation_cache(True) as path:
        assert path == str(_cache_dir)
    with cli.compilation_cache(False) as path:
        assert path is None and not cache.enabled()
    assert cache.directory() == str(_cache_dir)  # restored
    files = set(os.listdir(_cache_dir))
    # --no-bounds: this test is about the cache, not the brackets (tests/cli/test_cli_bounds.py)
    # one step (no composition kernels); follow_environment() emptied the table of kernels in
    # memory and the directory is new: every kernel of the call is compiled, none may be stored
    one_step = ["curve", "--noise-multiplier", str(SIGMA), "--sample-rate", str(P), "--num-steps", "1",
                "--grid-step", "2e-3", "--no-bounds"]
    out = run_json(capsys, one_step + ["--no-cache"])
    assert out["command"] == "curve" and len(out["alpha"]) > 1
    assert set(os.listdir(_cache_dir)) == files
    # with the cache: the same call at one alpha reuses the kernels in memory but for the beta
    # kernel of one query, compiled here and stored
    run_json(capsys, one_step + ["--alpha", "0.1"])
    assert set(os.listdir(_cache_dir)) > files
    assert dict(jax.config.values) == before
    cache.follow_environment()


def test_importing_dpax_leaves_jax_config_alone():
    code = (
        "import jax; before = dict(jax.config.values); import dpax, dpax.cli; "
        "changed = sorted(k for k, v in jax.config.values.items() if before.get(k) != v); "
        "assert not changed, changed"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
