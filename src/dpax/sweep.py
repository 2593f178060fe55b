"""Sweeps: a table of DP-SGD configurations from a CSV / JSON / YAML file, evaluated in batches.

Each row names its parameters like the Python arguments: ``noise_multiplier``,
``sample_rate``, ``num_steps``, ``grid_step`` (optional; default from the caller), and
targets / query points ``alpha``, ``beta``, ``advantage``, ``epsilon``, ``delta``, ``mu``.

* A row **with** ``noise_multiplier`` is analysed: ``out_beta`` at its ``alpha`` (Algorithm 1),
  ``out_advantage`` (Algorithm 3), ``out_epsilon`` at its ``delta`` (default 1e-5),
  ``out_mu`` / ``out_regret`` (:func:`dpax.gdp.mu_and_regret`); if it also carries a target
  (``beta``, ``advantage``, ``epsilon``, ``mu``), ``out_meets_target`` says whether it is met.
* A row **without** it is calibrated with :func:`dpax.calibrate_dpsgd` to its target:
  ``alpha`` + ``beta`` (ErrRates, Eq. 18), ``advantage`` (Eq. 14), ``epsilon`` + ``delta``
  (standard calibration), ``mu`` (GDP); several targets mean all of them. ``out_noise_multiplier``
  is the answer, then the row is analysed at it like above. ``status`` / ``reason`` are per
  row ('calibrated', 'met_without_noise', 'met_at_bound', 'infeasible', 'analysed',
  'invalid', 'error').

Rows are grouped into batches that share a grid step and a kind of work, so each batch is one
batched call; batches are formed from the whole file, the same on every run, so a resumed
sweep computes exactly what an uninterrupted one would. Results (the input columns, ``row``,
``line``, and the ``out_*`` answers) are appended to a CSV or JSON-lines file and flushed
after each batch; ``resume`` skips rows whose ``row`` number is already there. SIGINT /
SIGTERM stop the sweep after the batch in flight, leaving the file consistent. Nothing in the
file is evaluated: values are parsed as numbers (YAML with the safe loader, no pickle).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
import signal
import sys

import numpy as np

from ._engine import validation as _v

#: Columns dpax reads; any other column is carried to the results untouched.
NUMERIC_COLUMNS = ("noise_multiplier", "sample_rate", "num_steps", "grid_step", "alpha", "beta", "advantage",
                   "epsilon", "delta", "mu")
KNOWN_COLUMNS = NUMERIC_COLUMNS + ("mechanism", "name", "id")
#: Answer columns appended to every result row (in this order).
OUTPUT_COLUMNS = ("row", "line", "mode", "status", "reason", "out_noise_multiplier", "out_grid_step", "out_beta",
                  "out_advantage", "out_delta", "out_epsilon", "out_mu", "out_regret", "out_meets_target")
DEFAULT_DELTA = 1e-5
DEFAULT_BATCH_SIZE = 64


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


# -- reading ---------------------------------------------------------------------------------


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
    if fmt == "json" and path.lower().endswith((".jsonl", ".ndjson")):
        out = []
        for i, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    out.append((i, json.loads(line)))
                except json.JSONDecodeError as exc:
                    out.append((i, f"is not valid JSON ({exc.msg})"))
        return out
    # JSON arrays and YAML: parse with YAML's safe composer, which keeps line numbers
    import yaml

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
    """Check one record: numbers in range (dpax.validation), one target at least for a row
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
            _make_target([p])  # target-specific checks (alpha + beta < 1, ...)
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


# -- evaluation ------------------------------------------------------------------------------


def _make_target(params: list[dict]):
    from . import targets as T

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


def batch_key(r: Row):
    """Rows that can share one batched call: same grid step, same work, same target kinds."""
    return (r.params["grid_step"], r.mode, r.target_kinds() if r.mode == "calibrate" else ())


