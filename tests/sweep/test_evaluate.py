"""The sweep's standard comparison: calibrated rows get out_standard_epsilon,
out_standard_noise_multiplier and out_noise_reduction, the numbers calibrate_dpsgd's
compare_standard gives (at the row's delta); --no-compare-standard / compare_standard=False
leave them empty. The default tests run the comparison alone on calibrate_dpsgd's docstring
configuration (sample rate 0.1, 10 steps, grid 1e-2); a whole sweep runs with -m slow."""

from __future__ import annotations

import csv
import io
import types

import numpy as np
import pytest

import dpax
from dpax import sweep
from dpax.cli.main import build_parser
from dpax.sweep import evaluate
from dpax.targets import Advantage, Epsilon


def _rows(tmp_path, text):
    path = tmp_path / "cfg.csv"
    path.write_text(text)
    return sweep.read_config(str(path))


def test_the_columns_are_answers():
    cols = ("out_standard_epsilon", "out_standard_noise_multiplier", "out_noise_reduction")
    assert all(c in sweep.OUTPUT_COLUMNS for c in cols)
    assert all(c in sweep.results.NUMBER_COLUMNS for c in cols)
    assert sweep.OUTPUT_COLUMNS[-1] == "out_meets_target"
    args = build_parser().parse_args(["sweep", "c.csv", "-o", "r.csv", "--no-compare-standard"])
    assert args.compare_standard is False
    assert build_parser().parse_args(["sweep", "c.csv", "-o", "r.csv"]).compare_standard is True


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


def test_compare_standard_must_be_a_flag(tmp_path):
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("sample_rate,num_steps,advantage\n0.1,10,0.3\n")
    with pytest.raises(TypeError, match="compare_standard must be True or False"):
        sweep.run_sweep(str(cfg), str(tmp_path / "out.csv"), compare_standard="no", progress=False)
    assert not (tmp_path / "out.csv").exists()


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
