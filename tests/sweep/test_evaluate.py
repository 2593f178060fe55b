"""dpax.sweep.evaluate: a batch's answers. Analysed rows equal dpax's own functions and
calibrated rows calibrate_dpsgd (-m slow). The standard comparison: calibrated rows get
out_standard_epsilon, out_standard_noise_multiplier and out_noise_reduction, the numbers
calibrate_dpsgd's compare_standard gives (at the row's delta); compare_standard=False leaves
them empty. The default tests run the comparison alone on calibrate_dpsgd's docstring
configuration (sample rate 0.1, 10 steps, grid 1e-2); a whole sweep runs with -m slow.

A sweep's answers do not depend on ``--batch-size``: a row is computed on its own support,
window and FFT length whatever rows share its batch, so batches of 1 and 64 rows give every
output column to float round-off (1e-12 relative; observed: identical)."""

from __future__ import annotations

import csv
import io
import os
import types

import numpy as np
import pytest
from sweep_helpers import read_csv_rows, write_file

import dpax
from dpax import sweep
from dpax.sweep import evaluate
from dpax.targets import Advantage, Epsilon

STEP = 1e-2
#: one row per batch against all rows in one batch (a batch of 2 adds ~5 s of compilation)
SIZES = (1, 64)
COLUMNS = ("out_beta", "out_advantage", "out_epsilon", "out_mu", "out_regret")


def _rows(tmp_path, text):
    path = tmp_path / "cfg.csv"
    path.write_text(text)
    return sweep.read_config(str(path))


def test_standard_comparison_is_one_batched_calibration(tmp_path, monkeypatch):
    """The standard noise is calibrate_dpsgd's to Epsilon(the target's standard epsilon at the
    row's delta, that delta), as calibrate_dpsgd(compare_standard=True) computes it (-m slow
    compares the numbers); an infeasible standard calibration leaves NaN."""
    rows = _rows(tmp_path, "sample_rate,num_steps,grid_step,advantage,delta\n0.1,10,0.01,0.3,\n0.2,20,0.01,0.4,1e-6\n")
    target = sweep.make_target([r.params for r in rows])
    seen = {}

    def fake(**kw):
        seen.update(kw)
        return types.SimpleNamespace(noise_multiplier=np.array([2.0, 4.0]),
                                     status=np.array(["calibrated", "infeasible"]))

    monkeypatch.setattr(evaluate, "calibrate_dpsgd", fake)
    got = evaluate._standard(rows, target, np.array([0.5, 1.0]), 0.01, 1e-3)
    eps = Advantage([0.3, 0.4]).standard_epsilon(np.array([1e-5, 1e-6]))
    np.testing.assert_array_equal(got["out_standard_epsilon"], eps)
    assert isinstance(seen["target"], Epsilon)
    np.testing.assert_array_equal(seen["target"].epsilon, eps)
    np.testing.assert_array_equal(seen["target"].delta, [1e-5, 1e-6])
    assert seen["sample_rate"].tolist() == [0.1, 0.2] and seen["num_steps"].tolist() == [10, 20]
    assert seen["grid_step"] == 0.01 and seen["rtol"] == 1e-3 and seen["compare_standard"] is False
    np.testing.assert_array_equal(got["out_standard_noise_multiplier"], [2.0, np.nan])
    np.testing.assert_array_equal(got["out_noise_reduction"], [0.75, np.nan])


def test_an_epsilon_target_is_its_own_standard(tmp_path):
    rows = _rows(tmp_path, "sample_rate,num_steps,epsilon,delta\n0.1,10,2.0,1e-6\n0.1,20,3.0,1e-5\n")
    target = sweep.make_target([r.params for r in rows])
    assert isinstance(target, Epsilon)
    got = evaluate._standard(rows, target, np.array([1.5, 2.5]), 0.01, 1e-4)  # nothing calibrated
    np.testing.assert_array_equal(got["out_standard_epsilon"], [2.0, 3.0])
    np.testing.assert_array_equal(got["out_standard_noise_multiplier"], [1.5, 2.5])
    np.testing.assert_array_equal(got["out_noise_reduction"], [0.0, 0.0])


