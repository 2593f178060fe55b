"""Gaussian family: the Gaussian mechanism, the Poisson-subsampled Gaussian (add/remove and
substitution), DP-SGD, and mixtures of Gaussians."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._engine import composition as _compose
from .._engine import construct as _construct
from .._engine import grid as _grid
from .._engine import optimistic as _optimistic
from .._engine import sharding as _sharding
from .._engine import validation as _v
from .._engine.grid import DEFAULT_GRID_STEP
from .._engine.x64 import float64
from ..privacy_loss import PrivacyLoss
from ..privacy_loss.companion import optimistic
from ..privacy_loss.fields import replaced
from ._common import (
    SINGLE_STEP_Z,
    _check_noise,
    _describe,
    _neighbouring,
    _substitution_factor,
    least_noise,
    least_noise_message,
)

#: Largest noise multiplier the Gaussian kernels see: above it sigma^2 (about 1.8e308 at
#: 1.34e154) overflows, while every pair from 1e154 up to there is already the same, bit for
#: bit (the loss is ~1e-153 nats, far inside one grid cell); a larger noise is built as this
#: one (less noise: on the safe side, and the same numbers).
_SIGMA_MAX = 1e154


def _loss_of_output(o: np.ndarray, sigma: np.ndarray, p: np.ndarray) -> np.ndarray:
    """L(o) = log(1 - p + p exp((2o - 1) / (2 sigma^2))) for the subsampled Gaussian pair."""
    with np.errstate(divide="ignore"):
        return np.logaddexp(np.log1p(-p), np.log(p) + (2.0 * o - 1.0) / (2.0 * sigma**2))



@float64
def subsampled_gaussian(noise_multiplier: ArrayLike, sample_rate: ArrayLike, grid_step: float = DEFAULT_GRID_STEP,
                        neighbouring: str = "add_remove") -> PrivacyLoss:
    """Poisson-subsampled Gaussian mechanism (one DP-SGD step), add/remove neighbouring.

    Dominating pair P = N(0, s^2), Q = (1 - p) N(0, s^2) + p N(1, s^2) with s the noise
    multiplier and p the sample rate; the other direction is kept implicitly (the reversed
    pair) and every risk is reported for the symmetrised curve. The discrete pair is the
    connect-the-dots pair computed from the exact loss CDFs
    (:func:`dpax._engine.construct.subsampled_gaussian_log_cdfs`).

    Args:
        noise_multiplier: noise standard deviation over the clipping norm, at least 0.037601
            (0.075201 under substitution) at every sample rate: exactly 1 / (sqrt(z^2 + 1200) - z)
            = 0.0376002227514754 (z = -Phi^-1(1e-20); twice it under substitution), below which
            the privacy loss can leave the 600-nat grid.
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
    return _subsampled_gaussian(noise_multiplier, sample_rate, grid_step, neighbouring)


