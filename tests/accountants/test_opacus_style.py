"""dpax.accountants.opacus_style: PLDAccountant, Opacus' accountant interface (without torch),
history grouping, state round trips, and every risk against riskcal's / gdpnum's CTD accountants
on the same grid (coarse grid 1e-3 where dp-accounting's construction is accurate)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpax
from dpax.accountants import PLDAccountant

STEP = 1e-3


def _run(acct, schedule):
    for s, p, t in schedule:
        for _ in range(t):
            acct.step(noise_multiplier=s, sample_rate=p)
    return acct


SCHEDULE = [(1.0, 0.01, 60), (1.5, 0.02, 30), (1.0, 0.01, 10)]


def test_history_groups_consecutive_identical_steps():
    acct = _run(PLDAccountant(grid_step=STEP), SCHEDULE)
    assert acct.history == [(1.0, 0.01, 60), (1.5, 0.02, 30), (1.0, 0.01, 10)]
    assert len(acct) == 100
    assert acct.mechanism() == PLDAccountant.mechanism() == "dpax_pld"


def test_single_group_equals_dpsgd_exactly():
    # (1, 0.01): the pair of SCHEDULE's first group (its kernels)
    acct = _run(PLDAccountant(grid_step=STEP), [(1.0, 0.01, 100)])
    pl = dpax.dpsgd(1.0, 0.01, 100, grid_step=STEP)
    a = np.array([0.01, 0.1, 0.5])
    np.testing.assert_array_equal(acct.get_beta(a), pl.beta(a))
    assert acct.get_epsilon(1e-5) == pl.epsilon(1e-5)
    assert acct.get_epsilon(delta=1e-5) == pl.epsilon(1e-5)  # Opacus calls it by keyword
    assert acct.get_advantage() == pl.advantage()
    assert acct.get_mu_and_regret() == dpax.gdp.mu_and_regret(pl)


# ~3 s (the reference composition's kernels); default sibling: test_matches_riskcal_and_gdpnum_ctd_accountants (the
# same heterogeneous SCHEDULE, composed as counted factors, against riskcal's and gdpnum's CTD accountants; it also
# stands for this test in tests/engine/test_composition.py::test_factors_listed_one_by_one_equal_counted_factors)
@pytest.mark.slow
def test_heterogeneous_history_matches_compose():
    acct = _run(PLDAccountant(grid_step=STEP), SCHEDULE)
    a = dpax.subsampled_gaussian(1.0, 0.01, grid_step=STEP)
    b = dpax.subsampled_gaussian(1.5, 0.02, grid_step=STEP)
    ref = dpax.compose((a, 70), (b, 30))  # composition is commutative
    alphas = np.array([1e-3, 0.05, 0.3])
    np.testing.assert_allclose(acct.get_beta(alphas), ref.beta(alphas), atol=1e-10)
    assert acct.get_epsilon(1e-6) == pytest.approx(ref.epsilon(1e-6), rel=1e-6)  # FFT round-off
    assert acct.get_advantage() == pytest.approx(ref.advantage(), abs=1e-10)


def test_matches_riskcal_and_gdpnum_ctd_accountants():
    from gdpnum import CTDAccountant as GdpnumCTD
    from riskcal.accountants import CTDAccountant as RiskcalCTD

    ours = _run(PLDAccountant(grid_step=STEP), SCHEDULE)
    rc = _run(RiskcalCTD(), SCHEDULE)
    assert ours.history == rc.history
    alphas = np.array([1e-3, 0.01, 0.1, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_beta = rc.get_beta(alpha=alphas, grid_step=STEP)
        ref_eps = rc.get_epsilon(delta=1e-5, grid_step=STEP)
        ref_adv = rc.get_advantage(grid_step=STEP)
    beta = ours.get_beta(alphas)
    np.testing.assert_allclose(beta, ref_beta, atol=5e-5)
    assert np.all(beta <= ref_beta + 1e-7)  # pessimistic side
    assert ours.get_epsilon(1e-5) == pytest.approx(ref_eps, rel=1e-3)
    assert ours.get_advantage() == pytest.approx(ref_adv, abs=1e-5)
    g = _run(GdpnumCTD(), SCHEDULE)
    assert g.history == ours.history
    assert ours.get_epsilon(1e-5) == pytest.approx(g.get_epsilon(delta=1e-5, grid_step=STEP), rel=1e-3)


def test_state_dict_round_trip_and_validation():
    acct = _run(PLDAccountant(grid_step=STEP), SCHEDULE)
    state = acct.state_dict()
    assert state["mechanism"] == "dpax_pld" and state["history"] == acct.history and state["grid_step"] == STEP
    state["history"].append((9.0, 0.5, 1))  # a copy, not the live list
    assert len(acct.history) == 3
    other = PLDAccountant()
    other.load_state_dict(acct.state_dict())
    assert other.history == acct.history and other.grid_step == STEP
    assert other.get_epsilon(1e-5) == acct.get_epsilon(1e-5)
    dest = {"extra": 1}
    assert acct.state_dict(dest) is dest and "history" in dest
    with pytest.raises(ValueError, match="empty"):
        other.load_state_dict({})
    with pytest.raises(ValueError, match="history"):
        other.load_state_dict({"mechanism": "dpax_pld"})
    with pytest.raises(ValueError, match="mechanism"):
        other.load_state_dict({"history": [], "mechanism": "rdp"})
    with pytest.raises(ValueError, match="sample_rate"):
        other.load_state_dict({"history": [(1.0, 1.5, 3)], "mechanism": "dpax_pld"})
    assert other.history == acct.history  # a rejected state leaves the accountant as it was


def test_optimizer_hook_uses_accumulated_iterations():
    class FakeOptimizer:  # what Opacus' DPOptimizer exposes to the hook
        noise_multiplier = 1.2
        accumulated_iterations = 2

    acct = PLDAccountant()
    hook = acct.get_optimizer_hook_fn(sample_rate=0.01)
    for _ in range(3):
        hook(FakeOptimizer())
    assert acct.history == [(1.2, 0.02, 3)]


def test_empty_history_and_bad_input():
    acct = PLDAccountant()
    # no step recorded: every query refuses (with Opacus, an accountant assigned after
    # make_private never sees a step; 0 would call a trained model perfectly private)
    for query in (lambda: acct.get_epsilon(1e-5), lambda: acct.get_delta(1.0), lambda: acct.get_beta([0.1, 0.4]),
                  acct.get_advantage, acct.get_mu_and_regret):
        with pytest.raises(ValueError, match="recorded no step.*before make_private"):
            query()
    assert acct.privacy_loss() is None and len(acct) == 0
    with pytest.raises(ValueError, match="noise_multiplier"):
        acct.step(noise_multiplier=0.0, sample_rate=0.1)
    with pytest.raises(ValueError, match="sample_rate"):
        acct.step(noise_multiplier=1.0, sample_rate=1.2)
    with pytest.raises(TypeError):
        acct.step(1.0, 0.1)  # keyword-only, like Opacus
    with pytest.raises(ValueError, match="grid_step"):
        PLDAccountant(grid_step=0.0)


@pytest.mark.slow
def test_opacus_privacy_engine_integration():
    """Train two steps of a tiny model with Opacus' PrivacyEngine using PLDAccountant."""
    torch = pytest.importorskip("torch")
    opacus = pytest.importorskip("opacus")

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=16)
    engine = opacus.PrivacyEngine()
    engine.accountant = PLDAccountant(grid_step=STEP)
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=1.1, max_grad_norm=1.0)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    acct = engine.accountant
    assert len(acct) >= 1 and acct.history[0][0] == 1.1
    p = acct.history[0][1]
    assert p == pytest.approx(16 / 64)
    eps = engine.get_epsilon(delta=1e-5)
    assert eps == pytest.approx(dpax.dpsgd(1.1, p, len(acct), grid_step=STEP).epsilon(1e-5))
    # Opacus' own PRV/RDP accountants on the same history agree on the order of magnitude
    rdp = opacus.accountants.RDPAccountant()
    rdp.history = list(acct.history)
    assert eps <= rdp.get_epsilon(delta=1e-5) + 1e-9  # RDP is a looser upper bound
