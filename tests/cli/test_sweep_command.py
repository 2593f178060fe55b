"""``dpax sweep`` (:mod:`dpax.cli.sweep_command`): a configuration file or results path that
cannot be used, a config with no valid row, and a bad ``--batch-size``, fail with exit status 2 and one line
``dpax: error: <message>`` naming the file (and line) or option, never a traceback.

Each test fails before any kernel compiles (grid step 1e-2, a few steps).
"""

from __future__ import annotations

from cli_helpers import fail

CHEAP = ["--grid-step", "1e-2", "--no-cache"]


def test_sweep_results_in_a_missing_directory(tmp_path, capsys):
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("noise_multiplier,sample_rate,num_steps\n1,0.1,5\n")
    target = tmp_path / "nowhere" / "x.csv"
    msg = fail(["sweep", str(cfg), "-o", str(target), "--no-progress", *CHEAP], capsys)
    assert str(target) in msg and "No such file or directory" in msg
    assert not target.parent.exists()


def test_sweep_csv_field_over_the_csv_limit(tmp_path, capsys):
    cfg = tmp_path / "long.csv"
    cfg.write_text("noise_multiplier,sample_rate,num_steps,name\n1,0.1,5," + "x" * 140_000 + "\n")
    msg = fail(["sweep", str(cfg), "-o", str(tmp_path / "r.csv"), "--no-progress", *CHEAP], capsys)
    assert str(cfg) in msg and "line 2" in msg and "131,072" in msg


def test_sweep_yaml_rows_not_a_list(tmp_path, capsys):
    cfg = tmp_path / "rows.yaml"
    cfg.write_text("rows: 5\n")
    msg = fail(["sweep", str(cfg), "-o", str(tmp_path / "r.csv"), "--no-progress", *CHEAP], capsys)
    assert str(cfg) in msg and "'rows' must be a list" in msg


def test_sweep_latin1_csv_names_file_and_line(tmp_path, capsys):
    cfg = tmp_path / "latin1.csv"
    cfg.write_bytes("noise_multiplier,sample_rate,num_steps,name\n1,0.1,5,café\n".encode("latin-1"))
    msg = fail(["sweep", str(cfg), "-o", str(tmp_path / "r.csv"), "--no-progress", *CHEAP], capsys)
    assert str(cfg) in msg and "line 2" in msg and "UTF-8" in msg


def test_sweep_batch_size_nan(tmp_path, capsys):
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("noise_multiplier,sample_rate,num_steps\n1,0.1,5\n")
    msg = fail(["sweep", str(cfg), "-o", str(tmp_path / "r.csv"), "--batch-size", "nan", *CHEAP], capsys)
    assert "argument --batch-size" in msg


def test_sweep_with_no_valid_row_fails_after_writing_the_reasons(tmp_path, capsys):
    """A config whose every row is malformed (a wrong file) is not a success: the rows are
    written as 'invalid' with their reasons, and the command exits 2 saying so."""
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("noise,rate\n1,0.1\n2,0.2\n")
    out = tmp_path / "r.csv"
    msg = fail(["sweep", str(cfg), "-o", str(out), "--no-progress", *CHEAP], capsys)
    assert str(cfg) in msg and "none of its 2 row(s) is valid" in msg
    assert out.read_text().count(",invalid,missing sample_rate") == 2


def test_sweep_distributed_timeouts_alone_and_python_names(tmp_path, capsys):
    """--join-timeout and --heartbeat-timeout set up a distributed sweep: without --distributed
    they changed nothing (a -1 not even checked); a bad --rtol is named as the option."""
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("noise_multiplier,sample_rate,num_steps\n1,0.1,5\n")
    out = str(tmp_path / "r.csv")
    for option in ("--join-timeout", "--heartbeat-timeout"):
        msg = fail(["sweep", str(cfg), "-o", out, option, "-1", "--no-progress", *CHEAP], capsys)
        assert f"{option} only go(es) with --distributed" in msg
    msg = fail(["sweep", str(cfg), "-o", out, "--rtol", "0", "--no-progress", *CHEAP], capsys)
    assert "--rtol (rtol) must lie in [1e-08, 0.1], got 0" in msg
