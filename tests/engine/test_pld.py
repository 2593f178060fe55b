"""dp-accounting PLDs from PLRV arrays (dpax._engine.pld): the remove PMF is Y with its +inf
atom, the add PMF is -X with X's -inf atom, each trimmed to its nonzero span."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dp_accounting")

from dpax._engine import pld  # noqa: E402
from dpax._engine.pair import Pair  # noqa: E402


def test_to_plds_puts_y_on_remove_and_minus_x_on_add_trimmed():
    step = 0.5
    pmf_y = np.array([[0.0, 0.1, 0.2, 0.6, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]])
    pmf_x = np.array([[0.0, 0.3, 0.4, 0.2, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]])
    offset = np.array([-2, -2])
    pair = Pair(pmf_x, pmf_y, offset, np.array([0.1, 0.0]), np.array([0.1, 0.0]))
    plds = pld.to_plds(pair, step)
    assert len(plds) == 2
    lower, probs, inf, disc = pld.dense(plds[0]._pmf_remove)
    assert (lower, disc, inf) == (-1, step, 0.1)  # first nonzero of Y at index 1: loss (-2 + 1) step
    np.testing.assert_array_equal(probs, [0.1, 0.2, 0.6])
    lower, probs, inf, _ = pld.dense(plds[0]._pmf_add)
    # -X: X's losses (-2 + j) step negated, j = 3, 2, 1 -> -1, 0, 1
    assert (lower, inf) == (-1, 0.1)
    np.testing.assert_array_equal(probs, [0.2, 0.4, 0.3])
    lower, probs, inf, _ = pld.dense(plds[1]._pmf_remove)
    assert (lower, inf) == (0, 0.0) and probs.tolist() == [1.0]


def test_dense_of_an_empty_pmf_is_one_zero():
    pld_pmf, _ = pld.require_dp_accounting()
    empty = pld_pmf.DensePLDPmf(0.1, 0, np.array([]), 1.0, True)
    lower, probs, inf, disc = pld.dense(empty)
    assert probs.tolist() == [0.0] and inf == 1.0 and disc == 0.1
