"""CalibrationResult as a table (dpax.result_table): one row per configuration as text, records,
CSV and a pandas DataFrame. The tables are checked on results written out by hand (nothing
computed) and on calibrate_dpsgd's docstring example (its kernels: nothing compiled of its own)."""

from __future__ import annotations

import csv
import io
import math
import sys
import types

import numpy as np
import pytest

import dpax
from dpax import result_table
from dpax.targets import GDP, Accuracy, Advantage, All, Epsilon, ErrRates

NAN = float("nan")


def _result(target, shape, *, configuration=True, **fields):
    """A CalibrationResult of ``shape`` with made-up numbers (row i: noise 1 + i / 10, standard
    noise 2 + i / 10; the last row infeasible), its configuration recorded or not."""
    n = int(np.prod(shape, dtype=int))
    noise = 1.0 + np.arange(n) / 10
    noise[-1] = NAN
    status = np.array(["calibrated"] * (n - 1) + ["infeasible"])
    reason = np.array([""] * (n - 1) + ["the target is not met even at noise 1000, the upper end"])
    base = dict(noise_multiplier=noise.reshape(shape), noise_multiplier_failing=(noise * 0.99).reshape(shape),
                achieved={"advantage": np.full(shape, 0.2), "epsilon": np.full(shape, np.inf)},
                delta=np.full(shape, 1e-5), standard_epsilon=np.full(shape, 3.0),
                standard_noise_multiplier=(2.0 + np.arange(n) / 10).reshape(shape), status=status.reshape(shape),
                target=dpax.targets.as_target(target), grid_step=0.01, rtol=1e-4, reason=reason.reshape(shape))
    if configuration:
        base.update(sample_rate=np.broadcast_to([0.01, 0.02][: shape[-1]], shape).copy(),
                    num_steps=np.broadcast_to(np.array([[100], [1000]])[: shape[0]] if len(shape) == 2 else 100,
                                              shape).copy())
    base.update(fields)
    return dpax.CalibrationResult(**base)


def test_records_one_per_configuration_in_c_order():
    r = _result(Advantage([[0.1], [0.2]]), (2, 2))
    recs = r.to_records()
    assert len(recs) == 4
    assert [(x["sample_rate"], x["num_steps"], x["target_advantage"]) for x in recs] == [
        (0.01, 100, 0.1), (0.02, 100, 0.1), (0.01, 1000, 0.2), (0.02, 1000, 0.2)]
    first = recs[0]
    assert list(first) == ["sample_rate", "num_steps", "target", "target_advantage", "noise_multiplier",
                           "standard_noise_multiplier", "noise_reduction", "standard_epsilon", "delta",
                           "achieved_advantage", "achieved_epsilon", "status", "reason", "grid_step"]
    assert first["target"] == "advantage <= 0.1" and first["noise_multiplier"] == 1.0
    assert first["noise_reduction"] == pytest.approx(0.5) and first["status"] == "calibrated"
    assert type(first["num_steps"]) is int and type(first["noise_multiplier"]) is float
    assert math.isnan(recs[3]["noise_multiplier"]) and recs[3]["status"] == "infeasible" and recs[3]["reason"]
    np.testing.assert_allclose([x["noise_reduction"] for x in recs[:3]], np.ravel(r.noise_reduction)[:3])


def test_text_table_shows_the_comparison():
    r = _result(Advantage(0.1), (2, 2))
    lines = r.table().split("\n")
    assert lines[0].split() == ["sample", "rate", "steps", "target", "noise", "standard", "noise", "reduction",
                                "status"]
    assert len(lines) == 5
    assert lines[1].split() == ["0.01", "100", "advantage", "<=", "0.1", "1", "2", "50.0%", "calibrated"]
    assert lines[4].split() == ["0.02", "1,000", "advantage", "<=", "0.1", "-", "2.3", "-", "infeasible"]
    assert len({len(line) for line in lines}) == 1  # aligned
    short = r.table(max_rows=2).split("\n")
    assert len(short) == 4 and short[-1].strip() == "... 2 more row(s) of 4 (table(max_rows=None) shows all)"
    for bad in (0, 1.5, True):
        with pytest.raises((ValueError, TypeError), match="max_rows"):
            r.table(max_rows=bad)


