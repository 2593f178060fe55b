"""Trade-off curves as objects, and the Delta-divergence between two curves.

From "(epsilon, delta) considered harmful: report Gaussian DP" (Gomez et al.): the
Delta-divergence Delta(f, g) (Kaissis et al., Definition 2.10; the paper's Eq. 8) and its
symmetrised form (Eq. 9), between a :class:`~dpax.PrivacyLoss` (its symmetrised curve) or
any of the curve objects here (GDP, piecewise linear; :mod:`dpax.conversions` builds the
curves of (epsilon, delta)-DP, RDP and zCDP from these).

Geometry (see :mod:`dpax.gdp.mu_regret`): in u = alpha - beta, v = alpha + beta a trade-off
curve is v = V(u), V convex on [-1, 1] (V(u) = |u| along the square's edges), and
Delta(f, g) = max(0, sup_u (V_f(u) - V_g(u)) / 2). The sup is taken over the vertices of
both curves and, against a GDP curve, at the tangent points parallel to the other curve's
segments, which makes it exact for piecewise-linear curves against each other or against
GDP; for two smooth curves a dense grid of u gives a lower bound.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from .._engine import validation as _v
from ..privacy_loss import PrivacyLoss
from . import closed_form as _closed


def _lower_hull(alpha, beta) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of the lower convex hull of the points plus the corners (0, 1) and (1, 0)
    (the greatest convex minorant, so never above the points: the pessimistic curve)."""
    a = np.concatenate([[0.0], np.asarray(alpha, float), [1.0]])
    b = np.concatenate([[1.0], np.asarray(beta, float), [0.0]])
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    hull: list[int] = []
    for i in range(a.size):
        while len(hull) >= 2:
            i0, i1 = hull[-2], hull[-1]
            cross = (a[i1] - a[i0]) * (b[i] - b[i0]) - (b[i1] - b[i0]) * (a[i] - a[i0])
            if cross <= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    return a[hull], b[hull]


class TradeoffCurve:
    """A trade-off curve beta = f(alpha) with its rotated form V(u) (see module docstring)."""

    description = "trade-off curve"
    #: mu when the curve is exactly f_mu (a GDPCurve: Delta against it is taken at its exact
    #: tangent points; any other curve is read on a dense grid of u and its vertices)
    gdp_mu: float | None = None

    def beta(self, alpha):
        """FNR of the best attack at FPR ``alpha`` (array in, array out)."""
        raise NotImplementedError

    def v(self, u) -> np.ndarray:
        raise NotImplementedError

    def vertices_u(self) -> np.ndarray:
        """u of the curve's vertices (empty for a smooth curve)."""
        return np.empty(0)

    def slopes(self) -> np.ndarray:
        """|slope| of each linear piece in (alpha, beta) (empty for a smooth curve)."""
        return np.empty(0)

    def advantage(self) -> float:
        """max_alpha 1 - alpha - f(alpha) = 1 - min_u V(u)."""
        u = np.concatenate([self.vertices_u(), np.linspace(-1, 1, 2001)])
        return float(max(0.0, 1.0 - np.min(self.v(u))))

    def __repr__(self):
        return f"{type(self).__name__}({self.description})"


class PiecewiseLinearCurve(TradeoffCurve):
    """Convex piecewise-linear curve through the lower convex hull of ``(alpha, beta)``."""

    def __init__(self, alpha, beta, description="piecewise-linear curve"):
        a = _v.probabilities("alpha", alpha).reshape(-1)
        b = _v.probabilities("beta", beta).reshape(-1)
        if not isinstance(description, str):
            raise TypeError(f"description must be a string, got {type(description).__name__}")
        if a.shape != b.shape:
            raise ValueError(f"alpha and beta must have the same length, got {a.size} and {b.size}")
        self.alpha, self.beta_points = _lower_hull(a, b)
        self.description = description
        u = self.alpha - self.beta_points
        self._u, self._v = u, self.alpha + self.beta_points  # u ascending along the hull

    def beta(self, alpha):
        a = _v.probabilities("alpha", alpha)
        out = np.interp(a, self.alpha, self.beta_points)
        return out if out.ndim else float(out)

    def v(self, u):
        u = _v.real_array("u", u)
        return np.where(u < self._u[0], -u, np.where(u > self._u[-1], u, np.interp(u, self._u, self._v)))

    def vertices_u(self):
        return self._u

    def slopes(self):
        da, db = np.diff(self.alpha), -np.diff(self.beta_points)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(da > 0, db / np.where(da > 0, da, 1.0), np.inf)