def make_batches(rows: list[Row], batch_size: int) -> list[list[Row]]:
    """Valid rows grouped by :func:`batch_key` (in file order) and cut into batches of at most
    ``batch_size``; ordered by their first row. Depends on the file only, not on what is done."""
    groups: dict = {}
    for r in rows:
        if not r.error:
            groups.setdefault(batch_key(r), []).append(r)
    batches = [g[i:i + batch_size] for g in groups.values() for i in range(0, len(g), batch_size)]
    return sorted(batches, key=lambda b: b[0].row)


def _analyse(noise, rows: list[Row], step: float) -> dict:
    """Risk of DP-SGD at the given noise values: one batched construction + kernels."""
    from . import gdp
    from .mechanisms import dpsgd

    n = len(rows)
    out = {k: np.full(n, np.nan) for k in ("out_beta", "out_advantage", "out_epsilon", "out_mu", "out_regret")}
    out["out_delta"] = np.array([r.params.get("delta", DEFAULT_DELTA) for r in rows])
    ok = np.flatnonzero(np.isfinite(noise) & (noise > 0))
    if ok.size:
        p = np.array([rows[i].params["sample_rate"] for i in ok])
        t = np.array([rows[i].params["num_steps"] for i in ok])
        pl = dpsgd(noise[ok], p, t, grid_step=step)
        out["out_advantage"][ok] = pl.advantage()
        deltas = out["out_delta"][ok]
        ud, inv = np.unique(deltas, return_inverse=True)
        out["out_epsilon"][ok] = np.asarray(pl.epsilon(ud)).reshape(ok.size, -1)[np.arange(ok.size), inv]
        has_a = np.array([("alpha" in rows[i].params) for i in ok])
        if np.any(has_a):
            alphas = np.array([rows[i].params.get("alpha", 0.0) for i in ok])
            ua, inv = np.unique(alphas, return_inverse=True)
            b = np.asarray(pl.beta(ua)).reshape(ok.size, -1)[np.arange(ok.size), inv]
            out["out_beta"][ok[has_a]] = b[has_a]
        mu, regret = gdp.mu_and_regret(pl)
        out["out_mu"][ok], out["out_regret"][ok] = mu, regret
    return out


def _meets(p: dict, res: dict):
    """Whether the answers ``res`` of an analysed row meet the targets it carries (None if none)."""
    checks = []
    if "beta" in p and "alpha" in p:
        checks.append(res["out_beta"] >= p["beta"])
    if "advantage" in p:
        checks.append(res["out_advantage"] <= p["advantage"])
    if "epsilon" in p:
        checks.append(res["out_epsilon"] <= p["epsilon"])
    if "mu" in p:
        checks.append(res["out_mu"] <= p["mu"])
    return bool(all(checks)) if checks else None


def evaluate_batch(rows: list[Row], *, rtol: float = 1e-4) -> list[dict]:
    """Answers for one batch (rows sharing :func:`batch_key`): a list of result dicts."""
    from .calibration import calibrate_dpsgd

    step = rows[0].params["grid_step"]
    n = len(rows)
    status = np.full(n, "analysed", object)
    reason = np.full(n, "", object)
    if rows[0].mode == "analyse":
        noise = np.array([r.params["noise_multiplier"] for r in rows])
    else:
        res = calibrate_dpsgd(sample_rate=np.array([r.params["sample_rate"] for r in rows]),
                              num_steps=np.array([r.params["num_steps"] for r in rows]),
                              target=_make_target([r.params for r in rows]), grid_step=step, rtol=rtol,
                              compare_standard=False, on_infeasible="mark")
        noise = np.atleast_1d(np.asarray(res.noise_multiplier, float))
        status = np.atleast_1d(np.asarray(res.status)).astype(object)
        reason = np.atleast_1d(np.asarray(res.reason)).astype(object)
    out = _analyse(noise, rows, step)
    results = []
    for i, r in enumerate(rows):
        d = {"row": r.row, "line": r.line, "mode": r.mode, "status": str(status[i]), "reason": str(reason[i]),
             "out_noise_multiplier": float(noise[i]), "out_grid_step": step}
        for k in ("out_beta", "out_advantage", "out_delta", "out_epsilon", "out_mu", "out_regret"):
            d[k] = float(out[k][i])
        if r.mode == "calibrate" and noise[i] == 0:  # met without noise: the leak-probability bounds
            ach = {k: np.atleast_1d(v)[i] for k, v in res.achieved.items()}
            d["out_advantage"], d["out_epsilon"] = float(ach["advantage"]), float(ach["epsilon"])
            if "beta" in ach:
                d["out_beta"] = float(ach["beta"])
        d["out_meets_target"] = _meets(r.params, d) if r.mode == "analyse" else (str(status[i]) != "infeasible")
        results.append(d)
    return results