def _subsampled_gaussian(noise_multiplier: ArrayLike, sample_rate: ArrayLike, grid_step: float,
                         neighbouring: str, then_composed: np.ndarray | None = None) -> PrivacyLoss:
    """:func:`subsampled_gaussian`; ``then_composed``: the step counts a self-composition of the
    result will take (:func:`dpsgd`), whose window kernel then compiles beside the construction."""
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
        return replaced(pl, gdp_mu=gdp_bound)
    s, q = (np.broadcast_to(a, shape).reshape(-1) for a in (sigma, p))
    _check_noise(s)  # one least noise at every sample rate, the one the docstring states
    z = SINGLE_STEP_Z
    with np.errstate(over="ignore", invalid="ignore"):
        high = _loss_of_output(1.0 + s * z, s, q)
        low = _loss_of_output(-s * z, s, q)
    offset = np.floor(low / step).astype(np.int64)
    n_needed = int(np.max(np.ceil(high / step).astype(np.int64) - offset)) + 1
    n = _grid.padded_length(n_needed, "construct")
    needed = np.ceil(high / step).astype(np.int64) - offset + 1  # each row on its own length
    if then_composed is not None and np.any(then_composed > 1) and not _grid.sharing():
        # the composition's window, then the construction's second stage: compiled beside the
        # first (the window first: its compilation is the longer; the second stage, needed
        # sooner, is compiled by the call itself if the background thread has not begun it)
        lengths = _construct.row_lengths(needed)
        _compose.window_ahead(s.size, int(np.max(lengths)), step)
        if np.all(lengths == lengths[0]) and _construct.one_call(s.size, int(lengths[0]), "subsampled_gaussian"):
            _construct.split_cells_ahead(s.size, int(lengths[0]), np.float64(step))
    s, q, offset = _sharding.place_rows(s, q, offset)  # batch rows split across jax.devices()
    pair = _construct.by_row_length(_construct.subsampled_gaussian_kernel, (s, q, offset), step, needed,
                                    "subsampled_gaussian")
    desc = _describe("subsampled_gaussian", noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    pl = PrivacyLoss.from_pair(pair, step, desc, shape, exact_ratio=True)
    return replaced(pl, gdp_mu=gdp_bound, companion=lambda: optimistic(
        PrivacyLoss, _optimistic.subsampled_gaussian_kernel(s, q, offset, step, n), step, shape))


@float64
def gaussian(noise_multiplier: ArrayLike, sensitivity: ArrayLike = 1.0, grid_step: float = DEFAULT_GRID_STEP,
             neighbouring: str = "add_remove") -> PrivacyLoss:
    """Gaussian mechanism: exactly mu-GDP with mu = sensitivity / noise_multiplier.

    ``neighbouring="substitution"`` (replace one record) doubles the sensitivity of a sum
    of clipped per-record terms: mu = 2 sensitivity / noise_multiplier.

    Args:
        noise_multiplier: noise standard deviation, at least 0.037601 times the sensitivity
            (0.075201 under substitution): exactly 1 / (sqrt(z^2 + 1200) - z) = 0.0376002227514754
            times it (z = -Phi^-1(1e-20); twice it under substitution), below which the privacy
            loss leaves the 600-nat grid.
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
        factor = _substitution_factor(neighbouring)
        worst = float(np.broadcast_to(raw, np.broadcast_shapes(sigma.shape, sens.shape)).min()) * factor
        doubled = " (substitution doubles the sensitivity)" if factor == 2.0 else ""
        raise ValueError(least_noise_message("noise_multiplier", worst, factor, " x sensitivity",
                                             f"noise_multiplier / sensitivity{doubled}")) from None
    desc = _describe("gaussian", neighbouring, noise_multiplier=noise_multiplier, sensitivity=sensitivity)
    with np.errstate(over="ignore", divide="ignore"):
        return replaced(pl, description=desc, gdp_mu=sens / sigma)  # exactly (sensitivity / noise)-GDP


@float64
def dpsgd(noise_multiplier: ArrayLike, sample_rate: ArrayLike, num_steps: ArrayLike,
          grid_step: float = DEFAULT_GRID_STEP, neighbouring: str = "add_remove") -> PrivacyLoss:
    """DP-SGD: ``num_steps`` Poisson-subsampled Gaussian steps, composed by FFT.

    Every argument broadcasts; a list of noise values is one batched kernel call.

    Args:
        noise_multiplier: noise standard deviation over the clipping norm, at least 0.037601
            (0.075201 under substitution) at every sample rate: exactly 1 / (sqrt(z^2 + 1200) - z)
            = 0.0376002227514754 (z = -Phi^-1(1e-20); twice it under substitution), below which
            the privacy loss can leave the 600-nat grid.
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
    counts = np.broadcast_to(steps, shape)
    step_pl = _subsampled_gaussian(np.broadcast_to(sigma, shape), np.broadcast_to(p, shape), grid_step, neighbouring,
                                   then_composed=counts)
    pl = step_pl.self_compose(counts)
    return replaced(pl, description=_describe("dpsgd", neighbouring, noise_multiplier=noise_multiplier,
                                              sample_rate=sample_rate, num_steps=num_steps))


@float64
def mixture_of_gaussians(standard_deviation: ArrayLike, sensitivities: ArrayLike, sampling_probs: ArrayLike,
                         grid_step: float = DEFAULT_GRID_STEP) -> PrivacyLoss:
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
        standard_deviation: noise standard deviation s, > 0 and at least 0.037601 times the
            largest sensitivity with mass (exactly 0.0376002227514754 times it, the Gaussian's
            least noise); broadcasts over a batch.
        sensitivities: the c_i, finite and >= 0: a sequence (shared by the batch) or an
            array whose last axis lists the components (the rest broadcasts).
        sampling_probs: the p_i, in [0, 1] and summing to 1 (within 1e-9), the shape of
            ``sensitivities``' components.
        grid_step: the loss grid's step, in [1e-7, 1].

    Returns:
        A :class:`PrivacyLoss` with the broadcast batch shape.

    Noise 2 on a query whose sensitivity is 0, 2 or 3 with probabilities 0.33, 0.34, 0.33:

    >>> import dpax
    >>> pl = dpax.mixture_of_gaussians(2.0, [0.0, 2.0, 3.0], [0.33, 0.34, 0.33], grid_step=1e-2)
    >>> round(pl.epsilon(1e-5), 3)
    5.712
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
    largest = np.max(np.where(p > 0, c, 0.0), -1)  # the largest sensitivity with mass
    too_small = ~(s >= least_noise() * largest)  # the Gaussian's least noise, for its largest sensitivity
    if np.any(too_small):
        r = int(np.argmax(too_small))
        raise ValueError(least_noise_message("standard_deviation", float(s[r]), 1.0, " x the largest sensitivity")
                         + f" (here {largest[r]:g})")
    log_p0, shifts, log_p = _mixture_rows(s, c, p)
    z = SINGLE_STEP_Z
    with np.errstate(over="ignore", invalid="ignore"):
        high = _mixture_loss(np.max(shifts, -1) + z, log_p0, shifts, log_p)
        low = _mixture_loss(np.full(s.shape, -z), log_p0, shifts, log_p)
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
        mu = (np.max(np.where(p > 0, c, 0.0), -1) / s).reshape(shape)
        return replaced(pl, gdp_mu=mu, companion=lambda: optimistic(
            PrivacyLoss, _optimistic.mixture_of_gaussians_kernel(log_p0, shifts, log_p, offset, step, n), step, shape))


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
    _check_noise(s, factor=2.0)  # twice the least noise (the sensitivity doubled), at every sample rate
    z = SINGLE_STEP_Z
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        u = (1.0 + s * z) / s**2  # Q's upper tail output, in units of s^2
        log_b = np.log(q) - 0.5 / s**2
        high = np.logaddexp(np.log1p(-q), log_b + u) - np.logaddexp(np.log1p(-q), log_b - u)
    offset = np.floor(-high / step).astype(np.int64)
    n = _grid.padded_length(int(np.max(np.ceil(high / step).astype(np.int64) - offset)) + 1, "construct")
    needed = np.ceil(high / step).astype(np.int64) - offset + 1  # each row on its own length
    pair = _construct.by_row_length(_construct.subsampled_gaussian_substitution_kernel, (s, q, offset), step, needed,
                                    "subsampled_gaussian")
    desc = _describe("subsampled_gaussian", "substitution", noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    pl = PrivacyLoss.from_pair(pair, step, desc, shape, exact_ratio=True)
    return replaced(pl, companion=lambda: optimistic(
        PrivacyLoss, _optimistic.subsampled_gaussian_substitution_kernel(s, q, offset, step, n), step, shape))
