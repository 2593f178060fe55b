"""examples/: the files the README's commands need, and every command of examples/README.md
run in-process (``dpax.cli.main.main``) from the repository root, its output checked against
the Python API and the targets it was asked for.

The commands are read from examples/README.md itself, so the README cannot list a command
that is not run here. The grids are coarse (1e-2) so the default run stays near half a
minute; Figure 4 of Kulynych, Gomez, Kaissis, du Pin Calmon and Troncoso, "Attack-aware
noise calibration for differential privacy" (NeurIPS 2024), at the default grid runs in the
slow suite.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import sys

import numpy as np
import pytest

import dpax
from dpax import sweep
from dpax.cli.main import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, EXAMPLES)

import dp_events  # noqa: E402  (examples/dp_events.py)
import make_losses  # noqa: E402  (examples/make_losses.py)

#: commands too slow for the default run (seconds of compilation at the default grid 1e-4, or
#: the 15 calibrations of that paper's Figure 4)
SLOW = ("dpax plot gdp", "dpax plot calibration")


def _readme_commands() -> list[str]:
    """Every command line of examples/README.md's ```bash blocks, comments dropped."""
    with open(os.path.join(EXAMPLES, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                lines.append(line)
    return lines


COMMANDS = _readme_commands()
DPAX_COMMANDS = [c for c in COMMANDS if c.startswith("dpax ")]


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the commands name examples/... relative to the repository root


def _run(command: str, tmp_path, capsys) -> tuple[dict, list[str]]:
    """Run ``command`` (a README line) with ``--json``; an ``-o`` file goes to ``tmp_path``.
    Returns the JSON output and the argument list that ran."""
    args = shlex.split(command)[1:]
    if "-o" in args:
        i = args.index("-o") + 1
        args[i] = str(tmp_path / os.path.basename(args[i]))
    if args[0] == "sweep":
        args.append("--no-progress")
    code = main(args + ["--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Traceback" not in err
    return json.loads(out), args


# -- the files ----------------------------------------------------------------------------------


def test_readme_lists_every_example_file_and_the_files_exist():
    with open(os.path.join(EXAMPLES, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    for name in ("configs.csv", "configs.yaml", "train.npy", "test.npy", "make_losses.py"):
        assert os.path.isfile(os.path.join(EXAMPLES, name)), name
        assert f"`{name}`" in text, name
    assert any(c.startswith("dpax sweep examples/configs.csv") for c in COMMANDS)
    assert any(c.startswith("dpax sweep examples/configs.yaml") for c in COMMANDS)
    assert any(c.startswith("dpax epsilon-star examples/train.npy examples/test.npy") for c in COMMANDS)
    assert ".venv/bin/python examples/make_losses.py" in COMMANDS


def test_loss_files_are_small_and_what_make_losses_writes(tmp_path):
    written = make_losses.main(str(tmp_path))
    for path in written:
        name = os.path.basename(path)
        committed = os.path.join(EXAMPLES, name)
        assert os.path.getsize(committed) < 100_000, name
        with open(path, "rb") as new, open(committed, "rb") as old:
            assert new.read() == old.read(), f"examples/{name} differs from what make_losses.py writes"
    train, test = (np.load(os.path.join(EXAMPLES, n), allow_pickle=False) for n in ("train.npy", "test.npy"))
    assert train.dtype == test.dtype == np.float64 and train.shape == test.shape == (10_000,)
    assert np.all(train > 0) and np.all(test > 0)
    assert 8.0 < train.mean() < 12.0 and 13.0 < test.mean() < 17.0  # Gamma(2, 5) and Gamma(3, 5)


def test_yaml_config_is_the_csv_config():
    csv_rows = sweep.read_config(os.path.join(EXAMPLES, "configs.csv"))
    yaml_rows = sweep.read_config(os.path.join(EXAMPLES, "configs.yaml"))
    assert len(csv_rows) == len(yaml_rows) == 10
    for a, b in zip(csv_rows, yaml_rows):
        assert not a.error and not b.error, (a.error, b.error)
        assert a.params == b.params and a.raw["name"] == b.raw["name"]
    kinds = [r.target_kinds() for r in csv_rows if r.mode == "calibrate"]
    assert sorted(set(k for ks in kinds for k in ks)) == ["advantage", "epsilon", "err_rates", "gdp"]  # every target
    tpr_rows = [r for r in csv_rows if r.raw["name"].startswith("tpr")]
    assert len(tpr_rows) == 1 and tpr_rows[0].params["beta"] == pytest.approx(1 - 0.15)
    analysed = [r for r in csv_rows if r.mode == "analyse"]
    assert len(analysed) == 2 and any(r.target_kinds() for r in analysed)  # one analysed row checks a target
    assert {r.params["grid_step"] for r in csv_rows} == {1e-2}  # coarse: the example runs in seconds


# -- the commands -------------------------------------------------------------------------------


def _results(path) -> list[dict]:
    if str(path).endswith(".csv"):
        with open(path, newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _f(value) -> float:
    return float("nan") if value in (None, "") else float(value)


def _check_sweep_results(rows: list[dict]):
    assert len(rows) == 10
    by_name = {r["name"]: r for r in rows}
    for r in rows:
        assert r["status"] in ("calibrated", "analysed"), (r["name"], r["status"], r["reason"])
        assert np.isfinite(_f(r["out_noise_multiplier"])) and _f(r["out_noise_multiplier"]) > 0
        for k in ("out_advantage", "out_epsilon", "out_mu", "out_regret"):
            assert np.isfinite(_f(r[k])), (r["name"], k)
        assert str(r.get("out_meets_target")).lower() in ("true", "", "none"), r["name"]  # no target missed
    # calibrated rows meet their targets (pessimism: on the safe side), tightly
    err = by_name["err-rates: FNR >= 0.75 at FPR 0.1"]
    assert 0.75 <= _f(err["out_beta"]) < 0.75 + 1e-3
    tpr = by_name["tpr: TPR <= 0.15 at FPR 0.05 (beta = 1 - TPR)"]
    assert 0.85 <= _f(tpr["out_beta"]) < 0.85 + 1e-3
    for bound in (0.2, 0.25):
        adv = by_name[f"advantage at most {bound:g}"]
        assert bound - 1e-3 < _f(adv["out_advantage"]) <= bound
    for e, d, name in ((3, 1e-5, "(3, 1e-5)"), (2.5, 1e-6, "(2.5, 1e-6)")):
        eps = by_name[f"(epsilon, delta) = {name}"]
        assert _f(eps["delta"]) == d and e - 1e-2 < _f(eps["out_epsilon"]) <= e
    for m in (0.7, 1.0):
        # out_mu is the tight mu over FPRs in [1e-10, 1 - 1e-10]; the target holds on the whole
        # curve, so it is met with room
        assert 0.85 * m < _f(by_name[f"mu-GDP with mu = {m:g}"]["out_mu"]) <= m
    # a stricter target needs more noise
    for looser, stricter in (("advantage at most 0.25", "advantage at most 0.2"),
                             ("(epsilon, delta) = (3, 1e-5)", "(epsilon, delta) = (2.5, 1e-6)"),
                             ("mu-GDP with mu = 1", "mu-GDP with mu = 0.7")):
        assert _f(by_name[stricter]["out_noise_multiplier"]) > _f(by_name[looser]["out_noise_multiplier"])
    # analysed rows: dpax's own numbers at that noise
    one = by_name["analyse noise 1.0"]
    pl = dpax.dpsgd(1.0, 0.01, 1000, grid_step=1e-2)
    assert _f(one["out_noise_multiplier"]) == 1.0
    assert _f(one["out_beta"]) == pytest.approx(pl.beta(0.1), rel=1e-9)
    assert _f(one["out_advantage"]) == pytest.approx(pl.advantage(), rel=1e-9)
    assert _f(one["out_epsilon"]) == pytest.approx(pl.epsilon(1e-5), rel=1e-9)
    two = by_name["analyse noise 2.0, advantage target 0.2 met?"]
    assert _f(two["out_advantage"]) < 0.2 and str(two["out_meets_target"]).lower() == "true"
    return by_name


@pytest.fixture(scope="module")
def sweep_results(tmp_path_factory):
    """The README's CSV sweep, run once for the tests that read it."""
    out = tmp_path_factory.mktemp("sweep") / "results.csv"
    command = next(c for c in DPAX_COMMANDS if c.startswith("dpax sweep examples/configs.csv"))
    args = shlex.split(command)[1:]
    args[args.index("-o") + 1] = str(out)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        assert main(args + ["--no-progress", "--json"]) == 0
    finally:
        os.chdir(cwd)
    return _results(out)


# slow suite: ten calibrations and analyses of five target kinds (~35 s on 2 cores); the sweep
# machinery has default tests of its own (tests/sweep/), and examples/configs.csv is parsed and
# compared with configs.yaml by default (test_yaml_config_is_the_csv_config)
@pytest.mark.slow
def test_sweep_csv_example(sweep_results):
    _check_sweep_results(sweep_results)


# slow suite: a calibration of its own and the standard one beside it (~10 s), compared with
# the sweep above
@pytest.mark.slow
def test_calibrate_tpr_example_agrees_with_the_sweep(sweep_results, tmp_path, capsys):
    command = next(c for c in DPAX_COMMANDS if c.startswith("dpax calibrate"))
    out, _ = _run(command, tmp_path, capsys)
    assert out["status"] == "calibrated"
    assert out["target"] == {"type": "err_rates", "alpha": 0.05, "beta": pytest.approx(0.85), "tpr": 0.15}
    assert 0.85 <= out["achieved"]["beta"] < 0.85 + 1e-3
    row = next(r for r in sweep_results if r["name"].startswith("tpr"))
    assert out["noise_multiplier"] == pytest.approx(_f(row["out_noise_multiplier"]), rel=2e-4)
    assert type(out["noise_reduction"]) is float and 0 < out["noise_reduction"] < 1


@pytest.mark.slow  # ~2s; default siblings: tests/cli/test_epsilon_star_command.py (the command's numbers are
# dpax.audit.epsilon_star's, goodness of fit), test_loss_files_are_small_and_what_make_losses_writes and
# tests/test_readme.py's auditing-and-epsilon block (4.85 and 2.53 from the same losses)
def test_epsilon_star_examples(tmp_path, capsys):
    train, test = make_losses.make_losses()
    expected = {m: dpax.audit.epsilon_star(train, test, delta=1e-5, method=m).value
                for m in ("parametric", "empirical")}
    commands = [c for c in DPAX_COMMANDS if c.startswith("dpax epsilon-star")]
    assert len(commands) == 2
    for command in commands:
        out, args = _run(command, tmp_path, capsys)
        assert out["n_train"] == out["n_test"] == 10_000 and out["delta"] == 1e-5
        res = out["results"]
        assert set(res) == {"parametric", "empirical"}
        for m, value in expected.items():
            assert res[m]["epsilon_star"] == pytest.approx(value, rel=1e-12)
        # the README's numbers; the empirical estimate is the conservative, lower one
        assert (round(res["parametric"]["epsilon_star"], 2) == 4.85
                and round(res["empirical"]["epsilon_star"], 2) == 2.53)
        if "--goodness-of-fit" in args:
            g = out["goodness_of_fit"]
            assert g["components"] == [1, 2, 3] and len(g["train_pvalues"]) == len(g["test_pvalues"]) == 3
            assert all(0.0 <= p <= 1.0 for p in g["train_pvalues"] + g["test_pvalues"])


@pytest.mark.slow  # ~5s; default siblings: tests/cli/test_curve_command.py::test_curve_json_matches_api (dpax curve's
# DP-SGD numbers are the API's for the same arguments) and ::test_curve_defaults_and_table
def test_curve_example(tmp_path, capsys):
    command = next(c for c in DPAX_COMMANDS if c.startswith("dpax curve"))
    out, _ = _run(command, tmp_path, capsys)
    pl = dpax.dpsgd(1.0, 0.01, 1000, grid_step=1e-2)
    np.testing.assert_allclose(out["beta"], pl.beta(np.array(out["alpha"])), rtol=1e-12)
    assert out["advantage"] == pytest.approx(pl.advantage(), rel=1e-12)


@pytest.mark.parametrize("command", [
    pytest.param(c, marks=pytest.mark.slow) if c.startswith(SLOW) else c
    for c in DPAX_COMMANDS if c.startswith("dpax plot")])
def test_plot_examples(command, tmp_path, capsys):
    out, args = _run(command, tmp_path, capsys)
    path = args[args.index("-o") + 1]
    assert out["output"] == os.path.abspath(path) and os.path.getsize(path) > 5_000
    head = open(path, "rb").read(8)
    assert head.startswith(b"\x89PNG" if path.endswith(".png") else b"%PDF-")
    assert out["lines"] == {"tradeoff": 3, "gdp": 3, "calibration": 6}[out["kind"]]


@pytest.mark.slow
def test_sweep_yaml_example_equals_the_csv_one(sweep_results, tmp_path, capsys):
    command = next(c for c in DPAX_COMMANDS if c.startswith("dpax sweep examples/configs.yaml"))
    _, args = _run(command, tmp_path, capsys)
    rows = _results(args[args.index("-o") + 1])
    _check_sweep_results(rows)
    for a, b in zip(sweep_results, rows):
        for k in ("out_noise_multiplier", "out_beta", "out_advantage", "out_epsilon", "out_mu", "out_regret"):
            assert _f(a[k]) == pytest.approx(_f(b[k]), rel=1e-12, nan_ok=True), (a["name"], k)


def test_every_readme_command_is_tested():
    """A command added to examples/README.md must be covered by a test above."""
    covered = ("dpax sweep examples/configs.csv", "dpax sweep examples/configs.yaml", "dpax epsilon-star",
               "dpax calibrate", "dpax curve", "dpax plot")
    for c in COMMANDS:
        assert c.startswith(covered) or c == ".venv/bin/python examples/make_losses.py" or (
            c.startswith(".venv/bin/python examples/dp_events.py")), c


# slow (~9 s: the mu/regret kernel of its own); DpEventAccountant's answers, mu included, are
# checked by default in tests/events/test_dp_event_accountant.py
@pytest.mark.slow
def test_dp_events_example_is_the_composed_mechanisms(capsys):
    """examples/dp_events.py at a coarse grid: its answers are those of the same mechanisms
    composed with dpax's own API."""
    assert ".venv/bin/python examples/dp_events.py" in COMMANDS
    assert ".venv/bin/python examples/dp_events.py --grid 1e-3" in COMMANDS
    out = dp_events.main(["--grid", "1e-2", "--json"])
    assert json.loads(capsys.readouterr().out) == out and out["events"] == 3001
    steps = dpax.subsampled_gaussian([s for s, _ in dp_events.SCHEDULE], dp_events.SAMPLE_RATE, grid_step=1e-2)
    pl = dpax.compose(*[(steps[i], t) for i, (_, t) in enumerate(dp_events.SCHEDULE)],
                      dpax.laplace(dp_events.LAPLACE_SCALE, grid_step=1e-2))
    assert out["epsilon"] == pytest.approx(pl.epsilon(dp_events.DELTA), rel=1e-9)
    assert out["beta_at_fpr_1pct"] == pytest.approx(pl.beta(dp_events.ALPHA), rel=1e-9)
    assert out["mu"] == pytest.approx(dpax.gdp.mu_and_regret(pl)[0], rel=1e-9)
