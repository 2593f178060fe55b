"""The kernels' own normal CDF against SciPy, over the whole float64 range."""

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special as sp

from dpax._engine import special as _special

X = np.concatenate([np.linspace(-60.0, 40.0, 200_001), -np.logspace(-6, 8, 500), np.logspace(-6, 2, 500),
                    [0.0, -np.inf, np.inf]])


def _rel(got, ref):
    fin = np.isfinite(ref) & (np.abs(ref) > 1e-300)
    assert np.array_equal(got[~fin & ~np.isfinite(ref)], ref[~fin & ~np.isfinite(ref)])
    return np.max(np.abs(got[fin] - ref[fin]) / np.abs(ref[fin]))


def test_ndtr_matches_scipy_to_a_few_ulps():
    with jax.enable_x64(True):
        got = np.asarray(jax.jit(_special.ndtr)(jnp.asarray(X)))
    assert _rel(got, sp.ndtr(X)) < 1e-14



def test_log_ndtr_pair_keeps_both_sides_relative_precision():
    """log Phi(x) and log Phi(-x) from one erfc, against SciPy: relative precision on the
    small side (where jax.scipy.special.log_ndtr loses 2e-11 near -20) and on the large
    side log Phi(x) ~ -Phi(-x) (where it loses up to 8% near x = 8), across the switch to
    the asymptotic series at |x| = 37, and exact at 0 and +-inf."""
    x = np.concatenate([np.linspace(-60.0, 60.0, 240_001), -np.logspace(-8, 3, 1000), np.logspace(-8, 3, 1000),
                        [0.0, -np.inf, np.inf, -37.0, 37.0, np.nextafter(-37.0, 0), np.nextafter(37.0, 0)]])
    with jax.enable_x64(True):
        lo, hi = (np.asarray(v) for v in jax.jit(_special.log_ndtr_pair)(jnp.asarray(x)))
    for got, ref in ((lo, sp.log_ndtr(x)), (hi, sp.log_ndtr(-x))):
        inf = ~np.isfinite(ref)
        assert np.array_equal(got[inf], ref[inf])
        tiny = np.abs(ref) < 1e-290  # log Phi(x) ~ -1e-300: subnormal; absolute error only
        assert np.max(np.abs(got[tiny] - ref[tiny])) < 1e-300
        keep = ~inf & ~tiny
        rel = np.abs(got[keep] - ref[keep]) / np.abs(ref[keep])
        small_side = ref[keep] < -0.5
        assert np.max(rel[small_side]) < 2e-15
        assert np.max(rel) < 5e-15
