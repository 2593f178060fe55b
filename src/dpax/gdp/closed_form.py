"""Closed forms of mu-Gaussian differential privacy (Dong, Roth & Su 2022).

The trade-off curve f_mu, the advantage, delta(epsilon) and epsilon(delta) of mu-GDP, its
composition, the exact mu of the composed Gaussian mechanism, and two central-limit
*approximations* (:func:`clt_mu`, :func:`subsampled_clt_mu`) that can be optimistic. NumPy
and SciPy only: these are the references the numeric engine is checked against.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr as _np_log_ndtr
from scipy.special import ndtr as _np_ndtr
from scipy.special import ndtri as _np_ndtri

from .._engine import validation as _v
from .._engine.x64 import float64
from ..privacy_loss import PrivacyLoss


def tradeoff(mu, alpha):
    """f_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu), the trade-off curve of mu-GDP (Eq. 7).

    ``mu`` >= 0 and ``alpha`` in [0, 1] broadcast together.

    >>> round(tradeoff(1.0, 0.1), 4)   # FNR of the best attack at FPR 0.1 against 1-GDP
    0.6109
    """
    m = _v.real_array("mu", mu, low=0.0)
    a = _v.probabilities("alpha", alpha)
    _v.broadcast_shapes(("mu", m), ("alpha", a))
    out = _np_ndtr(-_np_ndtri(a) - m)
    return out if out.ndim else float(out)


def advantage(mu):
    """Largest TPR - FPR of any attack on a mu-GDP mechanism: 2 Phi(mu / 2) - 1.

    >>> round(advantage(1.0), 4)
    0.3829
    """
    m = _v.real_array("mu", mu, low=0.0)
    out = 2.0 * _np_ndtr(m / 2.0) - 1.0
    return out if out.ndim else float(out)


def _delta_np(eps, mu):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = _np_ndtr(-eps / mu + mu / 2.0)
        b = np.exp(eps + _np_log_ndtr(-eps / mu - mu / 2.0))
        d = np.where(mu > 0, a - b, 0.0)
    return np.clip(d, 0.0, 1.0)


def delta(epsilon, mu):
    """delta(epsilon) of mu-GDP (Dong, Roth & Su, Corollary 2.13):
    Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), computed in log space for large eps.

    >>> round(delta(1.0, 1.0), 4)
    0.1269
    """
    e = _v.real_array("epsilon", epsilon)
    m = _v.real_array("mu", mu, low=0.0)
    _v.broadcast_shapes(("epsilon", e), ("mu", m))
    out = _delta_np(e, m)
    return out if out.ndim else float(out)


def epsilon(delta_, mu):
    """Smallest epsilon >= 0 with mu-GDP's delta(epsilon) <= ``delta_`` (bisection on
    Corollary 2.13, to 1e-12 relative; the result errs upward).

    >>> round(epsilon(1e-5, 1.0), 4)
    4.3772
    """
    d = _v.probabilities("delta", delta_, low_open=True)
    m = _v.real_array("mu", mu, low=0.0)
    d, m = _v.broadcast_arrays(("delta", d), ("mu", m))
    lo = np.zeros(d.shape)
    hi = m * m / 2.0 + 40.0 * m + 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        ok = _delta_np(mid, m) <= d
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
        if np.all(hi - lo <= 1e-13 * np.maximum(hi, 1e-300)):
            break
    out = np.where(_delta_np(np.zeros(d.shape), m) <= d, 0.0, hi)
    return out if out.ndim else float(out)


def compose(*mus):
    """mu of the composition of mu_i-GDP mechanisms: sqrt(sum mu_i^2) (Dong et al., Cor. 3.3).

    ``compose(0.5, 0.5)`` or ``compose([0.5, 0.5])`` (an array is composed along its last axis).

    >>> compose(0.6, 0.8)
    1.0
    """
    if len(mus) == 1:
        m = _v.real_array("mu", mus[0], low=0.0)
        out = np.sqrt(np.sum(m * m, axis=-1)) if m.ndim else m
    else:
        if not mus:
            raise TypeError("compose needs at least one mu")
        ms = _v.broadcast_arrays(*((f"mu {i}", _v.real_array(f"mu {i}", x, low=0.0)) for i, x in enumerate(mus)))
        out = np.sqrt(sum(x * x for x in ms))
    return out if np.ndim(out) else float(out)


def gaussian_mu(noise_multiplier, sensitivity=1.0, num_steps=1):
    """mu of the Gaussian mechanism composed ``num_steps`` times: sqrt(T) sensitivity / sigma
    (exact: the mechanism is mu-GDP with this mu and no smaller).

    >>> gaussian_mu(2.0, num_steps=4)   # sqrt(4) / 2
    1.0
    """
    s = _v.real_array("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    c = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True)
    t = _v.positive_int_array("num_steps", num_steps)
    _v.broadcast_shapes(("noise_multiplier", s), ("sensitivity", c), ("num_steps", t))
    with np.errstate(over="ignore"):  # inf: a mu beyond float64
        out = np.sqrt(t) * c / s
    return out if out.ndim else float(out)


def subsampled_clt_mu(noise_multiplier, sample_rate, num_steps):
    """APPROXIMATION (can be optimistic): the asymptotic mu of DP-SGD, Bu et al. (2020) /
    Dong et al. Corollary 5.4 with mu_step = 1 / sigma:
    p sqrt(T) sqrt(e^{mu^2} Phi(3 mu / 2) + 3 Phi(-mu / 2) - 2).

    Valid only as T -> infinity with p sqrt(T) fixed; it is not a guarantee. Use
    :func:`mu_and_regret` on ``dpax.dpsgd(...)`` for one.

    >>> round(subsampled_clt_mu(1.0, 0.01, 10_000), 4)
    1.2093
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
def clt_mu(pl, num_steps=1):
    """APPROXIMATION (can be optimistic; Gopi et al. 2021 show it can underestimate risk):
    the central-limit mu of ``num_steps`` compositions of ``pl`` (Dong, Roth & Su, Theorem 3.5),
    mu = 2 T kl / sqrt(T (kappa_2 - kl^2)), with kl = KL(P || Q) = -E[X] and
    kappa_2 - kl^2 = Var[X] for X = log(Q/P) under P, the larger over the two directions.

    The moments are those of the finite grid (the truncation atoms at +-inf, which would make
    KL infinite, are left out): one more reason it is an approximation, not a bound.

    >>> import dpax
    >>> round(clt_mu(dpax.gaussian(2.0, grid_step=1e-2), num_steps=4), 3)   # the Gaussian is exactly GDP
    1.0
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