def _evaluate_safely(batch: list[Row], rtol: float) -> list[dict]:
    """:func:`evaluate_batch`, falling back to row by row when the batch fails, so one bad
    configuration (e.g. a noise too small for float64) marks only its own row 'error'."""
    try:
        return evaluate_batch(batch, rtol=rtol)
    except (ValueError, TypeError, FloatingPointError, MemoryError):
        if len(batch) == 1:
            r = batch[0]
            return [{"row": r.row, "line": r.line, "mode": r.mode, "status": "error",
                     "reason": str(sys.exc_info()[1])}]
    out = []
    for r in batch:
        out += _evaluate_safely([r], rtol)
    return out


# -- writing ---------------------------------------------------------------------------------


def _out_fmt(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext == ".csv":
        return "csv"
    if ext in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    raise ValueError(f"results file must end in .csv or .jsonl / .json (JSON lines), got {path!r}")


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return str(value)


def _json_value(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def read_results(path: str) -> list[dict]:
    """Rows of a results file (CSV cells as strings, JSON values as written); a last line
    cut short by a crash is ignored."""
    fmt = _out_fmt(path)
    with open(path, newline="", encoding="utf-8") as fh:
        text = fh.read()
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(text, newline="")))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _done_rows(path: str) -> set[int]:
    done = set()
    for rec in read_results(path):
        try:
            done.add(int(rec["row"]))
        except (KeyError, TypeError, ValueError):
            continue
    return done


class _StopFlag:
    """SIGINT / SIGTERM set a flag checked between batches (handlers restored on exit)."""

    def __init__(self):
        self.signal = None
        self._saved = {}

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._saved[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: no handlers, Ctrl-C behaves as usual
                pass
        return self

    def _handle(self, signum, frame):
        self.signal = signum

    def __exit__(self, *exc):
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)
        return False


