"""Closed forms of mu (Dong, Roth & Su 2022): the composition of mu-GDP guarantees, the
exact mu of the composed Gaussian mechanism, and two central-limit *approximations*
(:func:`clt_mu`, :func:`subsampled_clt_mu`) that can be optimistic. NumPy and SciPy only, as
the curves of :mod:`dpax.gdp.closed_form`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._engine import validation as _v
from .._engine.host_special import ndtr as _np_ndtr
from .._engine.x64 import float64
from ..privacy_loss import PrivacyLoss


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, e) with p + e = a b exactly (Dekker; |a|, |b| below ~1e300)."""
    p = a * b
    parts = []
    for v in (a, b):
        c = 134217729.0 * v
        hi = c - (c - v)
        parts.append((hi, v - hi))
    (ah, al), (bh, bl) = parts
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def compose(*mus: ArrayLike) -> float | NDArray[np.float64]:
    """mu of the composition of mu_i-GDP mechanisms: sqrt(sum mu_i^2) (Dong et al., Cor. 3.3).

    ``compose(0.5, 0.5)`` or ``compose([0.5, 0.5])`` (an array is composed along its last axis).

    Args:
        *mus: one or more GDP parameters, finite and >= 0. Several arguments broadcast
            together and are composed entry by entry; a single array argument is composed
            along its last axis (a single number is returned as it is).

    Returns:
        sqrt(sum mu_i^2), never below the exact value (rounded up, without overflow or
        underflow of the squares): a float where the result is one number, else a float64
        array (the broadcast shape of several arguments; a single array's shape without
        its last axis).

    Raises:
        TypeError: no argument, or an argument not real (a boolean, a string, complex).
        ValueError: an entry negative, NaN, infinite, an argument empty, or arguments that
            do not broadcast (the message names them ``mu 0``, ``mu 1``, ...).

    >>> compose(3.0, 4.0)
    5.0
    >>> compose([[3.0, 4.0], [1.0, 1.0]]).round(6), compose(0.5, [0.5, 1.2]).round(6)
    (array([5.      , 1.414214]), array([0.707107, 1.3     ]))
    """
    if len(mus) == 1:
        m = _v.real_array("mu", mus[0], low=0.0)
        out = _root_sum_of_squares(m) if m.ndim else m
    else:
        if not mus:
            raise TypeError("compose needs at least one mu")
        ms = _v.broadcast_arrays(*((f"mu {i}", _v.real_array(f"mu {i}", x, low=0.0)) for i, x in enumerate(mus)))
        out = _root_sum_of_squares(np.stack(ms, -1))
    return out if np.ndim(out) else float(out)


def _root_sum_of_squares(m: np.ndarray) -> np.ndarray:
    """sqrt(sum m_i^2) along the last axis, never below the exact value (a composed mu is
    reported on the safe side, the larger): the entries are scaled by a power of two (exact)
    so that the largest lies in [0.5, 1) and no square overflows (1e200 composed with itself
    is 1.414e200, not inf) or underflows; the root is stepped up by an ulp until its square is
    at least the sum of squares, checked exactly (:func:`_square_short`), and stepped up once
    more where scaling it back rounds it down (a subnormal mu: compose(5e-324, 5e-324) is
    1e-323, not 5e-324, below the exact 7.0e-324)."""
    top = np.max(m, axis=-1, keepdims=True)
    scaled = (top > 0) & np.isfinite(top)
    k = np.where(scaled, np.frexp(np.where(scaled, top, 1.0))[1], 0)
    x = np.ldexp(m, -k)  # exact for every entry above 2^-400 of the largest
    r = np.sqrt(np.sum(x * x, axis=-1))
    for _ in range(4):  # the rounded root is within ~2 ulps of the exact one
        short = _square_short(r, x, m > 0)
        if not np.any(short):
            break
        r = np.where(short, np.nextafter(r, np.inf), r)
    k = k[..., 0]
    with np.errstate(over="ignore"):
        out = np.ldexp(r, k)
        out = np.where(np.isfinite(out) & (np.ldexp(out, -k) < r), np.nextafter(out, np.inf), out)
    return np.where(top[..., 0] > 0, out, 0.0)


#: Scaled entries below this count as this (their squares, at most its square, are bounded,
#: not summed exactly): the squares of the others and their rounding parts stay normal.
_SMALL_ENTRY = 2.0**-400


