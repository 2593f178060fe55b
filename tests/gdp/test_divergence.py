"""dpax.gdp.divergence: the Delta-divergence between trade-off curves (Eq. 8) and its symmetrised
form (Eq. 9), for privacy losses and curve objects: Proposition 4.2 (advantages differ by at most
twice the symmetric divergence) and the reading of a curve that only claims a mu."""

from __future__ import annotations

import pytest
from gdp_losses import _dpsgd, _gaussian, _rr

from dpax import conversions as cv
from dpax import gdp


def test_advantage_difference_bounded_by_twice_delta():
    pairs = [
        (_gaussian(), cv.gdp_curve(1.3)),
        (_dpsgd(0.5, 0.1, 1000, 2e-3), cv.gdp_curve(1.2)),  # DP-SGD curves of test_gdp_mu_regret.py
        (_rr(1.0, 2e-3), cv.gdp_curve(cv.mu_from_epsilon_dp(1.0))),  # test_gdp_mu_regret.py's randomized response
        (cv.epsilon_delta_curve(1.0, 1e-5), cv.rdp_curve(2.0, 0.5)),
        (cv.gdp_curve(0.5), cv.epsilon_delta_curve(0.5, 0.01)),
        (_dpsgd(1.0, 0.3, 100), _dpsgd(0.5, 0.1, 1000, 2e-3)),
    ]
    for f, g in pairs:
        adv = [float(c.advantage()) if hasattr(c, "advantage") else None for c in (f, g)]
        d = gdp.symmetric_delta_divergence(f, g)
        assert abs(adv[0] - adv[1]) <= 2 * d + 1e-12
        assert d > 0


def test_delta_against_a_curve_that_only_claims_a_gdp_mu():
    # the exact tangent points are a GDPCurve's; another curve that sets gdp_mu (a user's
    # subclass) is read on the dense grid of u, not asked for a tangent_u it does not have
    from dpax.gdp import curves

    class Claimed(curves.TradeoffCurve):
        gdp_mu = 1.0

        def __init__(self):
            self._exact = cv.gdp_curve(1.0)

        def v(self, u):
            return self._exact.v(u)

    f = cv.epsilon_delta_curve(1.0, 0.0)
    exact = cv.delta_divergence(f, cv.gdp_curve(1.0))
    assert exact > 0.01
    assert cv.delta_divergence(f, Claimed()) == pytest.approx(exact, rel=1e-6)
