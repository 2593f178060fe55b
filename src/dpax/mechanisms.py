"""Mechanisms as PrivacyLoss values: the Gaussian, the Poisson-subsampled Gaussian, DP-SGD.

All parameters broadcast like NumPy; a batch is built by one compiled kernel.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from scipy.special import ndtri

from . import construct as _construct
from . import grid as _grid
from . import sharding as _sharding
from . import validation as _v
from ._x64 import float64
from .privacy_loss import PrivacyLoss

#: Mass allowed in each tail of a single step before it is collapsed onto the grid's end
#: point plus an infinite atom (pessimistically; nothing is dropped).
SINGLE_STEP_TAIL = 1e-20
_MAX_LOSS = 600.0  # keep exp(loss) inside float64


def _loss_of_output(o, sigma, p):
    """L(o) = log(1 - p + p exp((2o - 1) / (2 sigma^2))) for the subsampled Gaussian pair."""
    with np.errstate(divide="ignore"):
        return np.logaddexp(np.log1p(-p), np.log(p) + (2.0 * o - 1.0) / (2.0 * sigma**2))


def _describe(name, **params):
    parts = []
    for k, v in params.items():
        v = np.asarray(v)
        parts.append(f"{k}={v.item():g}" if v.ndim == 0 else f"{k}=<{v.shape} array>")
    return f"{name}({', '.join(parts)})"


@float64
def subsampled_gaussian(noise_multiplier, sample_rate, grid_step=1e-4) -> PrivacyLoss:
    """Poisson-subsampled Gaussian mechanism (one DP-SGD step), add/remove neighbouring.

    Dominating pair P = N(0, s^2), Q = (1 - p) N(0, s^2) + p N(1, s^2) with s the noise
    multiplier and p the sample rate; the other direction is kept implicitly (the reversed
    pair) and every risk is reported for the symmetrised curve. The discrete pair is the
    connect-the-dots pair computed from the exact loss CDFs (:mod:`dpax.construct`).
    """
    sigma = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    step = _v.grid_step(grid_step)
    shape = np.broadcast_shapes(sigma.shape, p.shape)
    s, q = (np.broadcast_to(a, shape).reshape(-1) for a in (sigma, p))
    z = -ndtri(SINGLE_STEP_TAIL)
    high = _loss_of_output(1.0 + s * z, s, q)
    low = _loss_of_output(-s * z, s, q)
    if np.any(high > _MAX_LOSS) or np.any(low < -_MAX_LOSS):
        worst = s[np.argmax((high > _MAX_LOSS) | (low < -_MAX_LOSS))]
        raise ValueError(
            f"noise_multiplier={worst:g} is too small: its privacy loss exceeds {_MAX_LOSS:g} nats, "
            "beyond float64 range; use noise_multiplier >= 0.05"
        )
    offset = np.floor(low / step).astype(np.int64)
    n_needed = int(np.max(np.ceil(high / step).astype(np.int64) - offset)) + 1
    n = _grid.padded_length(n_needed)
    _grid.check_memory(offset.size, n, "subsampled_gaussian")
    s, q, offset = _sharding.place_rows(s, q, offset)  # batch rows split across jax.devices()
    pmf_x, pmf_y, inf_y, neginf_x = _construct.subsampled_gaussian_kernel(s, q, offset, np.float64(step), n)
    desc = _describe("subsampled_gaussian", noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    return PrivacyLoss(pmf_x, pmf_y, offset, inf_y, neginf_x, step, desc, batch_shape=shape, exact_ratio=True)


@float64
def gaussian(noise_multiplier, sensitivity=1.0, grid_step=1e-4) -> PrivacyLoss:
    """Gaussian mechanism with noise standard deviation ``noise_multiplier`` and L2
    ``sensitivity``: exactly mu-GDP with mu = sensitivity / noise_multiplier."""
    sigma = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    sens = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True)
    pl = subsampled_gaussian(sigma / sens, 1.0, grid_step)
    pl.description = _describe("gaussian", noise_multiplier=noise_multiplier, sensitivity=sensitivity)
    return pl


@float64
def dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=1e-4) -> PrivacyLoss:
    """DP-SGD: ``num_steps`` Poisson-subsampled Gaussian steps, composed by FFT.

    Every argument broadcasts; a list of noise values is one batched kernel call.
    """
    sigma = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    steps = _v.positive_int_array("num_steps", num_steps)
    shape = np.broadcast_shapes(sigma.shape, p.shape, steps.shape)
    step_pl = subsampled_gaussian(np.broadcast_to(sigma, shape), np.broadcast_to(p, shape), grid_step)
    pl = step_pl.self_compose(np.broadcast_to(steps, shape))
    pl.description = _describe("dpsgd", noise_multiplier=noise_multiplier, sample_rate=sample_rate, num_steps=num_steps)
    return pl


@float64
def from_privacy_profile(
    delta, *, grid_step=1e-4, epsilon_max=None, reverse_delta=None, description="privacy profile"
) -> PrivacyLoss:
    """Discrete dominating pair from a privacy profile delta(epsilon) (Algorithm 2, generic path).

    ``delta`` is a vectorised callable: an array of epsilon >= 0 in, the hockey-stick
    divergence delta(epsilon) = D_{e^eps}(Q || P) of the mechanism's dominating pair out
    (NumPy or JAX). Negative losses come from the swapped pair's profile
    ``reverse_delta`` = D_{e^eps}(P || Q), which defaults to ``delta`` itself (a symmetric
    pair: Gaussian, Laplace, randomized response...), evaluated at positive epsilon too, so
    no factor e^eps < 1 amplifies rounding. The grid covers [-epsilon_max, epsilon_max] (by default the first of
    1, 2, 4, ..., 512 where both profiles are <= 1e-18); delta(epsilon_max) becomes the +inf
    atom of Y and the mass below -epsilon_max the -inf atom of X, both pessimistically.

    Accuracy: the masses are second differences of delta, so each carries a rounding error
    of about 1e-16 / grid_step^2 (1e-8 at grid 1e-4, 1e-6 at 1e-5), and the pmf may sum to
    1 +- that. Prefer a mechanism with a closed-form loss law (``gaussian``,
    ``subsampled_gaussian``), which is built from first differences of the loss CDFs.
    Add/remove pairs: pass the profile of one direction; risks are reported for the
    symmetrised curve, whose other direction is the swapped pair.
    """
    if not callable(delta):
        raise TypeError(f"delta must be a callable epsilon -> delta(epsilon), got {type(delta).__name__}")
    if reverse_delta is None:
        reverse_delta = delta
    elif not callable(reverse_delta):
        raise TypeError(f"reverse_delta must be a callable or None, got {type(reverse_delta).__name__}")
    step = _v.grid_step(grid_step)

    def evaluate(fn, name, eps):
        vals = np.asarray(fn(eps), dtype=np.float64)
        if vals.shape != np.shape(eps):
            raise ValueError(f"{name}(epsilon) must return an array of the shape of epsilon, got {vals.shape}")
        if not np.all(np.isfinite(vals)) or np.any(vals < -1e-12) or np.any(vals > 1 + 1e-12):
            raise ValueError(f"{name}(epsilon) must return finite values in [0, 1]")
        return np.clip(vals, 0.0, 1.0)

    if epsilon_max is None:
        probes = 2.0 ** np.arange(10)
        small = (evaluate(delta, "delta", probes) <= 1e-18) & (evaluate(reverse_delta, "reverse_delta", probes) <= 1e-18)
        if not small.any():
            raise ValueError("delta(epsilon) stays above 1e-18 up to epsilon=512; pass epsilon_max")
        epsilon_max = probes[np.argmax(small)]
    emax = float(_v.real_array("epsilon_max", epsilon_max, low=0.0, high=_MAX_LOSS, low_open=True))
    k = _grid.padded_length(int(np.ceil(emax / step)) + 1) - 1
    _grid.check_memory(1, 2 * k + 1, "from_privacy_profile")
    grid = np.arange(k + 1) * step
    forward = evaluate(delta, "delta", grid)
    backward = evaluate(reverse_delta, "reverse_delta", grid)
    pmf_x, pmf_y, inf_y, neginf_x = _construct.connect_the_dots(
        jnp.asarray(grid), jnp.asarray(forward), jnp.asarray(backward)
    )
    return PrivacyLoss(pmf_x, pmf_y, jnp.asarray(-k, jnp.int64), inf_y, neginf_x, step, description, exact_ratio=True)
