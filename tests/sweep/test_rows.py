"""dpax.sweep.rows: one row of a sweep file read and checked. A malformed row's message is
kept short (no row's whole repr), values JSON cannot hold are carried to the results as text,
and parse_row applies the column rules it documents, with make_target building the target
of the kinds a row carries."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from sweep_helpers import write_file

from dpax import sweep, targets


def test_messages_never_carry_a_whole_row(tmp_path):
    huge = list(range(10_000))
    path = write_file(tmp_path / "cfg.json", json.dumps([
        huge,
        {"noise_multiplier": huge, "sample_rate": 0.1, "num_steps": 5},
        {"noise_multiplier": 1, "sample_rate": 0.1, "num_steps": 5, "mechanism": "x" * 10_000},
    ]))
    rows = sweep.read_config(path)
    assert [r.error[:20] for r in rows] == ["must be a mapping of", "noise_multiplier mus", "mechanism must be 'd"]
    assert all(len(r.error) <= 300 for r in rows)
    with pytest.raises(sweep.SweepConfigError) as err:
        sweep.run_sweep(path, str(tmp_path / "r.csv"), on_error="reject", progress=False)
    assert len(str(err.value)) < 600 and "\n" not in str(err.value) and "3 malformed row(s)" in str(err.value)


def test_carried_values_json_cannot_hold_are_written_as_text(tmp_path):
    """A YAML date (or binary) is carried to JSON-lines results as its text, not a crash."""
    path = write_file(tmp_path / "cfg.yaml", "- {sample_rate: 0.1, when: 2020-01-02, blob: !!binary aGk=}\n")
    out = str(tmp_path / "r.jsonl")
    sweep.run_sweep(path, out, progress=False, log=io.StringIO())
    (rec,) = sweep.read_results(out)
    assert rec["when"] == "2020-01-02" and rec["blob"] == "b'hi'" and rec["status"] == "invalid"


def test_parse_row_applies_its_column_rules_and_make_target_the_rows_kinds():
    """parse_row's documented rules, each kept in Row.error (not raised); a well-formed row's
    numbers parsed (num_steps an int, the grid step the default unless the row gives one, empty
    values dropped, 'dpsgd' in any spelling); the target kinds in their fixed order, the batch
    key, and make_target's target of those kinds with one entry per row."""
    base = {"sample_rate": "0.01", "num_steps": "100"}
    errors = {
        "beta needs alpha": {**base, "beta": 0.5},
        "epsilon needs delta": {**base, "epsilon": 1},
        "mechanism must be 'dpsgd'": {**base, "mu": 1, "mechanism": "laplace"},
        "alpha + beta must be < 1": {**base, "alpha": 0.6, "beta": 0.6},
        "num_steps must be a whole number": {**base, "mu": 1, "num_steps": 2.5},
        "missing sample_rate": {"num_steps": 5, "mu": 1},
        "mu must be a number, got True": {**base, "mu": True},
        "noise_multiplier must lie in (0, inf)": {**base, "noise_multiplier": 0},
        "needs a target": base,
    }
    for message, record in errors.items():
        r = sweep.parse_row(7, 9, record, 1e-3)
        assert (r.row, r.line, r.params) == (7, 9, {}) and message in r.error, (message, r.error)

    r = sweep.parse_row(3, 4, {**base, "mu": 1, "mechanism": " DP-SGD ", "name": "", "grid_step": "0.01"}, 1e-3)
    assert r.error == "" and r.params == {"sample_rate": 0.01, "num_steps": 100, "grid_step": 0.01, "mu": 1.0}
    assert type(r.params["num_steps"]) is int and "name" not in r.raw and r.raw["mechanism"] == " DP-SGD "
    assert sweep.parse_row(3, 4, {**base, "mu": 1}, 1e-3).params["grid_step"] == 1e-3

    kinds = ("err_rates", "advantage", "epsilon", "gdp")
    every = {**base, "mu": 1, "epsilon": 1, "delta": 1e-5, "advantage": 0.2, "beta": 0.5, "alpha": 0.1}
    full = sweep.parse_row(1, 2, every, 1e-3)
    assert full.mode == "calibrate" and full.target_kinds() == kinds
    assert full.batch_key() == (1e-3, "calibrate", kinds)
    analysed = sweep.parse_row(2, 3, {**base, "noise_multiplier": 1, "mu": 1}, 1e-3)
    assert analysed.mode == "analyse" and analysed.batch_key() == (1e-3, "analyse", ())
    target = sweep.make_target([full.params, {**full.params, "beta": 0.6, "mu": 2.0}])
    assert isinstance(target, targets.All)
    err, adv, eps, gdp = target.parts
    np.testing.assert_array_equal(err.beta, [0.5, 0.6])
    np.testing.assert_array_equal(err.alpha, [0.1, 0.1])
    np.testing.assert_array_equal(adv.advantage, [0.2, 0.2])
    np.testing.assert_array_equal(eps.delta, [1e-5, 1e-5])
    np.testing.assert_array_equal(gdp.mu, [1.0, 2.0])
    assert isinstance(sweep.make_target([{"mu": 0.5}]), targets.GDP)
    with pytest.raises(ValueError, match="alpha"):
        sweep.make_target([{"alpha": 0.1, "beta": 0.5}, {"alpha": 0.7, "beta": 0.5}])


def test_counts_past_2_53_and_rows_that_are_strings(tmp_path):
    """num_steps 2**53 + 1 rounded to 2**53 as a float64 and passed the range check (the row
    then failed at run time); a JSON line that is a string was reported as that string."""
    row = sweep.parse_row(1, 2, {"sample_rate": 0.1, "num_steps": "9007199254740993", "mu": 1.0}, 1e-2)
    assert row.error == "num_steps must be at most 2**53 (9,007,199,254,740,992), got 9007199254740993"
    row = sweep.parse_row(1, 2, {"sample_rate": 0.1, "num_steps": 2**53 + 1, "mu": 1.0}, 1e-2)
    assert "at most 2**53" in row.error
    assert sweep.parse_row(1, 2, {"sample_rate": 0.1, "num_steps": 2**53, "mu": 1.0}, 1e-2).error == ""
    path = write_file(tmp_path / "rows.jsonl", '"x"\n{"sample_rate": 0.1, "num_steps": 5, "mu": 1}\n')
    first, second = sweep.read_config(path)
    assert first.error == "must be a mapping of column -> value, got str 'x'" and second.error == ""
