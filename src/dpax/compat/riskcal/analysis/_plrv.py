"""riskcal's ``PLRVs`` (privacy loss random variables on an integer grid) and
``get_beta``, on the dpax engine.

A :class:`PLRVs` holds, as in Kulynych, Gomez, Kaissis, du Pin Calmon and Troncoso,
"Attack-aware noise calibration for differential privacy" (NeurIPS 2024, Definition 3.3), the
law of the privacy loss Y under Q on the points ``y0 + j`` with its mass at +inf, and the law
of X under P on ``x0 + i`` with its mass at -inf; losses are in units of the grid step, which
the trade-off curve does not depend on (Algorithm 1 reads only the masses and their order).
:func:`get_beta` evaluates the curve with :meth:`dpax.PrivacyLoss.beta` (Algorithm 1 and the
symmetrisation of Dong et al., Def. F.1) or, for a pair marked symmetric, f = T(P, Q) itself
from dpax's breakpoint tables (Theorem 3.4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...._engine import validation as _v
from ....privacy_loss import PrivacyLoss
from .._core import alpha_argument, is_python_scalar

__all__ = ["PLRVs", "get_beta"]


@dataclass
class PLRVs:
    """Privacy loss random variables: ``pmf_Y[j] = Pr[Y = y0 + j]`` with
    ``infinity_mass_Y = Pr[Y = +inf]``, ``pmf_X[i] = Pr[X = x0 + i]`` with
    ``minus_infinity_mass_X = Pr[X = -inf]`` (grid units); ``is_symmetric``: T(P, Q) = T(Q, P)."""

    y0: int
    pmf_Y: np.ndarray
    infinity_mass_Y: float

    x0: int
    pmf_X: np.ndarray
    minus_infinity_mass_X: float

    is_symmetric: bool


def _pmf(name, values):
    a = _v.real_array(name, values, low=0.0).reshape(-1)
    return a


def _integer(name, value) -> int:
    v = _v.one_number(name, value)
    if v != round(v):
        raise ValueError(f"{name} must be an integer grid index, got {value!r}")
    return int(round(v))


def to_privacy_loss(plrvs: PLRVs) -> PrivacyLoss:
    """The pair of ``plrvs`` as a :class:`dpax.PrivacyLoss` on the grid of step 1 (both laws
    on one index range, zero-padded)."""
    if not isinstance(plrvs, PLRVs):
        raise TypeError(f"plrvs must be a PLRVs, got {type(plrvs).__name__}")
    py, px = _pmf("plrvs.pmf_Y", plrvs.pmf_Y), _pmf("plrvs.pmf_X", plrvs.pmf_X)
    y0, x0 = _integer("plrvs.y0", plrvs.y0), _integer("plrvs.x0", plrvs.x0)
    inf_y = _v.one_number("plrvs.infinity_mass_Y", plrvs.infinity_mass_Y, low=0.0, high=1.0)
    neginf_x = _v.one_number("plrvs.minus_infinity_mass_X", plrvs.minus_infinity_mass_X, low=0.0, high=1.0)
    lo = min(x0, y0)
    n = max(x0 + px.size, y0 + py.size) - lo
    pmf_x, pmf_y = np.zeros(n), np.zeros(n)
    pmf_x[x0 - lo: x0 - lo + px.size] = px
    pmf_y[y0 - lo: y0 - lo + py.size] = py
    return PrivacyLoss(pmf_x, pmf_y, np.int64(lo), inf_y, neginf_x, 1.0, "riskcal PLRVs")


def from_privacy_loss(pl: PrivacyLoss, is_symmetric: bool) -> PLRVs:
    """The pair of a single :class:`dpax.PrivacyLoss` as :class:`PLRVs`, trimmed to the
    points where either law has mass."""
    px, py = np.asarray(pl.pmf_x, np.float64), np.asarray(pl.pmf_y, np.float64)
    mass = np.flatnonzero((px > 0) | (py > 0))
    first, last = (int(mass[0]), int(mass[-1]) + 1) if mass.size else (0, 1)
    start = int(pl.offset) + first
    return PLRVs(y0=start, pmf_Y=py[first:last].copy(), infinity_mass_Y=float(pl.inf_mass_y),
                 x0=start, pmf_X=px[first:last].copy(), minus_infinity_mass_X=float(pl.neginf_mass_x),
                 is_symmetric=bool(is_symmetric))


def _one_direction(pl: PrivacyLoss, alpha: np.ndarray) -> np.ndarray:
    """f = T(P, Q) at ``alpha``: linear between the breakpoints (Pr[X > x_i], Pr[Y <= x_i])
    (Theorem 3.4); at an FPR shared by several breakpoints, the lowest FNR."""
    a_desc, b_desc = pl.tradeoff_points(symmetric=False)
    a_asc, b_asc = np.asarray(a_desc)[::-1], np.asarray(b_desc)[::-1]
    keep = np.concatenate([a_asc[1:] != a_asc[:-1], [True]])  # last of equal alphas: smallest beta
    a_asc, b_asc = a_asc[keep], b_asc[keep]
    out = np.interp(alpha, a_asc, b_asc, left=b_asc[0], right=0.0)
    return np.clip(out, 0.0, 1.0)


def get_beta(plrvs: PLRVs, alpha=None, alphas=None):
    """FNR at FPR ``alpha`` of the pair (Algorithm 1): the symmetrised curve (Dong et al.,
    Def. F.1), or f = T(P, Q) when ``plrvs.is_symmetric``. ``alphas`` is riskcal's
    deprecated name for ``alpha``. A float for an int / float ``alpha``, else an array."""
    alpha = alpha_argument(alpha, alphas)
    scalar = is_python_scalar(alpha)
    a = _v.probabilities("alpha", alpha)
    pl = to_privacy_loss(plrvs)
    if plrvs.is_symmetric:
        out = _one_direction(pl, a.reshape(-1)).reshape(a.shape)
    else:
        out = np.asarray(pl.beta(a), np.float64).reshape(a.shape)
    if scalar:
        return float(out.reshape(-1)[0])
    return out
