"""dpax.sweep.results: the results file a sweep writes, read back and resumed.

Resuming a sweep keeps a results file only when it is one a sweep of the same config
writes: foreign, negative or non-numeric row numbers, repeated or reordered rows, control
characters, other columns or values than the config's, numbers not in the writer's form and
JSON lines not written by the writer are refused with the file, the line and the reason
(ValueError; exit status 2 from the CLI), the file untouched. A last line cut short by a
crash is dropped and recomputed (also from YAML to JSON lines: the result equals a clean
run); resume with overwrite is refused. The writer escapes control characters in ``reason``;
results that cannot be written or read are refused by name; the standard comparison's
columns are answer columns. The config and its clean results are tests/sweep/conftest.py's
``clean``."""

from __future__ import annotations

import io
import json
import re

import pytest
from sweep_helpers import file_lines, write_file

from dpax import sweep
from dpax.cli import main
from dpax.cli.main import build_parser
from dpax.sweep import results

# the clean files: line 1 the CSV header; then row 5 (malformed, written first), rows 1 to 4
CSV_LINE = {5: 2, 1: 3, 2: 4, 3: 5, 4: 6}
JSON_LINE = {5: 1, 1: 2, 2: 3, 3: 4, 4: 5}
ROW = "noise_multiplier,sample_rate,num_steps\n1,0.1,5\n"


def _resume(cfg, path, **kw):
    return sweep.run_sweep(cfg, str(path), batch_size=1, resume=True, progress=False, log=io.StringIO(), **kw)


@pytest.mark.parametrize("ext", ["csv", "jsonl"])
def test_a_clean_file_resumes_unchanged(clean, tmp_path, ext):
    cfg, data = clean
    assert data[ext].count(b"\n") == (6 if ext == "csv" else 5)
    path = tmp_path / f"r.{ext}"
    path.write_bytes(data[ext])
    s = _resume(cfg, path)
    assert s["already_done"] == 5 and s["written"] == 0 and path.read_bytes() == data[ext]


def _replace(table, row, old, new):
    """Replace ``old`` by ``new`` once in the line of ``row`` (``table``: its line numbers)."""
    def edit(lines):
        i = table[row] - 1
        assert old in lines[i]
        lines[i] = lines[i].replace(old, new, 1)
    return edit


def _csv_edit(row, old, new):
    """Replace ``old`` by ``new`` once in the CSV line of ``row``."""
    return _replace(CSV_LINE, row, old, new)


def _swap(a, b, table):
    def edit(lines):
        i, j = table[a] - 1, table[b] - 1
        lines[i], lines[j] = lines[j], lines[i]
    return edit


def _append_copy(row, table):
    def edit(lines):
        lines.append(lines[table[row] - 1])
    return edit


def _insert(at, text):
    def edit(lines):
        lines.insert(at - 1, text)
    return edit


