"""dpax._text: the number formatting and plain-text layout every report and CLI command uses
(its docstring examples run in tests/test_docs.py; these check the rest of what it documents)."""

from __future__ import annotations

import json

import numpy as np

from dpax._text import NEAR_ONE, fmt, jsonable, pairs, probability, table


def test_fmt_significant_digits_and_special_values():
    assert fmt(0.4051249) == "0.405125"  # 6 significant digits by default
    assert fmt(0.4051249, digits=3) == "0.405"
    assert fmt(123456789.0) == "1.23457e+08"
    assert fmt(2) == "2" and fmt(np.float32(0.5)) == "0.5" and fmt(np.int64(7)) == "7"
    # "-" for None and NaN; strings as they are; infinities by sign
    assert fmt(None) == "-" and fmt(float("nan")) == "-" and fmt(np.nan) == "-"
    assert fmt("n/a") == "n/a" and fmt("") == ""
    assert fmt(float("inf")) == "inf" and fmt(-np.inf) == "-inf"
    assert fmt(-0.0001234567) == "-0.000123457"


def test_probability_writes_one_minus_q_near_one():
    # within NEAR_ONE of 1: "1 - q", q = 1 - value, to `digits` significant digits
    assert probability(1 - 2.83701e-10) == "1 - 2.83701e-10"
    assert probability(1 - 2.83701e-10, digits=2) == "1 - 2.8e-10"
    # q given as computed (the FNR beside a TPR of 1 - FNR): its digits, not 1 - value's
    assert probability(1.0 - 1.234567e-12, complement=1.234567e-12) == "1 - 1.23457e-12"
    assert probability(0.99999, complement=1e-5) == "1 - 1e-05"
    # at or beyond NEAR_ONE from 1, and at 1 itself: as fmt writes it
    assert probability(1 - NEAR_ONE, complement=NEAR_ONE) == fmt(1 - NEAR_ONE)
    assert probability(0.999826) == "0.999826" and probability(1.0) == "1"
    # a complement of 0 (the value is 1) or a small value: plain
    assert probability(1.0, complement=0.0) == "1"
    assert probability(1e-12) == "1e-12" and probability(0.26, digits=1) == "0.3"
    # None, NaN and values outside [0, 1] are fmt's
    assert probability(None) == "-" and probability(float("nan")) == "-"
    assert probability(1.00001) == "1.00001" and probability(-0.5) == "-0.5"
    assert NEAR_ONE == 1e-4


def test_table_right_aligns_under_the_widest_cell_or_header():
    lines = table(("name", "v"), [("a", "1.5"), ("long", "22")])
    assert lines == ["  name    v", "     a  1.5", "  long   22"]
    # the header is widened by the cells, every line the same length, the indent as given
    lines = table(("x", "y"), [("123", "4")], indent="")
    assert lines == ["  x  y", "123  4"]
    assert table(("name", "v"), []) == ["  name  v"]  # no rows: the header alone


def test_pairs_pads_keys_to_one_width():
    assert pairs([("mu", "1.5"), ("regret", "0.001")]) == ["  mu      1.5", "  regret  0.001"]
    assert pairs([("a", "x")], indent="") == ["a  x"]
    assert pairs([("key", "")], indent="- ") == ["- key  "]
    assert pairs([]) == []


def test_jsonable_gives_what_json_writes():
    value = {
        1: np.array([1.0, np.inf, -np.inf, np.nan]),
        "t": (np.int64(3), np.float32(0.5), np.bool_(True), None, "s"),
        "nested": [{"x": float("nan")}],
        "flag": False,
    }
    out = jsonable(value)
    assert out == {
        "1": [1.0, "inf", "-inf", None],
        "t": [3, 0.5, True, None, "s"],
        "nested": [{"x": None}],
        "flag": False,
    }
    # plain Python types only: bools stay bools (not ints), integers ints, floats floats
    assert type(out["t"][0]) is int and type(out["t"][1]) is float and type(out["t"][2]) is bool
    assert type(out["flag"]) is bool
    # strict JSON (no NaN / Infinity tokens) round-trips
    assert json.loads(json.dumps(out, allow_nan=False)) == out
    assert jsonable(np.array([[1, 2], [3, 4]])) == [[1, 2], [3, 4]]
