"""Sweep results: a CSV or JSON-lines file written batch by batch, read back, resumed.

Each batch is one write, flushed and synced to disk, so an interrupted sweep leaves a
consistent file whose last line at most is cut short. Resuming (:func:`_prepare`,
:func:`_checked_records`) drops that line and keeps the other rows only when the file is one
a sweep of the same config writes: CSV quoted and JSON spaced as the writer does, the columns
of the config, every row a row number of the config (once, rows of one kind of work in
increasing order), its ``line`` and input values those of that config row, its ``mode``,
``status`` and answers of the form the writer gives them (numbers that parse back to
themselves), no control characters outside input values the config itself holds. Anything
else raises a ValueError naming the file, the line and the reason. The writer escapes
control characters in ``reason``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import reprlib
from collections.abc import Iterator
from typing import IO, Any

#: a :class:`dpax.sweep.rows.Row` (not imported: rows imports this module, and the package's
#: imports go one way only)
_Row = Any

#: Answer columns appended to every result row (in this order).
OUTPUT_COLUMNS = ("row", "line", "mode", "status", "reason", "out_noise_multiplier", "out_grid_step", "out_beta",
                  "out_advantage", "out_delta", "out_epsilon", "out_mu", "out_regret", "out_standard_epsilon",
                  "out_standard_noise_multiplier", "out_noise_reduction", "out_meets_target")
#: The answer columns that hold a number (or nothing).
NUMBER_COLUMNS = OUTPUT_COLUMNS[5:16]
#: The ``status`` a row of each mode can have ('invalid': a malformed row, whose mode is '').
STATUSES = {"analyse": ("analysed", "error"),
            "calibrate": ("calibrated", "met_without_noise", "met_at_bound", "infeasible", "error"),
            "": ("invalid",)}

_REPR = reprlib.Repr()
_REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict, _REPR.maxlevel = 40, 40, 4, 4, 2
#: C0 and C1 control characters, DEL, line / paragraph separators and bidirectional overrides.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_ROW_NUMBER = re.compile(r"[1-9][0-9]{0,17}")


def _brief(value: object) -> str:
    """A short repr of a value read from a file (at most about 80 characters), for messages:
    a row's or a value's whole repr never goes into one.

    >>> _brief(list(range(100)))
    '[0, 1, 2, 3, ...]'
    """
    text = _REPR.repr(value)
    return text if len(text) <= 80 else text[:76] + " ..."


def _clean_text(text: str) -> str:
    """``text`` with each control character written as its escape (``\\n``, ``\\x1b``).

    >>> _clean_text("a\\nb\\x1b")
    'a\\\\nb\\\\x1b'
    """
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def _out_format(path: str) -> str:
    """'csv' or 'jsonl' from the results file's extension."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".csv":
        return "csv"
    if ext in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    raise ValueError(f"results file must end in .csv or .jsonl / .json (JSON lines), got {path!r}")


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return str(value)