CSV_CASES = {
    # foreign row numbers
    "row 999": (_csv_edit(2, "2,4,", "999,4,"), 4,
                r"column 'row' holds '999', not a row number of the config \(1 to 5\)"),
    "row -5": (_csv_edit(2, "2,4,", "-5,4,"), 4, r"column 'row' holds '-5'"),
    "row nan": (_csv_edit(2, "2,4,", "nan,4,"), 4, r"column 'row' holds 'nan'"),
    "row 0": (_csv_edit(2, "2,4,", "0,4,"), 4, r"column 'row' holds '0'"),
    "row 2.0": (_csv_edit(2, "2,4,", "2.0,4,"), 4, r"column 'row' holds '2.0'"),
    # duplicates and order
    "duplicate row": (_append_copy(1, CSV_LINE), 7, r"row 1 is already on line 3"),
    "rows swapped": (_swap(2, 3, CSV_LINE), 5, r"row 2 comes after row 3 of the same kind of work"),
    "row of another line": (_csv_edit(2, "2,4,", "2,9,"), 4,
                            r"row 2 starts on line 4 of the config, the results say line '9'"),
    # control characters
    "escape in an input": (_csv_edit(2, ",r1,", ",r1\x1b[31m,"), 4, r"column 'tag' holds the control character 0x1b"),
    "escape in reason": (_csv_edit(2, "analysed,,", "analysed,\x1b]0;x\x07,"), 4,
                         r"column 'reason' holds the control character 0x1b"),
    "NUL byte": (_csv_edit(3, ",r2,", ",r2\x00,"), 5, r"the control character 0x00"),
    "carriage return": (_csv_edit(1, ",r0,", ",r0\r,"), 3, r"the control character 0x0d"),
    "bidi override": (_csv_edit(4, ",r3,", ",\u202er3,"), 6, r"column 'tag' holds the control character 0x202e"),
    # columns and values
    "input value changed": (_csv_edit(2, ",r1,", ",r9,"), 4, r"column 'tag' is 'r9', row 2 of the config has 'r1'"),
    "noise changed": (_csv_edit(2, ",4.004,r1", ",4.5,r1"), 4, r"column 'noise_multiplier' is '4.5'"),
    "extra field": (_csv_edit(2, ",r1,", ",r1,extra,"), 4, r"has 24 fields, the header has 23"),
    "missing field": (_csv_edit(2, ",r1,", ","), 4, r"has 22 fields, the header has 23"),
    "header renamed": (lambda ls: ls.__setitem__(0, ls[0].replace(",tag,", ",label,")), 1,
                       r"the header's column 8 is 'label', a sweep of this config writes 'tag'"),
    "extra header column": (lambda ls: ls.__setitem__(0, ls[0] + ",extra"), 1, r"the header has 24 columns"),
    "answer not a number": (_csv_edit(2, ",1e-05,", ",1e-05x,"), 4, r"column 'out_delta' holds '1e-05x', not a number"),
    "answer nan text": (_csv_edit(2, ",1e-05,", ",nan,"), 4, r"column 'out_delta' holds 'nan', not a number"),
    "answer not the writer's repr": (_csv_edit(2, ",1e-05,", ",0.00001,"), 4, r"column 'out_delta' holds '0.00001'"),
    "meets_target not a bool": (lambda ls: ls.__setitem__(3, ls[3] + "yes"), 4,
                                r"column 'out_meets_target' holds 'yes'"),
    "status of another mode": (_csv_edit(2, "analyse,analysed,", "analyse,calibrated,"), 4,
                               r"row 2 has mode 'analyse' and status 'calibrated', "
                               r"but row 2 of the config is a row to analyse"),
    "malformed row made valid": (_csv_edit(5, ",invalid,", ",analysed,"), 2, r"row 5 of the config is malformed"),
    "reason of a malformed row": (_csv_edit(5, "got 'x'", "got 'y'"), 2, r"column 'reason' is .*got 'y'"),
    "answer in a malformed row": (_csv_edit(5, '",,', '",4.0,'), 2,
                                  r"has status 'invalid' but an answer in 'out_noise_multiplier'"),
    "other grid step": (_csv_edit(2, ",4.004,0.01,", ",4.004,0.001,"), 4, r"grid step 0\.001, this sweep's is 0\.01"),
    "answer noise differs": (_csv_edit(2, ",analysed,,4.004,", ",analysed,,4.5,"), 4,
                             r"'out_noise_multiplier' is 4\.5"),
    # the writer's form
    "needless quotes": (_csv_edit(2, ",r1,", ',"r1",'), 4, r"not written the way dpax writes CSV"),
    "empty line": (_insert(4, ""), 4, r"is empty"),
}


def _assert_refused(clean, tmp_path, ext, edit, line, message):
    """The clean ``ext`` file with ``edit`` applied to its lines: resuming it raises a ValueError
    naming the file and ``line`` and matching ``message``, and leaves the file untouched; returns
    the error's text."""
    cfg, data = clean
    lines = file_lines(data[ext])
    edit(lines)
    path = tmp_path / f"r.{ext}"
    bad = ("\n".join(lines) + "\n").encode()
    path.write_bytes(bad)
    with pytest.raises(ValueError) as err:
        _resume(cfg, path)
    text = str(err.value)
    assert text.startswith(f"results file {str(path)!r}: line {line}: "), text
    assert re.search(message, text), text
    assert path.read_bytes() == bad  # untouched
    return text


