"""Sweep results: a CSV or JSON-lines file written batch by batch, read back, resumed.

Each batch is one write, flushed and synced to disk, so an interrupted sweep leaves a
consistent file whose last line at most is cut short; resuming drops that line and skips the
rows already written.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from typing import IO

#: Answer columns appended to every result row (in this order).
OUTPUT_COLUMNS = ("row", "line", "mode", "status", "reason", "out_noise_multiplier", "out_grid_step", "out_beta",
                  "out_advantage", "out_delta", "out_epsilon", "out_mu", "out_regret", "out_meets_target")


def out_format(path: str) -> str:
    """'csv' or 'jsonl' from the results file's extension."""
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
    cut short by a crash is ignored. A file that is not one dpax wrote raises a ValueError
    naming it."""
    fmt = out_format(path)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ValueError(f"results file {path!r}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ValueError(f"results file {path!r} is not UTF-8 text: not a file dpax wrote") from None
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    if fmt == "csv":
        try:
            return list(csv.DictReader(io.StringIO(text, newline="")))
        except csv.Error as exc:
            raise ValueError(f"results file {path!r}: not a CSV file dpax wrote ({exc})") from None
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except (json.JSONDecodeError, RecursionError):
                raise ValueError(f"results file {path!r}: line {i} is not JSON: not a file dpax wrote") from None
    return out


def done_rows(path: str) -> set[int]:
    """The ``row`` numbers already in a results file."""
    done = set()
    for rec in read_results(path):
        try:
            done.add(int(rec["row"]))
        except (KeyError, TypeError, ValueError):
            continue
    return done


def prepare(output: str, header: list[str], *, resume: bool, overwrite: bool) -> tuple[set[int], bool]:
    """Check ``output`` before a sweep writes to it: (rows already done, whether to append).

    An existing, non-empty file needs ``resume`` (keep it: its header must be this config's,
    and a last line cut short by a crash is dropped) or ``overwrite`` (start again).
    """
    fmt = out_format(output)
    exists = os.path.exists(output) and os.path.getsize(output) > 0
    if exists and not (resume or overwrite):
        raise ValueError(f"results file {output!r} exists: pass resume=True (--resume) to continue it or "
                         "overwrite=True (--overwrite) to start again")
    if not (exists and resume):
        return set(), False
    done = done_rows(output)
    if fmt == "csv":
        with open(output, newline="", encoding="utf-8") as fh:
            old = next(csv.reader(fh), None)  # read_results has checked the file
        if old is not None and old != header:
            raise ValueError(f"results file {output!r} has other columns than this config produces; "
                             "it was not written from this config")
    with open(output, "rb+") as fh:  # drop a last line cut short by a crash
        data = fh.read()
        if data and not data.endswith(b"\n"):
            fh.truncate(data.rfind(b"\n") + 1)
    return done, True


class ResultsWriter:
    """Appends records (dicts) to an open results file, one write and one fsync per call."""

    def __init__(self, fh: IO[str], fmt: str, header: list[str], write_header: bool):
        self.fh, self.fmt, self.header = fh, fmt, header
        if fmt == "csv" and write_header:
            csv.writer(fh, lineterminator="\n").writerow(header)

    def emit(self, records: list[dict]) -> None:
        """Write ``records`` (columns of the header, others ignored) and flush them to disk."""
        buf = io.StringIO(newline="")
        if self.fmt == "csv":
            w = csv.writer(buf, lineterminator="\n")
            for rec in records:
                w.writerow([_cell(rec.get(c)) for c in self.header])
        else:
            for rec in records:
                buf.write(json.dumps({c: _json_value(rec.get(c)) for c in self.header if rec.get(c) is not None},
                                     allow_nan=False) + "\n")
        self.fh.write(buf.getvalue())
        self.fh.flush()
        os.fsync(self.fh.fileno())