def _json_value(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def read_results(path: str) -> list[dict[str, Any]]:
    """The rows of a results file that :func:`dpax.sweep.run_sweep` wrote.

    A last line cut short by a crash is ignored. The rows are not checked against a config
    (a resumed sweep checks them, see the module docstring).

    Args:
        path: the results file (.csv, or .jsonl / .json / .ndjson for JSON lines).

    Returns:
        One dict per row, column -> value: CSV cells as strings ('' for nothing), JSON
        values as written (``"inf"`` for an infinite answer, no key for nothing).

    Raises:
        ValueError: ``path`` has another extension, cannot be read, is not UTF-8, or is
            not CSV / JSON lines; the message names the file.

    >>> import os, tempfile
    >>> from dpax.sweep import read_results
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "out.csv")
    ...     with open(path, "w") as fh:
    ...         _ = fh.write("row,line,out_mu\\n1,2,0.5\\n2,3,0.")   # the last line cut short
    ...     read_results(path)
    [{'row': '1', 'line': '2', 'out_mu': '0.5'}]
    """
    fmt = _out_format(path)
    text = _complete_text(path)
    if fmt == "csv":
        try:
            return list(csv.DictReader(io.StringIO(text, newline="")))
        except csv.Error as exc:
            raise ValueError(f"results file {path!r}: not a CSV file dpax wrote ({exc})") from None
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except (ValueError, RecursionError):
                raise ValueError(f"results file {path!r}: line {i} is not JSON: not a file dpax wrote") from None
    return out


def _complete_text(path: str) -> str:
    """The file as UTF-8 text up to its last newline (a line cut short by a crash dropped)."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ValueError(f"results file {path!r}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ValueError(f"results file {path!r} is not UTF-8 text: not a file dpax wrote") from None
    return text[: text.rfind("\n") + 1]


# -- resuming: the file must be one a sweep of this config writes ---------------------------


class _Refused(Exception):
    """Why one line of a results file is not the writer's (the line is added by the caller)."""


_ABSENT = object()  # a column a JSON line does not hold


def _show(value: object) -> str:
    return "nothing" if value is _ABSENT else _brief(value)


def _checked_records(path: str, header: list[str], rows: list[_Row], config: str) -> dict[int, dict]:
    """The rows of a results file kept by a resume, by row number (CSV cells as strings, JSON
    values as written), after checking that the file is one a sweep of ``config`` writes (see
    the module docstring); a last line cut short by a crash is ignored.

    Args:
        path: the results file (.csv, or .jsonl / .json for JSON lines).
        header: the columns a sweep of ``config`` writes (``row``, ``line``, the input
            columns, the answers).
        rows: the config's rows (:func:`dpax.sweep.read_config`), row ``i`` at index ``i - 1``.
        config: the config file's name, for messages.

    Raises:
        ValueError: naming ``path``, the line and the reason, when a line is not the writer's.
    """
    fmt = _out_format(path)
    text = _complete_text(path)
    checker = _Checker(fmt, header, rows)
    kept: dict[int, dict] = {}
    try:
        for line, rec, canonical in (_csv_lines(text, header) if fmt == "csv" else _json_lines(text)):
            try:
                row = checker.check(rec, line)
                if not canonical:
                    raise _Refused(f"is not written the way dpax writes {'CSV' if fmt == 'csv' else 'JSON lines'} "
                                   "(quoting, spacing, escapes, number forms or a repeated column)")
            except _Refused as exc:
                raise _Refused(line, exc.args[0]) from None
            kept[row] = rec
    except _Refused as exc:
        line, reason = exc.args
        raise ValueError(f"results file {path!r}: line {line}: {reason}: not the file a sweep of {config!r} writes, "
                         "so it cannot be resumed (fix or remove it, or start again with overwrite=True / "
                         "--overwrite)") from None
    return kept


def _control(text: str) -> str:
    """'' or 'the control character 0x1b' for the first control character of ``text``."""
    m = _CONTROL.search(text)
    return "" if m is None else f"the control character 0x{ord(m.group()):02x}"


def _csv_lines(text: str, header: list[str]) -> Iterator[tuple[int, dict[str, Any], bool]]:
    """(line, record, whether the writer writes it so) for each CSV row after the header,
    which must be ``header``; a malformed row raises _Refused(line, reason)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    sink = _LastWrite()
    writer = csv.writer(sink, lineterminator="\n")
    pos, line = 0, 1

    def refuse(reason: str) -> _Refused:
        end = text.find("\n", pos)
        control = _control(text[pos: len(text) if end < 0 else end])
        return _Refused(line, f"holds {control}" if control else reason)

    first = True
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise refuse(f"is not a CSV row ({exc})") from None
        writer.writerow(cells)
        canonical = text.startswith(sink.text, pos)
        if first:
            if cells != header or not canonical:
                raise refuse(_header_difference(cells, header))
            first = False
        elif not cells:
            raise refuse("is empty (dpax writes no empty lines)")
        elif len(cells) != len(header):
            raise refuse(f"has {len(cells)} fields, the header has {len(header)}")
        else:
            yield line, dict(zip(header, cells)), canonical  # the caller stops at a row not canonical
        pos += len(sink.text)
        line += sink.text.count("\n")


def _header_difference(cells: list[str], header: list[str]) -> str:
    if cells == header:
        return "the header is not written the way dpax writes it"
    for i, (got, want) in enumerate(zip(cells, header)):
        if got != want:
            return (f"the header's column {i + 1} is {_brief(got)}, a sweep of this config writes {_brief(want)} "
                    "(not the config's columns)")
    return f"the header has {len(cells)} columns, a sweep of this config writes {len(header)}"


class _LastWrite:
    """A file-like sink keeping only its last write (csv.writer writes one row a call)."""

    text = ""

    def write(self, text: str) -> int:
        self.text = text
        return len(text)


def _json_lines(text: str) -> Iterator[tuple[int, dict[str, Any], bool]]:
    """(line, record, whether the writer writes it so) for each line of a JSON-lines text; a
    line that is not a JSON object raises _Refused(line, reason)."""
    for line, raw in enumerate(text.split("\n")[:-1], 1):
        if not raw.strip():
            raise _Refused(line, "is empty (dpax writes no empty lines)")
        try:
            rec = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            control = _control(raw)
            reason = getattr(exc, "msg", None) or type(exc).__name__
            raise _Refused(line, f"holds {control}" if control else f"is not JSON ({reason})") from None
        if not isinstance(rec, dict):
            raise _Refused(line, f"is not a JSON object (got {type(rec).__name__})")
        try:
            canonical = json.dumps(rec, allow_nan=False) == raw
        except ValueError:
            raise _Refused(line, "holds NaN or Infinity, which dpax never writes") from None
        yield line, rec, canonical


class _Checker:
    """Checks the records of one results file against the config's rows."""

    def __init__(self, fmt: str, header: list[str], rows: list[_Row]) -> None:
        self.fmt, self.header, self.rows = fmt, header, rows
        self.position = {c: i for i, c in enumerate(header)}
        self.inputs = [c for c in header if c not in OUTPUT_COLUMNS]
        self.seen: dict[int, int] = {}  # row -> line
        self.last: dict = {}  # kind of work -> last row number

    # -- values of one column, whatever the format --------------------------------------

    def get(self, rec: dict, col: str) -> Any:
        return rec.get(col, _ABSENT)

    def empty(self, value: Any) -> bool:
        return value == "" if self.fmt == "csv" else (value is _ABSENT or value is None)

    def integer(self, value: Any) -> int | None:
        if self.fmt == "csv":
            return int(value) if _ROW_NUMBER.fullmatch(value) else None
        return value if type(value) is int and value >= 1 else None

    def number(self, col: str, value: Any) -> float | None:
        """The number a number column holds (None if empty); _Refused if not the writer's form."""
        if self.empty(value):
            return None
        if self.fmt == "csv":
            try:
                x = float(value)
            except ValueError:
                x = math.nan
            if not math.isnan(x) and repr(x) == value:
                return x
        elif type(value) is float and math.isfinite(value):
            return value
        elif value in ("inf", "-inf"):
            return float(value)
        raise _Refused(f"column {col!r} holds {_show(value)}, not a number as dpax writes it")

    def text(self, col: str, value: Any) -> str:
        if self.fmt == "jsonl" and value is _ABSENT:
            return ""
        if not isinstance(value, str):
            raise _Refused(f"column {col!r} holds {_show(value)}, not text")
        return value

    # -- one record -----------------------------------------------------------------------

    def check(self, rec: dict, line: int) -> int:
        """The row number of a record that is what the writer writes for it (else _Refused)."""
        if self.fmt == "jsonl":
            for col in rec:
                if col not in self.position:
                    raise _Refused(f"has the column {_brief(col)}, which a sweep of this config does not write")
            if [self.position[c] for c in rec] != sorted(self.position[c] for c in rec):
                raise _Refused("its columns are not in the order dpax writes them")
        for col in OUTPUT_COLUMNS:  # no control characters in what dpax writes itself
            value = self.get(rec, col)
            if isinstance(value, str) and _control(value):
                raise _Refused(f"column {col!r} holds {_control(value)}")
        n = len(self.rows)
        value = self.get(rec, "row")
        row = self.integer(value)
        if row is None or row > n:
            raise _Refused(f"column 'row' holds {_show(value)}, not a row number of the config (1 to {n:,})")
        if row in self.seen:
            raise _Refused(f"row {row} is already on line {self.seen[row]} (dpax writes each row once)")
        self.seen[row] = line
        r = self.rows[row - 1]
        value = self.get(rec, "line")
        if self.integer(value) != r.line:
            raise _Refused(f"row {row} starts on line {r.line} of the config, the results say line {_show(value)}")
        for col in self.inputs:
            self.check_input(rec, col, r)
        self.check_answers(rec, r)
        kind = ("invalid",) if r.error else r.batch_key()
        if row < self.last.get(kind, 0):
            raise _Refused(f"row {row} comes after row {self.last[kind]} of the same kind of work (dpax writes "
                           "them in increasing order)")
        self.last[kind] = row
        return row

    def check_input(self, rec: dict, col: str, r: _Row) -> None:
        """The value of an input column is the config row's, as the writer writes it."""
        value = self.get(rec, col)
        want: object
        if self.fmt == "csv":
            want = _cell(r.raw.get(col))
            ok = value == want
        else:
            want = _json_value(r.raw[col]) if col in r.raw else None
            ok = self.empty(value) if want is None else (
                value is not _ABSENT and json.dumps(value) == json.dumps(want))
        if not ok:
            control = _control(value) if isinstance(value, str) else ""
            got = f"holds {control}" if control else f"is {_show(value)}"
            raise _Refused(f"column {col!r} {got}, row {r.row} of the config has {_brief(want)}")

    def check_answers(self, rec: dict, r: _Row) -> None:
        """``mode``, ``status``, ``reason`` and the answers are of the form the writer gives a
        row like ``r``."""
        mode = self.text("mode", self.get(rec, "mode"))
        status = self.text("status", self.get(rec, "status"))
        reason = self.text("reason", self.get(rec, "reason"))
        want_mode = "" if r.error else r.mode
        if mode != want_mode or status not in STATUSES[want_mode]:
            what = "malformed (mode '', status 'invalid')" if r.error else (
                f"a row to {r.mode} (status {', '.join(STATUSES[r.mode])})")
            raise _Refused(f"row {r.row} has mode {_brief(mode)} and status {_brief(status)}, but row {r.row} of the "
                           f"config is {what}")
        if r.error and reason != _clean_text(r.error):
            raise _Refused(f"column 'reason' is {_brief(reason)}, row {r.row} of the config is malformed because "
                           f"{_brief(_clean_text(r.error))}")
        numbers = {c: self.number(c, self.get(rec, c)) for c in NUMBER_COLUMNS}
        meets = self.get(rec, "out_meets_target")
        if not (self.empty(meets) or (meets in ("true", "false") if self.fmt == "csv" else type(meets) is bool)):
            raise _Refused(f"column 'out_meets_target' holds {_show(meets)}, not true, false or nothing")
        if status in ("invalid", "error"):
            filled = [c for c in NUMBER_COLUMNS if numbers[c] is not None] + ([] if self.empty(meets) else
                                                                            ["out_meets_target"])
            if filled:
                raise _Refused(f"row {r.row} has status {status!r} but an answer in {filled[0]!r}")
            return
        if numbers["out_grid_step"] != r.params["grid_step"]:
            raise _Refused(f"row {r.row} was computed at grid step {_brief(numbers['out_grid_step'])}, this sweep's "
                           f"is {r.params['grid_step']!r} (grid_step / --grid-step)")
        if r.mode == "analyse" and numbers["out_noise_multiplier"] != r.params["noise_multiplier"]:
            raise _Refused(f"column 'out_noise_multiplier' is {_brief(numbers['out_noise_multiplier'])}, row {r.row} "
                           f"of the config has noise_multiplier {r.params['noise_multiplier']!r}")


def _prepare(output: str, header: list[str], rows: list[_Row], config: str, *, resume: bool,
            overwrite: bool) -> tuple[set[int], bool]:
    """Check ``output`` before a sweep of ``config`` writes to it: (rows already done, whether
    to append).

    An existing, non-empty file needs ``resume`` (keep it: it must pass
    :func:`_checked_records`, and a last line cut short by a crash is dropped) or ``overwrite``
    (start again), not both.
    """
    _out_format(output)
    if resume and overwrite:
        raise ValueError(_BOTH)
    exists = os.path.exists(output) and os.path.getsize(output) > 0
    if exists and not (resume or overwrite):
        raise ValueError(f"results file {output!r} exists: pass resume=True (--resume) to continue it or "
                         "overwrite=True (--overwrite) to start again")
    if not (exists and resume):
        return set(), False
    done = set(_checked_records(output, header, rows, config))
    with open(output, "rb+") as fh:  # drop a last line cut short by a crash
        data = fh.read()
        if data and not data.endswith(b"\n"):
            _check_cut_line(output, data, header, config)
            fh.truncate(data.rfind(b"\n") + 1)
        complete = data.rfind(b"\n") >= 0
    return done, complete  # a file with no whole line is written again from its header


def _check_cut_line(output: str, data: bytes, header: list[str], config: str) -> None:
    """Refuse a file with no whole line that no crash of the writer can leave: its text must
    be the start of the first line the writer writes (the CSV header), or start as a JSON
    line does (``{"row":``). (After whole lines a torn last line is dropped whatever it holds.)"""
    if b"\n" in data:
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # a multi-byte character cut at the very end is a crash's
        text = data[:exc.start].decode("utf-8", errors="replace") + ("" if exc.end == len(data) else "\ufffd")
    if _out_format(output) == "csv":
        buf = io.StringIO(newline="")
        csv.writer(buf, lineterminator="\n").writerow(header)
        first = buf.getvalue()
    else:
        first = json.dumps({header[0]: 0})[:len(header[0]) + 4]  # '{"row":', how every JSON line starts
    if not (first.startswith(text) or (_out_format(output) == "jsonl" and text.startswith(first))):
        raise ValueError(f"results file {output!r}: line 1 (cut short, the file's only line) is not the start of "
                         f"what a sweep of {config!r} writes first ({_brief(text)}): refusing to resume it (remove "
                         "it, or start again with overwrite=True / --overwrite)")


_BOTH = ("resume=True (--resume) and overwrite=True (--overwrite) contradict each other: resume keeps the "
         "results file and continues it, overwrite starts it again; pass one of them")


class _ResultsWriter:
    """Appends records (dicts) to an open results file, one write and one fsync per call;
    control characters in ``reason`` are written as escapes (:func:`_clean_text`)."""

    def __init__(self, fh: IO[str], fmt: str, header: list[str], write_header: bool) -> None:
        self.fh, self.fmt, self.header = fh, fmt, header
        if fmt == "csv" and write_header:
            csv.writer(fh, lineterminator="\n").writerow(header)

    def emit(self, records: list[dict]) -> None:
        """Write ``records`` (columns of the header, others ignored) and flush them to disk."""
        buf = io.StringIO(newline="")
        if self.fmt == "csv":
            w = csv.writer(buf, lineterminator="\n")
            for rec in records:
                w.writerow([_cell(_value(rec, c)) for c in self.header])
        else:
            for rec in records:
                buf.write(json.dumps({c: _json_value(_value(rec, c)) for c in self.header
                                      if rec.get(c) is not None}, allow_nan=False) + "\n")
        self.fh.write(buf.getvalue())
        self.fh.flush()
        os.fsync(self.fh.fileno())


def _value(rec: dict, col: str) -> object:
    value = rec.get(col)
    return _clean_text(value) if col == "reason" and isinstance(value, str) else value
