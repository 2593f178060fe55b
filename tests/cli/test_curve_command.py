"""``dpax curve`` (:mod:`dpax.cli.curve_command`): the numbers it prints are exactly the
ones the Python API returns for the same arguments, as a table or JSON, also through
``python -m dpax`` (-m slow); each is printed with the optimistic side of its certified bracket
(``--no-bounds`` drops it, ``--accuracy`` chooses the grid); bad input is a clean error.

The brackets' orientation is checked against a closed form: DP-SGD with sample rate 1 and one
step is the Gaussian mechanism with mu = 1 / sigma, whose trade-off curve is
beta(alpha) = Phi(Phi^-1(1 - alpha) - mu). Small configurations and coarse grids (1e-2, 1e-3)
keep the file fast.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from cli_helpers import run, run_json, widths
from scipy.stats import norm

import dpax
from dpax import cli
from dpax._engine import grid as engine_grid

P, T, SIGMA, GRID = 0.01, 100, 1.0, 1e-3

CURVE_ARGS = ["curve", "--noise-multiplier", str(SIGMA), "--sample-rate", str(P), "--num-steps", str(T),
              "--grid-step", str(GRID)]
GAUSSIAN_SIGMA = 1.25  # mu = 0.8
GAUSSIAN = ["--noise-multiplier", str(GAUSSIAN_SIGMA), "--sample-rate", "1", "--num-steps", "1"]
ALPHAS = [0.001, 0.01, 0.1, 0.3]
DELTAS = [1e-3, 1e-5]
CURVE = ["curve", *GAUSSIAN, "--alpha", *map(str, ALPHAS), "--delta", *map(str, DELTAS)]  # one set of kernels


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


@pytest.mark.slow  # ~4 s (a new Python, JAX and kernels); default siblings: tests/cli/test_main.py::
# test_output_into_a_closed_pipe_ends_quietly (`python -m dpax` runs the command line in a new process),
# test_curve_json_matches_api (the JSON numbers are the API's), tests/cli/test_parsing.py::
# test_no_cache_keeps_the_call_off_the_disk_and_touches_no_jax_setting (the command line's cache, in DPAX_CACHE_DIR),
# tests/engine/test_cache.py::test_a_new_process_loads_the_store (a new process computes this one's numbers)
def test_python_m_dpax_subprocess(tmp_path):
    cache = tmp_path / "subprocess-cache"
    env = dict(os.environ, DPAX_CACHE_DIR=str(cache))
    proc = subprocess.run(
        # --no-bounds: the brackets are tested in-process (test_curve_brackets_hold_the_gaussian_truth)
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


def test_curve_brackets_hold_the_gaussian_truth(capsys):
    out = run(capsys, CURVE + ["--grid-step", "1e-2"])
    mu = 1 / GAUSSIAN_SIGMA
    beta_true = norm.cdf(norm.isf(ALPHAS) - mu)
    # beta: safe (the existing key, unchanged) <= truth <= optimistic; TPR the other way round
    assert np.all(np.asarray(out["beta"]) <= beta_true) and np.all(beta_true <= np.asarray(out["beta_optimistic"]))
    np.testing.assert_allclose(out["tpr_optimistic"], 1 - np.asarray(out["beta_optimistic"]), rtol=0, atol=1e-15)
    # advantage and epsilon: optimistic <= truth <= safe
    adv_true = dpax.gdp.advantage(mu)
    # (2.2e-16 of float64 round-off either way: the closed form's own, and jax 0.8's sums differ by that)
    assert out["advantage_optimistic"] <= adv_true + 1e-15 and adv_true <= out["advantage"] + 1e-15
    eps_true = np.asarray(dpax.gdp.epsilon(np.asarray(DELTAS), mu))
    assert np.all(np.asarray(out["epsilon_optimistic"]) <= eps_true) and np.all(eps_true <= np.asarray(out["epsilon"]))
    # the keys are the library's numbers, safe side unchanged
    pl = dpax.dpsgd(GAUSSIAN_SIGMA, 1.0, 1, grid_step=1e-2)
    b = pl.beta(np.asarray(ALPHAS), bounds=True)
    np.testing.assert_array_equal(out["beta"], b.safe)
    np.testing.assert_array_equal(out["beta_optimistic"], b.optimistic)
    assert out["bounds"] is True and "accuracy" not in out
    assert out["max_width"] == pytest.approx(widths(out, ["beta", "epsilon", "advantage"]).max(), rel=1e-12)


def test_curve_table_shows_brackets_and_no_bounds_drops_them(capsys):
    text = run(capsys, CURVE + ["--grid-step", "1e-2"], False)
    for header in ("optimistic beta", "width", "optimistic epsilon", "optimistic", "the truth lies between"):
        assert header in text, header
    pl = dpax.dpsgd(GAUSSIAN_SIGMA, 1.0, 1, grid_step=1e-2)
    # beta and epsilon read off the ALPHAS and DELTAS queries (CURVE's kernels; one alpha or one
    # delta alone compiled its own)
    bb, ee = pl.beta(np.asarray(ALPHAS), bounds=True), pl.epsilon(np.asarray(DELTAS), bounds=True)
    b = type(bb)(*(float(np.asarray(x)[ALPHAS.index(0.01)]) for x in bb))
    e = type(ee)(*(float(np.asarray(x)[DELTAS.index(1e-5)]) for x in ee))
    row = next(line.split() for line in text.splitlines() if line.split()[:1] == ["0.01"])
    assert [float(x) for x in row[1:]] == pytest.approx([b.safe, 1 - b.safe, b.optimistic, b.width], rel=5e-2)
    row = next(line.split() for line in text.splitlines() if line.split()[:1] == ["1e-05"])
    assert [float(x) for x in row[1:]] == pytest.approx([e.safe, e.optimistic, e.width], rel=5e-2)
    plain = run(capsys, CURVE + ["--grid-step", "1e-2", "--no-bounds"], False)
    assert "optimistic" not in plain and "width" not in plain and f"{b.safe:.6g}" in plain
    out = run(capsys, ["curve", *GAUSSIAN, "--grid-step", "1e-2", "--no-bounds", "--delta", *map(str, DELTAS)])
    assert not any(k.endswith("_optimistic") for k in out) and "bounds" not in out


def test_curve_accuracy_chooses_the_grid(capsys):
    acc = 2e-5  # grid 1e-2 gives epsilon(1e-5) a bracket 1e-4 wide: refined once
    out = run(capsys, CURVE + ["--accuracy", str(acc)])
    tried = out["grid_steps_tried"]
    assert out["accuracy"] == acc and tried[0][0] == 1e-2 and tried[0][1] > acc >= tried[-1][1]
    assert out["grid_step"] == tried[-1][0] < 1e-2
    # every reported number's bracket is within the accuracy, and the one that decided is reported
    w = widths(out, ["beta", "tpr", "epsilon", "advantage"])
    assert w.max() <= acc and out["max_width"] == pytest.approx(tried[-1][1], rel=1e-12)
    text = cli.curve_command.render_curve(out)
    assert f"grid step {out['grid_step']:g} chosen by --accuracy 2e-05" in text


def test_accuracy_stopped_by_the_memory_budget_says_the_width_reached(capsys, monkeypatch):
    # room for grid 1e-2 but not for the next grid the refinement asks for
    monkeypatch.setattr(engine_grid, "MEMORY_LIMIT_BYTES", 2**20)
    assert cli.main(CURVE + ["--accuracy", "1e-9", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpax: error: --accuracy: accuracy=1e-09 not reached: width ")
    assert "at grid_step=0.01" in err and "memory budget" in err and "Traceback" not in err


def readme_cli_example():
    """The ``dpax curve`` command of the README's "Certified error bars" section and the output
    it is shown to print."""
    from test_readme import README, code_blocks

    section = README.split("\n## Certified error bars", 1)[1].split("\n## ", 1)[0]
    command = next(b for b in code_blocks(section, "bash") if b.code.startswith("dpax curve")).code.split()
    shown = section.split("It prints (timing aside):", 1)[1]
    return command[1:], code_blocks(shown, "")[0].code


@pytest.mark.slow  # three grids down to 1e-4 at 10,000 steps (~15 s cold); its run alone is in test_readme's slow set
def test_readme_cli_example_prints_what_the_readme_shows(capsys):
    from test_readme import mismatches

    args, shown = readme_cli_example()
    text = run(capsys, args, False)
    actual = "\n".join(x for x in text.splitlines() if not x.startswith("(computed in"))
    assert "--accuracy" in args and not mismatches(shown, actual), mismatches(shown, actual)
