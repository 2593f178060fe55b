"""``dpax epsilon-star`` (:mod:`dpax.cli.epsilon_star_command`): its numbers equal the
library's (:func:`dpax.audit.epsilon_star`), every loss file format reads the same losses, the
goodness of fit is reported when asked for, and bad files or options fail with exit status 2
and a message naming the file or option (a pickled .npy refused unread)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from cli_helpers import fail, run_error, run_json

import dpax
from dpax.cli import main


@pytest.fixture(scope="module")
def losses():
    rng = np.random.default_rng(42)
    return rng.gamma(2.0, 5.0, 3000), rng.gamma(3.0, 5.0, 2500)


def _reference(train, test, delta=1e-5):
    return {m: dpax.audit.epsilon_star(train, test, delta=delta, method=m).value for m in ("parametric", "empirical")}


def _write(tmp_path, fmt, train, test):
    """Write both loss sets in one format; returns (train_path, test_path, extra_args)."""
    tr, te = tmp_path / f"train{fmt}", tmp_path / f"test{fmt}"
    if fmt == ".npy":
        np.save(tr, train), np.save(te, test)
        return tr, te, []
    if fmt == ".npz":
        np.savez(tr, loss=train, other=np.zeros(3)), np.savez(te, loss=test, other=np.zeros(3))
        return tr, te, ["--column", "loss"]
    if fmt == ".csv":
        tr.write_text("id,loss\n" + "".join(f"{i},{float(v)!r}\n" for i, v in enumerate(train)))
        te.write_text("".join(f"{float(v)!r}\n" for v in test))  # no header, one column
        return tr, te, ["--train-column", "loss"]
    if fmt == ".parquet":
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"loss": train, "id": np.arange(train.size)}), tr)
        pq.write_table(pa.table({"loss": test}), te)
        return tr, te, ["--train-column", "loss"]
    raise AssertionError(fmt)


@pytest.mark.parametrize("fmt", [".npy", ".npz", ".csv", ".parquet"])
def test_epsilon_star_reads_every_format(fmt, tmp_path, losses, capsys):
    train, test = losses
    tr, te, extra = _write(tmp_path, fmt, train, test)
    r = run_json(capsys, ["epsilon-star", str(tr), str(te), "--no-cache"] + extra)
    ref = _reference(train, test)
    assert r["n_train"] == train.size and r["n_test"] == test.size
    for m in ("parametric", "empirical"):
        assert r["results"][m]["epsilon_star"] == ref[m]  # the same losses, bit for bit
    assert np.array_equal(dpax.audit.read_losses(tr, "loss" if fmt != ".npy" else None), train)


def test_epsilon_star_text_output_and_goodness_of_fit(tmp_path, losses, capsys):
    tr, te, _ = _write(tmp_path, ".npy", *losses)
    assert main(["epsilon-star", str(tr), str(te), "--method", "empirical", "--delta", "1e-6", "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "empirical" in text and "parametric" not in text and "Epsilon* at delta 1e-06" in text
    r = run_json(capsys, ["epsilon-star", str(tr), str(te), "--method", "parametric", "--goodness-of-fit", "2",
                          "--no-cache"])
    g = r["goodness_of_fit"]
    assert g["components"] == [1, 2] and len(g["train_pvalues"]) == 2 and all(0 <= p <= 1 for p in g["test_pvalues"])
    assert set(r["results"]) == {"parametric"}


def test_bad_loss_files(tmp_path, losses, capsys):
    train, test = losses
    good = tmp_path / "good.npy"
    np.save(good, train)
    cases = {}
    np.save(tmp_path / "empty.npy", np.zeros(0))
    cases["empty.npy"] = "no losses"
    np.save(tmp_path / "nan.npy", np.array([1.0, np.nan, 2.0]))
    cases["nan.npy"] = "NaN or infinite"
    np.save(tmp_path / "inf.npy", np.array([1.0, 2.0, np.inf]))
    cases["inf.npy"] = "NaN or infinite"
    np.save(tmp_path / "matrix.npy", np.ones((3, 4)))
    cases["matrix.npy"] = "1-D"
    np.save(tmp_path / "text.npy", np.array(["a", "b"]))
    cases["text.npy"] = "numbers"
    np.savez(tmp_path / "two.npz", a=train, b=test)
    cases["two.npz"] = "several arrays"
    (tmp_path / "gap.csv").write_text("loss\n1.0\n2.0,3.0\n")
    cases["gap.csv"] = "fields"
    (tmp_path / "hole.csv").write_text("a,b\n1.0,2.0\n3.0,\n")
    cases["hole.csv"] = "NaN or infinite"
    (tmp_path / "word.csv").write_text("1.0\nabc\n")
    cases["word.csv"] = "not a number"
    (tmp_path / "blank.csv").write_text("\n\n")
    cases["blank.csv"] = "empty"
    (tmp_path / "wide.csv").write_text("1.0,2.0\n3.0,4.0\n")
    cases["wide.csv"] = "--column"
    (tmp_path / "losses.txt").write_text("1.0\n")
    cases["losses.txt"] = "unknown loss file type"
    cases["missing.npy"] = "no such file"
    for name, match in cases.items():
        extra = ["--test-column", "b"] if name == "hole.csv" else []
        err = run_error(["epsilon-star", str(good), str(tmp_path / name)] + extra, capsys)
        assert name in err and match in err, (name, err)
    # a column that is not there
    np.savez(tmp_path / "one.npz", loss=train)
    err = run_error(["epsilon-star", str(good), str(tmp_path / "one.npz"), "--test-column", "losses"], capsys)
    assert "no array 'losses'" in err and "'loss'" in err
    # constant losses in both files
    np.save(tmp_path / "const.npy", np.ones(10))
    err = run_error(["epsilon-star", str(tmp_path / "const.npy"), str(tmp_path / "const.npy")], capsys)
    assert "all equal" in err


def test_parquet_without_pyarrow_says_what_to_install(tmp_path, monkeypatch, capsys):
    path = tmp_path / "losses.parquet"
    path.write_bytes(b"PAR1")  # never opened: the import fails first
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ValueError, match="pip install pyarrow"):
        dpax.audit.read_losses(path)
    good = tmp_path / "good.npy"
    np.save(good, np.arange(5.0))
    err = run_error(["epsilon-star", str(good), str(path)], capsys)
    assert "pyarrow" in err


class _Unpickled:
    """Unpickling this would create the file ``path``: a .npy holding it must be refused unread."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_loss_files_that_are_not_plain_numbers(tmp_path, capsys):
    good = tmp_path / "good.npy"
    np.save(good, np.arange(50.0))
    marker = tmp_path / "unpickled"
    objects = tmp_path / "objects.npy"
    np.save(objects, np.array([_Unpickled(str(marker)), 1.0], dtype=object), allow_pickle=True)
    corrupt = tmp_path / "corrupt.npy"
    corrupt.write_bytes(b"\x93NUMPY\x01\x00garbage")
    latin = tmp_path / "latin1.csv"
    latin.write_bytes("loss\n1.0\n2.0 é\n".encode("latin-1"))
    for path in (objects, corrupt, latin):
        msg = fail(["epsilon-star", str(good), str(path), "--no-cache"], capsys)
        assert str(path) in msg, msg
    assert "pickle" in fail(["epsilon-star", str(good), str(objects), "--no-cache"], capsys)
    assert not marker.exists()  # refused, never unpickled


@pytest.mark.parametrize("option, value", [("--goodness-of-fit", "nan"), ("--goodness-of-fit", "2.5"),
                                           ("--goodness-of-fit", "21"), ("--seed", "nan"), ("--seed", "-1")])
def test_epsilon_star_integer_options(option, value, tmp_path, capsys):
    good = tmp_path / "good.npy"
    np.save(good, np.arange(50.0))
    msg = fail(["epsilon-star", str(good), str(good), option, value, "--no-cache"], capsys)
    assert f"argument {option}" in msg and "whole number" in msg


@pytest.mark.parametrize("extra, why", [
    (["--grid-step", "1e-3"], "--grid-step is not used here: epsilon-star computes no privacy loss"),
    (["--seed", "3"], "--seed is not used here: it seeds --goodness-of-fit's split"),
    (["--column", "loss", "--train-column", "loss", "--test-column", "loss"], "--column is not used here"),
])
def test_options_that_change_nothing_are_refused(extra, why, tmp_path, losses, capsys):
    tr, te, _ = _write(tmp_path, ".npy", *losses)
    assert main(["epsilon-star", str(tr), str(te), *extra, "--no-cache"]) == 2
    assert why in capsys.readouterr().err