def test_a_result_without_its_configuration_is_known_by_its_rows():
    r = _result(GDP([1.0, 2.0]), (2,), configuration=False)
    assert r.sample_rate is None and r.num_steps is None
    assert "sample_rate" not in r.to_records()[0]
    head = r.table().split("\n")[0].split()
    assert head[:3] == ["target", "noise", "standard"] and r.to_records()[1]["target"] == "2-GDP"


def test_targets_in_words_and_their_numbers():
    shape = (2,)
    both = [ErrRates(0.1, [0.5, 0.6]), Accuracy(0.05, 0.6), Epsilon(2.0, 1e-6)]
    r = _result(both, shape)
    rec = r.to_records()[1]
    assert rec["target"] == "FNR >= 0.6 at FPR 0.1 and accuracy <= 0.6 at FPR 0.05 and (2, 1e-06)-DP"
    # a field two targets share is named after the target's kind
    assert (rec["target_alpha"], rec["target_beta"], rec["target_accuracy_alpha"], rec["target_accuracy"],
            rec["target_epsilon"], rec["target_delta"]) == (0.1, 0.6, 0.05, 0.6, 2.0, 1e-6)
    assert result_table.describe_targets(All(Advantage(0.3)), ()) == ["advantage <= 0.3"]


def test_csv_round_trip(tmp_path):
    r = _result(Advantage([0.1, 0.2]), (1, 2), noise_interval=dpax.Interval(np.array([[1.0, NAN]]),
                                                                             np.array([[0.9, NAN]])))
    text = r.to_csv()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 2 and rows[0]["noise_multiplier_optimistic"] == "0.9"
    assert rows[0]["noise_multiplier"] == "1.0" and rows[1]["noise_multiplier"] == ""  # NaN: an empty cell
    assert rows[0]["achieved_epsilon"] == "inf" and rows[0]["num_steps"] == "100"
    assert float(rows[0]["standard_noise_multiplier"]) == 2.0  # floats as their exact repr
    path = tmp_path / "r.csv"
    assert r.to_csv(str(path)) is None and path.read_text(encoding="utf-8") == text
    buf = io.StringIO()
    r.to_csv(buf)
    assert buf.getvalue() == text
    with pytest.raises(TypeError, match="path_or_file"):
        r.to_csv(42)


def test_dataframe_needs_pandas_only_when_asked(monkeypatch):
    r = _result(Advantage(0.1), (1, 2))
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed
    with pytest.raises(ImportError, match="needs pandas, which dpax does not depend on.*to_records"):
        r.to_dataframe()
    calls = []
    fake = types.ModuleType("pandas")
    fake.DataFrame = types.SimpleNamespace(from_records=lambda recs, columns: calls.append((recs, columns)) or "df")
    monkeypatch.setitem(sys.modules, "pandas", fake)
    assert r.to_dataframe() == "df"
    (recs, cols), = calls
    assert cols == list(recs[0]) and len(recs) == 2 and recs[1]["sample_rate"] == 0.02


def test_calibrate_dpsgd_records_its_configuration():
    # calibrate_dpsgd's docstring example (its kernels)
    r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=Advantage(0.3), grid_step=1e-2,
                             compare_standard=False)
    assert r.sample_rate == 0.1 and r.num_steps == 10
    (rec,) = r.to_records()
    assert (rec["sample_rate"], rec["num_steps"], rec["target"]) == (0.1, 10, "advantage <= 0.3")
    assert rec["noise_multiplier"] == r.noise_multiplier and rec["achieved_advantage"] == r.achieved["advantage"]
    assert math.isnan(rec["standard_noise_multiplier"]) and math.isnan(rec["noise_reduction"])
    assert r.table().split("\n")[1].split()[:5] == ["0.1", "10", "advantage", "<=", "0.3"]
