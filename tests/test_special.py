"""The kernels' own normal CDF against SciPy, over the whole float64 range."""

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special as sp

from dpax import _special

X = np.concatenate([np.linspace(-60.0, 40.0, 200_001), -np.logspace(-6, 8, 500), np.logspace(-6, 2, 500), [0.0, -np.inf, np.inf]])


def _rel(got, ref):
    fin = np.isfinite(ref) & (np.abs(ref) > 1e-300)
    assert np.array_equal(got[~fin & ~np.isfinite(ref)], ref[~fin & ~np.isfinite(ref)])
    return np.max(np.abs(got[fin] - ref[fin]) / np.abs(ref[fin]))


def test_ndtr_matches_scipy_to_a_few_ulps():
    with jax.enable_x64(True):
        got = np.asarray(jax.jit(_special.ndtr)(jnp.asarray(X)))
    assert _rel(got, sp.ndtr(X)) < 1e-14

