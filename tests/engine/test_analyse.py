"""The risk kernels of dpax._engine.analyse on a pair whose trade-off curve is known exactly:
randomized response at epsilon 1 (losses -1, 0, +1 on a grid of step 1), whose curve is
the epsilon-DP curve max(0, 1 - e^eps alpha, e^-eps (1 - alpha)) (Kairouz et al. 2015)."""

from __future__ import annotations

import math

import numpy as np

from dpax._engine import analyse
from dpax._engine.pair import Pair
from dpax._engine.x64 import float64

E = math.e


def _rr_pair(rows=1):
    p, q = E / (1 + E), 1 / (1 + E)
    return Pair(np.tile([p, 0.0, q], (rows, 1)), np.tile([q, 0.0, p], (rows, 1)), np.full(rows, -1),
                np.zeros(rows), np.zeros(rows))


def _rr_beta(alpha):
    return np.maximum.reduce([np.zeros_like(alpha), 1 - E * alpha, (1 - alpha) / E])


@float64
def test_beta_kernel_is_the_epsilon_dp_curve():
    alpha = np.linspace(0.0, 1.0, 101)[None, :]
    got = np.asarray(analyse.beta_kernel(_rr_pair(), alpha))
    np.testing.assert_allclose(got, _rr_beta(alpha), rtol=0, atol=2e-16)


@float64
def test_advantage_delta_and_epsilon_kernels():
    pair = _rr_pair()
    # advantage: 1 - alpha - beta at the kink alpha = 1 / (1 + e): (e - 1) / (e + 1)
    np.testing.assert_allclose(analyse.advantage_kernel(pair), [(E - 1) / (E + 1)], rtol=1e-15)
    # delta(epsilon) of randomized response: (p - e^eps q)^+ at loss 1
    eps = np.array([[0.0, 0.5, 1.0, 2.0]])
    want = np.maximum(E / (1 + E) - np.exp(eps) / (1 + E), 0.0)
    np.testing.assert_allclose(np.asarray(analyse.delta_kernel(pair, eps)), want, rtol=1e-14, atol=1e-16)
    # epsilon(delta): epsilon 1 at delta 0, the inverse of the above between
    got = np.asarray(analyse.epsilon_kernel(pair, np.array([[0.0, 0.1]])))
    np.testing.assert_allclose(got, [[1.0, math.log(E - 0.1 * (1 + E))]], rtol=1e-12)


@float64
def test_breakpoints_are_the_tail_sums():
    bp = analyse.breakpoints(_rr_pair())
    q = 1 / (1 + E)
    np.testing.assert_allclose(np.asarray(bp.ccdf_x)[0], [1.0, q, q, 0.0], rtol=1e-15)
    np.testing.assert_allclose(np.asarray(bp.cdf_y)[0], [0.0, q, q, 1.0], rtol=1e-15)
