"""dpax.sweep.parts: a sweep divided among processes. The batches divide by rows into
contiguous shares; part files are named ``OUTPUT.part-<i>-of-<n>`` and found on disk; part
files are checked like the results when a sweep resumes (a row in two of them must be the same
record); the parts, and a resumed output, merge into the one-process file byte for byte, NaN
answers kept as JSON nulls. (The two-process sweep killed and resumed is in
tests/sweep/test_run.py.)"""

from __future__ import annotations

import csv
import io
import json
import os
import re

import pytest
from sweep_helpers import file_lines

import dpax
from dpax import sweep
from dpax.sweep import parts, results


def test_batches_divide_by_rows_and_part_names(tmp_path):
    rows = [dpax.sweep.parse_row(i, i + 1, {"noise_multiplier": 1, "sample_rate": 0.1, "num_steps": 10}, 1e-2)
            for i in range(1, 11)]
    batches = dpax.sweep.make_batches(rows, 3)  # 3, 3, 3, 1 rows
    shares = [parts._share_batches(batches, i, 2) for i in range(2)]
    assert [len(s) for s in shares] == [2, 2] and sum(shares, []) == batches
    out = tmp_path / "out.csv"
    assert parts._part_path(str(out), 1, 2) == str(tmp_path / "out.part-1-of-2.csv")
    for name in ("out.part-0-of-2.csv", "out.part-1-of-3.csv", "out.part-x-of-2.csv", "other.part-0-of-2.csv"):
        (tmp_path / name).write_text("row\n")
    assert [os.path.basename(p) for p in parts._existing_parts(str(out))] == ["out.part-0-of-2.csv",
                                                                           "out.part-1-of-3.csv"]


@pytest.mark.parametrize("ext", [".csv", ".jsonl"])
def test_merge_writes_the_one_process_file(tmp_path, ext):
    """Parts (and a resumed output) merged in the one-process order: the same bytes."""
    from dpax.sweep import results

    header = ["row", "line", "name", "out_mu", "out_meets_target", "reason"]
    recs = [{"row": r, "line": r + 1, "name": f"n,{r}", "out_mu": 0.1 * r if r != 3 else float("inf"),
             "out_meets_target": r % 2 == 0, "reason": "" if r != 2 else 'say "x"\nthen y'} for r in range(1, 7)]
    order = [4, 1, 2, 3, 5, 6]

    def write(path, rows):
        with open(path, "w", newline="", encoding="utf-8") as fh:
            results._ResultsWriter(fh, results._out_format(str(path)), header, True).emit(
                [recs[r - 1] for r in rows])

    write(tmp_path / f"one{ext}", order)
    out = tmp_path / f"out{ext}"
    write(out, [4, 1])  # a resumed sweep's output
    write(parts._part_path(str(out), 0, 2), [2, 3])
    write(parts._part_path(str(out), 1, 2), [6, 5])
    parts._merge(str(out), header, order, parts._existing_parts(str(out)), keep_output=True)
    assert out.read_bytes() == (tmp_path / f"one{ext}").read_bytes()
    assert parts._existing_parts(str(out)) == []
    with pytest.raises(ValueError, match=r"rows \[7\] are in no part file"):
        parts._merge(str(out), header, order + [7], [], keep_output=True)


@pytest.mark.parametrize("ext", ["csv", "jsonl"])
def test_part_files_are_checked_like_the_results(clean, tmp_path, ext):
    cfg, data = clean
    rows = sweep.read_config(cfg)
    header = file_lines(data["csv"])[0].split(",")  # the same columns in both formats
    out = tmp_path / f"out.{ext}"
    p0, p1 = parts._part_path(str(out), 0, 2), parts._part_path(str(out), 1, 2)
    lines = file_lines(data[ext])
    first = 1 if ext == "csv" else 0
    head = lines[:1] if ext == "csv" else []

    def write(path, chosen):
        open(path, "w").write("".join(line + "\n" for line in head + chosen))

    write(p0, lines[first:first + 3])  # rows 5, 1, 2
    write(p1, lines[first + 2:])  # rows 2 (the same record: a merge stopped early), 3, 4
    assert parts._done_rows(str(out), [p0, p1], header, rows, cfg) == {1, 2, 3, 4, 5}
    changed = lines[first + 2].replace("r1", "r9")
    write(p1, [changed] + lines[first + 3:])
    with pytest.raises(ValueError, match=re.escape(f"results file {p1!r}: line {1 + first}: column 'tag'")):
        parts._done_rows(str(out), [p0, p1], header, rows, cfg)
    other = _with_beta(lines[first + 2], header, ext)
    write(p1, [other] + lines[first + 3:])
    with pytest.raises(ValueError, match="both hold row 2, with different values"):
        parts._done_rows(str(out), [p0, p1], header, rows, cfg)


def _with_beta(line, header, ext):
    """A results line with another out_beta, written as dpax writes it."""
    if ext == "jsonl":
        return json.dumps({**json.loads(line), "out_beta": 0.5})
    cells = next(csv.reader([line]))
    cells[header.index("out_beta")] = "0.5"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(cells)
    return buf.getvalue()


def test_a_merge_keeps_the_nulls_of_nan_answers(tmp_path):
    """A JSON-lines merge writes a NaN answer as null, like the one-process writer."""
    header = ["row", "line", "status", "out_beta", "out_mu"]
    recs = [{"row": 1, "line": 2, "status": "analysed", "out_beta": float("nan"), "out_mu": 0.5},
            {"row": 2, "line": 3, "status": "analysed", "out_beta": 0.25, "out_mu": float("nan")}]
    one, out = tmp_path / "one.jsonl", tmp_path / "out.jsonl"
    for path, chosen in ((one, recs), (parts._part_path(str(out), 0, 2), recs[:1]),
                         (parts._part_path(str(out), 1, 2), recs[1:])):
        with open(path, "w", newline="", encoding="utf-8") as fh:
            results._ResultsWriter(fh, "jsonl", header, True).emit(chosen)
    parts._merge(str(out), header, [1, 2], parts._existing_parts(str(out)), keep_output=False)
    assert '"out_beta": null' in one.read_text() and out.read_bytes() == one.read_bytes()
