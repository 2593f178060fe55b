"""dpax.compat.riskcal.accountants.ctd: riskcal's ``CTDAccountant`` on dpax's PLD accountant.
Its calls and state as the real riskcal's (history, keyword-only queries, state dicts that
load into each other), its answers dpax's DP-SGD at the same grid (one step, grid 1e-2)."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import dpax
from dpax.compat.riskcal.accountants import CTDAccountant, ctd

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    rc_ctd = pytest.importorskip("riskcal.accountants.ctd")

STEP = 1e-2
ALPHAS = np.array([0.01, 0.1, 0.5])


def test_history_and_state_as_riskcals():
    ours, ref = CTDAccountant(), rc_ctd.CTDAccountant()
    steps = [(1.0, 0.1)] * 3 + [(2.0, 0.1)] + [(1.0, 0.1)] * 2
    for acct in (ours, ref):
        for s, p in steps:
            acct.step(noise_multiplier=s, sample_rate=p)
    assert ours.history == ref.history == [(1.0, 0.1, 3), (2.0, 0.1, 1), (1.0, 0.1, 2)]
    assert len(ours) == len(ref) == 6
    assert ours.mechanism() == ref.mechanism() == "ctd"
    # the state of either loads into the other
    mine, theirs = CTDAccountant(), rc_ctd.CTDAccountant()
    mine.load_state_dict(ref.state_dict())
    theirs.load_state_dict(ours.state_dict())
    assert mine.history == theirs.history == ref.history
    assert ctd.__all__ == ["CTDAccountant"] and ctd.CTDAccountant is CTDAccountant


def test_query_signatures_as_riskcals():
    # delta and alpha keyword-only; riskcal's grid_step default (its get_pld's) on every query
    default = inspect.signature(rc_ctd.CTDAccountant.get_pld).parameters["grid_step"].default
    for name, kind in (("get_epsilon", "delta"), ("get_beta", "alpha")):
        params = inspect.signature(getattr(CTDAccountant, name)).parameters
        ref = inspect.signature(getattr(rc_ctd.CTDAccountant, name)).parameters
        assert params[kind].kind is ref[kind].kind is inspect.Parameter.KEYWORD_ONLY
        assert params["grid_step"].default == default
    assert inspect.signature(CTDAccountant.get_advantage).parameters["grid_step"].default == default
    acct = CTDAccountant()
    acct.step(noise_multiplier=2.0, sample_rate=0.5)
    with pytest.raises(TypeError):
        acct.get_epsilon(1e-5)  # positional, refused as by riskcal
    with pytest.raises(TypeError):
        acct.get_beta(0.1)
    # riskcal's get_pld keyword is accepted; any other is refused by name
    for query, args in (("get_epsilon", {"delta": 1e-5}), ("get_beta", {"alpha": 0.1}), ("get_advantage", {})):
        with pytest.raises(TypeError, match=rf"{query}\(\) got an unexpected keyword argument 'value_discretization'"):
            getattr(acct, query)(**args, grid_step=STEP, value_discretization=STEP)


def test_answers_are_dpsgds():
    acct = CTDAccountant()
    acct.step(noise_multiplier=2.0, sample_rate=0.5)
    pl = dpax.dpsgd(2.0, 0.5, 1, grid_step=STEP)
    np.testing.assert_array_equal(acct.get_beta(alpha=ALPHAS, grid_step=STEP, use_connect_dots=False), pl.beta(ALPHAS))
    assert acct.get_epsilon(delta=1e-3, grid_step=STEP) == float(pl.epsilon(1e-3))
    assert acct.get_advantage(grid_step=STEP, use_connect_dots=True) == float(pl.advantage())
    with pytest.raises(TypeError, match="use_connect_dots"):
        acct.get_advantage(grid_step=STEP, use_connect_dots="yes")
