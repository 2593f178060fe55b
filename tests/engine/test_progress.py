"""Progress bars of long work (dpax._engine.progress): on stderr when asked or on a terminal,
after a delay, silent otherwise; bad values of ``progress`` are refused."""

import io
import sys

import pytest

import dpax
from dpax._engine import progress


def test_bar_when_asked_and_silence_otherwise(monkeypatch, capsys):
    kw = dict(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3), grid_step=1e-2, compare_standard=False)
    dpax.calibrate_dpsgd(**kw, progress=True)
    err = capsys.readouterr().err
    assert "dpax calibrate_dpsgd" in err
    dpax.calibrate_dpsgd(**kw, progress=False)
    dpax.calibrate_dpsgd(**kw)  # None: stderr is not a terminal here
    assert capsys.readouterr().err == ""


def test_none_follows_the_terminal(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Tty())
    assert progress.wanted(None) and not progress.wanted(False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not progress.wanted(None) and progress.wanted(True)


def test_nested_tasks_share_one_bar(capsys):
    with progress.task("outer", True) as outer:
        with progress.task("inner", True) as inner:
            assert inner is outer
            progress.advance(2, step="x")
        assert outer.n == 2
    assert "inner" not in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["yes", 1, 0.5])
def test_bad_progress_values_are_refused(bad):
    with pytest.raises(TypeError, match="progress"):
        dpax.calibrate(lambda s: dpax.gaussian(s, grid_step=1e-2), dpax.targets.Advantage(0.2), progress=bad)
