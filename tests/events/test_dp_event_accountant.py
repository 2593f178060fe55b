"""dpax's DpEventAccountant (dpax.accountants.dp_events) on DpEvent trees: a count composes
the event that many times (dp-accounting's PLD accountant runs randomized response once), the
composition is lazy and grouped by mechanism, dpax's own answers (beta, advantage, mu) come from
the accountant, dp-accounting's search refuses a used one, the state survives pickling and
copying, and bad arguments fail loudly.
"""

from __future__ import annotations

import copy
import math
import pickle

import pytest

pytest.importorskip("dp_accounting")
from dp_accounting import dp_event as E  # noqa: E402
from dp_accounting import mechanism_calibration as mc  # noqa: E402
from dp_accounting.pld import pld_privacy_accountant as pld  # noqa: E402
from dp_accounting.privacy_accountant import NeighboringRelation  # noqa: E402

import dpax  # noqa: E402
from dpax.accountants import DpEventAccountant  # noqa: E402

REL = NeighboringRelation


# ~4 s (kernels of its own); default siblings: tests/accountants/test_dp_events.py::test_integer_count_still_composes
# (compose(event, 4) runs the event 4 times),
# tests/events/test_tally.py::test_counts_multiply_through_nesting_and_add_over_equal_mechanisms (counts read alike
# for every event) and the randomized_response case of
# tests/events/test_build.py::test_every_event_agrees_with_dp_accounting_on_the_same_grid (its mechanism)
@pytest.mark.slow
def test_randomized_response_runs_count_times():
    """k runs of epsilon-DP randomized response reach k * epsilon at delta 0 (dp-accounting
    0.6's PLD accountant composes a RandomizedResponseDpEvent once whatever the count)."""
    eta, k = 0.1, 3
    eps = math.log1p(k * (1 - eta) / eta)
    acct = DpEventAccountant(REL.REPLACE_ONE, value_discretization_interval=1e-3)
    acct.compose(E.RandomizedResponseDpEvent(eta, k), 2)
    assert acct.get_epsilon(0.0) == pytest.approx(2 * eps, abs=2e-3)
    assert acct.get_epsilon(0.0) >= 2 * eps - 1e-12
    theirs = pld.PLDAccountant(REL.REPLACE_ONE, value_discretization_interval=1e-3)
    theirs.compose(E.RandomizedResponseDpEvent(eta, k), 2)
    assert theirs.get_epsilon(0.0) == pytest.approx(eps, abs=2e-3)  # dp-accounting's: one run


# ~2 s (kernels of its own); default siblings:
# tests/events/test_tally.py::test_counts_multiply_through_nesting_and_add_over_equal_mechanisms (equal mechanisms
# grouped, their counts added), tests/events/test_build.py::test_gaussians_compose_exactly_to_one_gaussian (the
# accountant's runs composed as one mechanism) and the dpax.accountants.dp_events docstring examples (two compose
# calls of 50 runs give the 100-run epsilon)
@pytest.mark.slow
def test_composition_is_lazy_and_grouped():
    acct = DpEventAccountant(value_discretization_interval=1e-3)
    steps = [E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(s)) for s in (1.0, 1.5)]
    for i in range(200):
        acct.compose(steps[i // 100])
    acct.compose(E.LaplaceDpEvent(10.0), 3)
    assert "mechanisms=3" in repr(acct) and "runs=203" in repr(acct)
    once = dpax.from_dp_event(E.ComposedDpEvent([E.SelfComposedDpEvent(steps[0], 100),
                                                 E.SelfComposedDpEvent(steps[1], 100),
                                                 E.SelfComposedDpEvent(E.LaplaceDpEvent(10.0), 3)]), grid_step=1e-3)
    assert acct.get_epsilon(1e-5) == pytest.approx(once.epsilon(1e-5), rel=1e-12)
    assert acct.ledger == E.ComposedDpEvent([E.SelfComposedDpEvent(steps[0], 100),
                                             E.SelfComposedDpEvent(steps[1], 100),
                                             E.SelfComposedDpEvent(E.LaplaceDpEvent(10.0), 3)])


# ~4 s (kernels of its own); default sibling: tests/test_docs.py::test_docstring_examples[dpax.accountants.dp_events]
# (get_beta, get_advantage and get_mu_and_regret on the accountant give dpax's values)
@pytest.mark.slow
def test_dpax_answers_on_the_accountant():
    """beta, advantage and mu of a Gaussian event are dpax.gaussian's (1-GDP: mu 1, regret 0)."""
    acct = DpEventAccountant(value_discretization_interval=1e-2).compose(E.GaussianDpEvent(1.0))
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    assert acct.get_beta([0.01, 0.1]) == pytest.approx(pl.beta([0.01, 0.1]), rel=1e-12)
    assert acct.get_advantage() == pytest.approx(pl.advantage(), rel=1e-12)
    mu, regret = acct.get_mu_and_regret()
    assert (mu, regret) == pytest.approx(dpax.gdp.mu_and_regret(pl), rel=1e-9)
    assert mu == pytest.approx(1.0, abs=1e-3) and regret < 1e-4
    assert acct.privacy_loss(grid_step=1e-2) is acct.privacy_loss()  # kept until the next compose
    # brackets: tests/events/test_build.py::test_randomized_response_to_a_special_record_has_a_bracket


def test_calibrate_dp_mechanism_refuses_a_used_accountant():
    """dp-accounting's test_nonempty_accountant with dpax's class: a fresh accountant's ledger
    is NoOpDpEvent, a used one's is not."""
    used = DpEventAccountant().compose(E.GaussianDpEvent(1.0))
    with pytest.raises(mc.NonEmptyAccountantError):
        mc.calibrate_dp_mechanism(lambda: used, E.GaussianDpEvent, 1.0, 1e-5)
    assert DpEventAccountant().ledger == E.NoOpDpEvent()


def test_state_survives_pickle_and_copy():
    acct = DpEventAccountant(REL.REPLACE_SPECIAL, value_discretization_interval=1e-3)
    acct.compose(E.LaplaceDpEvent(1.0), 2)
    for other in (pickle.loads(pickle.dumps(acct)), copy.deepcopy(acct)):
        assert type(other) is type(acct) and other.neighboring_relation == REL.REPLACE_SPECIAL
        assert other.get_epsilon(0.0) == pytest.approx(acct.get_epsilon(0.0))


def test_bad_accountant_arguments_fail_loudly():
    with pytest.raises(ValueError, match="neighboring_relation must be one of"):
        DpEventAccountant("replace")
    with pytest.raises(ValueError, match="value_discretization_interval"):
        DpEventAccountant(value_discretization_interval=0.0)
    acct = DpEventAccountant().compose(E.LaplaceDpEvent(1.0))
    with pytest.raises(ValueError, match="target_delta"):
        acct.get_epsilon(2.0)
    with pytest.raises(TypeError, match="target_epsilon"):
        acct.get_delta("x")
