"""Closed forms of mu-Gaussian differential privacy (Dong, Roth & Su 2022): the trade-off
curve f_mu, the advantage, delta(epsilon) and epsilon(delta) of mu-GDP. NumPy and SciPy only:
these are the references the numeric engine is checked against. The mus themselves (a
composition's, the Gaussian mechanism's, the central-limit approximations) are in
:mod:`dpax.gdp.closed_form_mu`, and importable from here too.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._engine import validation as _v
from .._engine.host_special import erf, erfcx
from .._engine.host_special import log_ndtr as _np_log_ndtr
from .._engine.host_special import ndtr as _np_ndtr
from .._engine.host_special import ndtri as _np_ndtri
from .closed_form_mu import _two_prod
from .closed_form_mu import clt_mu as clt_mu
from .closed_form_mu import compose as compose
from .closed_form_mu import gaussian_mu as gaussian_mu
from .closed_form_mu import subsampled_clt_mu as subsampled_clt_mu


def tradeoff(mu: ArrayLike, alpha: ArrayLike) -> float | NDArray[np.float64]:
    """f_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu), the trade-off curve of mu-GDP (Eq. 7),
    never above the exact value (it is the safe side of a mu-GDP guarantee, and the
    reference the numeric curves are checked against): 1 at alpha = 0 and 0 at alpha = 1
    exactly, and in between Phi(z), z = -Phi^-1(alpha) - mu, lowered by a bound on its
    float64 rounding (:func:`_tradeoff_rounding`, at most ~3e-12 relative at the tails'
    ends, ~1e-15 near the middle).

    ``mu`` >= 0 and ``alpha`` in [0, 1] broadcast together.

    Args:
        mu: the GDP parameter, finite and >= 0, any shape.
        alpha: the attack's FPR, in [0, 1]; broadcasts with ``mu``.

    Returns:
        The smallest FNR of an attack at FPR ``alpha`` against mu-GDP, in [0, 1]: a float
        for two numbers, else a float64 array of the broadcast shape; never above f_mu
        (the safe side of the guarantee).

    Raises:
        ValueError: ``mu`` negative, ``alpha`` outside [0, 1], either NaN, infinite or
            empty, or shapes that do not broadcast (the message names the arguments).
        TypeError: an argument not real (a boolean, a string, complex, a masked array).

    >>> round(tradeoff(1.0, 0.1), 4)   # FNR of the best attack at FPR 0.1 against 1-GDP
    0.6109
    >>> tradeoff(3.0, 0.0), tradeoff(3.0, 1.0)
    (1.0, 0.0)
    >>> tradeoff([0.5, 1.0], [[0.01], [0.1]]).round(4)
    array([[0.9661, 0.9076],
           [0.7828, 0.6109]])
    """
    m = _v.real_array("mu", mu, low=0.0)
    a = _v.probabilities("alpha", alpha)
    _v.broadcast_shapes(("mu", m), ("alpha", a))
    with np.errstate(invalid="ignore", over="ignore"):
        n = _np_ndtri(a)
        z = -n - m
        out = _np_ndtr(z)
        low = out - out * np.minimum(_tradeoff_rounding(n, z), 1.0)  # 1: a huge mu (the value is 0)
    # a subnormal value is rounded to the nearest multiple of 2^-1074: one step down more
    low = np.where(low < _TINY, np.nextafter(np.maximum(low, 0.0), 0.0), low)
    out = np.where(a == 0.0, 1.0, np.where(a == 1.0, 0.0, np.maximum(low, 0.0)))
    return out if out.ndim else float(out)


_TINY = float(np.finfo(np.float64).tiny)


def _tradeoff_rounding(n: np.ndarray, z: np.ndarray) -> np.ndarray:
    """A bound on the relative error of ``ndtr(z)``, z = -ndtri(alpha) - mu (n = ndtri(alpha)),
    as a fraction of the value: z carries ~(|n| + |z|) ulps of absolute error (ndtri's and
    the subtraction's), which Phi's relative slope phi(z) / Phi(z) (below 1 for z >= 0, below
    |z| + 1 for z < 0) turns into relative error, and ndtr(z) itself errs by ~z^2 ulps for a
    negative z (its argument z / sqrt(2) rounded). Measured against 50-digit mpmath over
    alpha in [1e-320, 1 - 1e-16] and mu in [1e-17, 45]: at most 2.0 u (1 + |z|) (2 + |z| + |n|)
    for z < 0 and 1.5 u (1 + |z| + |n|) for z >= 0 (u = 2^-53); the bound is twice those."""
    u = 2.0**-53
    return 4.0 * u * (2.0 + np.abs(z) + np.abs(n)) * (1.0 + 2.0 * np.maximum(-z, 0.0))


def advantage(mu: ArrayLike) -> float | NDArray[np.float64]:
    """Largest TPR - FPR of any attack on a mu-GDP mechanism: 2 Phi(mu / 2) - 1, computed as
    erf(mu / (2 sqrt 2)) (no cancellation for a tiny mu) and raised by 3 ulp, past erf's
    rounding (below 2.2 ulp), so it is never below the truth.

    Args:
        mu: the GDP parameter, finite and >= 0, any shape.

    Returns:
        The advantage in [0, 1], never below the truth (0 exactly at mu = 0): a float for
        one number, else a float64 array of the shape of ``mu``.

    Raises:
        ValueError: ``mu`` negative, NaN, infinite or empty.
        TypeError: ``mu`` not real (a boolean, a string, complex, a masked array).

    >>> round(advantage(1.0), 4)
    0.3829
    >>> advantage([0.5, 1.0, 2.0]).round(4)
    array([0.1974, 0.3829, 0.6827])
    """
    m = _v.real_array("mu", mu, low=0.0)
    out = erf(m / (2.0 * _SQRT2))
    for _ in range(3):
        out = np.where(out > 0.0, np.nextafter(out, 1.0), 0.0)
    return out if out.ndim else float(out)


# -- delta(epsilon) of mu-GDP, accurate at both ends ------------------------------------------
#
# With t = epsilon / mu - mu / 2 and s = t + mu, Corollary 2.13 reads
#   delta = Phi(-t) - e^eps Phi(-s) = phi(t) (R(t) - R(s)),   1 - delta = Phi(t) + phi(t) R(s),
# R(x) = Phi(-x) / phi(x) the Mills ratio (e^eps phi(s) = phi(t)). Computed in log space from t,
# never from e^eps: the direct difference underflows below delta ~ 1e-308 (and reads 0 long
# before), cancels to nothing where mu is small (both terms near 1/2) and, for a large mu, t
# itself is lost when epsilon / mu and mu / 2 nearly cancel (t is formed with an exact residual).

_EPS64 = float(np.finfo(np.float64).eps)
_LOG_SQRT_2PI = 0.5 * float(np.log(2.0 * np.pi))
_SQRT_HALF_PI = float(np.sqrt(0.5 * np.pi))
_SQRT2 = float(np.sqrt(2.0))
#: Gauss-Legendre rule of R(t) - R(t + mu) = integral of 1 - x R(x) over [t, t + mu] (a small mu)
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(12)
#: 1 - x R(x) ~ sum_k (-1)^(k+1) (2k - 1)!! / x^(2k) above this x (14 terms: below 1e-17 relative)
_M1_ASYMPTOTIC = 15.0
_M1_TERMS = 14
#: Added to log delta (taken from log(1 - delta)), plus 1e-15 of its size: covers the evaluation's
#: rounding (below 1.5e-13 against 100-digit arithmetic wherever delta or 1 - delta exceeds 1e-323),
#: so each bound is one-sided.
_LOG_MARGIN = 1e-12


def _log_phi(x: np.ndarray) -> np.ndarray:
    return -0.5 * x * x - _LOG_SQRT_2PI


def _t_of(eps: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """t = eps / mu - mu / 2 (mu > 0) rounded down: below the exact value by at most ~16 ulp.

    Where eps / mu and mu / 2 are within a factor 2 their difference is exact (Sterbenz) and the
    division's residual eps - q mu (exact, Dekker's product) restores what the quotient lost."""
    with np.errstate(all="ignore"):
        q = eps / mu
        half = 0.5 * mu
        zone = (q >= 0.5 * half) & (q <= 2.0 * half)
        scale = np.where(np.abs(eps) > 2.0**1000, 2.0**-64, 1.0)  # exact; keeps q mu below overflow
        e_s, mu_s = np.where(zone, eps * scale, 0.0), np.where(zone, mu * scale, 1.0)
        p, e = _two_prod(np.where(zone, q, 0.0), mu_s)
        t = np.where(zone, (q - half) + ((e_s - p) - e) / mu_s, q - half)
        return np.where(np.isfinite(t), t - 8.0 * _EPS64 * np.abs(t), t)


def _m1_positive(x: np.ndarray) -> np.ndarray:
    """1 - x R(x) for x >= 0, to a few ulp times min(x, 15)^2 relative."""
    out = np.empty_like(x)
    near = x < _M1_ASYMPTOTIC
    v = x[near]
    out[near] = 1.0 - v * (_SQRT_HALF_PI * erfcx(v / _SQRT2))
    with np.errstate(over="ignore", divide="ignore"):
        y = 1.0 / x[~near] ** 2
    series, term = np.zeros_like(y), y
    for k in range(1, _M1_TERMS + 1):
        series = series + term if k % 2 else series - term
        term = term * y * (2 * k + 1)
    out[~near] = series
    return out


def _log_b(t: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """log(phi(t) R(t + mu)) = log(e^eps Phi(-s))."""
    s = t + mu
    with np.errstate(all="ignore"):
        pos = _log_phi(t) + np.log(_SQRT_HALF_PI * erfcx(np.maximum(s, 0.0) / _SQRT2))
        neg = mu * (t + 0.5 * mu) + _np_log_ndtr(-s)
    return np.where(s >= 0.0, pos, neg)


def _log_delta_quad(t: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """log delta = log(phi(t) (R(t) - R(t + mu))) for a small mu with mu max(-t, 0) <= 1 (flat
    arrays), the difference as the integral of 1 - x R(x) > 0 over [t, t + mu] (12-point
    Gauss-Legendre; the integrand varies by at most a factor e there)."""
    h = 0.5 * mu[:, None] * (1.0 + _GL_NODES)
    x = t[:, None] + h
    lp = np.broadcast_to(_log_phi(t)[:, None], x.shape)
    terms = np.empty_like(x)
    right = x >= 0.0
    terms[right] = lp[right] + np.log(_m1_positive(x[right]))
    # x < 0: phi(t) (1 + |x| R(x)), with phi(t) R(x) = e^((x - t)(x + t) / 2) Phi(-x)
    xl, tl = x[~right], np.broadcast_to(t[:, None], x.shape)[~right]
    terms[~right] = np.logaddexp(lp[~right], np.log(-xl) + _np_log_ndtr(-xl) + 0.5 * h[~right] * (xl + tl))
    terms += np.log(_GL_WEIGHTS)
    top = np.max(terms, -1)
    top_ = np.where(np.isfinite(top), top, 0.0)
    out = np.log(mu) - np.log(2.0) + top_ + np.log(np.sum(np.exp(terms - top_[:, None]), -1))
    return np.where(top == -np.inf, -np.inf, out)


def _log_delta_t(t: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log delta, log(1 - delta)) of mu-GDP at t = eps / mu - mu / 2 (mu > 0), each within
    1.5e-13 (plus 1e-16 of its size) of the truth."""
    t, mu = np.broadcast_arrays(np.asarray(t, float), np.asarray(mu, float))
    shape = t.shape
    t, mu = t.reshape(-1), mu.reshape(-1)
    with np.errstate(all="ignore"):
        log_b = _log_b(t, mu)
        log_c = np.logaddexp(_np_log_ndtr(t), log_b)
        log_d = np.empty_like(t)
        # the difference R(t) - R(t + mu) (or Phi(-t) - e^eps Phi(-s)) loses about
        # max(1.25, t) / mu ulp: integrated below 1 / 50 of that
        small = (mu < 0.02 * np.maximum(t, 1.25)) & (mu * np.maximum(-t, 0.0) <= 1.0)
        log_d[small] = _log_delta_quad(t[small], mu[small])
        # otherwise the difference itself, R(t) - R(s) (t >= 0) or Phi(-t) - e^eps Phi(-s) (t < 0)
        big, tb, mb = ~small, t[~small], mu[~small]
        r = lambda v: _SQRT_HALF_PI * erfcx(np.maximum(v, 0.0) / _SQRT2)  # noqa: E731
        log_d[big] = np.where(tb >= 0.0, _log_phi(tb) + np.log(r(tb) - r(tb + mb)),
                              np.log(_np_ndtr(-tb) - np.exp(log_b[big])))
    return log_d.reshape(shape), log_c.reshape(shape)