# slow suite: a whole sweep with calibrated rows (the mu / regret kernel of their own, ~20 s cold)
@pytest.mark.slow
def test_a_sweep_writes_the_comparison(tmp_path):
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("name,sample_rate,num_steps,grid_step,advantage,epsilon,delta,noise_multiplier\n"
                   "adv,0.1,10,0.01,0.3,,,\n"
                   "eps,0.1,10,0.01,,0.62,1e-5,\n"
                   "fixed,0.1,10,0.01,,,,1.0\n")
    out, bare = str(tmp_path / "out.csv"), str(tmp_path / "bare.csv")
    sweep.run_sweep(str(cfg), out, progress=False, log=io.StringIO())
    sweep.run_sweep(str(cfg), bare, progress=False, log=io.StringIO(), compare_standard=False)
    res = {r["name"]: r for r in csv.DictReader(open(out, newline=""))}
    ref = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=Advantage(0.3), grid_step=1e-2)
    assert float(res["adv"]["out_standard_noise_multiplier"]) == ref.standard_noise_multiplier
    assert float(res["adv"]["out_noise_reduction"]) == pytest.approx(ref.noise_reduction, rel=1e-12)
    assert res["eps"]["out_standard_noise_multiplier"] == res["eps"]["out_noise_multiplier"]
    assert res["fixed"]["out_standard_noise_multiplier"] == ""  # analysed rows: no comparison
    for r in csv.DictReader(open(bare, newline="")):
        assert r["out_standard_noise_multiplier"] == r["out_noise_reduction"] == "" and r["out_noise_multiplier"]
    assert sweep.run_sweep(str(cfg), out, resume=True, progress=False, log=io.StringIO())["already_done"] == 3


@pytest.mark.slow  # 13 s; the sweep runner is also tested by the resume tests
def test_analysed_and_calibrated_rows_match_dpax(tmp_path):
    cfg = write_file(tmp_path / "cfg.csv", (
        "name,noise_multiplier,sample_rate,num_steps,alpha,beta,advantage,delta\n"
        "a,1.0,0.01,100,0.1,,,\n"
        "b,1.5,0.02,50,,,0.2,1e-6\n"
        "c,,0.01,100,,,0.1,\n"
        "d,oops,0.01,100,,,,\n"))
    out = str(tmp_path / "res.csv")
    log = io.StringIO()
    summary = sweep.run_sweep(cfg, out, grid_step=STEP, progress=False, log=log)
    assert summary["rows"] == 4 and summary["invalid"] == 1 and summary["written"] == 4
    assert "line 5 (row 4)" in log.getvalue()
    res = {int(r["row"]): r for r in read_csv_rows(out)}
    assert res[4]["status"] == "invalid" and "noise_multiplier" in res[4]["reason"]
    assert res[1]["name"] == "a" and res[1]["mode"] == "analyse"

    # the sweep batches its rows otherwise than this check does, and a row's numbers can move
    # in their last bits with the batch around it (XLA's blocking of batched sums)
    pl = dpax.dpsgd([1.0, 1.5], [0.01, 0.02], [100, 50], grid_step=STEP)
    assert float(res[1]["out_beta"]) == pytest.approx(pl[0].beta(0.1), rel=1e-12)
    assert float(res[1]["out_advantage"]) == pytest.approx(pl[0].advantage(), rel=1e-12)
    assert float(res[2]["out_epsilon"]) == pytest.approx(pl[1].epsilon(1e-6), rel=1e-12)
    assert float(res[1]["out_epsilon"]) == pytest.approx(pl[0].epsilon(1e-5), rel=1e-12)
    mu, regret = dpax.gdp.mu_and_regret(pl)
    assert float(res[2]["out_mu"]) == pytest.approx(mu[1], rel=1e-12)
    assert res[1]["out_beta"] and res[2]["out_beta"] == ""  # no alpha, no beta
    assert res[2]["out_meets_target"] == "true"  # advantage 0.043 <= 0.2

    cal = dpax.calibrate_dpsgd(sample_rate=0.01, num_steps=100, target=dpax.targets.Advantage(0.1), grid_step=STEP,
                               compare_standard=False)
    assert res[3]["status"] == "calibrated"
    assert float(res[3]["out_noise_multiplier"]) == pytest.approx(cal.noise_multiplier, rel=1e-4)
    assert float(res[3]["out_advantage"]) <= 0.1

    # an existing file is not overwritten by accident; reject mode refuses malformed files
    with pytest.raises(ValueError, match="exists"):
        sweep.run_sweep(cfg, out, grid_step=STEP, progress=False, log=io.StringIO())
    with pytest.raises(sweep.SweepConfigError, match="line 5"):
        sweep.run_sweep(cfg, str(tmp_path / "other.csv"), on_error="reject", progress=False)
    assert not os.path.exists(tmp_path / "other.csv")


