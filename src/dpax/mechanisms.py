"""Mechanisms as PrivacyLoss values: the Gaussian, the Poisson-subsampled Gaussian, DP-SGD,
Laplace, randomized response, discrete mechanisms, and any mechanism given by its privacy
profile.

All parameters broadcast like NumPy; a batch is built by one compiled kernel
(:mod:`dpax._engine.construct`). Every mechanism's risks are reported for the symmetrised
curve (add/remove neighbouring unless ``neighbouring="substitution"``).

>>> import dpax
>>> dpax.dpsgd([1.0, 2.0], 0.01, 100, grid_step=1e-3).epsilon(1e-5).round(3)
array([0.718, 0.19 ])
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp
import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp, ndtri

from ._engine import construct as _construct
from ._engine import grid as _grid
from ._engine import optimistic as _optimistic
from ._engine import sharding as _sharding
from ._engine import validation as _v
from ._engine.x64 import float64
from .privacy_loss import PrivacyLoss

#: Mass allowed in each tail of a single step before it is collapsed onto the grid's end
#: point plus an infinite atom (pessimistically; nothing is dropped).
SINGLE_STEP_TAIL = 1e-20
_MAX_LOSS = _grid.MAX_LOSS
#: Largest noise multiplier the Gaussian kernels see: above it sigma^2 (about 1.8e308 at
#: 1.34e154) overflows, while every pair from 1e154 up to there is already the same, bit for
#: bit (the loss is ~1e-153 nats, far inside one grid cell); a larger noise is built as this
#: one (less noise: on the safe side, and the same numbers).
_SIGMA_MAX = 1e154
#: Largest integer support (points) of the discrete mechanisms.
_MAX_INTEGER_SUPPORT = 4_000_000
#: Smallest noise / sensitivity of a Gaussian whose privacy loss stays within MAX_LOSS out to
#: the outputs that leave SINGLE_STEP_TAIL of the mass beyond: the loss there is x^2 / 2 + z x
#: (x = sensitivity / noise, z = -Phi^-1(SINGLE_STEP_TAIL) = 9.26), at most MAX_LOSS for
#: x <= sqrt(z^2 + 2 MAX_LOSS) - z: noise >= 0.0376 sensitivity. Sample rates below 1 and
#: mixtures only shrink the loss, so it is enough for every one of them.
_LEAST_NOISE_RATIO = float(1.0 / (np.sqrt(ndtri(SINGLE_STEP_TAIL) ** 2 + 2.0 * _MAX_LOSS) + ndtri(SINGLE_STEP_TAIL)))


def _at_least(value: float) -> str:
    """``value`` rounded up to 3 significant digits, for the 'use ... >= X' of a message (X works)."""
    digits = 2 - int(np.floor(np.log10(value)))
    return f"{np.ceil(value * 10.0**digits) / 10.0**digits:.{max(digits, 0)}f}"


def _loss_of_output(o: np.ndarray, sigma: np.ndarray, p: np.ndarray) -> np.ndarray:
    """L(o) = log(1 - p + p exp((2o - 1) / (2 sigma^2))) for the subsampled Gaussian pair."""
    with np.errstate(divide="ignore"):
        return np.logaddexp(np.log1p(-p), np.log(p) + (2.0 * o - 1.0) / (2.0 * sigma**2))


def _describe(name: str, neighbouring: str = "add_remove", **params: ArrayLike) -> str:
    """``name(param=value, ...)`` for ``PrivacyLoss.description``; arrays show their shape,
    and a neighbouring relation other than add/remove is named last."""
    parts = []
    for k, v in params.items():
        v = np.asarray(v)
        if v.ndim:
            parts.append(f"{k}=<{v.shape} array>")
        else:
            try:
                parts.append(f"{k}={float(v):g}")
            except (TypeError, ValueError):
                parts.append(f"{k}={_v.brief(v.item(), 40)}")
    if neighbouring != "add_remove":
        parts.append(f"neighbouring={neighbouring}")
    return f"{name}({', '.join(parts)})"


@float64
def subsampled_gaussian(noise_multiplier: ArrayLike, sample_rate: ArrayLike, grid_step: float = 1e-4,
                        neighbouring: str = "add_remove") -> PrivacyLoss:
    """Poisson-subsampled Gaussian mechanism (one DP-SGD step), add/remove neighbouring.

    Dominating pair P = N(0, s^2), Q = (1 - p) N(0, s^2) + p N(1, s^2) with s the noise
    multiplier and p the sample rate; the other direction is kept implicitly (the reversed
    pair) and every risk is reported for the symmetrised curve. The discrete pair is the
    connect-the-dots pair computed from the exact loss CDFs
    (:func:`dpax._engine.construct.subsampled_gaussian_log_cdfs`).

    Args:
        noise_multiplier: noise standard deviation over the clipping norm, > 0.
        sample_rate: Poisson sampling probability p, in (0, 1].
        grid_step: the loss grid's step, in [1e-7, 1].
        neighbouring: ``"add_remove"`` (default) or ``"substitution"`` (replace one
            record: the pair Q = p N(1, s^2) + (1 - p) N(0, s^2),
            P = p N(-1, s^2) + (1 - p) N(0, s^2), as dp-accounting's REPLACE adjacency).

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> dpax.subsampled_gaussian([1.0, 2.0], 0.01, grid_step=1e-3).epsilon(1e-5).round(4)
    array([0.1995, 0.0283])
    """
    sigma = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("noise_multiplier", sigma), ("sample_rate", p))
    with np.errstate(over="ignore", divide="ignore"):
        # every attack, the tails included: sampling mixes Q with P (and, under substitution,
        # both with N(0, s^2)), a post-processing of the Gaussian pair, so 1/s-GDP (2/s)
        gdp_bound = _substitution_factor(neighbouring) / sigma
    sigma = np.minimum(sigma, _SIGMA_MAX)
    if _neighbouring(neighbouring) == "substitution":
        pl = _subsampled_gaussian_substitution(sigma, p, step, shape, noise_multiplier, sample_rate)
        return pl._with_gdp_bound(gdp_bound)
    s, q = (np.broadcast_to(a, shape).reshape(-1) for a in (sigma, p))
    z = -ndtri(SINGLE_STEP_TAIL)
    with np.errstate(over="ignore", invalid="ignore"):
        high = _loss_of_output(1.0 + s * z, s, q)
        low = _loss_of_output(-s * z, s, q)
    _check_noise(s, ~((high <= _MAX_LOSS) & (low >= -_MAX_LOSS)))
    offset = np.floor(low / step).astype(np.int64)
    n_needed = int(np.max(np.ceil(high / step).astype(np.int64) - offset)) + 1
    n = _grid.padded_length(n_needed, "construct")
    needed = np.ceil(high / step).astype(np.int64) - offset + 1  # each row on its own length
    s, q, offset = _sharding.place_rows(s, q, offset)  # batch rows split across jax.devices()
    pair = _construct.by_row_length(_construct.subsampled_gaussian_kernel, (s, q, offset), step, needed,
                                    "subsampled_gaussian")
    desc = _describe("subsampled_gaussian", noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    pl = PrivacyLoss.from_pair(pair, step, desc, shape, exact_ratio=True)._with_gdp_bound(gdp_bound)
    return pl._with_companion(lambda: PrivacyLoss._optimistic_from(
        _optimistic.subsampled_gaussian_kernel(s, q, offset, step, n), step, shape))


@float64
def gaussian(noise_multiplier: ArrayLike, sensitivity: ArrayLike = 1.0, grid_step: float = 1e-4,
             neighbouring: str = "add_remove") -> PrivacyLoss:
    """Gaussian mechanism: exactly mu-GDP with mu = sensitivity / noise_multiplier.

    ``neighbouring="substitution"`` (replace one record) doubles the sensitivity of a sum
    of clipped per-record terms: mu = 2 sensitivity / noise_multiplier.

    Args:
        noise_multiplier: noise standard deviation, > 0.
        sensitivity: L2 sensitivity of the query, > 0.
        grid_step: the loss grid's step, in [1e-7, 1].
        neighbouring: ``"add_remove"`` (default) or ``"substitution"``.

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> round(dpax.gaussian(1.0, grid_step=1e-2).advantage(), 4)
    0.3829
    """
    sigma = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    sens = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True) * _substitution_factor(neighbouring)
    _v.broadcast_shapes(("noise_multiplier", sigma), ("sensitivity", sens))
    with np.errstate(over="ignore", under="ignore"):  # sigma / sens beyond float64: the bounds below
        raw = sigma / sens
        ratio = np.clip(raw, np.finfo(np.float64).tiny, _SIGMA_MAX)
    try:
        pl = subsampled_gaussian(ratio, 1.0, grid_step)
    except ValueError as exc:  # said in the caller's terms: the ratio is not an argument they passed
        if "is too small" not in str(exc):
            raise
        worst = np.broadcast_to(raw, np.broadcast_shapes(sigma.shape, sens.shape)).min()
        least = f"{_at_least(_LEAST_NOISE_RATIO)} x sensitivity"
        if neighbouring == "substitution":
            least = (f"{_at_least(_LEAST_NOISE_RATIO)} x the doubled sensitivity, i.e. "
                     f"{_at_least(2.0 * _LEAST_NOISE_RATIO)} x sensitivity")
        doubled = " (the sensitivity doubled by substitution)" if neighbouring == "substitution" else ""
        raise ValueError(f"noise_multiplier / sensitivity = {worst:g}{doubled} is too small: the privacy loss "
                         f"exceeds {_MAX_LOSS:g} nats, beyond float64 range; use noise_multiplier >= {least}") from None
    pl.description = _describe("gaussian", neighbouring, noise_multiplier=noise_multiplier, sensitivity=sensitivity)
    with np.errstate(over="ignore", divide="ignore"):
        return pl._with_gdp_bound(sens / sigma)  # exactly (sensitivity / noise)-GDP


@float64
def dpsgd(noise_multiplier: ArrayLike, sample_rate: ArrayLike, num_steps: ArrayLike, grid_step: float = 1e-4,
          neighbouring: str = "add_remove") -> PrivacyLoss:
    """DP-SGD: ``num_steps`` Poisson-subsampled Gaussian steps, composed by FFT.

    Every argument broadcasts; a list of noise values is one batched kernel call.

    Args:
        noise_multiplier: noise standard deviation over the clipping norm, > 0.
        sample_rate: Poisson sampling probability, in (0, 1].
        num_steps: number of training steps, integers >= 1.
        grid_step: the loss grid's step, in [1e-7, 1].
        neighbouring: ``"add_remove"`` (default) or ``"substitution"`` (replace one record).

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> dpax.dpsgd([1.0, 2.0], 0.01, 100, grid_step=1e-3).epsilon(1e-5).round(3)
    array([0.718, 0.19 ])
    """
    sigma = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    steps = _v.positive_int_array("num_steps", num_steps)
    shape = _v.broadcast_shapes(("noise_multiplier", sigma), ("sample_rate", p), ("num_steps", steps))
    step_pl = subsampled_gaussian(np.broadcast_to(sigma, shape), np.broadcast_to(p, shape), grid_step, neighbouring)
    pl = step_pl.self_compose(np.broadcast_to(steps, shape))
    pl.description = _describe("dpsgd", neighbouring, noise_multiplier=noise_multiplier, sample_rate=sample_rate,
                               num_steps=num_steps)
    return pl


@float64
def mixture_of_gaussians(standard_deviation: ArrayLike, sensitivities: ArrayLike, sampling_probs: ArrayLike,
                         grid_step: float = 1e-4) -> PrivacyLoss:
    """Mixture-of-Gaussians mechanism (dp-accounting's ``MixtureOfGaussiansDpEvent``):
    Gaussian noise on a query whose sensitivity is c_i with probability p_i.

    Pair P = N(0, s^2), Q = sum_i p_i N(c_i, s^2), add/remove neighbouring (risks for the
    symmetrised curve). Its loss L(o) = log sum_i p_i exp((2 c_i o - c_i^2) / (2 s^2)) is
    increasing in o; its inverse is solved numerically in the kernel and the loss CDFs
    Phi(o(l) / s), sum_i p_i Phi((o(l) - c_i) / s) are exact
    (:func:`dpax._engine.construct.mixture_log_cdfs`), the pair their connect-the-dots pair
    as for ``subsampled_gaussian``. One component (1, 1) is ``gaussian(s)``; (0, 1) with
    probabilities (1 - q, q) is ``subsampled_gaussian(s, q)``. Components of probability 0
    are dropped; all mass on sensitivity 0 is the identity (loss 0).

    Args:
        standard_deviation: noise standard deviation s, > 0; broadcasts over a batch.
        sensitivities: the c_i, finite and >= 0: a sequence (shared by the batch) or an
            array whose last axis lists the components (the rest broadcasts).
        sampling_probs: the p_i, in [0, 1] and summing to 1 (within 1e-9), the shape of
            ``sensitivities``' components.
        grid_step: the loss grid's step, in [1e-7, 1].

    Returns:
        A :class:`PrivacyLoss` with the broadcast batch shape.

    >>> import dpax
    >>> pl = dpax.mixture_of_gaussians(1.0, [0.0, 1.0, 2.0], [0.81, 0.18, 0.01], grid_step=1e-2)
    >>> round(pl.epsilon(1e-5), 3)
    3.618
    """
    sd = _v.real_array("standard_deviation", standard_deviation, low=0.0, low_open=True)
    sens = _v.real_array("sensitivities", sensitivities, low=0.0)
    probs = _v.probabilities("sampling_probs", sampling_probs)
    for name, a in (("sensitivities", sens), ("sampling_probs", probs)):
        if a.ndim == 0:
            raise ValueError(f"{name} must be a sequence with one entry per mixture component, got the single "
                             f"number {float(a):g}")
    if sens.shape[-1] != probs.shape[-1]:
        raise ValueError(f"sensitivities and sampling_probs must have the same length (one entry per mixture "
                         f"component), got {sens.shape[-1]} and {probs.shape[-1]}")
    total = probs.sum(-1)
    if np.any(np.abs(total - 1.0) > 1e-9):
        bad = float(np.ravel(total)[np.argmax(np.ravel(np.abs(total - 1.0) > 1e-9))])
        raise ValueError(f"sampling_probs must sum to 1 (within 1e-9), got a sum of {bad:.12g}")
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("standard_deviation", sd), ("sensitivities' batch axes", sens.shape[:-1]),
                                ("sampling_probs' batch axes", probs.shape[:-1]))
    m = sens.shape[-1]
    s = np.broadcast_to(sd, shape).reshape(-1)
    c = np.broadcast_to(sens, shape + (m,)).reshape(-1, m)
    p = np.broadcast_to(probs / total[..., None], shape + (m,)).reshape(-1, m)
    log_p0, shifts, log_p = _mixture_rows(s, c, p)
    z = -ndtri(SINGLE_STEP_TAIL)
    with np.errstate(over="ignore", invalid="ignore"):
        high = _mixture_loss(np.max(shifts, -1) + z, log_p0, shifts, log_p)
        low = _mixture_loss(np.full(s.shape, -z), log_p0, shifts, log_p)
    too_small = ~((high <= _MAX_LOSS) & (low >= -_MAX_LOSS))
    if np.any(too_small):
        r = np.argmax(too_small)
        raise ValueError(f"standard_deviation={s[r]:g} is too small for sensitivities up to "
                         f"{np.max(np.where(p[r] > 0, c[r], 0.0)):g}: the "
                         f"privacy loss exceeds {_MAX_LOSS:g} nats, beyond float64 range; use standard_deviation "
                         f">= {_at_least(_LEAST_NOISE_RATIO)} times the largest sensitivity")
    offset = np.floor(low / step).astype(np.int64)
    needed = np.ceil(high / step).astype(np.int64) - offset + 1  # each row on its own length
    n = _grid.padded_length(int(np.max(needed)), "construct")
    cost = _construct.CONSTRUCT_BYTES_PER_POINT + _construct.MIXTURE_BYTES_PER_COMPONENT * shifts.shape[-1]
    pair = _construct.by_row_length(_construct.mixture_of_gaussians_kernel, (log_p0, shifts, log_p, offset), step,
                                    needed, "mixture_of_gaussians", bytes_per_point=cost)
    desc = _describe("mixture_of_gaussians", standard_deviation=standard_deviation, sensitivities=sensitivities,
                     sampling_probs=sampling_probs)
    pl = PrivacyLoss.from_pair(pair, step, desc, shape, exact_ratio=True)
    # Q mixes the laws N(c_i, s^2) (a post-processing of each pair (N(0, s^2), N(c_i, s^2))):
    # (max c_i / s)-GDP for every attack
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        pl._with_gdp_bound((np.max(np.where(p > 0, c, 0.0), -1) / s).reshape(shape))
    return pl._with_companion(lambda: PrivacyLoss._optimistic_from(
        _optimistic.mixture_of_gaussians_kernel(log_p0, shifts, log_p, offset, step, n), step, shape))


def _mixture_rows(s: np.ndarray, c: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A mixture's rows in units of the noise: (log p_0 (rows,), shifts c_i / s and log p_i
    (rows, m') of its components with c_i > 0 and p_i > 0, padded with log p_i = -inf).

    p_0 is the mass at sensitivity 0, as log(1 - sum of the others) when it is the larger
    part (``subsampled_gaussian``'s log(1 - q)). A noise over 1e154 times the largest
    sensitivity is taken as that, as ``gaussian`` does (less noise: the safe side; the loss
    is then far inside one grid cell either way).
    """
    positive = (c > 0) & (p > 0)
    p0 = np.sum(np.where(positive, 0.0, p), -1)  # the mass at sensitivity 0 (the p_i = 0 add nothing)
    order = np.argsort(~positive, axis=-1, kind="stable")  # the components first, in order
    c, p, positive = (np.take_along_axis(a, order, -1) for a in (c, p, positive))
    width = max(1, int(np.max(np.sum(positive, -1))))
    c, p, positive = c[:, :width], p[:, :width], positive[:, :width]
    q = np.sum(np.where(positive, p, 0.0), -1)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_p0 = np.where(p0 < 0.5, np.log(p0), np.log1p(-np.minimum(q, 1.0)))
        noise = np.minimum(s, np.max(np.where(positive, c, 0.0), -1) * _SIGMA_MAX)
        noise = np.where(noise > 0, noise, s)
        shifts = np.where(positive, c / noise[:, None], 0.0)
        log_p = np.where(positive, np.log(np.where(positive, p, 1.0)), -np.inf)
    return log_p0, shifts, log_p


def _mixture_loss(o: np.ndarray, log_p0: np.ndarray, shifts: np.ndarray, log_p: np.ndarray) -> np.ndarray:
    """L(o) = log(p_0 + sum_i p_i exp(c_i o - c_i^2 / 2)) at the outputs o (rows,), in units
    of the noise (host side: the grid's end points)."""
    terms = log_p + shifts * o[:, None] - 0.5 * shifts**2
    return np.logaddexp(log_p0, np.logaddexp.reduce(terms, axis=-1))


@float64
def from_privacy_profile(
    delta: Callable[[np.ndarray], ArrayLike],
    *,
    grid_step: float = 1e-4,
    epsilon_max: float | None = None,
    reverse_delta: Callable[[np.ndarray], ArrayLike] | None = None,
    description: str = "privacy profile",
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

    Args:
        delta: vectorised callable epsilon -> delta(epsilon) = D_{e^eps}(Q || P), values
            in [0, 1].
        grid_step: the loss grid's step, in [1e-7, 1].
        epsilon_max: half-width of the finite grid (``None``: chosen as above).
        reverse_delta: vectorised callable epsilon -> D_{e^eps}(P || Q) (``None``: ``delta``).
        description: a label for ``repr`` and reports.

    Returns:
        A single-mechanism :class:`PrivacyLoss` (batch shape ``()``).

    The Gaussian mechanism with mu = 1 from its profile:

    >>> import dpax, numpy as np
    >>> from scipy.stats import norm
    >>> profile = lambda e: norm.cdf(0.5 - e) - np.exp(e) * norm.cdf(-0.5 - e)
    >>> round(dpax.from_privacy_profile(profile, grid_step=1e-2).advantage(), 4)
    0.3829
    """
    if not callable(delta):
        raise TypeError(f"delta must be a callable epsilon -> delta(epsilon), got {type(delta).__name__}")
    if reverse_delta is None:
        reverse_delta = delta
    elif not callable(reverse_delta):
        raise TypeError(f"reverse_delta must be a callable or None, got {type(reverse_delta).__name__}")
    step = _v.grid_step(grid_step)

    def evaluate(fn: Callable[[np.ndarray], ArrayLike], name: str, eps: np.ndarray) -> np.ndarray:
        # real numbers in [0, 1] (round-off of 1e-12 either side is clipped), one per epsilon
        vals = _v.returned(f"{name}(epsilon)", fn(eps), eps.size, low=-1e-12, high=1 + 1e-12)
        return np.clip(vals.reshape(np.shape(eps)), 0.0, 1.0)

    if epsilon_max is None:
        probes = 2.0 ** np.arange(10)
        small = ((evaluate(delta, "delta", probes) <= 1e-18)
                 & (evaluate(reverse_delta, "reverse_delta", probes) <= 1e-18))
        if not small.any():
            raise ValueError("delta(epsilon) stays above 1e-18 up to epsilon=512; pass epsilon_max")
        epsilon_max = probes[np.argmax(small)]
    emax = _v.one_number("epsilon_max", epsilon_max, low=0.0, high=_MAX_LOSS, low_open=True)
    k = _grid.padded_length(int(np.ceil(emax / step)) + 1) - 1
    _grid.check_memory(1, 2 * k + 1, "from_privacy_profile")
    grid = np.arange(k + 1) * step
    forward = evaluate(delta, "delta", grid)
    backward = evaluate(reverse_delta, "reverse_delta", grid)
    pmf_x, pmf_y, inf_y, neginf_x = _construct.connect_the_dots(
        jnp.asarray(grid), jnp.asarray(forward), jnp.asarray(backward)
    )
    pl = PrivacyLoss(pmf_x, pmf_y, jnp.asarray(-k, jnp.int64), inf_y, neginf_x, step, description, exact_ratio=True)
    return pl._with_companion(reason="it was built from a privacy profile (Algorithm 2), which gives no loss law to "
                                     "post-process; use a mechanism with a closed-form loss law")


# -- neighbouring relations ---------------------------------------------------------------

#: Neighbouring relations: add/remove one record (default) and substitution (replace one).
NEIGHBOURING = ("add_remove", "substitution")


def _neighbouring(value: object) -> str:
    if not isinstance(value, str) or value not in NEIGHBOURING:
        raise ValueError(f"neighbouring must be one of {NEIGHBOURING}, got {_v.brief(value)}")
    return value


def _check_noise(s: np.ndarray, too_small: np.ndarray, factor: float = 1.0) -> None:
    """A ValueError naming the first noise multiplier whose privacy loss leaves float64 range
    (``too_small``: its bound is above MAX_LOSS, or NaN because the noise is so small that
    the bound itself overflows), and the noise that is enough at every sample rate (``factor``
    2 under substitution: the sensitivity doubled)."""
    if np.any(too_small):
        worst = s[np.argmax(too_small)]
        raise ValueError(
            f"noise_multiplier={worst:g} is too small: its privacy loss exceeds {_MAX_LOSS:g} nats, "
            f"beyond float64 range; use noise_multiplier >= {_at_least(factor * _LEAST_NOISE_RATIO)} (enough at "
            "every sample rate)"
        )


def _substitution_factor(neighbouring: str) -> float:
    """Sensitivity multiplier of an additive-noise mechanism under ``neighbouring``.

    A sum of per-record contributions bounded by C changes by at most C when a record is
    added or removed, and by up to 2C when one record is replaced by another.
    """
    return 2.0 if _neighbouring(neighbouring) == "substitution" else 1.0


# -- continuous loss law: (Poisson-subsampled) Laplace ------------------------------------


def _laplace_loss(eps: np.ndarray, p: np.ndarray, step: float, shape: tuple[int, ...], desc: str) -> PrivacyLoss:
    eps = np.broadcast_to(eps, shape).reshape(-1)
    p = np.broadcast_to(p, shape).reshape(-1)
    with np.errstate(divide="ignore"):
        high = np.logaddexp(np.log1p(-p), np.log(p) + eps)
        low = np.logaddexp(np.log1p(-p), np.log(p) - eps)
    if np.any(high > _MAX_LOSS):
        worst = float(eps[np.argmax(high > _MAX_LOSS)])
        raise ValueError(f"sensitivity / scale must be at most {_MAX_LOSS:g} (privacy loss beyond float64 range), "
                         f"got {worst:g}; use a larger scale")
    offset = np.floor(low / step).astype(np.int64)
    n = _grid.padded_length(int(np.max(np.ceil(high / step).astype(np.int64) - offset)) + 1, "construct")
    needed = np.ceil(high / step).astype(np.int64) - offset + 1  # each row on its own length
    pair = _construct.by_row_length(_construct.laplace_kernel, (eps, p, offset), step, needed, desc.split("(")[0])
    pl = PrivacyLoss.from_pair(pair, step, desc, shape, exact_ratio=True)
    return pl._with_companion(lambda: PrivacyLoss._optimistic_from(
        _optimistic.laplace_kernel(eps, p, offset, step, n), step, shape))


@float64
def laplace(scale: ArrayLike, sensitivity: ArrayLike = 1.0, grid_step: float = 1e-4,
            neighbouring: str = "add_remove") -> PrivacyLoss:
    """Laplace mechanism: noise Lap(0, ``scale``) on a query of L1 ``sensitivity``.

    Exact loss law (:func:`dpax._engine.construct.laplace_log_cdfs`): L in [-eps, eps],
    eps = sensitivity / scale, with atoms at the ends; its trade-off curve T(Lap(0, 1),
    Lap(eps, 1)) (Dong, Roth & Su) is 1 - e^eps a for a < e^-eps / 2, e^-eps / (4a) up to
    a = 1/2, e^-eps (1 - a) beyond. ``neighbouring="substitution"`` doubles the sensitivity.

    Args:
        scale: the Laplace noise scale b, > 0.
        sensitivity: L1 sensitivity of the query, > 0.
        grid_step: the loss grid's step, in [1e-7, 1].
        neighbouring: ``"add_remove"`` (default) or ``"substitution"``.

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> pl = dpax.laplace(1.0, grid_step=1e-2)
    >>> round(pl.epsilon(0.0), 4), round(pl.advantage(), 4)
    (1.0, 0.3935)
    """
    b = _v.real_array("scale", scale, low=0.0, low_open=True)
    sens = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True) * _substitution_factor(neighbouring)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("scale", b), ("sensitivity", sens))
    desc = _describe("laplace", neighbouring, scale=scale, sensitivity=sensitivity)
    with np.errstate(over="ignore", under="ignore"):  # beyond float64: refused / exactly 0 below
        eps = sens / b
    return _laplace_loss(eps, np.ones(shape), step, shape, desc)


@float64
def subsampled_laplace(scale: ArrayLike, sample_rate: ArrayLike, sensitivity: ArrayLike = 1.0,
                       grid_step: float = 1e-4) -> PrivacyLoss:
    """Poisson-subsampled Laplace mechanism, add/remove neighbouring.

    Pair P = Lap(0, b), Q = (1 - p) Lap(0, b) + p Lap(D, b); its loss log(1 - p + p e^L) is
    an increasing transform of the Laplace loss L, so its CDFs are exact
    (:func:`dpax._engine.construct.subsampled_laplace_log_cdfs`). Risks are reported for the
    symmetrised curve (the other direction is the swapped pair).

    Args:
        scale: the Laplace noise scale b, > 0.
        sample_rate: Poisson sampling probability p, in (0, 1].
        sensitivity: L1 sensitivity D of the query, > 0.
        grid_step: the loss grid's step, in [1e-7, 1].

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> round(dpax.subsampled_laplace(1.0, 0.1, grid_step=1e-2).epsilon(0.0), 4)
    0.16
    """
    b = _v.real_array("scale", scale, low=0.0, low_open=True)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    sens = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("scale", b), ("sample_rate", p), ("sensitivity", sens))
    desc = _describe("subsampled_laplace", scale=scale, sample_rate=sample_rate, sensitivity=sensitivity)
    with np.errstate(over="ignore", under="ignore"):
        eps = sens / b
    return _laplace_loss(eps, p, step, shape, desc)


# -- atoms: randomized response, discrete mechanisms, (epsilon, delta) worst case ---------


@float64
def from_atoms(loss: ArrayLike, p_mass: ArrayLike, q_mass: ArrayLike, grid_step: float, *,
               shape: tuple[int, ...] | None = None, description: str = "atoms", tail: float = SINGLE_STEP_TAIL,
               log_masses: bool = False, exact_ratio: bool = True) -> PrivacyLoss:
    """Connect-the-dots pair of a loss law made of atoms (rows, m) on the grid ``grid_step``.

    The grid of row r spans the finite atoms from where the P-mass below exceeds ``tail``
    to where the Q-mass above exceeds it; atoms outside collapse onto the end points plus
    the infinite atoms (pessimistically). The helper behind the atom mechanisms
    (:func:`dpax._engine.construct.pair_from_atoms`); inputs are not validated.

    Args:
        loss: ``loss[r, j]`` is the loss log(Q/P) of atom j of row r (-inf: mass under P
            only, +inf: under Q only); shape (rows, m), or (m,) for one row.
        p_mass: the atoms' masses under P, the shape of ``loss``.
        q_mass: the atoms' masses under Q, the shape of ``loss``.
        grid_step: the loss grid's step.
        shape: batch shape of the result (its product is the number of rows; ``None``:
            ``()`` for one row, ``(rows,)`` otherwise).
        description: a label for ``repr`` and reports.
        tail: mass allowed in each tail before it is collapsed.
        log_masses: ``p_mass`` and ``q_mass`` are natural logs of the masses.
        exact_ratio: Pr[X = x] = e^-x Pr[Y = x] holds for the atoms.

    Returns:
        A :class:`PrivacyLoss` on the grid ``k * grid_step``.

    Randomized response with epsilon = 1:

    >>> import numpy as np
    >>> from dpax.mechanisms import from_atoms
    >>> e = np.e
    >>> pl = from_atoms([-1.0, 1.0], [e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)], 1e-2)
    >>> round(pl.advantage(), 4)
    0.4621
    """
    loss = np.atleast_2d(np.asarray(loss, np.float64))
    with np.errstate(divide="ignore"):
        lp = np.asarray(p_mass, np.float64) if log_masses else np.log(np.asarray(p_mass, np.float64))
        lq = np.asarray(q_mass, np.float64) if log_masses else np.log(np.asarray(q_mass, np.float64))
    step = float(grid_step)
    pair = _construct.pair_from_atoms(loss, lp, lq, step, tail=tail, exact_ratio=exact_ratio, what=description)
    shape = (() if loss.shape[0] == 1 else (loss.shape[0],)) if shape is None else tuple(shape)
    pl = PrivacyLoss.from_pair(pair, step, description, shape, exact_ratio)
    return pl._with_companion(reason="it was built by from_atoms from atoms given by the caller; dpax's own atom "
                                     "mechanisms (randomized_response, discrete_laplace, discrete_gaussian) have one")


def _atoms_mechanism(loss: np.ndarray, lp: np.ndarray, lq: np.ndarray, step: float, shape: tuple[int, ...],
                     desc: str) -> PrivacyLoss:
    """:func:`from_atoms` for a mechanism whose atoms are its exact loss law, with the
    optimistic companion (each atom to its nearest point of the same grid)."""
    pl = from_atoms(loss, lp, lq, step, shape=shape, description=desc, log_masses=True)
    offset, n = np.asarray(pl.pair.offset), pl.support_length
    return pl._with_companion(lambda: PrivacyLoss._optimistic_from(
        _optimistic.merge_to_grid(loss, lp, lq, offset, step, n), step, pl.batch_shape))


def _rows(shape: tuple[int, ...], *arrays: np.ndarray) -> list[np.ndarray]:
    return [np.broadcast_to(a, shape).reshape(-1) for a in arrays]


@float64
def randomized_response(epsilon: ArrayLike, k: ArrayLike = 2, grid_step: float = 1e-4,
                        neighbouring: str = "add_remove") -> PrivacyLoss:
    """k-ary randomized response: the true value with probability e^eps / (e^eps + k - 1),
    each other value with probability 1 / (e^eps + k - 1).

    Atoms: losses -eps, 0, eps with P-masses (e^eps, k - 2, 1) / (e^eps + k - 1) and Q the
    mirror. It is a local randomiser: one record changes one input, so add/remove and
    substitution give the same pair. For k = 2 the trade-off curve is
    max(0, 1 - e^eps a, e^-eps (1 - a)) (Kairouz, Oh & Viswanath), the epsilon-DP worst case.
    ``neighbouring="replace_special"`` replaces the record by a special one whose output is
    uniform over the k values (dp-accounting's REPLACE_SPECIAL): P uniform, two atoms, loss
    log(k e^eps / (e^eps + k - 1)) on the record's value and log(k / (e^eps + k - 1)) elsewhere.

    Args:
        epsilon: the randomiser's epsilon, in [0, 600] (beyond, its losses leave float64 range).
        k: number of possible values, integers >= 2.
        grid_step: the loss grid's step, in [1e-7, 1].
        neighbouring: ``"add_remove"`` or ``"substitution"`` (the same pair), or
            ``"replace_special"``.

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> round(dpax.randomized_response(1.0, grid_step=1e-2).advantage(), 4)
    0.4621
    """
    eps = _v.real_array("epsilon", epsilon, low=0.0, high=_MAX_LOSS)
    kk = _v.positive_int_array("k", k, minimum=2)
    special = neighbouring == "replace_special"
    if not special:
        _neighbouring(neighbouring)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("epsilon", eps), ("k", kk))
    e, kf = _rows(shape, eps, kk.astype(np.float64))
    log_norm = np.logaddexp(e, np.log(kf - 1.0))
    if special:  # Q: the record's value with probability e^eps / (e^eps + k - 1); P: uniform
        lq = np.stack([e - log_norm, np.log(kf - 1.0) - log_norm], -1)
        lp = np.stack([-np.log(kf), np.log1p(-1.0 / kf)], -1)
        desc = _describe("randomized_response", "replace_special", epsilon=epsilon, k=k)
        return _atoms_mechanism(lq - lp, lp, lq, step, shape, desc)
    with np.errstate(divide="ignore"):
        log_mid = np.log(kf - 2.0) - log_norm
    loss = np.stack([-e, np.zeros_like(e), e], -1)
    lp = np.stack([e - log_norm, log_mid, -log_norm], -1)
    lq = np.stack([-log_norm, log_mid, e - log_norm], -1)
    desc = _describe("randomized_response", epsilon=epsilon, k=k)
    return _atoms_mechanism(loss, lp, lq, step, shape, desc)


@float64
def approximate_dp(epsilon: ArrayLike, delta: ArrayLike = 0.0, grid_step: float = 1e-4) -> PrivacyLoss:
    """A mechanism known only to be (epsilon, delta)-DP (delta = 0: epsilon-DP).

    Its worst case (Kairouz, Oh & Viswanath 2015): losses -inf, -eps, eps, +inf with
    P-masses (delta, (1 - delta) e^eps / (1 + e^eps), (1 - delta) / (1 + e^eps), 0) and Q
    the mirror; trade-off curve max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)), which
    every (epsilon, delta)-DP mechanism's curve lies above.

    Args:
        epsilon: the guarantee's epsilon, in [0, 600] (beyond, its losses leave float64 range).
        delta: the guarantee's delta, in [0, 1].
        grid_step: the loss grid's step, in [1e-7, 1].

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> pl = dpax.approximate_dp(1.0, 1e-5, grid_step=1e-2)
    >>> round(pl.epsilon(1e-5), 4), round(pl.beta(0.1), 4)
    (1.0, 0.7282)
    """
    eps = _v.real_array("epsilon", epsilon, low=0.0, high=_MAX_LOSS)
    d = _v.probabilities("delta", delta)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("epsilon", eps), ("delta", d))
    e, dd = _rows(shape, eps, d)
    with np.errstate(divide="ignore"):
        log_rest = np.log1p(-dd) - np.logaddexp(0.0, e)
        log_d = np.log(dd)
    ninf = np.full_like(e, -np.inf)
    loss = np.stack([ninf, -e, e, -ninf], -1)
    lp = np.stack([log_d, log_rest + e, log_rest, ninf], -1)
    lq = np.stack([ninf, log_rest, log_rest + e, log_d], -1)
    desc = _describe("approximate_dp", epsilon=epsilon, delta=delta)
    pl = from_atoms(loss, lp, lq, step, shape=shape, description=desc, log_masses=True)
    return pl._with_companion(reason="approximate_dp is the worst case of every (epsilon, delta)-DP mechanism, not "
                                     "one mechanism's law: the truth it stands for is unknown, so it has a safe "
                                     "side only")


def _check_integer_noise(name: str, noise: np.ndarray, sens: np.ndarray, loss: np.ndarray, law: str,
                         least: float, neighbouring: str) -> None:
    """A ValueError naming the first row whose privacy loss ``loss`` (the loss of the atom at
    0, which holds at least half of P's mass, so the grid must reach it) leaves float64 range,
    NaN or inf included (a noise so small that its square underflows): ``law`` says what the
    loss is, ``least`` the smallest noise per unit of sensitivity."""
    too_small = ~(loss <= _MAX_LOSS)
    if np.any(too_small):
        i = int(np.argmax(too_small))
        factor = int(_substitution_factor(neighbouring))
        given = f"{int(sens[i]) // factor} ({int(sens[i])} under substitution)" if factor == 2 else f"{int(sens[i])}"
        which = "the sensitivity doubled" if factor == 2 else "the sensitivity"
        raise ValueError(f"{name}={noise[i]:g} is too small for sensitivity {given}: its privacy loss {law} exceeds "
                         f"{_MAX_LOSS:g} nats, beyond float64 range; {name} must be at least {_at_least(least)} x "
                         f"{which} (here {_at_least(least * float(sens[i]))})")


def _int_sensitivity(sensitivity: ArrayLike, neighbouring: str) -> np.ndarray:
    sens = _v.positive_int_array("sensitivity", sensitivity)
    factor = int(_substitution_factor(neighbouring))
    if np.any(sens * factor > _MAX_INTEGER_SUPPORT):
        raise ValueError(f"sensitivity must be at most {_MAX_INTEGER_SUPPORT // factor:,} (the integer support "
                         f"would not fit in memory), got {int(np.max(sens)):,}")
    return sens * factor


@float64
def discrete_laplace(scale: ArrayLike, sensitivity: ArrayLike = 1, grid_step: float = 1e-4,
                     neighbouring: str = "add_remove") -> PrivacyLoss:
    """Discrete Laplace mechanism: integer noise with Pr[Z = z] proportional to
    exp(-|z| / scale), on an integer query of sensitivity D (dp-accounting's parameter is
    1 / scale).

    Atoms at the integers o: loss (|o| - |o - D|) / scale, i.e. -D/scale (o <= 0, P-mass
    1 / (1 + e^(-1/scale))), (2o - D) / scale for 0 < o < D, D/scale (o >= D).
    ``neighbouring="substitution"`` doubles the sensitivity.

    Args:
        scale: the noise scale, at least sensitivity / 600 (a smaller one's loss D / scale
            leaves float64 range: a ValueError).
        sensitivity: the query's sensitivity D, integers >= 1.
        grid_step: the loss grid's step, in [1e-7, 1].
        neighbouring: ``"add_remove"`` (default) or ``"substitution"``.

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> round(dpax.discrete_laplace(1.0, grid_step=1e-2).epsilon(0.0), 4)
    1.0
    """
    t = _v.real_array("scale", scale, low=0.0, low_open=True)
    sens = _int_sensitivity(sensitivity, neighbouring)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("scale", t), ("sensitivity", sens))
    tt, dd = _rows(shape, t, sens)
    with np.errstate(over="ignore"):  # a subnormal scale: D / scale = inf, refused below
        _check_integer_noise("scale", tt, dd, dd / tt, "sensitivity / scale", 1.0 / _MAX_LOSS, neighbouring)
    m = int(np.max(dd)) + 1
    o = np.arange(m)[None, :].astype(np.float64)  # o = 0 .. D (0 stands for o <= 0, D for o >= D)
    D = dd[:, None].astype(np.float64)
    b = tt[:, None]
    log_c = np.log(-np.expm1(-1.0 / b)) - np.log1p(np.exp(-1.0 / b))  # Pr[Z = 0]
    log_tail = -np.log1p(np.exp(-1.0 / b))  # Pr[Z <= 0]
    valid = o <= D
    lp = np.where(o == 0, log_tail, log_c - o / b)
    lp = np.where(o == D, log_tail - D / b, lp)
    lq = np.where(o == 0, log_tail - D / b, log_c - (D - o) / b)
    lq = np.where(o == D, log_tail, lq)
    loss = np.where(valid, (2.0 * o - D) / b, np.inf)
    lp, lq = (np.where(valid, a, -np.inf) for a in (lp, lq))
    desc = _describe("discrete_laplace", neighbouring, scale=scale, sensitivity=sensitivity)
    return _atoms_mechanism(loss, lp, lq, step, shape, desc)


#: Half-width in standard deviations of the integer range kept by the discrete Gaussian:
#: the mass beyond is below e^-(39^2/2) ~ 1e-330, zero in float64.
_DG_WIDTH = 39.0


@float64
def discrete_gaussian(sigma: ArrayLike, sensitivity: ArrayLike = 1, grid_step: float = 1e-4,
                      neighbouring: str = "add_remove") -> PrivacyLoss:
    """Discrete Gaussian mechanism (Canonne, Kamath & Steinke 2020): integer noise with
    Pr[Z = z] proportional to exp(-z^2 / (2 sigma^2)), on an integer query of sensitivity D.

    Atoms at the integers o: loss (2 o D - D^2) / (2 sigma^2) with masses from the
    normalised pmf (normaliser summed over |z| <= 39 sigma, exact in float64).
    ``neighbouring="substitution"`` doubles the sensitivity.

    Args:
        sigma: the noise parameter, at least sensitivity / sqrt(1200) (0.0289 sensitivity: below,
            the loss D^2 / (2 sigma^2) of the atom at 0 leaves float64 range, a ValueError; a large
            sensitivity needs somewhat more) and at most about 5e4.
        sensitivity: the query's sensitivity D, integers >= 1.
        grid_step: the loss grid's step, in [1e-7, 1].
        neighbouring: ``"add_remove"`` (default) or ``"substitution"``.

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> round(dpax.discrete_gaussian(1.7, grid_step=1e-2).advantage(), 4)
    0.2347
    """
    s = _v.real_array("sigma", sigma, low=0.0, low_open=True)
    sens = _int_sensitivity(sensitivity, neighbouring)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("sigma", s), ("sensitivity", sens))
    ss, dd = _rows(shape, s, sens)
    with np.errstate(over="ignore", under="ignore"):  # sigma^2 underflows below ~1e-154: inf, refused below
        _check_integer_noise("sigma", ss, dd, 0.5 * (dd / ss) ** 2, "sensitivity^2 / (2 sigma^2)",
                             1.0 / np.sqrt(2.0 * _MAX_LOSS), neighbouring)
    if np.any(_DG_WIDTH * ss > _MAX_INTEGER_SUPPORT):
        raise ValueError(f"sigma must be at most about 5e4 (the integer support would not fit in memory), "
                         f"got {float(np.max(ss)):g}")
    half = np.ceil(_DG_WIDTH * ss + 1).astype(np.int64)
    if np.max(2 * half + dd) > _MAX_INTEGER_SUPPORT:
        raise ValueError(f"sigma (at most about 5e4) and sensitivity together give an integer support of "
                         f"{int(np.max(2 * half + dd)):,} points, over {_MAX_INTEGER_SUPPORT:,}: "
                         "it would not fit in memory")
    lo_o = -half
    m = int(np.max(2 * half + dd)) + 1
    o = (lo_o[:, None] + np.arange(m)[None, :]).astype(np.float64)
    D = dd[:, None].astype(np.float64)
    sig2 = (ss**2)[:, None]
    valid = o <= (half + dd)[:, None]
    z = np.arange(-np.max(half) - 1, np.max(half) + 2, dtype=np.float64)
    log_norm = logsumexp(-(z[None, :] ** 2) / (2.0 * sig2), axis=-1, keepdims=True)
    lp = np.where(valid, -(o**2) / (2.0 * sig2) - log_norm, -np.inf)
    lq = np.where(valid, -((o - D) ** 2) / (2.0 * sig2) - log_norm, -np.inf)
    loss = np.where(valid, (2.0 * o * D - D**2) / (2.0 * sig2), np.inf)
    desc = _describe("discrete_gaussian", neighbouring, sigma=sigma, sensitivity=sensitivity)
    return _atoms_mechanism(loss, lp, lq, step, shape, desc)


def _subsampled_gaussian_substitution(sigma: np.ndarray, p: np.ndarray, step: float, shape: tuple[int, ...],
                                      noise_multiplier: ArrayLike, sample_rate: ArrayLike) -> PrivacyLoss:
    """Poisson-subsampled Gaussian under substitution (replace one record), per-record
    contributions clipped to norm 1: the pair Q = p N(1, s^2) + (1 - p) N(0, s^2),
    P = p N(-1, s^2) + (1 - p) N(0, s^2) (the REPLACE adjacency of dp-accounting's
    ``privacy_loss_mechanism``; p = 1 is the Gaussian with sensitivity 2). The pair is
    symmetric (mirror o -> -o); its loss is inverted in closed form and the CDFs are
    exact (:func:`dpax._engine.construct.subsampled_gaussian_substitution_log_cdfs`).
    """
    s, q = (np.broadcast_to(a, shape).reshape(-1) for a in (sigma, p))
    z = -ndtri(SINGLE_STEP_TAIL)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        u = (1.0 + s * z) / s**2  # Q's upper tail output, in units of s^2
        log_b = np.log(q) - 0.5 / s**2
        high = np.logaddexp(np.log1p(-q), log_b + u) - np.logaddexp(np.log1p(-q), log_b - u)
    # NaN: a noise so small that the bound overflows (inf - inf), as add/remove's inf
    _check_noise(s, ~(high <= _MAX_LOSS), factor=2.0)
    offset = np.floor(-high / step).astype(np.int64)
    n = _grid.padded_length(int(np.max(np.ceil(high / step).astype(np.int64) - offset)) + 1, "construct")
    needed = np.ceil(high / step).astype(np.int64) - offset + 1  # each row on its own length
    pair = _construct.by_row_length(_construct.subsampled_gaussian_substitution_kernel, (s, q, offset), step, needed,
                                    "subsampled_gaussian")
    desc = _describe("subsampled_gaussian", "substitution", noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    pl = PrivacyLoss.from_pair(pair, step, desc, shape, exact_ratio=True)
    return pl._with_companion(lambda: PrivacyLoss._optimistic_from(
        _optimistic.subsampled_gaussian_substitution_kernel(s, q, offset, step, n), step, shape))