class GDPCurve(TradeoffCurve):
    """f_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) (Eq. 7)."""

    def __init__(self, mu):
        self.gdp_mu = _v.scalar("mu", mu, low=0.0)
        self.description = f"{self.gdp_mu:g}-GDP"

    def beta(self, alpha):
        return _closed.tradeoff(self.gdp_mu, alpha)

    def v(self, u):
        """V(u): the point of f_mu with alpha - beta = u, by bisection in z (alpha = Phi(-z))."""
        u = _v.real_array("u", u)
        mu = self.gdp_mu
        lo = np.full(u.shape, -40.0)
        hi = np.full(u.shape, 40.0 + mu)
        for _ in range(90):  # alpha - beta = Phi(-z) - Phi(z - mu) decreases in z
            mid = 0.5 * (lo + hi)
            right = ndtr(-mid) - ndtr(mid - mu) > u
            lo = np.where(right, mid, lo)
            hi = np.where(right, hi, mid)
        z = 0.5 * (lo + hi)
        out = ndtr(-z) + ndtr(z - mu)
        return np.where(np.abs(u) >= 1.0, np.abs(u), out)

    def tangent_u(self, s):
        """(u, V) of the point of f_mu whose slope is -s (z = log(s) / mu + mu / 2); s >= 0
        (+inf: the vertical end)."""
        s = _v.real_array("s", s, low=0.0, infinite_ok=True)
        mu = max(self.gdp_mu, 1e-300)
        with np.errstate(divide="ignore"):
            z = np.log(s) / mu + mu / 2.0
        a, b = ndtr(-z), ndtr(z - mu)
        return a - b, a + b

    def advantage(self):
        return _closed.advantage(self.gdp_mu)


class PrivacyLossCurve(TradeoffCurve):
    """The symmetrised curve of one configuration of a PrivacyLoss (as ``pl.beta`` reports it)."""

    def __init__(self, pl):
        if not isinstance(pl, PrivacyLoss):
            raise TypeError(f"pl must be a dpax.PrivacyLoss, got {type(pl).__name__}")
        if pl.batch_shape:
            raise ValueError("PrivacyLossCurve takes one configuration; index a batch row by row")
        self.pl = pl
        self.description = pl.description
        cx, cy = pl.tradeoff_points()
        self._u = np.flip(cx - cy)  # ascending
        self._vv = np.flip(cx + cy)
        k0 = int(np.clip(1 - int(pl.offset), 0, pl.support_length))
        a_bar, b_bar = cx[k0], cy[k0]
        self._half, self._vbar = abs(a_bar - b_bar), a_bar + b_bar
        px, py = pl.pmf_x, pl.pmf_y
        keep = px > 0
        self._slopes = np.concatenate([py[keep] / px[keep], [1.0]])

    def beta(self, alpha):
        return self.pl.beta(alpha)

    def _vf(self, u):
        return np.where(u < self._u[0], -u, np.where(u > self._u[-1], u, np.interp(u, self._u, self._vv)))

    def v(self, u):
        u = _v.real_array("u", u)
        return np.where(np.abs(u) < self._half, self._vbar, np.minimum(self._vf(u), self._vf(-u)))

    def vertices_u(self):
        return np.concatenate([self._u, -self._u, [-self._half, self._half]])

    def slopes(self):
        return np.concatenate([self._slopes, 1.0 / self._slopes])

    def advantage(self):
        return float(self.pl.advantage())


