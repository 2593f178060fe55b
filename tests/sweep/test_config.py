"""dpax.sweep.config: reading a sweep file. CSV, JSON, JSON lines and YAML are parsed with
line numbers. Sweep files are not trusted: YAML anchors and aliases (an alias bomb) are refused,
the size, rows, columns and value lengths read are capped (each limit named in its error), a
column named like an answer is refused, and files that are not UTF-8 text (or hold control
characters) or not CSV name their line. Nothing here computes a privacy loss."""

from __future__ import annotations

import io
import json

import pytest
from sweep_helpers import write_file

from dpax import sweep
from dpax.sweep import config as sweep_config

ROW = "noise_multiplier,sample_rate,num_steps\n1,0.1,5\n"


def test_parse_formats_and_line_numbers(tmp_path):
    rows_csv = sweep.read_config(write_file(tmp_path / "c.csv", (
        "noise_multiplier,sample_rate,num_steps,alpha\n"
        "1.0,0.01,100,0.1\n"
        "\n"
        "x,0.01,100,0.1\n"
        "1.0,1.5,100,\n"
        "1.0,0.01,2.5,\n"
        "1.0,0.01\n"
        ",0.01,100,0.1\n")))
    assert [(r.row, r.line) for r in rows_csv] == [(1, 2), (2, 4), (3, 5), (4, 6), (5, 7), (6, 8)]
    assert rows_csv[0].error == "" and rows_csv[0].params["num_steps"] == 100
    assert rows_csv[0].params["grid_step"] == 1e-4  # the default
    assert "noise_multiplier must be a number" in rows_csv[1].error
    assert "sample_rate" in rows_csv[2].error and "(0, 1]" in rows_csv[2].error
    assert "num_steps" in rows_csv[3].error
    assert "fields" in rows_csv[4].error
    assert "needs a target" in rows_csv[5].error  # no noise and no target

    yaml_text = ("defaults:\n  sample_rate: 0.01\n  grid_step: 0.01\nrows:\n"
                 "  - {noise_multiplier: 1.0, num_steps: 10}\n"
                 "  - num_steps: 10\n    advantage: 0.2\n"
                 "  - !!python/object/apply:os.system ['echo unsafe']\n")
    with pytest.raises(sweep.SweepConfigError):  # the safe loader refuses Python tags: nothing is evaluated
        sweep.read_config(write_file(tmp_path / "c.yaml", yaml_text))
    rows_yaml = sweep.read_config(write_file(tmp_path / "d.yaml", yaml_text.rsplit("  - !!", 1)[0]))
    assert [(r.line, r.mode, r.params["grid_step"]) for r in rows_yaml] == [(5, "analyse", 0.01),
                                                                            (6, "calibrate", 0.01)]

    bom = tmp_path / "bom.csv"  # Excel writes a byte-order mark before the header
    bom.write_bytes("\ufeffnoise_multiplier,sample_rate,num_steps\n1,0.1,5\n".encode())
    assert sweep.read_config(str(bom))[0].mode == "analyse"

    rows_json = sweep.read_config(write_file(tmp_path / "c.json", json.dumps(
        [{"noise_multiplier": 1.0, "sample_rate": 0.01, "num_steps": 10}, [1, 2]], indent=1)))
    assert rows_json[0].error == "" and "mapping" in rows_json[1].error and rows_json[1].line > rows_json[0].line
    rows_jsonl = sweep.read_config(write_file(tmp_path / "c.jsonl", '{"noise_multiplier": 1, "sample_rate": 0.1, '
                                              '"num_steps": 5}\n{bad json\n'))
    assert rows_jsonl[0].error == "" and rows_jsonl[1].line == 2 and "JSON" in rows_jsonl[1].error