def run_sweep(
    config: str,
    output: str,
    *,
    grid_step: float = 1e-4,
    batch_size: int = DEFAULT_BATCH_SIZE,
    resume: bool = False,
    overwrite: bool = False,
    on_error: str = "skip",
    rtol: float = 1e-4,
    progress: bool = True,
    log=None,
) -> dict:
    """Evaluate every row of ``config`` and append the answers to ``output`` batch by batch.

    ``on_error``: 'skip' (report each malformed row with its line number on ``log``, default
    stderr, and write it with status 'invalid') or 'reject' (raise :class:`SweepConfigError`
    listing them, before computing anything). ``resume``: keep ``output`` and skip the rows
    already in it; otherwise an existing ``output`` needs ``overwrite``. Returns a summary
    dict (rows, done, skipped, invalid, batches, interrupted).
    """
    log = sys.stderr if log is None else log
    if on_error not in ("skip", "reject"):
        raise ValueError(f"on_error must be 'skip' or 'reject', got {on_error!r}")
    if not (isinstance(batch_size, int) and batch_size >= 1):
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    fmt = _out_fmt(output)
    rows = read_config(config, grid_step=grid_step)
    bad = [r for r in rows if r.error]
    if bad and on_error == "reject":
        raise SweepConfigError(f"{config}: {len(bad)} malformed row(s):\n" +
                               "\n".join(f"  line {r.line} (row {r.row}): {r.error}" for r in bad))
    for r in bad:
        print(f"dpax sweep: {config}: line {r.line} (row {r.row}) skipped: {r.error}", file=log)
    columns = list(dict.fromkeys(k for r in rows for k in r.raw))
    unknown = [c for c in columns if c not in KNOWN_COLUMNS and c not in OUTPUT_COLUMNS]
    if unknown:
        print(f"dpax sweep: columns not used by dpax (carried to the results): {', '.join(unknown)}", file=log)
    header = ["row", "line"] + [c for c in columns if c not in ("row", "line")] + list(OUTPUT_COLUMNS[2:])

    exists = os.path.exists(output) and os.path.getsize(output) > 0
    if exists and not (resume or overwrite):
        raise ValueError(f"results file {output!r} exists: pass resume=True (--resume) to continue it or "
                         "overwrite=True (--overwrite) to start again")
    done = _done_rows(output) if (exists and resume) else set()
    if exists and resume and fmt == "csv":
        with open(output, newline="", encoding="utf-8") as fh:
            old = next(csv.reader(fh), None)
        if old is not None and old != header:
            raise ValueError(f"results file {output!r} has other columns than this config produces; "
                             "it was not written from this config")
    if exists and resume:  # drop a last line cut short by a crash
        with open(output, "rb+") as fh:
            data = fh.read()
            if data and not data.endswith(b"\n"):
                fh.truncate(data.rfind(b"\n") + 1)
    mode = "a" if (exists and resume) else "w"
    batches = make_batches(rows, batch_size)
    todo = [b for b in batches if any(r.row not in done for r in b)]
    invalid_todo = [r for r in bad if r.row not in done]
    n_todo = sum(len(b) for b in todo) + len(invalid_todo)

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n_todo, desc="dpax sweep", unit="row", file=log)
    written = 0
    interrupted = None
    with open(output, mode, newline="", encoding="utf-8") as fh, _StopFlag() as stop:
        if fmt == "csv":
            writer = csv.writer(fh, lineterminator="\n")
            if mode == "w" or not exists:
                writer.writerow(header)

        def emit(records):
            buf = io.StringIO(newline="")
            if fmt == "csv":
                w = csv.writer(buf, lineterminator="\n")
                for rec in records:
                    w.writerow([_cell(rec.get(c)) for c in header])
            else:
                for rec in records:
                    buf.write(json.dumps({c: _json_value(rec.get(c)) for c in header if rec.get(c) is not None},
                                         allow_nan=False) + "\n")
            fh.write(buf.getvalue())  # one write per batch, then flush to disk
            fh.flush()
            os.fsync(fh.fileno())

        if invalid_todo:
            emit([{**r.raw, "row": r.row, "line": r.line, "mode": "", "status": "invalid", "reason": r.error}
                  for r in invalid_todo])
            written += len(invalid_todo)
            if bar:
                bar.update(len(invalid_todo))
        for batch in todo:
            if stop.signal is not None:
                interrupted = stop.signal
                break
            results = _evaluate_safely(batch, rtol)
            by_row = {r.row: r for r in batch}
            records = [{**by_row[res["row"]].raw, **res} for res in results if res["row"] not in done]
            emit(records)
            written += len(records)
            if bar:
                bar.update(len(records))
    if bar:
        bar.close()
    return {
        "config": config,
        "output": output,
        "rows": len(rows),
        "invalid": len(bad),
        "already_done": len(done),
        "written": written,
        "batches": len(batches),
        "interrupted": bool(interrupted),
        "signal": None if interrupted is None else signal.Signals(interrupted).name,
        "remaining": n_todo - written,
    }
