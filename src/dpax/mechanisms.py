"""Mechanisms as PrivacyLoss values: the Gaussian, the Poisson-subsampled Gaussian, DP-SGD.

All parameters broadcast like NumPy; a batch is built by one compiled kernel.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from scipy.special import logsumexp, ndtri

from ._engine import construct as _construct
from ._engine import grid as _grid
from ._engine import sharding as _sharding
from ._engine import validation as _v
from ._engine.x64 import float64
from .privacy_loss import PrivacyLoss

#: Mass allowed in each tail of a single step before it is collapsed onto the grid's end
#: point plus an infinite atom (pessimistically; nothing is dropped).
SINGLE_STEP_TAIL = 1e-20
_MAX_LOSS = _grid.MAX_LOSS


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
def subsampled_gaussian(noise_multiplier, sample_rate, grid_step=1e-4, neighbouring="add_remove") -> PrivacyLoss:
    """Poisson-subsampled Gaussian mechanism (one DP-SGD step), add/remove neighbouring.

    Dominating pair P = N(0, s^2), Q = (1 - p) N(0, s^2) + p N(1, s^2) with s the noise
    multiplier and p the sample rate; the other direction is kept implicitly (the reversed
    pair) and every risk is reported for the symmetrised curve. The discrete pair is the
    connect-the-dots pair computed from the exact loss CDFs (:mod:`dpax.construct`).
    ``neighbouring="substitution"``: see :func:`_subsampled_gaussian_substitution`.
    """
    sigma = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    step = _v.grid_step(grid_step)
    shape = np.broadcast_shapes(sigma.shape, p.shape)
    if _neighbouring(neighbouring) == "substitution":
        return _subsampled_gaussian_substitution(sigma, p, step, shape, noise_multiplier, sample_rate)
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
    pair = _construct.subsampled_gaussian_kernel(s, q, offset, np.float64(step), n)
    desc = _describe("subsampled_gaussian", noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    return PrivacyLoss.from_pair(pair, step, desc, shape, exact_ratio=True)


@float64
def gaussian(noise_multiplier, sensitivity=1.0, grid_step=1e-4, neighbouring="add_remove") -> PrivacyLoss:
    """Gaussian mechanism with noise standard deviation ``noise_multiplier`` and L2
    ``sensitivity``: exactly mu-GDP with mu = sensitivity / noise_multiplier.

    ``neighbouring="substitution"`` (replace one record) doubles the sensitivity of a sum
    of clipped per-record terms: mu = 2 sensitivity / noise_multiplier.
    """
    sigma = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    sens = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True) * _substitution_factor(neighbouring)
    pl = subsampled_gaussian(sigma / sens, 1.0, grid_step)
    pl.description = _describe("gaussian", noise_multiplier=noise_multiplier, sensitivity=sensitivity)
    if neighbouring != "add_remove":
        pl.description = pl.description[:-1] + f", neighbouring={neighbouring})"
    return pl


@float64
def dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=1e-4, neighbouring="add_remove") -> PrivacyLoss:
    """DP-SGD: ``num_steps`` Poisson-subsampled Gaussian steps, composed by FFT.

    Every argument broadcasts; a list of noise values is one batched kernel call.
    ``neighbouring``: "add_remove" (default) or "substitution" (replace one record).
    """
    sigma = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    steps = _v.positive_int_array("num_steps", num_steps)
    shape = np.broadcast_shapes(sigma.shape, p.shape, steps.shape)
    step_pl = subsampled_gaussian(np.broadcast_to(sigma, shape), np.broadcast_to(p, shape), grid_step, neighbouring)
    pl = step_pl.self_compose(np.broadcast_to(steps, shape))
    pl.description = _describe("dpsgd", noise_multiplier=noise_multiplier, sample_rate=sample_rate, num_steps=num_steps)
    if neighbouring != "add_remove":
        pl.description = pl.description[:-1] + f", neighbouring={neighbouring})"
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


# -- neighbouring relations ---------------------------------------------------------------

#: Neighbouring relations: add/remove one record (default) and substitution (replace one).
NEIGHBOURING = ("add_remove", "substitution")


def _neighbouring(value) -> str:
    if not isinstance(value, str) or value not in NEIGHBOURING:
        raise ValueError(f"neighbouring must be one of {NEIGHBOURING}, got {value!r}")
    return value


def _substitution_factor(neighbouring) -> float:
    """Sensitivity multiplier of an additive-noise mechanism under ``neighbouring``.

    A sum of per-record contributions bounded by C changes by at most C when a record is
    added or removed, and by up to 2C when one record is replaced by another.
    """
    return 2.0 if _neighbouring(neighbouring) == "substitution" else 1.0


# -- continuous loss law: (Poisson-subsampled) Laplace ------------------------------------


def _laplace_loss(eps, p, step, shape, desc) -> PrivacyLoss:
    eps = np.broadcast_to(eps, shape).reshape(-1)
    p = np.broadcast_to(p, shape).reshape(-1)
    with np.errstate(divide="ignore"):
        high = np.logaddexp(np.log1p(-p), np.log(p) + eps)
        low = np.logaddexp(np.log1p(-p), np.log(p) - eps)
    if np.any(high > _MAX_LOSS):
        raise ValueError(f"sensitivity / scale must be at most {_MAX_LOSS:g} (privacy loss beyond float64 range)")
    offset = np.floor(low / step).astype(np.int64)
    n = _grid.padded_length(int(np.max(np.ceil(high / step).astype(np.int64) - offset)) + 1)
    _grid.check_memory(offset.size, n, desc.split("(")[0])
    pair = _construct.laplace_kernel(eps, p, offset, np.float64(step), n)
    return PrivacyLoss.from_pair(pair, step, desc, shape, exact_ratio=True)


@float64
def laplace(scale, sensitivity=1.0, grid_step=1e-4, neighbouring="add_remove") -> PrivacyLoss:
    """Laplace mechanism: noise Lap(0, ``scale``) on a query of L1 ``sensitivity``.

    Exact loss law (:func:`dpax.construct.laplace_log_cdfs`): L in [-eps, eps], eps =
    sensitivity / scale, with atoms at the ends; its trade-off curve T(Lap(0, 1),
    Lap(eps, 1)) (Dong, Roth & Su) is 1 - e^eps a for a < e^-eps / 2, e^-eps / (4a) up to
    a = 1/2, e^-eps (1 - a) beyond. ``neighbouring="substitution"`` doubles the sensitivity.
    """
    b = _v.real_array("scale", scale, low=0.0, low_open=True)
    sens = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True) * _substitution_factor(neighbouring)
    step = _v.grid_step(grid_step)
    shape = np.broadcast_shapes(b.shape, sens.shape)
    desc = _describe("laplace", scale=scale, sensitivity=sensitivity)
    if neighbouring != "add_remove":
        desc = desc[:-1] + f", neighbouring={neighbouring})"
    return _laplace_loss(sens / b, np.ones(shape), step, shape, desc)


@float64
def subsampled_laplace(scale, sample_rate, sensitivity=1.0, grid_step=1e-4) -> PrivacyLoss:
    """Poisson-subsampled Laplace mechanism, add/remove neighbouring.

    Pair P = Lap(0, b), Q = (1 - p) Lap(0, b) + p Lap(D, b); its loss log(1 - p + p e^L) is
    an increasing transform of the Laplace loss L, so its CDFs are exact
    (:func:`dpax.construct.subsampled_laplace_log_cdfs`). Risks are reported for the
    symmetrised curve (the other direction is the swapped pair).
    """
    b = _v.real_array("scale", scale, low=0.0, low_open=True)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    sens = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True)
    step = _v.grid_step(grid_step)
    shape = np.broadcast_shapes(b.shape, p.shape, sens.shape)
    desc = _describe("subsampled_laplace", scale=scale, sample_rate=sample_rate, sensitivity=sensitivity)
    return _laplace_loss(sens / b, p, step, shape, desc)


# -- atoms: randomized response, discrete mechanisms, (epsilon, delta) worst case ---------


def from_atoms(loss, p_mass, q_mass, grid_step, *, shape=None, description="atoms", tail=SINGLE_STEP_TAIL,
               log_masses=False, exact_ratio=True) -> PrivacyLoss:
    """Connect-the-dots pair of a loss law made of atoms (rows, m) on the grid ``grid_step``.

    ``loss[r, j]`` is the loss log(Q/P) of atom j (-inf: mass under P only, +inf: under Q
    only), ``p_mass`` / ``q_mass`` its masses (log masses when ``log_masses``). The grid of
    row r spans the finite atoms from where the P-mass below exceeds ``tail`` to where the
    Q-mass above exceeds it; atoms outside collapse onto the end points plus the infinite
    atoms (pessimistically). Internal helper of the atom mechanisms
    (:func:`dpax._engine.construct.pair_from_atoms`).
    """
    loss = np.atleast_2d(np.asarray(loss, np.float64))
    with np.errstate(divide="ignore"):
        lp = np.asarray(p_mass, np.float64) if log_masses else np.log(np.asarray(p_mass, np.float64))
        lq = np.asarray(q_mass, np.float64) if log_masses else np.log(np.asarray(q_mass, np.float64))
    step = float(grid_step)
    pair = _construct.pair_from_atoms(loss, lp, lq, step, tail=tail, exact_ratio=exact_ratio, what=description)
    shape = (() if loss.shape[0] == 1 else (loss.shape[0],)) if shape is None else tuple(shape)
    return PrivacyLoss.from_pair(pair, step, description, shape, exact_ratio)


def _rows(shape, *arrays):
    return [np.broadcast_to(a, shape).reshape(-1) for a in arrays]


@float64
def randomized_response(epsilon, k=2, grid_step=1e-4, neighbouring="add_remove") -> PrivacyLoss:
    """k-ary randomized response: the true value with probability e^eps / (e^eps + k - 1),
    each other value with probability 1 / (e^eps + k - 1).

    Atoms: losses -eps, 0, eps with P-masses (e^eps, k - 2, 1) / (e^eps + k - 1) and Q the
    mirror. It is a local randomiser: one record changes one input, so add/remove and
    substitution give the same pair. For k = 2 the trade-off curve is
    max(0, 1 - e^eps a, e^-eps (1 - a)) (Kairouz, Oh & Viswanath), the epsilon-DP worst case.
    """
    eps = _v.real_array("epsilon", epsilon, low=0.0, high=_MAX_LOSS)
    kk = _v.positive_int_array("k", k, minimum=2)
    _neighbouring(neighbouring)
    step = _v.grid_step(grid_step)
    shape = np.broadcast_shapes(eps.shape, kk.shape)
    e, kf = _rows(shape, eps, kk.astype(np.float64))
    log_norm = np.logaddexp(e, np.log(kf - 1.0))
    with np.errstate(divide="ignore"):
        log_mid = np.log(kf - 2.0) - log_norm
    loss = np.stack([-e, np.zeros_like(e), e], -1)
    lp = np.stack([e - log_norm, log_mid, -log_norm], -1)
    lq = np.stack([-log_norm, log_mid, e - log_norm], -1)
    desc = _describe("randomized_response", epsilon=epsilon, k=k)
    return from_atoms(loss, lp, lq, step, shape=shape, description=desc, log_masses=True)


@float64
def approximate_dp(epsilon, delta=0.0, grid_step=1e-4) -> PrivacyLoss:
    """A mechanism known only to be (epsilon, delta)-DP (delta = 0: epsilon-DP).

    Its worst case (Kairouz, Oh & Viswanath 2015): losses -inf, -eps, eps, +inf with
    P-masses (delta, (1 - delta) e^eps / (1 + e^eps), (1 - delta) / (1 + e^eps), 0) and Q
    the mirror; trade-off curve max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)), which
    every (epsilon, delta)-DP mechanism's curve lies above.
    """
    eps = _v.real_array("epsilon", epsilon, low=0.0, high=_MAX_LOSS)
    d = _v.probabilities("delta", delta)
    step = _v.grid_step(grid_step)
    shape = np.broadcast_shapes(eps.shape, d.shape)
    e, dd = _rows(shape, eps, d)
    with np.errstate(divide="ignore"):
        log_rest = np.log1p(-dd) - np.logaddexp(0.0, e)
        log_d = np.log(dd)
    ninf = np.full_like(e, -np.inf)
    loss = np.stack([ninf, -e, e, -ninf], -1)
    lp = np.stack([log_d, log_rest + e, log_rest, ninf], -1)
    lq = np.stack([ninf, log_rest, log_rest + e, log_d], -1)
    desc = _describe("approximate_dp", epsilon=epsilon, delta=delta)
    return from_atoms(loss, lp, lq, step, shape=shape, description=desc, log_masses=True)


def _int_sensitivity(sensitivity, neighbouring):
    sens = _v.positive_int_array("sensitivity", sensitivity)
    return sens * int(_substitution_factor(neighbouring))


@float64
def discrete_laplace(scale, sensitivity=1, grid_step=1e-4, neighbouring="add_remove") -> PrivacyLoss:
    """Discrete Laplace mechanism: integer noise with Pr[Z = z] proportional to
    exp(-|z| / scale), on an integer query of sensitivity D (dp-accounting's parameter is
    1 / scale).

    Atoms at the integers o: loss (|o| - |o - D|) / scale, i.e. -D/scale (o <= 0, P-mass
    1 / (1 + e^(-1/scale))), (2o - D) / scale for 0 < o < D, D/scale (o >= D).
    ``neighbouring="substitution"`` doubles the sensitivity.
    """
    t = _v.real_array("scale", scale, low=0.0, low_open=True)
    sens = _int_sensitivity(sensitivity, neighbouring)
    step = _v.grid_step(grid_step)
    shape = np.broadcast_shapes(t.shape, sens.shape)
    tt, dd = _rows(shape, t, sens)
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
    desc = _describe("discrete_laplace", scale=scale, sensitivity=sensitivity)
    if neighbouring != "add_remove":
        desc = desc[:-1] + f", neighbouring={neighbouring})"
    return from_atoms(loss, lp, lq, step, shape=shape, description=desc, log_masses=True)


#: Half-width in standard deviations of the integer range kept by the discrete Gaussian:
#: the mass beyond is below e^-(39^2/2) ~ 1e-330, zero in float64.
_DG_WIDTH = 39.0


@float64
def discrete_gaussian(sigma, sensitivity=1, grid_step=1e-4, neighbouring="add_remove") -> PrivacyLoss:
    """Discrete Gaussian mechanism (Canonne, Kamath & Steinke 2020): integer noise with
    Pr[Z = z] proportional to exp(-z^2 / (2 sigma^2)), on an integer query of sensitivity D.

    Atoms at the integers o: loss (2 o D - D^2) / (2 sigma^2) with masses from the
    normalised pmf (normaliser summed over |z| <= 39 sigma, exact in float64).
    ``neighbouring="substitution"`` doubles the sensitivity.
    """
    s = _v.real_array("sigma", sigma, low=0.0, low_open=True)
    sens = _int_sensitivity(sensitivity, neighbouring)
    step = _v.grid_step(grid_step)
    shape = np.broadcast_shapes(s.shape, sens.shape)
    ss, dd = _rows(shape, s, sens)
    half = np.ceil(_DG_WIDTH * ss + 1).astype(np.int64)
    if np.max(2 * half + dd) > 4_000_000:
        raise ValueError("sigma must be at most about 5e4 (the integer support would not fit in memory)")
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
    desc = _describe("discrete_gaussian", sigma=sigma, sensitivity=sensitivity)
    if neighbouring != "add_remove":
        desc = desc[:-1] + f", neighbouring={neighbouring})"
    return from_atoms(loss, lp, lq, step, shape=shape, description=desc, log_masses=True)


def _subsampled_gaussian_substitution(sigma, p, step, shape, noise_multiplier, sample_rate) -> PrivacyLoss:
    """Poisson-subsampled Gaussian under substitution (replace one record), per-record
    contributions clipped to norm 1: the pair Q = p N(1, s^2) + (1 - p) N(0, s^2),
    P = p N(-1, s^2) + (1 - p) N(0, s^2) (the REPLACE adjacency of dp-accounting's
    ``privacy_loss_mechanism``; p = 1 is the Gaussian with sensitivity 2). The pair is
    symmetric (mirror o -> -o); its loss is inverted in closed form and the CDFs are
    exact (:func:`dpax.construct.subsampled_gaussian_substitution_log_cdfs`).
    """
    s, q = (np.broadcast_to(a, shape).reshape(-1) for a in (sigma, p))
    z = -ndtri(SINGLE_STEP_TAIL)
    u = (1.0 + s * z) / s**2  # Q's upper tail output, in units of s^2
    with np.errstate(divide="ignore"):
        log_b = np.log(q) - 0.5 / s**2
        high = np.logaddexp(np.log1p(-q), log_b + u) - np.logaddexp(np.log1p(-q), log_b - u)
    if np.any(high > _MAX_LOSS):
        worst = s[np.argmax(high > _MAX_LOSS)]
        raise ValueError(
            f"noise_multiplier={worst:g} is too small: its privacy loss exceeds {_MAX_LOSS:g} nats, "
            "beyond float64 range; use noise_multiplier >= 0.05"
        )
    offset = np.floor(-high / step).astype(np.int64)
    n = _grid.padded_length(int(np.max(np.ceil(high / step).astype(np.int64) - offset)) + 1)
    _grid.check_memory(offset.size, n, "subsampled_gaussian")
    pair = _construct.subsampled_gaussian_substitution_kernel(s, q, offset, np.float64(step), n)
    desc = _describe("subsampled_gaussian", noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    desc = desc[:-1] + ", neighbouring=substitution)"
    return PrivacyLoss.from_pair(pair, step, desc, shape, exact_ratio=True)
