"""Targets read directly off the trade-off curve (Kulynych et al. 2024, Sections 2-3): error
rates (alpha, beta), the attack advantage, and (epsilon, delta).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .._engine import analyse
from .._engine import validation as _v
from .._engine.host_special import erfinv as _erfinv
from .._engine.host_special import ndtri as _np_ndtri  # scipy.stats.norm.ppf; isf(q) = -ndtri(q)
from .._engine.pair import Pair
from .._engine.x64 import float64
from ..conversions import mu_from_epsilon_delta
from .base import Target


@dataclass(frozen=True)
class ErrRates(Target):
    """Every attack with FPR <= alpha has FNR >= beta (Eq. 16-18): f(alpha) >= beta.

    Equivalently TPR = 1 - beta is bounded at FPR alpha; see :meth:`from_tpr`.

    Args:
        alpha: the attack's false-positive rate, in (0, 1).
        beta: the least false-negative rate allowed at ``alpha``, in (0, 1),
            alpha + beta < 1.

    Raises:
        TypeError: a field is not numeric (booleans and strings included).
        ValueError: a field is out of its range or not finite, alpha + beta >= 1, or the
            fields do not broadcast together.

    >>> import dpax
    >>> from dpax.targets import ErrRates
    >>> ErrRates(alpha=0.01, beta=0.5).margin(dpax.gaussian(1.0, grid_step=1e-2).pair)[0].round(4)
    array([0.4076])
    """

    # fields: any array-like when passed, a float64 np.ndarray once __post_init__ has run
    alpha: Any
    beta: Any
    reports = ("beta",)

    def __post_init__(self) -> None:
        a = _v.real_array("alpha", self.alpha, low=0.0, high=1.0, low_open=True, high_open=True)
        b = _v.real_array("beta", self.beta, low=0.0, high=1.0, low_open=True, high_open=True)
        a_b, b_b = _v.broadcast_arrays(("alpha", a), ("beta", b))
        bad = a_b + b_b >= 1
        if np.any(bad):
            i = tuple(np.argwhere(bad)[0]) if bad.ndim else ()
            where = f" (row {[int(x) for x in i]})" if i else ""
            raise ValueError(
                f"alpha + beta must be < 1 (alpha + beta >= 1 is met by a coin flip and bounds nothing){where}, "
                f"got alpha={_v.shown(a_b[i])}, beta={_v.shown(b_b[i])}"
            )
        object.__setattr__(self, "alpha", a)
        object.__setattr__(self, "beta", b)

    @classmethod
    def from_tpr(cls, alpha: ArrayLike, tpr: ArrayLike) -> ErrRates:
        """Attack TPR at most ``tpr`` at FPR ``alpha``.

        Args:
            alpha: the attack's false-positive rate, in (0, 1).
            tpr: the largest true-positive rate allowed at ``alpha``, in (alpha, 1).

        Returns:
            ``ErrRates(alpha, 1 - tpr)``.

        Raises:
            TypeError: ``alpha`` or ``tpr`` is not numeric.
            ValueError: ``alpha`` outside (0, 1), ``tpr`` outside (alpha, 1) or not finite,
                or the two do not broadcast together.

        >>> from dpax.targets import ErrRates
        >>> ErrRates.from_tpr(0.01, 0.1).beta
        array(0.9)
        """
        t = _v.real_array("tpr", tpr, low=0.0, high=1.0, low_open=True, high_open=True)
        a = _v.real_array("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
        a_b, t_b = _v.broadcast_arrays(("alpha", a), ("tpr", t))
        if np.any(t_b <= a_b):
            i = np.argmax(np.ravel(t_b <= a_b))
            raise ValueError(f"tpr must lie in (alpha, 1) (a TPR at most the FPR is met by a coin flip), got "
                             f"tpr={_v.shown(float(np.ravel(t_b)[i]))} at alpha={_v.shown(float(np.ravel(a_b)[i]))}")
        return cls(alpha, 1.0 - t)

    def shape(self) -> tuple[int, ...]:
        """The broadcast shape of ``alpha`` and ``beta``.

        Returns:
            The shape as a tuple of integers.

        >>> from dpax.targets import ErrRates
        >>> ErrRates([0.01, 0.1], 0.5).shape()
        (2,)
        """
        return np.broadcast_shapes(self.alpha.shape, self.beta.shape)

    @float64
    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """f(alpha) - beta per row; achieved ``{"beta": f(alpha)}`` (see :meth:`Target.margin`).

        Args:
            pair: PLRV rows, one per configuration of a flat target
                (:attr:`dpax.PrivacyLoss.pair`).

        Returns:
            ``(margin, achieved)``: f(alpha) - beta per row (>= 0: met) and
            ``{"beta": f(alpha)}``, float64 arrays of one entry per row; f(alpha) is never
            above ``pair``'s curve.

        Raises:
            TypeError: ``pair`` is not a :class:`dpax.PrivacyLoss`'s ``.pair``.

        >>> import dpax
        >>> from dpax.targets import ErrRates
        >>> margin, achieved = ErrRates(0.01, 0.5).margin(dpax.gaussian(1.0, grid_step=1e-2).pair)
        >>> margin.round(4), achieved["beta"].round(4)   # G_1(0.01) = 0.9076
        (array([0.4076]), array([0.9076]))
        """
        alpha = np.asarray(self.alpha).reshape(-1, 1)  # above 1/2: read from the complement tables too
        b = np.asarray(analyse.beta_kernel(pair, alpha, near_one=analyse.needs_complements(alpha)))[:, 0]
        return b - self.beta.reshape(-1), {"beta": b}

    def gdp_mu(self) -> np.ndarray:
        """mu = Phi^-1(1 - alpha) - Phi^-1(beta): G_mu passes through (alpha, beta).

        Below 0.01 the difference of the two quantiles cancels (alpha + beta near 1): mu is
        the integral of 1 / phi(Phi^-1(p)) over p from beta to 1 - alpha instead, whose width
        is formed exactly (8-point Gauss-Legendre; the integrand varies by under 50% there).

        Returns:
            mu, a float64 array of the target's shape (a search start only).

        >>> from dpax.targets import ErrRates
        >>> ErrRates([0.01, 0.1], 0.5).gdp_mu().round(4)
        array([2.3263, 1.2816])
        """
        a, b = np.broadcast_arrays(self.alpha, self.beta)
        mu = -_np_ndtri(a) - _np_ndtri(b)
        near = mu < 0.01
        if np.any(near):
            a, b = a[near], b[near]
            one_minus_a = 1.0 - a
            width = (one_minus_a - b) + ((1.0 - one_minus_a) - a)  # (1 - a) - b, the rounding of 1 - a restored
            nodes, weights = np.polynomial.legendre.leggauss(8)
            p = b[:, None] + 0.5 * width[:, None] * (1.0 + nodes)
            mu = np.array(mu, float)
            mu[near] = 0.5 * width * np.sum(weights * np.sqrt(2.0 * np.pi) * np.exp(0.5 * _np_ndtri(p) ** 2), -1)
        return mu

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """The epsilon whose (epsilon, delta) curve passes above (alpha, beta) (Prop. 2.5):
        max(0, log((1 - delta - beta) / alpha), log((1 - delta - alpha) / beta)).

        Args:
            delta: the delta of the (epsilon, delta)-DP guarantee, in [0, 1).

        Returns:
            epsilon, a float64 array with the broadcast shape of the target and ``delta``.

        Raises:
            TypeError: ``delta`` is not numeric.
            ValueError: an entry of ``delta`` lies outside [0, 1) or is not finite.

        >>> from dpax.targets import ErrRates
        >>> ErrRates([0.01, 0.1], 0.5).standard_epsilon(1e-5).round(4)
        array([3.912 , 1.6094])
        """
        # (eps, delta)-DP curve max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)) >= beta
        a, b = self.alpha, self.beta
        d = cast(np.ndarray, delta)  # a float64 array: checked by _CHECKS["standard_epsilon"]
        with np.errstate(divide="ignore", invalid="ignore"):
            e1 = np.log((1 - d - b) / a)
            e2 = np.log((1 - d - a) / b)
        return np.maximum(np.maximum(e1, e2), 0.0)

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """Whether subsampling alone meets the target: (1 - q)(1 - alpha) >= beta.

        Args:
            leak_probability: q = 1 - (1 - p)^T for T steps at sample rate p, in [0, 1].

        Returns:
            A boolean array, with the broadcast shape of the target and
            ``leak_probability``.

        Raises:
            TypeError: ``leak_probability`` is not numeric.
            ValueError: an entry of ``leak_probability`` lies outside [0, 1] or is not
                finite.

        >>> from dpax.targets import ErrRates
        >>> ErrRates(0.01, [0.5, 0.985]).met_without_noise(0.01)
        array([ True, False])
        """
        q = cast(np.ndarray, leak_probability)  # a float64 array: checked by _CHECKS["met_without_noise"]
        return (1 - q) * (1 - self.alpha) >= self.beta


@dataclass(frozen=True)
class Advantage(Target):
    """Membership advantage TPR - FPR of every attack at most ``advantage`` (Eq. 13-14).

    Args:
        advantage: the largest advantage allowed, in (0, 1).

    Raises:
        TypeError: a field is not numeric (booleans and strings included).
        ValueError: a field is out of its range or not finite.

    >>> from dpax.targets import Advantage
    >>> round(float(Advantage(0.3).gdp_mu()), 4)
    0.7706
    """

    # fields: any array-like when passed, a float64 np.ndarray once __post_init__ has run
    advantage: Any
    reports = ("advantage",)

    def __post_init__(self) -> None:
        a = _v.real_array("advantage", self.advantage, low=0.0, high=1.0, low_open=True, high_open=True)
        object.__setattr__(self, "advantage", a)

    def shape(self) -> tuple[int, ...]:
        """The shape of ``advantage``.

        Returns:
            The shape as a tuple of integers.

        >>> from dpax.targets import Advantage
        >>> Advantage([0.3, 0.4]).shape()
        (2,)
        """
        return self.advantage.shape

    @float64
    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """advantage bound - achieved advantage per row (see :meth:`Target.margin`).

        Args:
            pair: PLRV rows, one per configuration of a flat target
                (:attr:`dpax.PrivacyLoss.pair`).

        Returns:
            ``(margin, achieved)``: the bound minus the advantage per row (>= 0: met) and
            ``{"advantage": advantage}``, float64 arrays of one entry per row; the
            advantage is never below ``pair``'s.

        Raises:
            TypeError: ``pair`` is not a :class:`dpax.PrivacyLoss`'s ``.pair``.

        >>> import dpax
        >>> from dpax.targets import Advantage
        >>> margin, achieved = Advantage(0.4).margin(dpax.gaussian(1.0, grid_step=1e-2).pair)
        >>> margin.round(4), achieved["advantage"].round(4)   # 1-GDP: 2 Phi(1/2) - 1 = 0.3829
        (array([0.0171]), array([0.3829]))
        """
        adv = np.asarray(analyse.advantage_kernel(pair))
        return self.advantage.reshape(-1) - adv, {"advantage": adv}

    def gdp_mu(self) -> np.ndarray:
        """mu = 2 Phi^-1((1 + advantage) / 2), the mu-GDP advantage inverted: -2 Phi^-1((1 -
        advantage) / 2) above 1/2 (1 - advantage is exact there; (1 + advantage) / 2 rounds to 1
        at advantage 1 - 2**-53), 2 sqrt(2) erfinv(advantage) below (no cancellation for a tiny one).

        Returns:
            mu, a float64 array of the target's shape (a search start only).

        >>> from dpax.targets import Advantage
        >>> Advantage([0.3, 0.4]).gdp_mu().round(4)
        array([0.7706, 1.0488])
        """
        a = self.advantage
        with np.errstate(under="ignore"):
            return np.where(a > 0.5, -2.0 * _np_ndtri((1.0 - a) / 2.0), 2.0 * np.sqrt(2.0) * _erfinv(a))

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """epsilon = log((1 + advantage - 2 delta) / (1 - advantage)) (Prop. 2.6), >= 0.

        Args:
            delta: the delta of the (epsilon, delta)-DP guarantee, in [0, 1).

        Returns:
            epsilon, a float64 array with the broadcast shape of the target and ``delta``.

        Raises:
            TypeError: ``delta`` is not numeric.
            ValueError: an entry of ``delta`` lies outside [0, 1) or is not finite.

        >>> from dpax.targets import Advantage
        >>> Advantage([0.3, 0.4]).standard_epsilon(1e-5).round(4)
        array([0.619 , 0.8473])
        """
        # Proposition 2.6: advantage <= (e^eps - 1 + 2 delta) / (e^eps + 1)
        eta = self.advantage
        d = cast(np.ndarray, delta)  # a float64 array: checked by _CHECKS["standard_epsilon"]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.maximum(np.log((1 + eta - 2 * d) / (1 - eta)), 0.0)

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """Whether subsampling alone meets the target: q <= advantage (the noiseless
        curve's advantage is q).

        Args:
            leak_probability: q = 1 - (1 - p)^T for T steps at sample rate p, in [0, 1].

        Returns:
            A boolean array, with the broadcast shape of the target and
            ``leak_probability``.

        Raises:
            TypeError: ``leak_probability`` is not numeric.
            ValueError: an entry of ``leak_probability`` lies outside [0, 1] or is not
                finite.

        >>> from dpax.targets import Advantage
        >>> Advantage([0.3, 0.4]).met_without_noise(0.35)
        array([False,  True])
        """
        return leak_probability <= self.advantage


@dataclass(frozen=True)
class Epsilon(Target):
    """Standard calibration (Eq. 2): the mechanism is (epsilon, delta)-DP.

    Args:
        epsilon: the guarantee's epsilon, > 0.
        delta: the guarantee's delta, in (0, 1).

    Raises:
        TypeError: a field is not numeric (booleans and strings included).
        ValueError: a field is out of its range or not finite, or the fields do not
            broadcast together.

    >>> from dpax.targets import Epsilon
    >>> round(float(Epsilon(1.0, 1e-5).gdp_mu()), 4)
    0.2681
    """

    # fields: any array-like when passed, a float64 np.ndarray once __post_init__ has run
    epsilon: Any
    delta: Any
    reports = ("epsilon",)

    def __post_init__(self) -> None:
        e = _v.real_array("epsilon", self.epsilon, low=0.0, low_open=True)
        d = _v.real_array("delta", self.delta, low=0.0, high=1.0, low_open=True, high_open=True)
        _v.broadcast_shapes(("epsilon", e), ("delta", d))
        object.__setattr__(self, "epsilon", e)
        object.__setattr__(self, "delta", d)

    def shape(self) -> tuple[int, ...]:
        """The broadcast shape of ``epsilon`` and ``delta``.

        Returns:
            The shape as a tuple of integers.

        >>> from dpax.targets import Epsilon
        >>> Epsilon([1.0, 2.0], 1e-5).shape()
        (2,)
        """
        return np.broadcast_shapes(self.epsilon.shape, self.delta.shape)

    @float64
    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """epsilon bound - achieved epsilon(delta) per row (see :meth:`Target.margin`).

        Args:
            pair: PLRV rows, one per configuration of a flat target
                (:attr:`dpax.PrivacyLoss.pair`).

        Returns:
            ``(margin, achieved)``: the bound minus epsilon(delta) per row (>= 0: met) and
            ``{"epsilon": epsilon(delta)}``, float64 arrays of one entry per row; the
            epsilon is never below ``pair``'s.

        Raises:
            TypeError: ``pair`` is not a :class:`dpax.PrivacyLoss`'s ``.pair``.

        >>> import dpax
        >>> from dpax.targets import Epsilon
        >>> margin, achieved = Epsilon(1.0, 1e-5).margin(dpax.gaussian(1.0, grid_step=1e-2).pair)
        >>> margin.round(4), achieved["epsilon"].round(4)   # 1-GDP's exact epsilon: 4.3772
        (array([-3.3772]), array([4.3772]))
        """
        eps = np.asarray(analyse.epsilon_kernel(pair, np.asarray(self.delta).reshape(-1, 1)))[:, 0]
        return self.epsilon.reshape(-1) - eps, {"epsilon": eps}

    def gdp_mu(self) -> np.ndarray:
        """The largest mu whose mu-GDP mechanism is (epsilon, delta)-DP.

        Returns:
            mu, a float64 array of the target's shape (a search start only).

        >>> from dpax.targets import Epsilon
        >>> Epsilon([1.0, 2.0], 1e-5).gdp_mu().round(4)
        array([0.2681, 0.5016])
        """
        return np.asarray(mu_from_epsilon_delta(self.epsilon, self.delta), float)

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """The target's own ``epsilon`` (``delta`` is ignored).

        Args:
            delta: the delta of the (epsilon, delta)-DP guarantee, in [0, 1).

        Returns:
            ``epsilon``, a float64 array of the target's shape (not broadcast with
            ``delta``).

        Raises:
            TypeError: ``delta`` is not numeric.
            ValueError: an entry of ``delta`` lies outside [0, 1) or is not finite.

        >>> from dpax.targets import Epsilon
        >>> Epsilon([1.0, 2.0], 1e-5).standard_epsilon(1e-6)
        array([1., 2.])
        """
        return self.epsilon

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """Whether subsampling alone meets the target: q <= delta (the noiseless pair is
        (0, q)-DP).

        Args:
            leak_probability: q = 1 - (1 - p)^T for T steps at sample rate p, in [0, 1].

        Returns:
            A boolean array, with the broadcast shape of the target and
            ``leak_probability``.

        Raises:
            TypeError: ``leak_probability`` is not numeric.
            ValueError: an entry of ``leak_probability`` lies outside [0, 1] or is not
                finite.

        >>> from dpax.targets import Epsilon
        >>> Epsilon(1.0, 1e-5).met_without_noise([0.0, 1e-3])
        array([ True, False])
        """
        return leak_probability <= self.delta
