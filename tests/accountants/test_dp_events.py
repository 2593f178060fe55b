"""dpax.accountants.dp_events: DpEventAccountant.compose's count. A boolean is refused, naming
count, before anything is recorded (dp-accounting's own check lets True through as 1)."""

import numpy as np
import pytest

from dpax import accountants

dp_event = pytest.importorskip("dp_accounting.dp_event")


@pytest.mark.parametrize("count", [True, False, np.bool_(True)])
def test_boolean_count_is_refused(count):
    acct = accountants.DpEventAccountant(value_discretization_interval=1e-2)
    with pytest.raises(TypeError, match="count"):
        acct.compose(dp_event.GaussianDpEvent(2.0), count)
    assert "runs=0" in repr(acct)  # nothing recorded, the ledger untouched
    assert isinstance(acct.ledger, dp_event.NoOpDpEvent)


def test_integer_count_still_composes():
    acct = accountants.DpEventAccountant(value_discretization_interval=1e-2)
    acct.compose(dp_event.GaussianDpEvent(2.0), 4)  # four runs of 0.5-GDP: exactly 1-GDP
    # delta(0) of 1-GDP is 2 Phi(1/2) - 1 = 0.38292492...; the grid's answer lies above it, close
    assert 0.3829249225480262 <= acct.get_delta(0.0) <= 0.3829249225480262 + 2e-3