def _alias_bomb(levels: int) -> str:
    """A YAML file of ``levels`` chained anchors, each a list of nine aliases of the one before:
    9 ** levels rows once expanded (nine levels: 440 bytes, 387 million rows)."""
    lines = ["a0: &a0 {noise_multiplier: 1, sample_rate: 0.1, num_steps: 5}"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    lines.append("rows: [" + ", ".join([f"*a{levels - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_yaml_anchors_and_aliases_are_refused(tmp_path):
    small = write_file(tmp_path / "small.yaml", _alias_bomb(2))  # 81 rows once expanded
    with pytest.raises(sweep.SweepConfigError, match="anchor") as err:
        sweep.read_config(small)
    assert "small.yaml" in str(err.value) and "line 1" in str(err.value)
    merge = write_file(tmp_path / "merge.yaml", "- &base {sample_rate: 0.1, num_steps: 5}\n"
                                                "- {<<: *base, noise_multiplier: 1}\n")
    with pytest.raises(sweep.SweepConfigError, match="anchors and aliases are not allowed"):
        sweep.read_config(merge)
    alias_only = write_file(tmp_path / "alias.yaml", "- *nothing\n")
    with pytest.raises(sweep.SweepConfigError, match="alias"):
        sweep.read_config(alias_only)
    bomb_text = _alias_bomb(9)
    assert len(bomb_text) < 600
    bomb = write_file(tmp_path / "bomb.yaml", bomb_text)
    with pytest.raises(sweep.SweepConfigError, match="anchor"):
        sweep.read_config(bomb)
    out = tmp_path / "bomb.csv"
    with pytest.raises(sweep.SweepConfigError):
        sweep.run_sweep(bomb, str(out), progress=False, log=io.StringIO())
    assert not out.exists()
    # the 'defaults' mapping still shares values between rows
    rows = sweep.read_config(write_file(tmp_path / "ok.yaml", "defaults: {sample_rate: 0.1, num_steps: 5}\n"
                                                              "rows:\n  - {noise_multiplier: 1}\n"))
    assert rows[0].error == "" and rows[0].params["sample_rate"] == 0.1


@pytest.mark.parametrize("ext, text", [
    (".csv", ROW + "1,0.1,6\n1,0.1,7\n1,0.1,8\n"),
    (".jsonl", "".join(json.dumps({"noise_multiplier": 1, "sample_rate": 0.1, "num_steps": t}) + "\n"
                       for t in range(5, 9))),
    (".yaml", "rows:\n" + "".join(f"  - {{noise_multiplier: 1, sample_rate: 0.1, num_steps: {t}}}\n"
                                  for t in range(5, 9))),
])
def test_row_limit(ext, text, tmp_path, monkeypatch):
    path = write_file(tmp_path / f"cfg{ext}", text)
    monkeypatch.setattr(sweep_config, "MAX_ROWS", 4)
    assert len(sweep.read_config(path)) == 4
    monkeypatch.setattr(sweep_config, "MAX_ROWS", 3)
    with pytest.raises(sweep.SweepConfigError, match=r"more than 3 rows \(dpax.sweep.config.MAX_ROWS\)"):
        sweep.read_config(path)


def test_size_column_and_value_limits(tmp_path, monkeypatch):
    path = write_file(tmp_path / "cfg.csv", ROW)
    monkeypatch.setattr(sweep_config, "MAX_CONFIG_BYTES", len(ROW))
    assert len(sweep.read_config(path)) == 1
    monkeypatch.setattr(sweep_config, "MAX_CONFIG_BYTES", len(ROW) - 1)
    with pytest.raises(sweep.SweepConfigError, match=rf"larger than {len(ROW) - 1} bytes \(dpax.sweep.config.MAX_CONF"):
        sweep.read_config(path)
    monkeypatch.undo()

    wide = write_file(tmp_path / "wide.jsonl", '{"noise_multiplier": 1, "sample_rate": 0.1, "num_steps": 5}\n'
                                               '{"noise_multiplier": 1, "sample_rate": 0.1, "num_steps": 5, "x": 1}\n')
    monkeypatch.setattr(sweep_config, "MAX_COLUMNS", 3)
    with pytest.raises(sweep.SweepConfigError, match=r"line 2: more than 3 distinct columns \(dpax.sweep.config"):
        sweep.read_config(wide)
    monkeypatch.undo()

    long_yaml = write_file(tmp_path / "long.yaml", "- {noise_multiplier: 1, sample_rate: 0.1, num_steps: 5, name: "
                           + "x" * (sweep.MAX_FIELD_CHARS + 1) + "}\n")
    with pytest.raises(sweep.SweepConfigError, match=r"line 1: the value of 'name' is longer than 131,072"):
        sweep.read_config(long_yaml)
    long_csv = write_file(tmp_path / "long.csv", "noise_multiplier,sample_rate,num_steps,name\n1,0.1,5,x\n"
                          "1,0.1,5," + "x" * 140_000 + "\n")
    with pytest.raises(sweep.SweepConfigError, match=r"long.csv: line 3: a field is longer than 131,072"):
        sweep.read_config(long_csv)


@pytest.mark.parametrize("ext, text, column", [
    (".csv", "noise_multiplier,sample_rate,num_steps,out_beta\n1,0.1,5,0.3\n", "out_beta"),
    (".csv", "noise_multiplier,sample_rate,num_steps,status\n1,0.1,5,done\n", "status"),
    (".yaml", "defaults: {sample_rate: 0.1, num_steps: 5, row: 7}\nrows:\n  - {noise_multiplier: 1}\n", "row"),
    (".jsonl", '{"noise_multiplier": 1, "sample_rate": 0.1, "num_steps": 5}\n'
               '{"noise_multiplier": 1, "sample_rate": 0.1, "num_steps": 5, "out_whatever": 1}\n', "out_whatever"),
])
def test_input_columns_named_like_answers_are_refused(ext, text, column, tmp_path):
    path = write_file(tmp_path / f"cfg{ext}", text)
    with pytest.raises(sweep.SweepConfigError, match=f"the column '{column}' is named like a column of the results"):
        sweep.read_config(path)
    out = tmp_path / "res.csv"
    with pytest.raises(sweep.SweepConfigError, match=column):
        sweep.run_sweep(path, str(out), progress=False, log=io.StringIO())
    assert not out.exists()
    assert all(c in sweep.RESERVED_COLUMNS or c.startswith("out_") for c in sweep.OUTPUT_COLUMNS)


@pytest.mark.parametrize("text, match", [
    ("rows: 5\n", r"line 1: 'rows' must be a list of rows, got the value '5'"),
    ("rows: {a: 1}\n", r"'rows' must be a list of rows, got a mapping"),
    ("- " + "[" * 2000 + "]" * 2000 + "\n", r"cannot parse: nested too deeply"),
    ("- {a: 1}\n---\n- {a: 2}\n", r"cannot parse: line 2, column 1: but found another document"),
])
def test_malformed_yaml_structure(text, match, tmp_path):
    with pytest.raises(sweep.SweepConfigError, match=match):
        sweep.read_config(write_file(tmp_path / "cfg.yaml", text))


def test_files_that_are_not_utf8_text(tmp_path):
    latin = tmp_path / "latin1.csv"
    latin.write_bytes("noise_multiplier,sample_rate,num_steps,name\n1,0.1,5,caf\xe9\n".encode("latin-1"))
    with pytest.raises(sweep.SweepConfigError, match=r"latin1.csv: line 2: not UTF-8 text \(byte 0xe9\)"):
        sweep.read_config(str(latin))
    utf16 = tmp_path / "utf16.csv"  # ASCII as UTF-16 without a BOM decodes as UTF-8: a NUL after every letter
    utf16.write_bytes("noise_multiplier,sample_rate,num_steps\n1,0.1,5\n".encode("utf-16-le"))
    with pytest.raises(sweep.SweepConfigError, match=r"utf16.csv: line 1: control character U\+0000"):
        sweep.read_config(str(utf16))
    bell = tmp_path / "bell.yaml"
    bell.write_text("- noise_multiplier: 1\n  sample_rate: 0.1\n  num_steps: 5\n  name: a\x07b\n")
    with pytest.raises(sweep.SweepConfigError, match=r"bell.yaml: line 4: control character U\+0007"):
        sweep.read_config(str(bell))
    fine = tmp_path / "fine.csv"  # tabs and CR LF line ends are text
    fine.write_bytes(b"noise_multiplier,sample_rate,num_steps,name\r\n1,0.1,5,a\tb\r\n")
    assert len(sweep.read_config(str(fine))) == 1
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    with pytest.raises(sweep.SweepConfigError, match=r"folder.csv'?: cannot read it"):
        sweep.read_config(str(folder))


def test_a_column_given_twice_in_one_row_is_refused(tmp_path):
    """A YAML or JSON mapping with a key twice (the loaders would keep the last silently) is
    refused naming the key and the line; in JSON lines only that row is invalid."""
    row = '"noise_multiplier": 1.0, "noise_multiplier": 2.0, "sample_rate": 0.01, "num_steps": 10, "alpha": 0.1'
    yaml_cfg = write_file(tmp_path / "dup.yaml", "rows:\n  - {" + row.replace('"', "") + "}\n")
    with pytest.raises(sweep.SweepConfigError, match=r"line 2, .*'noise_multiplier' twice"):
        sweep.read_config(yaml_cfg)
    with pytest.raises(sweep.SweepConfigError, match="'noise_multiplier' twice"):
        sweep.read_config(write_file(tmp_path / "dup.json", "[{" + row + "}]"))
    lines = write_file(tmp_path / "dup.jsonl", "{" + row + "}\n" + '{"noise_multiplier": 1.0, "sample_rate": 0.01, '
                       '"num_steps": 10, "alpha": 0.1}\n')
    bad, good = sweep.read_config(lines)
    assert "'noise_multiplier' twice" in bad.error and bad.line == 1 and good.error == ""
