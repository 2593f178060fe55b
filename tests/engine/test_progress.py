"""Progress of long work (dpax._engine.progress): a bar on a terminal (after a delay when not
asked), plain lines at most once per interval and a last line when the stream is not a
terminal, nothing with progress=False (nested tasks included); bad values of ``progress``
are refused."""

import io
import sys

import pytest

import dpax
from dpax._engine import grid, progress


class Tty(io.StringIO):
    def isatty(self):
        return True


class Clock:
    """A clock the test moves by hand (no sleeping)."""

    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(progress, "_now", c)
    return c


def test_bar_when_asked_and_silence_otherwise(monkeypatch, capsys):
    kw = dict(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3), grid_step=1e-2, compare_standard=False)
    dpax.calibrate_dpsgd(**kw, progress=True)
    err = capsys.readouterr().err
    assert err.startswith("dpax calibrate_dpsgd: done, ") and err.endswith(" elapsed\n") and "\r" not in err
    dpax.calibrate_dpsgd(**kw, progress=False)
    # a first call again: a third call of one workload compiles its own shapes (dpax._engine.grid.repeated;
    # 15 kernels, ~5 s), which the progress report does not depend on
    grid.forget_repeats()
    dpax.calibrate_dpsgd(**kw)  # None: stderr is not a terminal and the work is short
    assert capsys.readouterr().err == ""


def test_style_follows_the_stream(monkeypatch):
    monkeypatch.setattr(sys, "stderr", Tty())
    assert progress.style(None) == "bar" and progress.style(True) == "bar" and progress.style(False) is None
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert progress.style(None) == "lines" and progress.style(True) == "lines"
    assert progress.style(None, Tty()) == "bar"
    closed = io.StringIO()
    closed.close()
    assert progress.style(None, closed) == "lines"


def test_a_terminal_gets_a_bar(clock):
    tty = Tty()
    with progress.task("dpax sweep", True, total=4, unit="row", stream=tty) as bar:
        progress.advance(3)
        assert type(bar).__name__ != "Lines" and bar.n == 3
    assert "dpax sweep" in tty.getvalue() and "\r" in tty.getvalue()  # tqdm redraws in place


def test_plain_lines_at_most_once_per_interval(clock):
    log = io.StringIO()
    with progress.task("dpax sweep", None, total=100_000, unit="row", stream=log, interval=30) as rep:
        assert isinstance(rep, progress.Lines)
        progress.advance(1_000)
        clock.t += 29.9
        progress.advance(234)
        assert log.getvalue() == ""  # nothing before the first interval
        clock.t += 0.1
        progress.advance(0)
        clock.t += 10
        progress.advance(1_000)  # 10 s after the last line: none
        clock.t += 290
        progress.advance(1_000)
    lines = log.getvalue().splitlines()
    assert lines == ["dpax sweep: 1,234/100,000 rows (1%), 0:00:30 elapsed",
                     "dpax sweep: 3,234/100,000 rows (3%), 0:05:30 elapsed",
                     "dpax sweep: stopped, 3,234/100,000 rows (3%), 0:05:30 elapsed"]  # fewer than the total
    assert "\r" not in log.getvalue()


def test_the_last_line_says_done_or_stopped(clock):
    log = io.StringIO()
    with progress.task("dpax sweep", True, total=2, unit="row", stream=log):
        clock.t += 3725
        progress.advance(2)
    assert log.getvalue().splitlines() == ["dpax sweep: 2/2 rows (100%), 1:02:05 elapsed",
                                           "dpax sweep: done, 2/2 rows (100%), 1:02:05 elapsed"]
    log = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        with progress.task("dpax calibrate", None, stream=log, interval=30):
            clock.t += 31
            progress.advance(1)
            raise KeyboardInterrupt
    assert log.getvalue().splitlines() == ["dpax calibrate: 1 round, 0:00:31 elapsed",
                                           "dpax calibrate: stopped, 1 round, 0:00:31 elapsed"]


def test_short_work_is_silent_unless_asked(clock):
    log = io.StringIO()
    with progress.task("dpax calibrate", None, stream=log, interval=30):
        progress.advance(1, open="3/8")
        clock.t += 5
    assert log.getvalue() == ""
    with progress.task("dpax calibrate", True, stream=log, interval=30):
        progress.advance(1, open="3/8", evaluations=12)
        clock.t += 5
    assert log.getvalue() == "dpax calibrate: done, 1 round, open 3/8, evaluations 12, 0:00:05 elapsed\n"


def test_interval_defaults_to_the_module_constant(clock, monkeypatch):
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    log = io.StringIO()
    with progress.task("work", None, stream=log, unit="step"):
        progress.advance(1)
        progress.advance(1)
    assert log.getvalue().splitlines() == ["work: 1 step, 0:00:00 elapsed", "work: 2 steps, 0:00:00 elapsed",
                                           "work: done, 2 steps, 0:00:00 elapsed"]


def test_a_calibration_writes_lines_when_stderr_is_not_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(progress, "INTERVAL", 0.0)  # a line at every round
    dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3), grid_step=1e-2,
                         compare_standard=False)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 2 and lines[0].startswith("dpax calibrate_dpsgd: 1 round, open ")
    assert lines[-1].startswith("dpax calibrate_dpsgd: done, ")


def test_nested_tasks_share_one_bar(capsys):
    with progress.task("outer", True) as outer:
        with progress.task("inner", True) as inner:
            assert inner is outer
            progress.advance(2, step="x")
        assert outer.n == 2
    assert "inner" not in capsys.readouterr().err


def test_a_nested_task_of_another_unit_shows_only_its_status(clock):
    log = io.StringIO()
    with progress.task("dpax sweep", True, total=5, unit="row", stream=log, interval=30) as rows:
        with progress.task("dpax calibrate_dpsgd", None):  # rounds inside a sweep's rows
            progress.advance(1, open="4/5")
            clock.t += 31
            progress.advance(1, open="2/5")  # a line is due: the rows, with the rounds' status
            progress.advance(1, open="0/5")
        progress.advance(5)
    assert rows.n == 5
    assert log.getvalue().splitlines() == ["dpax sweep: 0/5 rows (0%), open 2/5, 0:00:31 elapsed",
                                           "dpax sweep: done, 5/5 rows (100%), 0:00:31 elapsed"]


def test_false_silences_nested_tasks(monkeypatch):
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    with progress.task("outer", False) as outer:
        with progress.task("inner", True) as inner:
            progress.advance(3)
    assert outer is None and inner is None and tty.getvalue() == ""


@pytest.mark.parametrize("bad", ["yes", 1, 0.5])
def test_bad_progress_values_are_refused(bad):
    with pytest.raises(TypeError, match="progress"):
        dpax.calibrate(lambda s: dpax.gaussian(s, grid_step=1e-2), dpax.targets.Advantage(0.2), progress=bad)