def _results_by_row(path):
    with open(path, newline="") as f:
        return {int(r["row"]): r for r in csv.DictReader(f)}


#: rows of very different support width side by side (0.3 x 20 steps is ~30 times wider than
#: 4.0 x 200 at p = 0.001), the narrow 1.685 / 0.01 / 20 among them, with two alphas and two
#: deltas in the batch
ROWS = ["1.685,0.01,20,0.01,1e-5", "0.3,0.01,20,0.1,1e-5", "4.0,0.001,200,0.1,1e-8"]


#: two more rows of middle widths (and two more alphas and deltas): each row alone compiles
#: ~9 kernels of its own, so the five-row table is slow; the default one keeps the extremes
MORE_ROWS = ["0.8,0.5,50,0.05,1e-5", "2.0,0.2,100,0.001,1e-6"]


#: the batch of tests/engine/test_composition.py::test_a_narrow_row_in_a_wide_batch_keeps_its_own_far_tails
#: at its grid 1e-3, with two alphas and two deltas: a narrow and a ~200 times wider row side by
#: side, whose construction and mu kernels (the batch's and the rows') other test files compile
WIDE = ["4.0,0.001,2000,0.01,1e-10", "2.0,0.2,1000,0.1,1e-6"]


# 3rows and 5rows are slow (3rows: 9 kernels of its own, a 3-row mu kernel among them, ~4 s);
# default sibling: the 2rows case, the same checks on a batch of two rows of very different widths
@pytest.mark.parametrize("rows, step", [pytest.param(WIDE, 1e-3, id="2rows"),
                                        pytest.param(ROWS, STEP, id="3rows", marks=pytest.mark.slow),
                                        pytest.param(ROWS + MORE_ROWS, STEP, id="5rows", marks=pytest.mark.slow)])
def test_batch_size_does_not_change_the_answers(tmp_path, rows, step):
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("noise_multiplier,sample_rate,num_steps,alpha,delta\n" + "".join(r + "\n" for r in rows))
    results = {}
    for size in SIZES:
        out = tmp_path / f"res{size}.csv"
        sweep.run_sweep(str(cfg), str(out), grid_step=step, batch_size=size, progress=False, log=io.StringIO())
        results[size] = _results_by_row(out)
    base = results[64]
    assert len(base) == len(rows) and all(r["status"] == "analysed" for r in base.values())
    for size in SIZES[:-1]:
        for row, r in results[size].items():
            for col in COLUMNS:
                a, b = float(base[row][col]), float(r[col])
                np.testing.assert_allclose(b, a, rtol=1e-12, atol=0, err_msg=f"row {row} {col} batch {size}")