def _square_short(r: np.ndarray, x: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """Whether r^2 < sum x_i^2 (along x's last axis), decided exactly: every square split
    into its float64 product and rounding part (:func:`_two_prod`), and the sign of their
    sum taken from ``math.fsum`` (correctly rounded, so its sign is exact); a ``positive``
    entry below :data:`_SMALL_ENTRY` (its scaling may have rounded it, even to 0) counts as
    that (r^2 is then short only if it is short of that bound). For r and x in [0, ~1e150]."""
    big = x >= _SMALL_ENTRY
    xs = np.where(big, x, 0.0)
    p, e = _two_prod(xs, xs)
    small = np.where(big | ~positive, 0.0, _SMALL_ENTRY * _SMALL_ENTRY)
    rp, re = _two_prod(r, r)
    terms = np.concatenate([rp[..., None], re[..., None], -p, -e, -small], -1).reshape(-1, 2 + 3 * x.shape[-1])
    return np.array([math.fsum(row) < 0.0 for row in terms], bool).reshape(r.shape)


def gaussian_mu(noise_multiplier: ArrayLike, sensitivity: ArrayLike = 1.0,
                num_steps: ArrayLike = 1) -> float | NDArray[np.float64]:
    """mu of the Gaussian mechanism composed ``num_steps`` times: sqrt(T) sensitivity / sigma
    (exact: the mechanism is mu-GDP with this mu and no smaller), rounded up: never below
    the exact value (the float64 product and quotient, rounded to nearest, were below it
    about half the time), stepped up by an ulp where (mu sigma)^2 < T sensitivity^2 exactly.

    Args:
        noise_multiplier: sigma, the noise's standard deviation over the sensitivity's
            unit, finite and > 0, any shape.
        sensitivity: the L2 sensitivity, finite and > 0 (default 1).
        num_steps: the number of compositions T, whole numbers >= 1 (default 1). The three
            arguments broadcast together.

    Returns:
        mu, never below the exact value: a float for three numbers, else a float64 array
        of the broadcast shape; inf where mu exceeds float64.

    Raises:
        ValueError: ``noise_multiplier`` or ``sensitivity`` not > 0, ``num_steps`` not a
            whole number >= 1, an argument NaN, infinite or empty, or shapes that do not
            broadcast (the message names the arguments).
        TypeError: an argument not real (a boolean, a string, complex, a masked array).

    >>> gaussian_mu(2.0, num_steps=4)   # sqrt(4) / 2
    1.0
    >>> gaussian_mu(3.0)   # 1/3 rounded up: the nearest float64, 0.333...3148, lies below it
    0.33333333333333337
    >>> gaussian_mu([1.0, 2.0], num_steps=[[1], [100]])
    array([[ 1. ,  0.5],
           [10. ,  5. ]])
    """
    s = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    c = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True)
    t = _v.positive_int_array("num_steps", num_steps)
    _v.broadcast_shapes(("noise_multiplier", s), ("sensitivity", c), ("num_steps", t))
    with np.errstate(over="ignore", under="ignore"):  # inf: a mu beyond float64
        out = np.sqrt(t) * c / s
    out, s, c, t = np.broadcast_arrays(out, s, c, t)
    out = np.array(out)
    for i in zip(*np.nonzero(np.isfinite(out))) if out.ndim else [()]:
        if np.isfinite(out[i]):
            exact = int(t[i]) * Fraction(float(c[i])) ** 2
            while (Fraction(float(out[i])) * Fraction(float(s[i]))) ** 2 < exact:
                out[i] = np.nextafter(out[i], np.inf)
    return out if out.ndim else float(out)


