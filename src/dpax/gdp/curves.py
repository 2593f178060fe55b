"""Trade-off curves as objects: the interface (:class:`TradeoffCurve`, in the rotated
coordinates u = alpha - beta, v = alpha + beta where a curve is v = V(u) with V convex on
[-1, 1]), a piecewise-linear curve given by its points, and the mu-GDP curve
(Dong, Roth & Su 2022). :mod:`dpax.conversions` builds the curves of (epsilon, delta)-DP, RDP
and zCDP from these; :mod:`.divergence` measures the distance between two of them.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from .._engine import validation as _v
from .._engine.host_special import ndtr
from . import closed_form as _closed


def _lower_hull(alpha: ArrayLike, beta: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
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
    """Base class: a trade-off curve beta = f(alpha) with its rotated form V(u).

    In u = alpha - beta, v = alpha + beta the curve is v = V(u), V convex on [-1, 1] (see the
    module docstring). Subclasses implement :meth:`beta` and :meth:`v`; a piecewise-linear
    one also :meth:`vertices_u` and :meth:`slopes`, which :func:`dpax.gdp.delta_divergence` reads. The
    base class takes no constructor arguments; the methods' examples use the subclasses.

    A curve of one's own, random guessing (beta = 1 - alpha, V(u) = 1 on [-1, 1]):

    >>> import numpy as np
    >>> from dpax.gdp.curves import GDPCurve, TradeoffCurve
    >>> from dpax.gdp.divergence import delta_divergence
    >>> class Diagonal(TradeoffCurve):
    ...     description = "random guessing"
    ...     def beta(self, alpha):
    ...         return 1.0 - np.asarray(alpha, float)
    ...     def v(self, u):
    ...         return np.maximum(1.0, np.abs(np.asarray(u, float)))
    >>> Diagonal(), Diagonal().advantage(), round(delta_divergence(Diagonal(), GDPCurve(1.0)), 4)
    (Diagonal(random guessing), 0.0, 0.1915)
    """

    description = "trade-off curve"
    #: mu when the curve is exactly f_mu (a GDPCurve: Delta against it is taken at its exact
    #: tangent points; any other curve is read on a dense grid of u and its vertices)
    gdp_mu: float | None = None

    def beta(self, alpha: ArrayLike) -> float | np.ndarray:
        """FNR of the best attack at FPR ``alpha``: f(alpha).

        Args:
            alpha: false-positive rates in [0, 1] (any shape).

        Returns:
            beta with the shape of ``alpha`` (a float for one number).

        Raises:
            NotImplementedError: on the base class (each subclass implements it).
            ValueError, TypeError: (subclasses) ``alpha`` outside [0, 1] or not real.

        >>> from dpax.gdp.curves import PiecewiseLinearCurve
        >>> PiecewiseLinearCurve([0.0, 0.2, 1.0], [1.0, 0.3, 0.0]).beta([0.0, 0.1, 0.5])
        array([1.    , 0.65  , 0.1875])
        """
        raise NotImplementedError

    def v(self, u: ArrayLike) -> np.ndarray:
        """The rotated curve V(u): alpha + beta at the point of the curve where alpha - beta = u.

        Args:
            u: alpha - beta, finite reals (|u| >= 1 gives V(u) = |u|, the square's edges).

        Returns:
            V(u), a float64 array with the shape of ``u``.

        Raises:
            NotImplementedError: on the base class (each subclass implements it).
            ValueError, TypeError: (subclasses) ``u`` not finite or not real.

        >>> from dpax.gdp.curves import PiecewiseLinearCurve
        >>> PiecewiseLinearCurve([0.0, 0.2, 1.0], [1.0, 0.3, 0.0]).v([-1.0, -0.1, 1.0])
        array([1. , 0.5, 1. ])
        """
        raise NotImplementedError

    def vertices_u(self) -> np.ndarray:
        """u = alpha - beta of the curve's vertices (empty for a smooth curve).

        Returns:
            A float64 array of the vertices' u; the base class (a smooth curve) gives an
            empty one.

        >>> from dpax.gdp.curves import GDPCurve
        >>> GDPCurve(1.0).vertices_u()
        array([], dtype=float64)
        """
        return np.empty(0)

    def slopes(self) -> np.ndarray:
        """|slope| of each linear piece in (alpha, beta) (empty for a smooth curve).

        Returns:
            A float64 array of one |d beta / d alpha| per piece; the base class (a smooth
            curve) gives an empty one.

        >>> from dpax.gdp.curves import GDPCurve
        >>> GDPCurve(1.0).slopes()
        array([], dtype=float64)
        """
        return np.empty(0)

    def advantage(self) -> float:
        """Largest TPR - FPR of an attack: max_alpha 1 - alpha - f(alpha) = 1 - min_u V(u).

        The base class takes the minimum of V over the curve's vertices and 2001 evenly
        spaced u in [-1, 1] (exact for a piecewise-linear curve).

        Returns:
            The advantage, in [0, 1]: exact (up to float64 rounding) for a piecewise-linear
            curve; for a smooth curve that does not override it, V is read at finitely many
            u, whose minimum is at least the true one, so the result can lie below the truth
            (:class:`GDPCurve` overrides it with its closed form).

        >>> from dpax.gdp.curves import PiecewiseLinearCurve
        >>> PiecewiseLinearCurve([0.0, 0.2, 1.0], [1.0, 0.3, 0.0]).advantage()
        0.5
        """
        u = np.concatenate([self.vertices_u(), np.linspace(-1, 1, 2001)])
        return float(max(0.0, 1.0 - np.min(self.v(u))))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.description})"


class PiecewiseLinearCurve(TradeoffCurve):
    """Convex piecewise-linear curve through the lower convex hull of ``(alpha, beta)``.

    The corners (0, 1) and (1, 0) join the points, and the curve is their greatest convex
    minorant: never above the points (the pessimistic curve through them). Outside the hull's
    range of u, V(u) = |u|. The hull's vertices are kept as ``alpha`` and ``beta_points``.

    Args:
        alpha: FPRs of the points, in [0, 1] (flattened).
        beta: FNRs of the points, in [0, 1], as many as ``alpha``.
        description: a label shown by ``repr``.

    Raises:
        ValueError: an entry outside [0, 1] or not finite, or ``alpha`` and ``beta`` of
            different lengths.
        TypeError: ``alpha`` or ``beta`` not real, or ``description`` not a string.

    >>> from dpax.gdp.curves import PiecewiseLinearCurve
    >>> curve = PiecewiseLinearCurve([0.2, 0.5], [0.3, 0.4], "two points")
    >>> curve, curve.alpha, curve.beta_points      # (0.5, 0.4) lies above the hull
    (PiecewiseLinearCurve(two points), array([0. , 0.2, 1. ]), array([1. , 0.3, 0. ]))
    """

    def __init__(self, alpha: ArrayLike, beta: ArrayLike, description: str = "piecewise-linear curve") -> None:
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

    def beta(self, alpha: ArrayLike) -> float | np.ndarray:
        """FNR at FPR ``alpha``, linear between the hull's vertices.

        Args:
            alpha: false-positive rates in [0, 1] (any shape).

        Returns:
            beta with the shape of ``alpha`` (a float for one number): the hull, never above
            the points the curve was built from.

        Raises:
            ValueError, TypeError: ``alpha`` outside [0, 1], not finite or not real.

        >>> from dpax.gdp.curves import PiecewiseLinearCurve
        >>> PiecewiseLinearCurve([0.0, 0.2, 1.0], [1.0, 0.3, 0.0]).beta(0.1)
        0.65
        """
        a = _v.probabilities("alpha", alpha)
        out = np.interp(a, self.alpha, self.beta_points)
        return out if out.ndim else float(out)

    def v(self, u: ArrayLike) -> np.ndarray:
        """V(u), linear between the vertices' (u, alpha + beta) and |u| outside them.

        Args:
            u: alpha - beta, finite reals (any shape).

        Returns:
            V(u), a float64 array with the shape of ``u``.

        Raises:
            ValueError, TypeError: ``u`` not finite or not real.

        >>> from dpax.gdp.curves import PiecewiseLinearCurve
        >>> PiecewiseLinearCurve([0.0, 0.2, 1.0], [1.0, 0.3, 0.0]).v([-0.1, 0.0])
        array([0.5       , 0.54545455])
        """
        u = _v.real_array("u", u)
        return np.where(u < self._u[0], -u, np.where(u > self._u[-1], u, np.interp(u, self._u, self._v)))

    def vertices_u(self) -> np.ndarray:
        """u = alpha - beta of the hull's vertices, ascending (the corners included).

        Returns:
            A float64 array, one entry per vertex.

        >>> from dpax.gdp.curves import PiecewiseLinearCurve
        >>> PiecewiseLinearCurve([0.0, 0.2, 1.0], [1.0, 0.3, 0.0]).vertices_u()
        array([-1. , -0.1,  1. ])
        """
        return self._u

    def slopes(self) -> np.ndarray:
        """|slope| -d beta / d alpha of each segment between consecutive vertices.

        Returns:
            A float64 array, one entry per segment (``inf`` for a vertical one).

        >>> from dpax.gdp.curves import PiecewiseLinearCurve
        >>> PiecewiseLinearCurve([0.0, 0.2, 1.0], [1.0, 0.3, 0.0]).slopes()
        array([3.5  , 0.375])
        """
        da, db = np.diff(self.alpha), -np.diff(self.beta_points)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(da > 0, db / np.where(da > 0, da, 1.0), np.inf)


class GDPCurve(TradeoffCurve):
    """The trade-off curve of mu-GDP: f_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu).

    Dong, Roth & Su, "Gaussian differential privacy" (2022); Eq. 7 of Gomez et al. The
    curve is smooth: no vertices or slopes, and :func:`dpax.gdp.delta_divergence` against it is taken
    at its exact tangent points (:meth:`tangent_u`).

    Args:
        mu: the GDP parameter, one number >= 0.

    Raises:
        ValueError, TypeError: ``mu`` negative, not finite, not real or not one number.

    >>> from dpax.gdp.curves import GDPCurve
    >>> curve = GDPCurve(1.0)
    >>> curve, curve.gdp_mu, round(curve.beta(0.1), 4)
    (GDPCurve(1-GDP), 1.0, 0.6109)
    """

    gdp_mu: float

    def __init__(self, mu: float) -> None:
        self.gdp_mu = _v.scalar("mu", mu, low=0.0)
        self.description = f"{self.gdp_mu:g}-GDP"

    def beta(self, alpha: ArrayLike) -> float | np.ndarray:
        """f_mu(alpha), by :func:`dpax.gdp.tradeoff`.

        Args:
            alpha: false-positive rates in [0, 1] (any shape).

        Returns:
            beta with the shape of ``alpha`` (a float for one number), never above f_mu
            (lowered by a bound on its float64 rounding, see :func:`dpax.gdp.tradeoff`).

        Raises:
            ValueError, TypeError: ``alpha`` outside [0, 1] or not real.

        >>> from dpax.gdp.curves import GDPCurve
        >>> GDPCurve(1.0).beta([0.01, 0.1]).round(4)
        array([0.9076, 0.6109])
        """
        return cast("float | np.ndarray", _closed.tradeoff(self.gdp_mu, alpha))

    def v(self, u: ArrayLike) -> np.ndarray:
        """V(u): alpha + beta at the point of f_mu with alpha - beta = u.

        Found by 90 steps of bisection in z, where alpha = Phi(-z) and beta = Phi(z - mu)
        (alpha - beta decreases in z), which brackets z to below float64's resolution;
        V(u) = |u| for |u| >= 1.

        Args:
            u: alpha - beta, finite reals (any shape).

        Returns:
            V(u), a float64 array with the shape of ``u``.

        Raises:
            ValueError, TypeError: ``u`` not finite or not real.

        >>> from dpax.gdp.curves import GDPCurve
        >>> GDPCurve(1.0).v([-1.0, 0.0, 1.0]).round(4)
        array([1.    , 0.6171, 1.    ])
        """
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

    def tangent_u(self, s: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """(u, V(u)) of the point of f_mu whose slope is -s.

        That point has alpha = Phi(-z), beta = Phi(z - mu) with z = log(s) / mu + mu / 2
        (mu = 0 is read as mu = 1e-300).

        Args:
            s: slopes' magnitudes, >= 0 (``inf``: the vertical end at alpha = 0).

        Returns:
            ``(u, v)``: alpha - beta and alpha + beta of the tangent points, each with the
            shape of ``s``.

        Raises:
            ValueError, TypeError: ``s`` negative, NaN or not real.

        >>> import numpy as np
        >>> from dpax.gdp.curves import GDPCurve
        >>> u, v = GDPCurve(1.0).tangent_u([1.0, np.inf])
        >>> u.round(4), v.round(4)                 # slope -1 at the symmetric point (u = 0)
        (array([ 0., -1.]), array([0.6171, 1.    ]))
        """
        s = _v.real_array("s", s, low=0.0, infinite_ok=True)
        mu = max(self.gdp_mu, 1e-300)
        with np.errstate(divide="ignore"):
            z = np.log(s) / mu + mu / 2.0
        a, b = ndtr(-z), ndtr(z - mu)
        return a - b, a + b

    def advantage(self) -> float:
        """Largest TPR - FPR of an attack on mu-GDP: 2 Phi(mu / 2) - 1 (:func:`dpax.gdp.advantage`).

        Returns:
            The advantage, in [0, 1], never below the truth (raised past erf's rounding).

        >>> from dpax.gdp.curves import GDPCurve
        >>> round(GDPCurve(1.0).advantage(), 4)
        0.3829
        """
        return float(_closed.advantage(self.gdp_mu))
