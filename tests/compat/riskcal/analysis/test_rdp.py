"""dpax.compat.riskcal.analysis._rdp: Rényi divergences of Bernoulli pairs, the batched
bisection of the (orders x alphas) RDP curves and their maximum, riskcal's zCDP orders, and
the fixed point behind zCDP's advantage. Against the definitions, dpax's one-order engine
conversion (dpax.conversions.rdp_tradeoff) and riskcal's order grid. NumPy only."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpax
from dpax.compat.riskcal.analysis import _rdp


def _renyi_direct(t, p, q):
    """D_t(Bern(p) || Bern(q)) from its definition (t != 1) or KL (t = 1), in Python floats."""
    if t == 1:
        return sum(a * math.log(a / b) for a, b in ((p, q), (1 - p, 1 - q)) if a > 0)
    return math.log(sum(a**t * b ** (1 - t) for a, b in ((p, q), (1 - p, 1 - q)) if a > 0)) / (t - 1)


@pytest.mark.parametrize("t", [0.3, 0.5, 1.0, 2.0, 7.5, 64.0])
def test_renyi_bernoulli_is_the_definition(t):
    pairs = [(0.1, 0.4), (0.5, 0.5), (0.9, 0.2), (0.0, 0.3), (1.0, 0.6), (0.25, 0.99)]
    got = _rdp.renyi_bernoulli(t, [p for p, _ in pairs], [q for _, q in pairs])
    np.testing.assert_allclose(got, [_renyi_direct(t, p, q) for p, q in pairs], rtol=1e-10, atol=1e-14)
    assert _rdp.renyi_bernoulli(t, 0.3, 0.3) == pytest.approx(0.0, abs=1e-15)


def test_renyi_bernoulli_is_infinite_where_unbounded():
    # p has mass where q has none: unbounded for every order >= 1
    for t in (1.0, 2.0):
        assert _rdp.renyi_bernoulli(t, 0.5, 0.0) == np.inf and _rdp.renyi_bernoulli(t, 0.5, 1.0) == np.inf
    # broadcast over the order
    out = _rdp.renyi_bernoulli(np.array([2.0, 3.0]), 0.2, 0.5)
    assert out.shape == (2,) and out[0] < out[1]  # non-decreasing in the order


def test_iterations_bring_a_unit_bracket_under_a_quarter_of_tol():
    for tol in (1e-3, 1e-7, 1e-9, 1e-12):
        n = _rdp.iterations(tol)
        assert 20 <= n <= 64 and 2.0**-n <= tol / 4
    assert _rdp.iterations(0.5) == 20 and _rdp.iterations(1e-30) == 64
    for bad in (0.0, -1e-3, math.inf, math.nan):
        with pytest.raises(ValueError, match="tol must be a finite number > 0"):
            _rdp.iterations(bad)


def test_zcdp_orders_as_riskcals_grid():
    orders = _rdp.zcdp_orders(1.0, 1024.0, 30)  # 10 a piece, the shared ends 2 and 16 once
    assert orders.size == 28 and orders[0] == 1.0 and orders[-1] == pytest.approx(1024.0, rel=1e-12)
    assert np.all(np.diff(orders) > 0) and np.sum(orders == 2.0) == 1 and np.sum(orders == 16.0) == 1
    np.testing.assert_allclose(orders[:9], np.linspace(1.0, 2.0, 10)[:-1])
    np.testing.assert_allclose(orders[18:], np.logspace(np.log10(16.0), np.log10(1024.0), 10))
    assert _rdp.zcdp_orders(1.0, 1024.0, 1000).size == 3 * 333 - 2
    with pytest.raises(ValueError, match="grid_size must be >= 6"):
        _rdp.zcdp_orders(1.0, 1024.0, 5)
    with pytest.raises(ValueError, match="min_order"):
        _rdp.zcdp_orders(0.5, 1024.0, 30)
    with pytest.raises(ValueError, match="max_order"):
        _rdp.zcdp_orders(1.0, math.inf, 30)


ALPHAS = np.array([0.0, 1e-6, 1e-3, 0.05, 0.2, 0.45, 0.7, 0.99, 1.0])


def test_max_rdp_tradeoff_is_the_maximum_of_the_one_order_curves(monkeypatch):
    # orders spread so that the pruning pass (every STRIDE-th order) misses the largest curves at some alphas
    orders = np.concatenate([np.linspace(1.0, 2.0, 20), np.geomspace(2.0, 300.0, 21)[1:]])
    rho = 0.3
    full = np.max([dpax.conversions.rdp_tradeoff(t, rho * t, ALPHAS) for t in orders], axis=0)
    got = _rdp.max_rdp_tradeoff(orders, rho * orders, ALPHAS, tol=1e-12)
    np.testing.assert_allclose(got, full, atol=1e-11)
    # from below: every order allows the returned FNR or less (the maximum errs low)
    assert np.all(got <= full + 1e-15)
    # chunked over the alphas, the same
    monkeypatch.setattr(_rdp, "CHUNK", orders.size * 2)
    np.testing.assert_array_equal(_rdp.max_rdp_tradeoff(orders, rho * orders, ALPHAS, tol=1e-12), got)
    # a single order: that order's curve
    np.testing.assert_allclose(_rdp.max_rdp_tradeoff([3.0], [0.9], ALPHAS, tol=1e-12),
                               dpax.conversions.rdp_tradeoff(3.0, 0.9, ALPHAS), atol=1e-11)


def test_zcdp_fixed_point():
    rho = 0.5
    orders = _rdp.zcdp_orders(1.0, 1024.0, 60)
    a = _rdp.zcdp_fixed_point(rho, orders, tol=1e-12)
    assert 0.0 < a < 0.5
    # D_t(Bern(a) || Bern(1 - a)) decreases on [0, 1/2], crossing rho t at order t's fixed point: a is the largest
    # fixed point from below, so some order is not yet at its fixed point at a, and every order is past its own
    # just above a
    assert np.any(_rdp.renyi_bernoulli(orders, a, 1.0 - a) >= rho * orders)
    assert np.all(_rdp.renyi_bernoulli(orders, a + 1e-11, 1.0 - a - 1e-11) <= rho * orders)
    # the fixed point a = f(a) of the largest curve over the orders
    f_a = _rdp.max_rdp_tradeoff(orders, rho * orders, [a], tol=1e-12)[0]
    assert f_a == pytest.approx(a, abs=1e-9)
    # one order: its own fixed point
    t = float(orders[25])
    one = _rdp.zcdp_fixed_point(rho, [t], tol=1e-12)
    assert _rdp.renyi_bernoulli(t, one, 1 - one) == pytest.approx(rho * t, rel=1e-8)
    assert one <= a  # one of the orders above: not beyond their largest
