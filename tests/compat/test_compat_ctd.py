"""dpax.compat._ctd: what riskcal's and gdpnum's ``CTDAccountant`` drop-ins share (the
keyword check of ``compat_options``, ``CTDBase``: mechanism ``'ctd'`` and ``get_pld``).
One DP-SGD step on a coarse grid (1e-2)."""

from __future__ import annotations

import numpy as np
import pytest

import dpax
from dpax.accountants import PLDAccountant
from dpax.compat import gdpnum as dg
from dpax.compat import riskcal as dr
from dpax.compat._ctd import CTDBase, compat_options

pld_module = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")

STEP = 1e-2


def test_compat_options_takes_use_connect_dots_only():
    compat_options("get_beta", {})
    compat_options("get_beta", {"use_connect_dots": True})
    compat_options("get_epsilon", {"use_connect_dots": np.bool_(False)})
    # any other keyword is refused by name, with the method's name, as Python refuses one
    with pytest.raises(TypeError, match=r"get_advantage\(\) got an unexpected keyword argument 'grid'"):
        compat_options("get_advantage", {"grid": 1e-3})
    with pytest.raises(TypeError, match="'delta'"):
        compat_options("get_beta", {"use_connect_dots": True, "delta": 1e-5})
    # the flag is checked though unused: a string would otherwise count as true
    with pytest.raises(TypeError, match="use_connect_dots must be True or False"):
        compat_options("get_beta", {"use_connect_dots": "no"})


def test_both_drop_ins_are_ctd_accountants_on_pld_accountant():
    for cls in (dr.CTDAccountant, dg.CTDAccountant):
        assert issubclass(cls, CTDBase) and issubclass(cls, PLDAccountant)
        assert cls.mechanism() == "ctd"
    assert CTDBase.mechanism() == "ctd" and PLDAccountant.mechanism() != "ctd"
    acct = CTDBase()
    acct.step(noise_multiplier=2.0, sample_rate=0.5)
    state = acct.state_dict()
    assert state["mechanism"] == "ctd" and state["history"] == [(2.0, 0.5, 1)]
    # the state of one drop-in loads into the other (the same mechanism), not into dpax's own accountant
    other = dg.CTDAccountant()
    other.load_state_dict(state)
    assert other.history == acct.history
    with pytest.raises(ValueError, match="mechanism 'ctd' cannot be loaded into an accountant of mechanism"):
        PLDAccountant().load_state_dict(state)


def test_get_pld_is_the_composed_loss_as_a_dp_accounting_pld():
    acct = CTDBase()
    acct.step(noise_multiplier=2.0, sample_rate=0.5)
    pld = acct.get_pld(grid_step=STEP)
    assert isinstance(pld, pld_module.PrivacyLossDistribution)
    # the same PMFs as the accountant's composed privacy loss at that grid (no re-discretisation)
    pl = acct.privacy_loss(STEP)
    back = dpax.from_dp_accounting(pld)
    assert back.grid_step == pytest.approx(STEP, rel=1e-12)
    assert int(back.offset) == int(pl.offset)
    for mine, read in ((pl.pmf_x, back.pmf_x), (pl.pmf_y, back.pmf_y)):  # up to the round-off of the round trip
        np.testing.assert_allclose(np.asarray(read), np.asarray(mine), rtol=1e-9, atol=1e-15)
    # so dp-accounting's own queries on it answer as the accountant does
    assert pld.get_delta_for_epsilon(0.0) == pytest.approx(acct.get_advantage(grid_step=STEP), abs=1e-9)
    assert pld.get_epsilon_for_delta(1e-3) == pytest.approx(acct.get_epsilon(1e-3, grid_step=STEP), abs=1e-6)
    # ... which are DP-SGD's (one step: the subsampled Gaussian at this grid)
    assert acct.get_advantage(grid_step=STEP) == pytest.approx(
        float(dpax.dpsgd(2.0, 0.5, 1, grid_step=STEP).advantage()), abs=1e-12)
    # use_connect_dots changes nothing in dpax, but is checked
    other = acct.get_pld(grid_step=STEP, use_connect_dots=False)
    assert other.get_delta_for_epsilon(0.0) == pld.get_delta_for_epsilon(0.0)
    with pytest.raises(TypeError, match="use_connect_dots"):
        acct.get_pld(grid_step=STEP, use_connect_dots=1)
    with pytest.raises(ValueError, match="has no step"):
        CTDBase().get_pld(grid_step=STEP)