def subsampled_clt_mu(noise_multiplier: ArrayLike, sample_rate: ArrayLike,
                      num_steps: ArrayLike) -> float | NDArray[np.float64]:
    """APPROXIMATION (can be optimistic): the asymptotic mu of DP-SGD, Bu et al. (2020) /
    Dong et al. Corollary 5.4 with mu_step = 1 / sigma:
    p sqrt(T) sqrt(e^{mu^2} Phi(3 mu / 2) + 3 Phi(-mu / 2) - 2).

    Valid only as T -> infinity with p sqrt(T) fixed; it is not a guarantee. Use
    :func:`mu_and_regret` on ``dpax.dpsgd(...)`` for one.

    Args:
        noise_multiplier: sigma, finite and > 0, any shape.
        sample_rate: the Poisson sampling rate p, in (0, 1].
        num_steps: the number of steps T, whole numbers >= 1. The three arguments
            broadcast together.

    Returns:
        The approximate mu, >= 0: a float for three numbers, else a float64 array of the
        broadcast shape. On neither side of the truth for certain: it can lie below the
        mechanism's mu (optimistic).

    Raises:
        ValueError: ``noise_multiplier`` not > 0, ``sample_rate`` outside (0, 1],
            ``num_steps`` not a whole number >= 1, an argument NaN, infinite or empty, or
            shapes that do not broadcast (the message names the arguments).
        TypeError: an argument not real (a boolean, a string, complex, a masked array).

    >>> round(subsampled_clt_mu(1.0, 0.01, 10_000), 4)
    1.2093
    >>> subsampled_clt_mu([1.0, 2.0], 0.01, 10_000).round(4)
    array([1.2093, 0.4437])
    """
    s = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    t = _v.positive_int_array("num_steps", num_steps)
    _v.broadcast_shapes(("noise_multiplier", s), ("sample_rate", p), ("num_steps", t))
    m = 1.0 / s
    with np.errstate(over="ignore"):
        inner = np.exp(m * m) * _np_ndtr(1.5 * m) + 3.0 * _np_ndtr(-0.5 * m) - 2.0
    out = p * np.sqrt(t) * np.sqrt(np.maximum(inner, 0.0))
    return out if out.ndim else float(out)


@float64
def clt_mu(pl: PrivacyLoss, num_steps: ArrayLike = 1) -> float | NDArray[np.float64]:
    """APPROXIMATION (can be optimistic; Gopi et al. 2021 show it can underestimate risk):
    the central-limit mu of ``num_steps`` compositions of ``pl`` (Dong, Roth & Su, Theorem 3.5),
    mu = 2 T kl / sqrt(T (kappa_2 - kl^2)), with kl = KL(P || Q) = -E[X] and
    kappa_2 - kl^2 = Var[X] for X = log(Q/P) under P, the larger over the two directions.

    The moments are those of the finite grid (the truncation atoms at +-inf, which would make
    KL infinite, are left out): one more reason it is an approximation, not a bound.

    Args:
        pl: the privacy loss of one step (a single mechanism or a batch).
        num_steps: the number of compositions T, whole numbers >= 1 (default 1),
            broadcasting with ``pl.batch_shape``.

    Returns:
        The approximate mu, >= 0: a float for a single mechanism and a scalar
        ``num_steps``, else a float64 array of the broadcast shape. On neither side of the
        truth for certain: it can lie far below the mechanism's mu (optimistic), as for
        DP-SGD below.

    Raises:
        TypeError: ``pl`` not a :class:`dpax.PrivacyLoss`; ``num_steps`` not real.
        ValueError: ``num_steps`` not a whole number >= 1, NaN, infinite or empty, or not
            broadcasting with ``pl``'s batch.

    >>> import dpax
    >>> round(clt_mu(dpax.gaussian(2.0, grid_step=1e-2), num_steps=4), 3)   # the Gaussian is exactly GDP
    1.0
    >>> pl = dpax.dpsgd([1.0, 2.0], 0.01, 100, grid_step=1e-3)
    >>> clt_mu(pl).round(4)   # optimistic: the tight mu (dpax.gdp.mu_and_regret) is [0.3583, 0.065]
    array([0.1295, 0.0534])
    """
    if not isinstance(pl, PrivacyLoss):
        raise TypeError(f"pl must be a dpax.PrivacyLoss, got {type(pl).__name__}")
    t = _v.positive_int_array("num_steps", num_steps)
    _v.broadcast_shapes(("the batch of pl", pl.batch_shape), ("num_steps", t))
    x = pl.loss_values()
    out = np.zeros(pl.batch_shape)
    for pmf, sign in ((pl.pmf_x, -1.0), (pl.pmf_y, 1.0)):
        # direction (P, Q): X under P; reversed (Q, P): X' = -Y under Q, so kl = E[Y]
        total = np.sum(pmf, -1)
        mean = np.sum(pmf * x, -1) / total
        var = np.sum(pmf * (x - mean[..., None]) ** 2, -1) / total
        kl = sign * mean
        with np.errstate(divide="ignore", invalid="ignore"):
            mu = np.where(var > 0, 2.0 * kl / np.sqrt(var), 0.0)
        out = np.maximum(out, mu)
    out = np.sqrt(t) * out
    return out if np.ndim(out) else float(out)