@pytest.mark.parametrize("case", list(CSV_CASES))
def test_a_corrupted_csv_file_is_refused(clean, tmp_path, case):
    text = _assert_refused(clean, tmp_path, "csv", *CSV_CASES[case])
    assert "cannot be resumed" in text and "--overwrite" in text and "\n" not in text


def _json_edit(row, change):
    """Apply ``change`` to the parsed JSON line of ``row`` and write it back as dpax would."""
    def edit(lines):
        i = JSON_LINE[row] - 1
        rec = json.loads(lines[i])
        change(rec)
        lines[i] = json.dumps(rec)
    return edit


def _json_text(row, old, new):
    return _replace(JSON_LINE, row, old, new)


JSON_CASES = {
    "a shell string in an input": (_json_edit(2, lambda r: r.update(tag="$(rm -rf ~)")), 3,
                                   r"column 'tag' is '\$\(rm -rf ~\)', row 2 of the config has 'r1'"),
    "an extra column": (_json_edit(2, lambda r: r.update(cmd="rm -rf /")), 3,
                        r"has the column 'cmd', which a sweep of this config does not write"),
    "a shell line": (_insert(3, "rm -rf / # ; curl example.org | sh"), 3, r"is not JSON"),
    "an array": (_insert(3, "[1, 2, 3]"), 3, r"is not a JSON object"),
    "row 999": (_json_edit(2, lambda r: r.update(row=999)), 3, r"column 'row' holds 999, not a row number"),
    "row -5": (_json_edit(2, lambda r: r.update(row=-5)), 3, r"column 'row' holds -5"),
    "row NaN": (_json_text(2, '"row": 2,', '"row": NaN,'), 3, r"NaN or Infinity"),
    "row as text": (_json_edit(2, lambda r: r.update(row="2")), 3, r"column 'row' holds '2'"),
    "row true": (_json_edit(2, lambda r: r.update(row=True)), 3, r"column 'row' holds True"),
    "duplicate row": (_append_copy(3, JSON_LINE), 6, r"row 3 is already on line 4"),
    "rows swapped": (_swap(1, 4, JSON_LINE), 3, r"row 2 comes after row 4"),
    "escaped control character": (_json_edit(2, lambda r: r.update(reason="\x1b[2J")), 3,
                                  r"column 'reason' holds the control character 0x1b"),
    "raw control byte": (_json_text(2, '"tag": "r1"', '"tag": "r1\x1b"'), 3, r"holds the control character 0x1b"),
    "columns reordered": (_json_edit(2, lambda r: r.update(row=r.pop("row"))), 3,
                          r"its columns are not in the order dpax writes them"),
    "other spacing": (_json_text(2, '"row": 2, ', '"row":2, '), 3, r"not written the way dpax writes JSON lines"),
    "a repeated key": (_json_text(2, '"tag": "r1"', '"tag": "x", "tag": "r1"'), 3,
                       r"not written the way dpax writes JSON lines"),
    "an answer as text": (_json_edit(2, lambda r: r.update(out_mu="0.024")), 3,
                          r"column 'out_mu' holds '0.024', not a number"),
    "an answer as an integer": (_json_edit(2, lambda r: r.update(out_mu=1)), 3,
                                r"column 'out_mu' holds 1, not a number"),
    "Infinity": (_json_text(2, '"out_mu": 0.', '"out_mu": Infinity, "x": 0.'), 3, r"NaN or Infinity"),
    "meets_target 1": (_json_edit(2, lambda r: r.update(out_meets_target=1)), 3, r"'out_meets_target' holds 1"),
    "status missing": (_json_edit(2, lambda r: r.pop("status")), 3, r"row 2 has mode 'analyse' and status ''"),
    "blank line": (_insert(2, "   "), 2, r"is empty"),
}


@pytest.mark.parametrize("case", list(JSON_CASES))
def test_a_corrupted_json_lines_file_is_refused(clean, tmp_path, case):
    _assert_refused(clean, tmp_path, "jsonl", *JSON_CASES[case])