def _delta_bounds(eps: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log delta, log(1 - delta)) of mu-GDP, the first never below and the second never above
    the truth (mu > 0; epsilon any real)."""
    log_d, log_c = _log_delta_t(_t_of(eps, mu), mu)
    with np.errstate(invalid="ignore"):  # -inf (delta or 1 - delta exactly 0) stays -inf
        return (np.where(np.isfinite(log_d), log_d + (_LOG_MARGIN + 1e-15 * np.abs(log_d)), log_d),
                np.where(np.isfinite(log_c), log_c - (_LOG_MARGIN + 1e-15 * np.abs(log_c)), log_c))


def _delta_np(eps: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """delta(eps) of mu-GDP (arrays that broadcast, mu >= 0), never below the truth."""
    eps, mu = np.broadcast_arrays(np.asarray(eps, float), np.asarray(mu, float))
    with np.errstate(all="ignore"):
        log_d, log_c = _delta_bounds(eps, np.where(mu > 0, mu, 1.0))
        # 1 - c rounds to the nearest float: one step up keeps it above the truth
        d = np.minimum(np.exp(log_d), np.nextafter(-np.expm1(log_c), 2.0))
        flat = -np.expm1(np.minimum(eps, 0.0))  # mu = 0: P = Q, delta = (1 - e^eps)_+
        d = np.where(mu > 0, d, np.where(flat > 0, np.nextafter(flat, 2.0), 0.0))
    return np.clip(d, 0.0, 1.0)


def delta(epsilon: ArrayLike, mu: ArrayLike) -> float | NDArray[np.float64]:
    """delta(epsilon) of mu-GDP (Dong, Roth & Su, Corollary 2.13):
    Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

    Evaluated in log space through the Mills ratio (never through e^eps), so it keeps its
    relative accuracy where delta underflows the direct difference (down to 1e-323), where mu
    is tiny, and where a huge mu makes eps/mu and mu/2 cancel; never below the truth and within
    about 1e-11 relative of it. ``epsilon`` may be any real number (below 0 delta exceeds
    1 - e^eps); ``mu`` >= 0.

    Args:
        epsilon: finite real numbers (negative allowed), any shape.
        mu: the GDP parameter, finite and >= 0; broadcasts with ``epsilon``.

    Returns:
        The smallest delta such that mu-GDP is (epsilon, delta)-DP, in [0, 1]: a float for
        two numbers, else a float64 array of the broadcast shape. Never below the truth,
        and within about 1e-11 relative of it where the truth is at least float64's
        smallest subnormal (about 5e-324); a smaller delta (e.g. ``delta(1.0, 1e-3)``,
        whose truth is about e^-500000) is reported as that subnormal. At mu = 0,
        (1 - e^eps)_+ rounded up.

    Raises:
        ValueError: ``mu`` negative, either argument NaN, infinite or empty, or shapes
            that do not broadcast (the message names the arguments).
        TypeError: an argument not real (a boolean, a string, complex, a masked array).

    >>> round(delta(1.0, 1.0), 4)
    0.1269
    >>> delta([0.0, 1.0], 1.0).round(4), delta(1.0, 0.0)
    (array([0.3829, 0.1269]), 0.0)
    """
    e = _v.real_array("epsilon", epsilon)
    m = _v.real_array("mu", mu, low=0.0)
    _v.broadcast_shapes(("epsilon", e), ("mu", m))
    out = _delta_np(e, m)
    # mu > 0: delta is positive at every finite epsilon; one below float64's range is reported
    # as the smallest subnormal, not 0, so that it stays on the safe side
    out = np.where((m > 0.0) & (out == 0.0), _SMALLEST_SUBNORMAL, out)
    return out if out.ndim else float(out)


_SMALLEST_SUBNORMAL = float(np.nextafter(0.0, 1.0))


#: Most bisection steps: a root within a factor 2 of the bracket's top takes about 55, one
#: near 0 (down to the smallest subnormal) about 1100.
_MAX_BISECTIONS = 1100


def _meets(eps: np.ndarray, mu: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Whether mu-GDP's delta(eps) <= d, decided from the one-sided bounds (a True is certain)."""
    log_d, log_c = _delta_bounds(eps, mu)
    with np.errstate(divide="ignore"):
        return (log_d <= np.log(d)) | ((d >= 0.5) & (log_c >= np.log(1.0 - d)))  # 1 - d exact for d >= 1/2


