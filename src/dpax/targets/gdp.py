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
        mu: the GDP parameter, > 0.

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
        """The shape of ``mu``."""
        return self.mu.shape

    @float64
    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """min over breakpoints of beta_i - G_mu(alpha_i), + slack (see :meth:`Target.margin`)."""
        m = np.asarray(gdp_margin_kernel(pair, jnp.asarray(self.mu.reshape(-1), jnp.float64)))
        return m, {"gdp_margin": m}

    def gdp_mu(self) -> np.ndarray:
        """The target's own ``mu``."""
        return self.mu

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """NaN: no (epsilon, delta > 0) guarantee implies mu-GDP."""
        # no (epsilon, delta > 0) guarantee implies mu-GDP: its curve reaches 0 at alpha = 1 - delta
        return np.full(np.broadcast_shapes(self.mu.shape, np.shape(delta)), np.nan)

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """Never: (1 - q)(1 - alpha) < G_mu(alpha) near alpha = 0."""
        return np.zeros(np.shape(leak_probability), bool)  # (1 - q)(1 - alpha) < G_mu(alpha) near alpha = 0
