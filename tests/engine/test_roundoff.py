"""The FFT's round-off booked on the safe side (dpax._engine.roundoff): the modelled bound
against the error of a real FFT composition, and the invariants of the bounded masses."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from dpax._engine import roundoff
from dpax._engine.x64 import float64


@float64
def test_roundoff_bound_covers_an_fft_compositions_error():
    """Randomized response at epsilon 1 on a grid of 1/100 composed 1,000 times by FFT
    (NumPy's, binary powering as the kernel does) against the exact binomial law: every
    point's error is within roundoff()'s bound, and the bound is not loose by more than a
    factor of 10^3 (a model of the wrong scale fails one or the other)."""
    q = math.e / (1.0 + math.e)
    count, length = 1000, 2**18
    law = np.zeros(length)
    law[0], law[200] = 1.0 - q, q  # losses -1 and +1, shifted so that -1 sits at 0
    spec = np.fft.rfft(law)
    comp = np.fft.irfft(spec**count, n=length)
    exact = np.zeros(length)
    k = np.arange(count + 1)
    exact[(200 * k) % length] += stats.binom.pmf(k, count, q)
    err = np.max(np.abs(comp - exact))
    eta = float(np.asarray(roundoff.roundoff(np.array([np.max(comp)]), np.array([float(count)]), length))[0, 0])
    assert err <= eta
    assert eta <= 1e3 * err


@float64
def test_bounded_masses_book_the_bound_on_the_safe_side():
    rng = np.random.default_rng(0)
    n = 64
    comp = rng.uniform(-1e-17, 1e-3, (2, n))
    offset = np.array([-32])
    eta = np.array([[1e-16]])
    mean = np.array([0.0])
    for exact_ratio in (False, True):
        px, py = (np.asarray(a) for a in roundoff.bounded_masses(comp[:1], comp[1:], offset, 1e-2, eta, eta,
                                                                 exact_ratio, -mean, mean))
        index = np.arange(n) + offset[0]
        assert np.all(px >= 0.0) and np.all(py >= 0.0)
        # big sides (Y above 0, X below 0): the value plus the bound
        np.testing.assert_array_equal(py[0, index > 0], np.maximum(comp[1, index > 0], 0.0) + 1e-16)
        np.testing.assert_array_equal(px[0, index < 0], np.maximum(comp[0, index < 0], 0.0) + 1e-16)
        if not exact_ratio:  # small sides: the value less the bound
            np.testing.assert_array_equal(px[0, index > 0], np.maximum(comp[0, index > 0] - 1e-16, 0.0))


@float64
def test_close_bounded_keeps_totals_within_one():
    n = 8
    px = np.full((1, n), 0.13)  # totals 1.04: the excess is scaled away
    py = np.full((1, n), 0.12)  # total 0.96: the missing mass goes to the last point
    at = np.arange(n)[None, :]
    out_x, out_y, iy, nx = (np.asarray(a) for a in roundoff.close_bounded(
        px, py, np.array([0.0]), np.array([0.0]), at == 0, at == n - 1, np.array([-0.04]), np.array([0.03])))
    assert np.sum(out_x) <= 1.0 + 1e-15 and np.sum(out_y) <= 1.0 + 1e-15
    assert np.isclose(np.sum(out_y), 1.0, rtol=1e-12)
    assert out_y[0, -1] > py[0, -1]  # Y's deficit at the window's last point