# -- Delta-divergence -------------------------------------------------------------------------


def _as_curve(c, name):
    if isinstance(c, TradeoffCurve):
        return c
    if isinstance(c, PrivacyLoss):
        return PrivacyLossCurve(c)
    raise TypeError(
        f"{name} must be a dpax.PrivacyLoss or a trade-off curve (dpax.conversions.gdp_curve, "
        f"epsilon_delta_curve, rdp_curve, zcdp_curve, tabulated_curve), got {type(c).__name__}"
    )


_DENSE_U = np.unique(np.concatenate([
    np.linspace(-1.0, 1.0, 4001),
    1.0 - np.logspace(-14, 0, 300), -(1.0 - np.logspace(-14, 0, 300)),
]))


def _divergence(f: TradeoffCurve, g: TradeoffCurve) -> tuple[float, float]:
    """(Delta(f, g), u where the sup is attained)."""
    parts = [_DENSE_U, f.vertices_u(), g.vertices_u()]
    if isinstance(g, GDPCurve) and f.slopes().size:  # f_mu's tangent points parallel to f's segments
        s = f.slopes()
        s = s[np.isfinite(s) & (s > 0)]
        if s.size:
            parts.append(g.tangent_u(np.unique(s))[0])
    u = np.unique(np.clip(np.concatenate(parts), -1.0, 1.0))
    gap = (f.v(u) - g.v(u)) / 2.0
    i = int(np.argmax(gap))
    return max(0.0, float(gap[i])), float(u[i])


def delta_divergence(f, g) -> float:
    """Delta(f, g) = inf{kappa >= 0 : f(alpha + kappa) - kappa <= g(alpha) for all alpha}
    (Kaissis et al., Definition 2.10; the paper's Eq. 8): how far f must be shifted down-left
    to be more private than g. ``f``, ``g``: PrivacyLoss (one configuration; a batch gives an
    array) or curve objects of this module. Computed as max(0, sup_u (V_f - V_g) / 2),
    exact between piecewise-linear curves and between a piecewise-linear curve and GDP.

    >>> from dpax.conversions import gdp_curve
    >>> delta_divergence(gdp_curve(1.0), gdp_curve(0.5))   # 1-GDP is less private than 0.5-GDP
    0.0
    """
    for c, _name in ((f, "f"), (g, "g")):
        if isinstance(c, PrivacyLoss) and c.batch_shape:
            return _batched(delta_divergence, f, g)
    return _divergence(_as_curve(f, "f"), _as_curve(g, "g"))[0]


def symmetric_delta_divergence(f, g) -> float:
    """max(Delta(f, g), Delta(g, f)) (Eq. 9), a metric on trade-off curves; by Proposition 4.2
    |advantage(f) - advantage(g)| <= 2 of it.

    >>> from dpax.conversions import gdp_curve
    >>> round(symmetric_delta_divergence(gdp_curve(1.0), gdp_curve(0.5)), 4)
    0.0928
    """
    for c in (f, g):
        if isinstance(c, PrivacyLoss) and c.batch_shape:
            return _batched(symmetric_delta_divergence, f, g)
    cf, cg = _as_curve(f, "f"), _as_curve(g, "g")
    return max(_divergence(cf, cg)[0], _divergence(cg, cf)[0])


def _batched(fn, f, g):
    shapes = [c.batch_shape for c in (f, g) if isinstance(c, PrivacyLoss)]
    shape = np.broadcast_shapes(*shapes)
    out = np.empty(shape)

    def row(c, idx):
        if not isinstance(c, PrivacyLoss):
            return c
        return c.broadcast_to(shape)[idx] if shape else c

    for idx in np.ndindex(shape):
        out[idx] = fn(row(f, idx), row(g, idx))
    return out