def test_a_file_of_another_config_is_refused(clean, resume_config, tmp_path):
    cfg, data = clean
    other = tmp_path / "other.yaml"
    other.write_text(resume_config.replace("tag: r3", "tag: r3x"))
    path = tmp_path / "r.jsonl"
    path.write_bytes(data["jsonl"])
    with pytest.raises(ValueError, match=r"line 5: column 'tag' is 'r3', row 4 of the config has 'r3x'"):
        _resume(str(other), path)
    fewer = tmp_path / "fewer.yaml"
    fewer.write_text(resume_config.replace("  - {noise_multiplier: x, tag: bad}\n", ""))
    with pytest.raises(ValueError, match=r"line 1: column 'row' holds 5, not a row number of the config \(1 to 4\)"):
        _resume(str(fewer), path)


@pytest.mark.parametrize("ext", ["csv", "jsonl"])
def test_a_last_line_cut_short_is_dropped_and_recomputed(clean, tmp_path, ext):
    """A crash mid-write leaves a last line without its newline: resuming drops it (garbage
    in it included) and computes that row again; the file equals a clean run's."""
    cfg, data = clean
    cut = data[ext][: data[ext].rstrip(b"\n").rfind(b"\n") + 1]
    path = tmp_path / f"r.{ext}"
    path.write_bytes(cut + b"4,6,0.001,\x1b[31mrm -rf")  # a torn row 4
    s = _resume(cfg, path)
    assert s["already_done"] == 4 and s["written"] == 1
    assert path.read_bytes() == data[ext]


def test_a_torn_csv_header_starts_the_file_again(clean, tmp_path):
    cfg, data = clean
    path = tmp_path / "r.csv"
    path.write_bytes(b"row,li")
    s = sweep.run_sweep(cfg, str(path), batch_size=1, resume=True, on_error="skip", progress=False,
                        log=io.StringIO())
    assert s["already_done"] == 0 and s["written"] == 5 and path.read_bytes() == data["csv"]


