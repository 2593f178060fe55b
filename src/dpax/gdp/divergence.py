"""The Delta-divergence between two trade-off curves, and a PrivacyLoss read as a curve.

From "(epsilon, delta) considered harmful: report Gaussian DP" (Gomez et al. 2025): the
Delta-divergence Delta(f, g) (Kaissis et al., Definition 2.10; the paper's Eq. 8) and its
symmetrised form (Eq. 9), between a :class:`~dpax.PrivacyLoss` (its symmetrised curve,
:class:`PrivacyLossCurve`) or any curve of :mod:`.curves`.

Geometry (see :mod:`dpax._engine.mu_regret`): in u = alpha - beta, v = alpha + beta a trade-off
curve is v = V(u), V convex on [-1, 1] (V(u) = |u| along the square's edges), and
Delta(f, g) = max(0, sup_u (V_f(u) - V_g(u)) / 2). The sup is taken over the vertices of
both curves and, against a GDP curve, at the tangent points parallel to the other curve's
segments, which makes it exact for piecewise-linear curves against each other or against
GDP; for two smooth curves a dense grid of u gives a lower bound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from .._engine import validation as _v
from ..privacy_loss import PrivacyLoss
from .curves import GDPCurve, TradeoffCurve


class PrivacyLossCurve(TradeoffCurve):
    """The symmetrised curve of one configuration of a PrivacyLoss (as ``pl.beta`` reports it).

    Its vertices are those of the one-directional curve (:meth:`dpax.PrivacyLoss.tradeoff_points`),
    mirrored for the inverse curve, with the flat piece V = const around u = 0 that the
    convex hull of min(f, f^-1) adds; its slopes are the likelihood ratios of the grid points.

    Args:
        pl: a :class:`dpax.PrivacyLoss` of one configuration (empty batch shape).

    Raises:
        TypeError: ``pl`` is not a PrivacyLoss.
        ValueError: ``pl`` is a batch (index it row by row).

    >>> import dpax
    >>> from dpax.gdp.divergence import PrivacyLossCurve
    >>> curve = PrivacyLossCurve(dpax.gaussian(1.0, grid_step=1e-2))
    >>> curve, round(curve.beta(0.1), 4)
    (PrivacyLossCurve(gaussian(noise_multiplier=1, sensitivity=1)), 0.6109)
    """

    def __init__(self, pl: PrivacyLoss) -> None:
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

    def beta(self, alpha: ArrayLike) -> float | np.ndarray:
        """FNR at FPR ``alpha`` of the symmetrised curve: ``pl.beta(alpha)``.

        Args:
            alpha: false-positive rates in [0, 1] (any shape).

        Returns:
            beta with the shape of ``alpha`` (a float for one number), never above the
            mechanism's true curve (``pl.beta``'s guarantee).

        Raises:
            ValueError, TypeError: ``alpha`` outside [0, 1] or not real.

        >>> import dpax
        >>> from dpax.gdp.divergence import PrivacyLossCurve
        >>> PrivacyLossCurve(dpax.gaussian(1.0, grid_step=1e-2)).beta([0.01, 0.1]).round(4)
        array([0.9076, 0.6109])
        """
        return cast("float | np.ndarray", self.pl.beta(alpha))

    def _vf(self, u: np.ndarray) -> np.ndarray:
        return np.where(u < self._u[0], -u, np.where(u > self._u[-1], u, np.interp(u, self._u, self._vv)))

    def v(self, u: ArrayLike) -> np.ndarray:
        """V(u) of the symmetrised curve: the smaller of V_f(u) and V_f(-u), flat near u = 0.

        Args:
            u: alpha - beta, finite reals (any shape).

        Returns:
            V(u), a float64 array with the shape of ``u``.

        Raises:
            ValueError, TypeError: ``u`` not finite or not real.

        >>> import dpax
        >>> from dpax.gdp.divergence import PrivacyLossCurve
        >>> PrivacyLossCurve(dpax.gaussian(1.0, grid_step=1e-2)).v([-1.0, 0.0, 1.0]).round(4)
        array([1.    , 0.6171, 1.    ])
        """
        u = _v.real_array("u", u)
        return np.where(np.abs(u) < self._half, self._vbar, np.minimum(self._vf(u), self._vf(-u)))

    def vertices_u(self) -> np.ndarray:
        """u of the vertices: the one-directional curve's, their mirror images, and the ends
        of the flat piece around u = 0 (unsorted, possibly repeated).

        Returns:
            A float64 array of u in [-1, 1].

        >>> import dpax
        >>> from dpax.gdp.divergence import PrivacyLossCurve
        >>> u = PrivacyLossCurve(dpax.gaussian(1.0, grid_step=1e-2)).vertices_u()
        >>> round(float(u.min()), 12), round(float(u.max()), 12)
        (-1.0, 1.0)
        """
        return np.concatenate([self._u, -self._u, [-self._half, self._half]])

    def slopes(self) -> np.ndarray:
        """|slope| of the pieces: Pr[Y = x] / Pr[X = x] at each grid point with Pr[X = x] > 0,
        then 1, and the reciprocals of all of them (the mirrored curve's).

        Returns:
            A float64 array of slopes > 0 (``inf`` where Pr[Y = x] > 0 = Pr[X = x] is not
            possible: such points are left out).

        >>> import dpax
        >>> from dpax.gdp.divergence import PrivacyLossCurve
        >>> s = PrivacyLossCurve(dpax.gaussian(1.0, grid_step=1e-2)).slopes()
        >>> bool((s > 0).all()), 1.0 in s
        (True, True)
        """
        return np.concatenate([self._slopes, 1.0 / self._slopes])

    def advantage(self) -> float:
        """Largest TPR - FPR of an attack: ``pl.advantage()``.

        Returns:
            The advantage, in [0, 1], never below the mechanism's (``pl.advantage``'s
            guarantee).

        >>> import dpax
        >>> from dpax.gdp.divergence import PrivacyLossCurve
        >>> round(PrivacyLossCurve(dpax.gaussian(1.0, grid_step=1e-2)).advantage(), 4)
        0.3829
        """
        return float(cast(float, self.pl.advantage()))


# -- Delta-divergence -------------------------------------------------------------------------


def _as_curve(c: object, name: str) -> TradeoffCurve:
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


def delta_divergence(f: PrivacyLoss | TradeoffCurve, g: PrivacyLoss | TradeoffCurve) -> float | np.ndarray:
    """Delta(f, g) = inf{kappa >= 0 : f(alpha + kappa) - kappa <= g(alpha) for all alpha}.

    Kaissis et al., "Beyond the calibration point: mechanism comparison in differential
    privacy" (2024), Definition 2.10; Eq. 8 of Gomez et al., "(epsilon, delta) considered
    harmful: report Gaussian DP" (2025): how far f must be shifted down-left to be more
    private than g. Computed as max(0, sup_u (V_f(u) - V_g(u)) / 2) over a dense grid of u,
    both curves' vertices and, against a :class:`GDPCurve`, its tangent points parallel to
    f's segments: exact between piecewise-linear curves and between a piecewise-linear curve
    and GDP, a lower bound between two smooth curves.

    Args:
        f: a :class:`dpax.PrivacyLoss` (its symmetrised curve; a batch is taken row by row,
            broadcast against ``g``'s) or a curve object of this module.
        g: the same kinds as ``f``.

    Returns:
        Delta(f, g) >= 0: a float, or an array of the broadcast batch shape where ``f`` or
        ``g`` is a batch; exact up to float64 rounding where one curve is piecewise linear
        (a PrivacyLoss's is) and the other piecewise linear or GDP, a lower bound otherwise.

    Raises:
        TypeError: ``f`` or ``g`` is neither a PrivacyLoss nor a curve object.

    >>> import dpax
    >>> from dpax.conversions import gdp_curve
    >>> delta_divergence(gdp_curve(1.0), gdp_curve(0.5))   # 1-GDP is less private than 0.5-GDP
    0.0
    >>> round(delta_divergence(gdp_curve(0.5), gdp_curve(1.0)), 4)
    0.0928
    >>> delta_divergence(dpax.gaussian([1.0, 2.0], grid_step=1e-2), gdp_curve(1.0)).round(4)
    array([0.    , 0.0928])
    """
    for c, _name in ((f, "f"), (g, "g")):
        if isinstance(c, PrivacyLoss) and c.batch_shape:
            return _batched(delta_divergence, f, g)
    return _divergence(_as_curve(f, "f"), _as_curve(g, "g"))[0]


def symmetric_delta_divergence(f: PrivacyLoss | TradeoffCurve,
                               g: PrivacyLoss | TradeoffCurve) -> float | np.ndarray:
    """max(Delta(f, g), Delta(g, f)), a metric on trade-off curves.

    Eq. 9 of Gomez et al., "(epsilon, delta) considered harmful: report Gaussian DP" (2025);
    by their Proposition 4.2, |advantage(f) - advantage(g)| <= 2 of it. Each direction is
    :func:`delta_divergence`.

    Args:
        f: a :class:`dpax.PrivacyLoss` (a batch is taken row by row, broadcast against
            ``g``'s) or a curve object of this module.
        g: the same kinds as ``f``.

    Returns:
        The symmetric divergence >= 0: a float, or an array of the broadcast batch shape
        where ``f`` or ``g`` is a batch.

    Raises:
        TypeError: ``f`` or ``g`` is neither a PrivacyLoss nor a curve object.

    >>> from dpax.conversions import gdp_curve
    >>> round(symmetric_delta_divergence(gdp_curve(1.0), gdp_curve(0.5)), 4)
    0.0928
    """
    for c in (f, g):
        if isinstance(c, PrivacyLoss) and c.batch_shape:
            return _batched(symmetric_delta_divergence, f, g)
    cf, cg = _as_curve(f, "f"), _as_curve(g, "g")
    return max(_divergence(cf, cg)[0], _divergence(cg, cf)[0])


def _batched(fn: Callable[[PrivacyLoss | TradeoffCurve, PrivacyLoss | TradeoffCurve], float | np.ndarray],
             f: PrivacyLoss | TradeoffCurve, g: PrivacyLoss | TradeoffCurve) -> np.ndarray:
    shapes = [c.batch_shape for c in (f, g) if isinstance(c, PrivacyLoss)]
    shape = np.broadcast_shapes(*shapes)
    out = np.empty(shape)

    def row(c: PrivacyLoss | TradeoffCurve, idx: tuple[int, ...]) -> PrivacyLoss | TradeoffCurve:
        if not isinstance(c, PrivacyLoss):
            return c
        return c.broadcast_to(shape)[idx] if shape else c

    for idx in np.ndindex(shape):
        out[idx] = fn(row(f, idx), row(g, idx))
    return out
