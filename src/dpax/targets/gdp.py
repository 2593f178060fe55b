"""The Gaussian-DP target: the mechanism is mu-GDP (Dong, Roth & Su 2022, Def. 2.4), checked
at the breakpoints of both directions by :func:`dpax._engine.mu_regret.gdp_margin_kernel`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax.numpy as jnp
import numpy as np
from numpy.typing import ArrayLike

from .._engine import validation as _v
from .._engine.mu_regret import gdp_margin_kernel
from .._engine.pair import Pair
from .._engine.x64 import float64
from .base import Target


@dataclass(frozen=True)
class GDP(Target):
    """The mechanism is mu-GDP: f(alpha) >= G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) for all
    alpha (Dong, Roth & Su 2022, Def. 2.4).

    G_mu is convex and the discrete curve piecewise linear, so checking the breakpoints of
    both directions is exact (a chord of f above G at both ends stays above the convex G).
    A discrete pair with atoms at +-inf (mass kept off the grid, ~1e-16) is never GDP at its
    extreme ends (f(0) = 1 - Pr[Y = inf] < G_mu(0) = 1); the check forgives that mass plus
    GDP_SLACK = 1e-12 of round-off. The margin is min_i beta_i - G_mu(alpha_i) (+ that slack).

    Args:
        mu: the GDP parameter, > 0 (an array broadcasts with the configurations).

    Raises:
        TypeError: ``mu`` is not numeric (booleans and strings included).
        ValueError: an entry of ``mu`` is not finite or not > 0.

    >>> import dpax
    >>> from dpax.targets import GDP
    >>> bool(GDP(1.01).margin(dpax.gaussian(1.0, grid_step=1e-2).pair)[0][0] >= 0)
    True
    """

    # fields: any array-like when passed, a float64 np.ndarray once __post_init__ has run
    mu: Any
    reports = ("gdp_margin",)

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _v.real_array("mu", self.mu, low=0.0, low_open=True))

    def shape(self) -> tuple[int, ...]:
        """The shape of ``mu``.

        Returns:
            The shape as a tuple of integers.

        >>> from dpax.targets import GDP
        >>> GDP([0.5, 1.0]).shape()
        (2,)
        """
        return self.mu.shape

    @float64
    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """min over breakpoints of beta_i - G_mu(alpha_i), + slack (see :meth:`Target.margin`).

        Args:
            pair: PLRV rows, one per configuration of a flat target
                (:attr:`dpax.PrivacyLoss.pair`).

        Returns:
            ``(margin, achieved)``: the margin per row (>= 0: ``pair``'s curve lies on or
            above G_mu up to its mass at +-inf and ``GDP_SLACK``), a float64 array of one
            entry per row, and ``{"gdp_margin": margin}``.

        Raises:
            TypeError: ``pair`` is not a :class:`dpax.PrivacyLoss`'s ``.pair``.

        >>> import dpax
        >>> from dpax.targets import GDP
        >>> pair = dpax.gaussian(1.0, grid_step=1e-2).pair   # 1-GDP: meets GDP(1.01), not GDP(0.5)
        >>> (low, _), (high, _) = GDP(0.5).margin(pair), GDP(1.01).margin(pair)
        >>> low.round(4), high.round(4), bool(high[0] >= 0)
        (array([-0.1974]), array([0.]), True)
        """
        m = np.asarray(gdp_margin_kernel(pair, jnp.asarray(self.mu.reshape(-1), jnp.float64)))
        return m, {"gdp_margin": m}

    def gdp_mu(self) -> np.ndarray:
        """The target's own ``mu``.

        Returns:
            ``mu``, a float64 array of the target's shape.

        >>> from dpax.targets import GDP
        >>> GDP([0.5, 1.0]).gdp_mu()
        array([0.5, 1. ])
        """
        return self.mu

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """NaN: no (epsilon, delta > 0) guarantee implies mu-GDP.

        Args:
            delta: the delta of the (epsilon, delta)-DP guarantee, in [0, 1).

        Returns:
            NaN, a float64 array with the broadcast shape of ``mu`` and ``delta``.

        Raises:
            TypeError: ``delta`` is not numeric.
            ValueError: an entry of ``delta`` lies outside [0, 1) or is not finite.

        >>> from dpax.targets import GDP
        >>> GDP([0.5, 1.0]).standard_epsilon(1e-5)
        array([nan, nan])
        """
        # no (epsilon, delta > 0) guarantee implies mu-GDP: its curve reaches 0 at alpha = 1 - delta
        return np.full(np.broadcast_shapes(self.mu.shape, np.shape(delta)), np.nan)

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """Never: (1 - q)(1 - alpha) < G_mu(alpha) near alpha = 0.

        Args:
            leak_probability: q = 1 - (1 - p)^T for T steps at sample rate p, in [0, 1].

        Returns:
            ``False``, a boolean array of the shape of ``leak_probability`` (not broadcast
            with ``mu``).

        Raises:
            TypeError: ``leak_probability`` is not numeric.
            ValueError: an entry of ``leak_probability`` lies outside [0, 1] or is not
                finite.

        >>> from dpax.targets import GDP
        >>> GDP(1.0).met_without_noise([0.0, 0.01])
        array([False, False])
        """
        return np.zeros(np.shape(leak_probability), bool)  # (1 - q)(1 - alpha) < G_mu(alpha) near alpha = 0
