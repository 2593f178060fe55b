"""Sweep files: a table of DP-SGD configurations read from CSV, JSON (lines or an array) or
YAML, each row parsed and checked (see :mod:`dpax.sweep` for the columns).

Nothing in a file is evaluated: values are parsed as numbers, YAML with the safe loader.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os

import numpy as np

from .. import targets as T
from .._engine import validation as _v

#: Columns dpax reads; any other column is carried to the results untouched.
NUMERIC_COLUMNS = ("noise_multiplier", "sample_rate", "num_steps", "grid_step", "alpha", "beta", "advantage",
                   "epsilon", "delta", "mu")
KNOWN_COLUMNS = NUMERIC_COLUMNS + ("mechanism", "name", "id")


class SweepConfigError(ValueError):
    """Malformed rows of a sweep file (raised when ``on_error='reject'``)."""


@dataclasses.dataclass
class Row:
    """One configuration: its 1-based ``row`` number (the resume key), the file ``line`` it
    starts on, the raw values as read, and the parsed numeric parameters."""

    row: int
    line: int
    raw: dict
    params: dict = dataclasses.field(default_factory=dict)
    error: str = ""

    @property
    def mode(self) -> str:
        return "analyse" if "noise_multiplier" in self.params else "calibrate"

    def target_kinds(self) -> tuple[str, ...]:
        p = self.params
        kinds = []
        if "beta" in p:
            kinds.append("err_rates")
        if "advantage" in p:
            kinds.append("advantage")
        if "epsilon" in p:
            kinds.append("epsilon")
        if "mu" in p:
            kinds.append("gdp")
        return tuple(kinds)


def _fmt_of(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext == ".csv":
        return "csv"
    if ext in (".json", ".jsonl", ".ndjson"):
        return "json"
    if ext in (".yaml", ".yml"):
        return "yaml"
    raise ValueError(f"config file must end in .csv, .json, .jsonl, .yaml or .yml, got {path!r}")


def _read_records(path: str) -> list[tuple[int, object]]:
    """(line, record) pairs; a record is a dict of column -> value (or something malformed)."""
    fmt = _fmt_of(path)
    with open(path, newline="" if fmt == "csv" else None, encoding="utf-8-sig") as fh:  # a BOM (Excel) is dropped
        text = fh.read()
    if fmt == "csv":
        return _csv_records(path, text)
    if fmt == "json" and path.lower().endswith((".jsonl", ".ndjson")):
        return _json_lines_records(text)
    return _yaml_records(path, text)  # JSON arrays too: YAML's safe composer keeps line numbers


def _csv_records(path: str, text: str) -> list[tuple[int, object]]:
    """Records of a CSV file: the first non-empty line is the header."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header = None
    out = []
    for values in reader:
        line = reader.line_num
        if header is None:
            if not any(v.strip() for v in values):
                continue
            header = [h.strip() for h in values]
            if len(set(header)) != len(header) or "" in header:
                raise SweepConfigError(f"{path}: line {line}: the header must name every column once, got {values}")
            continue
        if not any(v.strip() for v in values):
            continue
        if len(values) != len(header):
            out.append((line, f"has {len(values)} fields, the header has {len(header)}"))
            continue
        out.append((line, {h: v.strip() for h, v in zip(header, values) if v.strip() != ""}))
    if header is None:
        raise SweepConfigError(f"{path}: empty CSV file (no header)")
    return out


