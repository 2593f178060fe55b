"""``dpax mechanism KIND ...`` (:mod:`dpax.cli.mechanism_command`): each kind maps to a builder of
:mod:`dpax.mechanisms` that takes the options it lists (keyword arguments, ``--dp-delta`` as
``delta``); options a kind does not take, or lacks, are refused by name; the built privacy loss
is composed ``--count`` times and reported with its risk summary, as JSON or a table.

No kernel runs here: the builder and the risk summary are stand-ins that record what they are
given (tests/mechanisms/test_mechanisms_cli.py::test_cli_mechanism_subcommand checks the numbers of
real mechanisms against closed forms).
"""

from __future__ import annotations

import inspect
import json
import shlex

import pytest

from dpax import mechanisms
from dpax.cli import main, mechanism_command
from dpax.cli.main import build_parser


class _Loss:
    """Stands in for a PrivacyLoss: a description, and self-composition that says so."""

    def __init__(self, description):
        self.description = description

    def self_compose(self, n):
        return _Loss(f"{self.description} x {n}")


@pytest.fixture
def stand_ins(monkeypatch):
    """approximate_dp and the risk summary replaced by recorders; returns what they were given."""
    calls = {}

    def builder(**kwargs):
        calls["builder"] = kwargs
        return _Loss("stand-in")

    def risk_summary(pl, alpha, delta):
        calls["risk_summary"] = (pl.description, list(alpha), list(delta))
        return {"grid_step": 0.01, "alpha": list(alpha), "beta": [0.75] * len(alpha), "tpr": [0.25] * len(alpha),
                "advantage": 0.125, "delta": list(delta), "epsilon": [0.875] * len(delta), "support_length": 37,
                "tail_mass": 0.0}

    monkeypatch.setattr(mechanisms, "approximate_dp", builder)
    monkeypatch.setattr(mechanism_command, "risk_summary", risk_summary)
    return calls


APPROX = ["mechanism", "approximate-dp", "--epsilon", "1", "--dp-delta", "1e-6", "--grid-step", "1e-2",
          "--alpha", "0.1", "0.2", "--delta", "1e-5", "--no-cache"]


def test_every_kind_names_a_builder_taking_its_options():
    parser = build_parser()
    for kind, (builder, takes) in mechanism_command.KINDS.items():
        params = inspect.signature(getattr(mechanisms, builder)).parameters
        for option in takes:
            assert ("delta" if option == "dp_delta" else option) in params, (kind, option)
        assert "grid_step" in params, kind
        assert set(mechanism_command._REQUIRED[kind]) <= set(takes), kind
        assert parser.parse_args(["mechanism", kind]).kind == kind
    # the examples of the module's docstring parse into keyword arguments their builder accepts
    examples = [line.split(None, 1)[1] for line in mechanism_command.__doc__.splitlines()
                if line.strip().startswith("dpax mechanism")]
    assert len(examples) == 3
    for example in examples:
        args = parser.parse_args(shlex.split(example))
        kwargs = mechanism_command._builder_kwargs(args)
        inspect.signature(getattr(mechanisms, mechanism_command.KINDS[args.kind][0])).bind(**kwargs, grid_step=0.01)
    args = parser.parse_args(shlex.split(examples[2]))
    assert mechanism_command._builder_kwargs(args) == {"noise_multiplier": 1.0, "sample_rate": 0.01,
                                                       "neighbouring": "substitution"}


@pytest.mark.parametrize("argv, message", [
    (["gaussian", "--noise-multiplier", "1", "--scale", "2", "--k", "3"],
     "mechanism gaussian does not take --k, --scale; it takes --noise-multiplier, --sensitivity, --neighbouring"),
    (["randomized-response", "--epsilon", "1", "--neighbouring", "substitution"],
     "mechanism randomized-response does not take --neighbouring; it takes --epsilon, --k"),
    (["subsampled-laplace", "--scale", "1"], "mechanism subsampled-laplace needs --sample-rate"),
    (["approximate-dp", "--dp-delta", "1e-6"], "mechanism approximate-dp needs --epsilon"),
], ids=["option-not-taken", "relation-not-taken", "option-missing", "epsilon-missing"])
def test_options_a_kind_does_not_take_or_lacks_are_named(argv, message, capsys):
    assert main(["mechanism", *argv, "--no-cache"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"dpax: error: {message}\n"


def test_the_builder_gets_the_options_and_the_loss_is_composed_count_times(stand_ins, capsys):
    assert main(APPROX + ["--count", "3", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert stand_ins["builder"] == {"epsilon": 1.0, "delta": 1e-6, "grid_step": 0.01}  # --dp-delta is delta
    assert stand_ins["risk_summary"] == ("stand-in x 3", [0.1, 0.2], [1e-5])
    assert r["command"] == "mechanism" and r["mechanism"] == "approximate-dp" and r["count"] == 3
    assert r["parameters"] == {"epsilon": 1.0, "delta": 1e-6} and r["description"] == "stand-in x 3"
    assert r["beta"] == [0.75, 0.75] and r["advantage"] == 0.125 and r["support_length"] == 37
    # one copy (the default): not composed
    assert main(APPROX + ["--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["count"] == 1 and r["description"] == "stand-in"
    # no copy: refused by name
    assert main(APPROX + ["--count", "0"]) == 2
    assert "count" in capsys.readouterr().err


def test_the_table(stand_ins, capsys):
    assert main(APPROX + ["--count", "2"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0] == "stand-in x 2 (grid step 0.01, symmetrised curve)"
    assert "Best membership-inference attack:" in lines
    assert [line.split() for line in lines if line.split()[:1] in (["0.1"], ["0.2"])] == [
        ["0.1", "0.75", "0.25"], ["0.2", "0.75", "0.25"]]
    assert any(line.split() == ["advantage", "(max", "TPR", "-", "FPR)", "0.125"] for line in lines)
    assert any(line.split() == ["support", "length", "37"] for line in lines)
    assert any(line.split() == ["1e-05", "0.875"] for line in lines)