def test_resume_and_overwrite_together_are_refused(clean, tmp_path, capsys):
    cfg, data = clean
    path = tmp_path / "r.csv"
    path.write_bytes(data["csv"])
    with pytest.raises(ValueError, match=r"resume=True \(--resume\) and overwrite=True \(--overwrite\) contradict"):
        _resume(cfg, path, overwrite=True)
    with pytest.raises(ValueError, match="contradict"):  # refused whether or not the file exists
        _resume(cfg, tmp_path / "new.csv", overwrite=True)
    code = main(["sweep", cfg, "-o", str(path), "--resume", "--overwrite", "--no-progress", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2 and "--resume and --overwrite contradict each other" in err and "Traceback" not in err
    assert path.read_bytes() == data["csv"] and not (tmp_path / "new.csv").exists()


def test_the_cli_refuses_a_corrupted_file_with_status_2(clean, tmp_path, capsys):
    cfg, data = clean
    path = tmp_path / "r.csv"
    bad = data["csv"].replace(b"\n2,4,", b"\n999,4,")
    path.write_bytes(bad)
    code = main(["sweep", cfg, "-o", str(path), "--resume", "--batch-size", "1", "--no-progress", "--no-cache"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "Traceback" not in err
    last = err.rstrip("\n").split("\n")[-1]
    assert last.startswith(f"dpax: error: results file {str(path)!r}: line 4: column 'row' holds '999'"), last
    assert path.read_bytes() == bad


def test_the_writer_escapes_control_characters_in_reason(tmp_path):
    header = ["row", "line", "status", "reason"]
    for ext in ("csv", "jsonl"):
        path = tmp_path / f"w.{ext}"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            results._ResultsWriter(fh, results._out_format(str(path)), header, True).emit(
                [{"row": 1, "line": 2, "status": "error", "reason": "bad\nvalue \x1b[31m\u202e"}])
        text = path.read_text()
        assert "\x1b" not in text and "\u202e" not in text and "\\u202e" in text
        (rec,) = results.read_results(str(path))
        assert rec["reason"] == "bad\\nvalue \\x1b[31m\\u202e"


def test_yaml_to_json_lines_resume_after_a_torn_line(tmp_path):
    """Resume from a JSON-lines file whose last line was cut short (a crash mid-write): the
    torn line is dropped and its rows recomputed; the result equals a clean run."""
    # 8 rows in batches of one, torn after 4: every row has the kernel shapes of DP-SGD (4.0,
    # 0.001, 200) at grid 1e-2 (construction, beta, advantage, epsilon and the 256-point mu
    # kernel, which tests/test_input_errors.py, tests/test_fuzz.py and other files compile), so
    # this test compiles nothing of its own (the test is about resuming, not about many
    # configurations; batches of 4 rows compiled 9 kernels, ~6 s, for this test alone). The
    # noises differ by little enough that every row keeps the same kernel shapes.
    noises = [f"{4.0 + 0.004 * i:.3f}" for i in range(8)]
    cfg = write_file(tmp_path / "cfg.yaml",
                     "defaults: {sample_rate: 0.001, num_steps: 200, grid_step: 0.01, alpha: 0.1}\n"
                     "rows:\n" + "".join(f"  - {{noise_multiplier: {s}, tag: r{i}}}\n" for i, s in enumerate(noises)))
    full, part = str(tmp_path / "full.jsonl"), str(tmp_path / "part.jsonl")
    sweep.run_sweep(cfg, full, batch_size=1, progress=False, log=io.StringIO())
    lines = open(full).read().splitlines(keepends=True)
    assert len(lines) == 8 and json.loads(lines[0])["tag"] == "r0" and json.loads(lines[0])["line"] == 3
    open(part, "w").write("".join(lines[:4]) + lines[4][:25])  # 4 whole rows and a torn one
    s = sweep.run_sweep(cfg, part, batch_size=1, resume=True, progress=False, log=io.StringIO())
    assert s["already_done"] == 4 and s["written"] == 4
    assert sorted(sweep.read_results(part), key=lambda r: r["row"]) == sorted(sweep.read_results(full),
                                                                             key=lambda r: r["row"])


def test_results_that_cannot_be_written_or_read(tmp_path):
    cfg = write_file(tmp_path / "cfg.csv", ROW)
    missing = tmp_path / "nowhere" / "r.csv"
    with pytest.raises(ValueError, match=r"output: cannot write the results file .*nowhere.*No such file"):
        sweep.run_sweep(cfg, str(missing), progress=False)
    with pytest.raises(ValueError, match="is the config file itself"):
        sweep.run_sweep(cfg, cfg, overwrite=True, progress=False)
    assert open(cfg).read() == ROW  # untouched
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"row": 1}\nnot json\n{"row": 3}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl'?: line 2 is not JSON"):
        sweep.read_results(str(bad))
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"row,line\n1,\xe9\n")
    with pytest.raises(ValueError, match=r"latin.csv'? is not UTF-8"):
        sweep.run_sweep(cfg, str(latin), resume=True, progress=False)
    assert latin.read_bytes() == b"row,line\n1,\xe9\n"  # untouched


def test_the_columns_are_answers():
    cols = ("out_standard_epsilon", "out_standard_noise_multiplier", "out_noise_reduction")
    assert all(c in sweep.OUTPUT_COLUMNS for c in cols)
    assert all(c in sweep.results.NUMBER_COLUMNS for c in cols)
    assert sweep.OUTPUT_COLUMNS[-1] == "out_meets_target"
    args = build_parser().parse_args(["sweep", "c.csv", "-o", "r.csv", "--no-compare-standard"])
    assert args.compare_standard is False
    assert build_parser().parse_args(["sweep", "c.csv", "-o", "r.csv"]).compare_standard is True


@pytest.mark.parametrize("ext, junk", [("csv", b"\x01\x02" * 40), ("csv", b"noise,rows"), ("jsonl", b"\x00\x1b[31m"),
                                       ("jsonl", b"[1, 2")])
def test_a_file_with_no_whole_line_must_be_the_start_of_what_the_writer_writes(clean, tmp_path, ext, junk):
    """A file with no newline is resumed (written again from its header) only when it is the
    start of the writer's first line, as a crash leaves it; control bytes or another header
    are refused naming the file and line 1, the file untouched."""
    cfg, data = clean
    path = tmp_path / f"r.{ext}"
    path.write_bytes(junk)
    with pytest.raises(ValueError, match=r"r\.\w+'?: line 1 \(cut short"):
        _resume(cfg, path)
    assert path.read_bytes() == junk
    path.write_bytes(data[ext][:7])  # the writer's first 7 bytes: a crash's
    s = _resume(cfg, path)
    assert s["already_done"] == 0 and path.read_bytes() == data[ext]
