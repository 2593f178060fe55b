"""The FFT's round-off booked on the safe side (dpax._engine.roundoff): the modelled bound
against the error of a real FFT composition, and the invariants of the bounded masses."""

from __future__ import annotations

import math

import numpy as np
import pytest
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
@pytest.mark.parametrize("count, length", [(1000, 2**18), (10_000, 2**20)])
def test_roundoff_bound_covers_jaxs_fft_on_the_default_device(count, length):
    """The same composition with JAX's FFT on whatever device JAX uses (XLA's CPU FFT here; on
    an NVIDIA H200, cuFFT's error was at most 0.10 of the bound at both sizes) and the
    kernel's binary powering (composition._spectrum_power): every point within the bound."""
    import jax.numpy as jnp

    from dpax._engine import composition

    q = math.e / (1.0 + math.e)
    law = np.zeros(length)
    law[0], law[200] = 1.0 - q, q
    spec = jnp.fft.rfft(jnp.asarray(law))[None, :]
    comp = np.asarray(jnp.fft.irfft(composition._spectrum_power(spec, jnp.asarray([count]), 16)[0], n=length))
    exact = np.zeros(length)
    k = np.arange(count + 1)
    np.add.at(exact, (200 * k) % length, stats.binom.pmf(k, count, q))
    err = np.max(np.abs(comp - exact))
    eta = float(np.asarray(roundoff.roundoff(np.array([np.max(comp)]), np.array([float(count)]), length))[0, 0])
    assert err <= eta / 4.0  # measured: 0.12 and 0.07 of the bound on the CPU
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
        bounds = roundoff.bounded_masses(comp[:1], comp[1:], offset, 1e-2, eta, eta, exact_ratio, -mean, mean)
        px, py = (np.asarray(a) for a in roundoff.big_sides_up(bounds, offset))
        index = np.arange(n) + offset[0]
        assert np.all(px >= 0.0) and np.all(py >= 0.0)
        # big sides (Y above 0, X below 0): the value plus the bound
        np.testing.assert_array_equal(py[0, index > 0], np.maximum(comp[1, index > 0], 0.0) + 1e-16)
        np.testing.assert_array_equal(px[0, index < 0], np.maximum(comp[0, index < 0], 0.0) + 1e-16)
        if not exact_ratio:  # small sides: the value less the bound
            np.testing.assert_array_equal(px[0, index > 0], np.maximum(comp[0, index > 0] - 1e-16, 0.0))


def _truth_and_ranges(rng, n, lo_index):
    """A law on n points (loss indices lo_index..): a bump of random width and place with
    random ripples and thin tails, and per-point ranges around it as the composition books
    them: [truth - u, truth + v] (at least 0), u and v absolute, up to 1e-9."""
    j = np.arange(n)
    truth = np.exp(-0.5 * ((j - rng.uniform(0.3, 0.7) * n) / rng.uniform(0.03, 0.1) / n) ** 2)
    truth *= rng.uniform(0.5, 1.5, n)
    truth /= truth.sum()
    least = np.maximum(truth - rng.uniform(0.0, 1e-9, n), 0.0)
    most = truth + rng.uniform(0.0, 1e-9, n)
    return truth, least, most


def _close(least_x, most_x, least_y, most_y, lo, modes, atoms=(0.0, 0.0), precise=False):
    n = least_x.shape[-1]
    to = lambda a: np.asarray(a)[None, :]
    out = roundoff.close_bounded(((to(least_x), to(most_x)), (to(least_y), to(most_y))), np.array([atoms[0]]),
                                 np.array([atoms[1]]), np.array([lo]), np.array([lo]), np.array([lo + n - 1]),
                                 tuple((np.array([m]), np.array([low])) for m, low in modes),
                                 (np.array([0.0]), np.array([0.0])), 0.01, precise)
    return tuple(np.asarray(a)[0] if np.ndim(a) == 2 else np.asarray(a) for a in out)


@float64
@pytest.mark.parametrize("precise", [False, True])
def test_close_bounded_keeps_y_stochastically_larger_and_x_smaller(precise):
    """Invariant of the closing, for random laws and random ranges around them, with an
    excess (the ranges' excess over the truth) or a deficit: Y's result is stochastically at least
    the truth (every Pr[Y > x] at or above, tails near 1 included) and X's at most, and each
    total is 1 less its atom (to the round-off of a sum of 400 terms). Scaling an excess away
    instead fails it where a law's lower tail is thin: its tails near 1 come out low by
    about the excess below them."""
    rng = np.random.default_rng(3)
    n, scaled_low = 400, 0
    for lo in [-150, 0] * 10:  # Y's big side (losses > 0) from the middle, or the whole window
        t_x, least_x, most_x = _truth_and_ranges(rng, n, lo)
        t_y, least_y, most_y = _truth_and_ranges(rng, n, lo)
        m_x, m_y = int(np.argmax(t_x)), int(np.argmax(t_y))
        modes = ((lo + m_x, t_x[m_x] - 1e-6), (lo + m_y, t_y[m_y] - 1e-6))
        px, py, _, _ = _close(least_x, most_x, least_y, most_y, lo, modes, precise=precise)
        assert np.all(px >= 0.0) and np.all(py >= 0.0)
        assert abs(py.sum() - 1.0) <= 1e-14 and abs(px.sum() - 1.0) <= 1e-14
        # Pr[Y > x] >= truth's, as upper sums and as 1 - lower sums (both ways tails are read)
        above = lambda p: np.cumsum(p[::-1])[::-1]  # Pr[L >= x]
        assert np.all(above(py) >= above(t_y) - 1e-14)
        assert np.all(np.cumsum(py) <= np.cumsum(t_y) + 1e-14)
        assert np.all(above(px) <= above(t_x) + 1e-14)
        assert np.all(np.cumsum(px) >= np.cumsum(t_x) - 1e-14)
        booked = np.where(np.arange(n) + lo > 0, most_y, least_y)
        scaled_low += np.min(above(booked / max(booked.sum(), 1.0)) - above(t_y)) < -1e-12
    assert scaled_low >= 5


@float64
def test_close_bounded_falls_back_where_the_mode_cannot_take_the_difference():
    """A mode whose mass is below the excess has the excess scaled away (totals within 1);
    a mode outside the window leaves the missing mass to the law's infinite atom."""
    n = 8
    least = np.full(n, 0.12)
    px, py, iy, nx = _close(least, np.full(n, 0.13), least, np.full(n, 0.13), -4, ((-4, 1e-3), (3, 1e-3)))
    assert np.isclose(px.sum(), 1.0, rtol=0, atol=1e-15) and np.isclose(py.sum(), 1.0, rtol=0, atol=1e-15)
    assert iy == 0.0 and nx == 0.0
    px, py, iy, nx = _close(least, np.full(n, 0.12), least, np.full(n, 0.12), -4, ((-4, 0.1), (9, 0.1)))
    assert np.isclose(py.sum(), 0.96, rtol=1e-12) and np.isclose(iy, 0.04, rtol=1e-12)  # on +inf
    assert np.isclose(px.sum(), 1.0, rtol=1e-12) and nx == 0.0  # X's mode (-4) takes its 0.04