def _json_lines_records(text: str) -> list[tuple[int, object]]:
    """Records of a JSON-lines file, one object a line."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append((i, json.loads(line)))
            except json.JSONDecodeError as exc:
                out.append((i, f"is not valid JSON ({exc.msg})"))
    return out


def _yaml_records(path: str, text: str) -> list[tuple[int, object]]:
    """Records of a YAML (or JSON array) file: a list of rows, or a mapping with 'rows' and
    optional 'defaults'. Parsed with the safe loader: no Python objects are built."""
    import yaml  # PyYAML loads in ~50 ms: only when a YAML / JSON file is read

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        doc = yaml.safe_load(text)  # plain data only: tags that would build Python objects are refused
    except yaml.YAMLError as exc:
        raise SweepConfigError(f"{path}: cannot parse: {exc}") from None
    if isinstance(node, yaml.MappingNode):  # {"rows": [...]} / {"defaults": {...}, "rows": [...]}
        keys = {k.value: v for k, v in node.value}
        if "rows" not in keys:
            raise SweepConfigError(f"{path}: a mapping at the top level needs a 'rows' list")
        defaults = doc.get("defaults") or {}
        if not isinstance(defaults, dict):
            raise SweepConfigError(f"{path}: 'defaults' must be a mapping")
        items, lines = doc["rows"], [n.start_mark.line + 1 for n in keys["rows"].value]
    elif isinstance(node, yaml.SequenceNode):
        defaults, items, lines = {}, doc, [n.start_mark.line + 1 for n in node.value]
    else:
        raise SweepConfigError(f"{path}: expected a list of rows (or a mapping with 'rows')")
    out = []
    for line, item in zip(lines, items):
        out.append((line, {**defaults, **item} if isinstance(item, dict) else item))
    return out


def _number(name, value):
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"{name} must be a number, got {value!r}") from None
    raise ValueError(f"{name} must be a number, got {value!r}")


def parse_row(row: int, line: int, record, default_grid_step: float) -> Row:
    """Check one record: numbers in range (dpax._engine.validation), one target at least for a row
    to calibrate. Sets ``Row.error`` instead of raising."""
    if not isinstance(record, dict):
        msg = record if isinstance(record, str) else f"must be a mapping of column -> value, got {record!r}"
        return Row(row, line, {}, error=msg)
    raw = {str(k): v for k, v in record.items() if v is not None and v != ""}
    r = Row(row, line, raw)
    try:
        p = {k: _number(k, raw[k]) for k in NUMERIC_COLUMNS if k in raw}
        mech = str(raw.get("mechanism", "dpsgd")).strip().lower()
        if mech not in ("dpsgd", "dp-sgd", "dp_sgd"):
            raise ValueError(f"mechanism must be 'dpsgd' (the only one a sweep runs), got {raw['mechanism']!r}")
        for k in ("sample_rate", "num_steps"):
            if k not in p:
                raise ValueError(f"missing {k}")
        _v.real_array("sample_rate", p["sample_rate"], low=0.0, high=1.0, low_open=True)
        p["num_steps"] = int(_v.positive_int_array("num_steps", p["num_steps"]))
        p["grid_step"] = _v.grid_step(p.get("grid_step", default_grid_step))
        if "noise_multiplier" in p:
            _v.real_array("noise_multiplier", p["noise_multiplier"], low=0.0, low_open=True)
        for k in ("alpha", "beta", "advantage", "delta"):
            if k in p:
                _v.probabilities(k, p[k])
        if "epsilon" in p:
            _v.real_array("epsilon", p["epsilon"], low=0.0)
        if "mu" in p:
            _v.real_array("mu", p["mu"], low=0.0, low_open=True)
        if "beta" in p and "alpha" not in p:
            raise ValueError("beta needs alpha (the target is: FNR >= beta at FPR alpha)")
        if "epsilon" in p and "delta" not in p:
            raise ValueError("epsilon needs delta")
        if "noise_multiplier" not in p:
            if not _kinds(p):
                raise ValueError("a row without noise_multiplier is calibrated and needs a target: alpha and beta, "
                                 "advantage, epsilon and delta, or mu")
            make_target([p])  # target-specific checks (alpha + beta < 1, ...)
    except (ValueError, TypeError) as exc:
        r.error = str(exc)
        return r
    r.params = p
    return r


def _kinds(p) -> tuple[str, ...]:
    return Row(0, 0, {}, p).target_kinds()


def read_config(path: str, *, grid_step: float = 1e-4) -> list[Row]:
    """Every row of a sweep file, parsed and checked (bad rows carry ``error``; see
    :func:`parse_row`). Raises :class:`SweepConfigError` when the file as a whole is unreadable."""
    step = _v.grid_step(grid_step)
    if not os.path.exists(path):
        raise ValueError(f"config file {path!r} does not exist")
    return [parse_row(i, line, rec, step) for i, (line, rec) in enumerate(_read_records(path), 1)]


def make_target(params: list[dict]) -> T.Target:
    """The calibration target of rows that share their target kinds (one row's params each):
    ErrRates, Advantage, Epsilon and GDP with array fields, or ``All`` of several."""
    col = lambda k: np.array([p[k] for p in params], float)
    parts = []
    kinds = _kinds(params[0])
    if "err_rates" in kinds:
        parts.append(T.ErrRates(alpha=col("alpha"), beta=col("beta")))
    if "advantage" in kinds:
        parts.append(T.Advantage(col("advantage")))
    if "epsilon" in kinds:
        parts.append(T.Epsilon(col("epsilon"), col("delta")))
    if "gdp" in kinds:
        parts.append(T.GDP(col("mu")))
    return parts[0] if len(parts) == 1 else T.All(*parts)
