"""Privacy losses shared by the tests of dpax.gdp (test_gdp_mu_regret.py, test_report.py,
test_divergence.py, test_closed_form_mu.py and test_gdp_cli.py): each distinct configuration is
built once per test process (functools.cache), by whichever of those files asks first, and the
files' kernel shapes are those of these curves."""

from __future__ import annotations

import functools

import numpy as np

import dpax


@functools.cache
def _dpsgd(sigma, p, steps, grid_step=1e-3):
    """DP-SGD losses shared by the tests (each distinct configuration is built and compiled once)."""
    return dpax.dpsgd(sigma, p, steps, grid_step=grid_step)


@functools.cache
def _gaussian():
    """The Gaussian mechanism with sigma 1 (exactly 1-GDP) at grid 2.5e-4: its support, 81920
    points, is that of _dpsgd(1.0, 0.3, 100), so its mu, beta, epsilon, advantage and
    breakpoint kernels are that curve's (compiled once in each file that uses them)."""
    return dpax.gaussian(1.0, grid_step=2.5e-4)


@functools.cache
def _rows():
    """A 2 x 2 batch of distinct rows that cost no construction kernels of their own: DP-SGD
    (1, 0.3, 100) (the curve of the gdpnum checks) and randomized response with epsilon 1, 0.5
    and 2 built by hand on the same grid (1e-3), each padded with zeros to DP-SGD's support.
    (A DP-SGD batch such as _batch() compiles its own construction kernels, ~10 of them.)"""
    e = np.array([1.0, 0.5, 2.0])
    k = np.rint(e / 1e-3).astype(int)
    pairs = [tuple(np.asarray(a)[0] for a in _dpsgd(1.0, 0.3, 100).pair)]
    for ki, ei in zip(k, e):
        lo, hi = np.exp(ei) / (1.0 + np.exp(ei)), 1.0 / (1.0 + np.exp(ei))
        px, py = np.zeros(2 * ki + 1), np.zeros(2 * ki + 1)
        px[0], px[-1], py[0], py[-1] = lo, hi, hi, lo  # losses -e and e: Pr[X = x] = e^-x Pr[Y = x]
        pairs.append((px, py, -ki, 0.0, 0.0))
    n = max(p[0].size for p in pairs)
    px, py = (np.stack([np.pad(p[i], (0, n - p[i].size)) for p in pairs]).reshape(2, 2, n) for i in (0, 1))
    offset, inf_y, neginf_x = (np.array([float(p[i]) for p in pairs]).reshape(2, 2) for i in (2, 3, 4))
    return dpax.PrivacyLoss(px, py, offset.astype(np.int64), inf_y, neginf_x, 1e-3, description="rows")


def _rr(epsilon, grid_step=1e-3):
    """Randomized response with parameter epsilon from its privacy profile (symmetric pair)."""
    e = float(epsilon)

    def profile(x):
        return np.maximum(0.0, (np.exp(e) - np.exp(x)) / (1.0 + np.exp(e)))

    return dpax.from_privacy_profile(profile, grid_step=grid_step, description=f"rr({e:g})")


def _rr(epsilon, grid_step=1e-3):
    """Randomized response with parameter epsilon from its privacy profile (symmetric pair)."""
    e = float(epsilon)

    def profile(x):
        return np.maximum(0.0, (np.exp(e) - np.exp(x)) / (1.0 + np.exp(e)))

    return dpax.from_privacy_profile(profile, grid_step=grid_step, description=f"rr({e:g})")
