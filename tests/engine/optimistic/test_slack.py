"""An optimistic companion's Slack (dpax._engine.optimistic.slack): composition adds the
ratios and steps and bounds the cross terms; a regrid widens it; it survives the pytree's
static data."""

from __future__ import annotations

import numpy as np

from dpax._engine.optimistic import Slack, composed_slack


def test_composition_adds_ratios_and_steps_and_bounds_the_cross_terms():
    a = Slack(np.array([0.01, 0.02]), np.array([1e-12, 0.0]), np.array([0.0, 3e-13]), np.array([1.0, 1.0]))
    b = Slack(np.array([0.005, 0.005]), np.array([2e-12, 0.0]), np.array([0.0, 0.0]), np.array([1.0, 1.0]))
    c = composed_slack([a, b], [np.array([10, 3]), np.array([4, 0])])
    np.testing.assert_allclose(c.ratio, [10 * 0.01 + 4 * 0.005, 3 * 0.02], rtol=1e-15)
    np.testing.assert_array_equal(c.steps, [14.0, 3.0])
    # cross terms: 2 e^R expm1(sum T_i t_i), 0 where nothing is irregular
    total_p = 10 * 1e-12 + 4 * 2e-12
    np.testing.assert_allclose(c.tilted_p, [2 * np.exp(c.ratio[0]) * np.expm1(total_p), 0.0], rtol=1e-12)
    np.testing.assert_allclose(c.tilted_q, [0.0, 2 * np.exp(c.ratio[1]) * np.expm1(3 * 3e-13)], rtol=1e-12)
    assert c.tilted_p[0] > total_p  # never below the first-order sum


def test_widened_and_static_form():
    s = Slack(np.array([0.01]), np.array([1e-10]), np.array([2e-10]), np.array([5.0]))
    w = s.widened(0.005)
    np.testing.assert_allclose(w.ratio, [0.015])
    np.testing.assert_allclose(w.tilted_p, [1e-10 * np.exp(0.005)], rtol=1e-15)
    np.testing.assert_array_equal(w.steps, s.steps)
    back = Slack.from_aux(s.to_aux())
    assert back is not None
    for x, y in zip(back, s):
        np.testing.assert_array_equal(x, y)
    assert Slack.from_aux(None) is None
    hash(s.to_aux())
