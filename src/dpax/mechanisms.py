"""Mechanisms as PrivacyLoss values: the Gaussian, the Poisson-subsampled Gaussian, DP-SGD.

All parameters broadcast like NumPy; a batch is built by one compiled kernel.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from scipy.special import ndtri

from . import construct as _construct
from . import grid as _grid
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
    arrays = _construct.subsampled_gaussian_kernel(
        jnp.asarray(s), jnp.asarray(q), jnp.asarray(offset), jnp.asarray(step), n
    )
    pmf_x, pmf_y, inf_y, neginf_x = arrays
    desc = _describe("subsampled_gaussian", noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    return PrivacyLoss(
        pmf_x.reshape(shape + (n,)), pmf_y.reshape(shape + (n,)), jnp.asarray(offset).reshape(shape),
        inf_y.reshape(shape), neginf_x.reshape(shape), step, desc,
    )


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
