"""Special functions for the kernels, where the stock JAX ones are slow on CPU."""

from __future__ import annotations

import jax.numpy as jnp
from jax.scipy.special import erfc

_SQRT_HALF = 0.7071067811865476


def ndtr(x):
    """Standard normal CDF Phi(x) = erfc(-x / sqrt 2) / 2.

    One erfc: relative precision in the lower tail (down to underflow) and absolute
    precision above, like ``jax.scipy.special.ndtr``, which evaluates erf and erfc at
    every point and is about eight times slower on CPU.
    """
    return 0.5 * erfc(-x * _SQRT_HALF)



_HALF_LOG_2PI = 0.9189385332046727
#: From here on Phi(-|x|) (~5e-300 at 37) is near float64's underflow: asymptotic series.
_ASYMPTOTIC_FROM = 37.0


def log_ndtr_pair(x):
    """(log Phi(x), log Phi(-x)) from one erfc: the small side is log Phi(-|x|), relative
    precision to ~1e-15 (its log of erfc, or for |x| >= 37 the asymptotic series
    log Phi(-a) = -a^2/2 - log(2 pi)/2 + log((1 - a^-2 + 3 a^-4 - ... + 10395 a^-12) / a),
    truncated below 1e-17); the large side is log1p(-Phi(-|x|)) (-Phi(-|x|) itself from 37
    on, where that is below 1e-299). Both sides keep their relative precision
    (``jax.scipy.special.log_ndtr`` loses up to 8% of log Phi(x) ~ -1e-15 at x = 8, and
    2e-11 near -20). One log serves both forms of the small side, so a point costs one erfc
    and three logarithms: a third of the cost of two ``log_ndtr`` calls on CPU."""
    a = jnp.abs(x)
    small = 0.5 * erfc(a * _SQRT_HALF)  # Phi(-|x|)
    far = a >= _ASYMPTOTIC_FROM
    r = 1.0 / jnp.where(far, a * a, 1.0)
    series = r * (-1.0 + r * (3.0 + r * (-15.0 + r * (105.0 + r * (-945.0 + r * 10395.0)))))
    log_small = (jnp.where(far, -0.5 * a * a - _HALF_LOG_2PI, 0.0)
                 + jnp.log(jnp.where(far, (1.0 + series) / a, small)))
    # 1 - small is exact to half an ulp for small >= 1/4, where XLA's log1p is off by 1e-14
    log_large = jnp.where(far, -small, jnp.where(small > 0.25, jnp.log(1.0 - small), jnp.log1p(-small)))
    negative = x < 0
    return jnp.where(negative, log_small, log_large), jnp.where(negative, log_large, log_small)
