"""DP-SGD's quantities for calibration (dpax.calibration.quantities) against their closed
forms: the probability that a record is used at all, the CLT noise guess (the inverse of the
CLT mu), the width classes, and the target's quantities without noise."""

from __future__ import annotations

import numpy as np
import pytest

from dpax import targets
from dpax.calibration import quantities as qty


def test_leak_probability_keeps_its_relative_precision_for_tiny_rates():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    p = np.array([1e-12, 1e-6, 0.01, 0.5, 1.0])
    t = np.array([1, 1000, 100, 3, 7])
    got = qty._leak_probability(p, t)
    for g, pi, ti in zip(got, p, t):
        exact = 1 - (1 - mpmath.mpf(float(pi))) ** int(ti)
        assert abs(g - float(exact)) <= 4e-16 * float(exact), (pi, ti, g)
    assert got[-1] == 1.0


def test_noise_guess_inverts_the_clt_mu():
    p, t = np.array([1e-3, 0.01, 0.3]), np.array([10_000, 1_000, 50])
    sigma = np.array([0.8, 1.5, 6.0])
    mu = p * np.sqrt(t * np.expm1(1.0 / sigma**2))
    np.testing.assert_allclose(qty._dpsgd_noise_guess(mu, p, t), sigma, rtol=1e-12)


def test_width_key_is_the_width_class_of_the_clt_support():
    noise, p, t = np.array([0.5, 1.0, 4.0]), np.array([0.01, 0.01, 0.01]), np.array([100, 100, 100])
    mu = p * np.sqrt(t * np.expm1(1.0 / noise**2))
    np.testing.assert_array_equal(qty._width_key(noise, p, t), np.floor(np.log2(1.0 + mu * (mu + 10.0)) / 2))
    assert np.all(np.diff(qty._width_key(noise, p, t)) <= 0)  # more noise, narrower support


def test_quantities_without_noise_are_the_subsampling_curve():
    q = np.array([1e-6, 0.2])
    both = targets.All(targets.Advantage(0.3), targets.Epsilon(1.0, 1e-5), targets.ErrRates(0.1, 0.5))
    out = qty._no_noise_quantities(both, q)
    np.testing.assert_array_equal(out["advantage"], q)
    np.testing.assert_array_equal(out["epsilon"], [0.0, np.inf])  # 0 only where q <= delta
    np.testing.assert_allclose(out["beta"], (1 - q) * 0.9, rtol=1e-15)