def _bisect(ok: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray,
            live: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[lo, hi] bisected to ~2 ulp where ``ok`` changes (False at ``lo``, True at ``hi``, each end
    keeping its side), on the ``live`` entries."""
    for _ in range(_MAX_BISECTIONS):
        todo = live & (hi - lo > 4.0 * _EPS64 * np.abs(hi))
        if not np.any(todo):
            break
        mid = lo + 0.5 * (hi - lo)
        good = ok(mid)
        hi, lo = np.where(todo & good, mid, hi), np.where(todo & ~good, mid, lo)
    return lo, hi


def epsilon(delta_: ArrayLike, mu: ArrayLike) -> float | NDArray[np.float64]:
    """Smallest epsilon >= 0 with mu-GDP's delta(epsilon) <= ``delta_`` (Corollary 2.13), never
    below the truth and within about 1e-11 relative of it, for every delta in (0, 1] (the
    smallest subnormal included) and every mu >= 0; inf where epsilon exceeds float64 (mu
    beyond about 1.9e154).

    Bisection on epsilon whose every step is decided by :func:`delta`'s one-sided bounds, so
    the epsilon returned provably meets ``delta_``.

    Args:
        delta_: the target delta, in (0, 1], any shape.
        mu: the GDP parameter, finite and >= 0; broadcasts with ``delta_``.

    Returns:
        epsilon >= 0, a float for two numbers, else a float64 array of the broadcast
        shape: never below the truth (mu-GDP is (epsilon, ``delta_``)-DP for the epsilon
        returned), within about 1e-11 relative of it; 0 where mu = 0, ``delta_`` = 1 or
        delta(0) already meets ``delta_``; inf where epsilon exceeds float64.

    Raises:
        ValueError: ``delta_`` outside (0, 1], ``mu`` negative, either NaN, infinite or
            empty, or shapes that do not broadcast (the message names ``delta`` and ``mu``).
        TypeError: an argument not real (a boolean, a string, complex, a masked array).

    >>> round(epsilon(1e-5, 1.0), 4)
    4.3772
    >>> epsilon([1e-5, 1e-9], 1.0).round(4), epsilon(1e-5, 0.0)
    (array([4.3772, 6.1739]), 0.0)
    """
    d = _v.probabilities("delta", delta_, low_open=True)
    m = _v.real_array("mu", mu, low=0.0)
    d, m = _v.broadcast_arrays(("delta", d), ("mu", m))
    d, m = d.astype(float), m.astype(float)
    pos = m > 0
    mm = np.where(pos, m, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        # delta <= Phi(-t): t = -Phi^-1(delta) + 1 meets delta; epsilon = mu (t + mu / 2), raised
        # 8 ulp past the rounding of t + mu / 2 (t is lost in it for a mu beyond ~1e16)
        hi = mm * (np.maximum(-_np_ndtri(d), 0.0) + 1.0 + 0.5 * mm) * (1.0 + 8.0 * _EPS64)
    done = ~pos | (d >= 1.0) | _meets(np.zeros(d.shape), mm, d)
    top = np.finfo(np.float64).max
    for _ in range(64):  # never needed in exact arithmetic: the start above meets delta
        short = ~done & (hi < top) & ~_meets(hi, mm, d)
        if not np.any(short):
            break
        hi = np.where(short, np.minimum(2.0 * hi, top), hi)
    live = ~done & np.isfinite(hi) & _meets(np.where(np.isfinite(hi), hi, 0.0), mm, d)
    _, hi = _bisect(lambda e: _meets(e, mm, d), np.zeros(d.shape), np.where(live, hi, 1.0), live)
    out = np.where(done, 0.0, np.where(live, hi, np.inf))
    return out if out.ndim else float(out)


def _mu_of_epsilon_delta(e: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Largest mu whose mu-GDP mechanism is (e, d)-DP (checked float arrays of one shape, e >= 0,
    d in (0, 1)): bisection on mu, every step decided by :func:`delta`'s one-sided bounds, so
    the mu returned is never above the root (its mechanism is (e, d)-DP) and within about
    1e-11 relative of it; finite for every finite e (about sqrt(2 e) for a huge e)."""
    # from mu = 9 + sqrt(81 + 2 e) up, t <= -9 and delta >= 1 - 2 Phi(-9) > 1 - 2^-53 >= d
    hi = 10.0 + np.hypot(9.0, _SQRT2 * np.sqrt(e))
    low, _ = _bisect(lambda m: (m > 0) & ~_meets(e, np.where(m > 0, m, 1.0), d), np.zeros(e.shape), hi,
                     np.ones(e.shape, bool))
    return low
