"""Risk targets for calibration (seed paper, Sections 2-3 and Table 1).

A target says what the calibrated mechanism must guarantee. Each one knows

* how to check a batch of privacy losses against itself (``met``),
* the mu of the Gaussian-DP mechanism that just meets it (a starting point for the search),
* the epsilon that *standard* calibration at a given delta would need to guarantee the same
  bound (Eq. 2 with Proposition 2.5 / 2.6), for the comparison a user wants to see,
* what subsampling alone guarantees: with no noise, T Poisson-subsampled steps at rate p
  leak membership with probability q = 1 - (1 - p)^T and are otherwise perfectly private,
  so the trade-off curve is (1 - q)(1 - alpha).

Fields may be arrays; they broadcast against the configuration arguments.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from . import validation as _v


def gdp_delta(epsilon, mu):
    """delta(epsilon) of mu-GDP (Dong, Roth & Su, Corollary 2.13)."""
    return norm.cdf(-epsilon / mu + mu / 2) - np.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)


class Target:
    """Base class: a risk bound the mechanism must meet."""

    #: names of the risk values this target reports as achieved
    reports: tuple[str, ...] = ()

    def shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    def broadcast(self, shape) -> "Target":
        """The target with every field broadcast to ``shape``."""
        return type(self)(*(np.broadcast_to(getattr(self, f), shape) for f in self.__dataclass_fields__))

    def flat(self, shape) -> "Target":
        """Broadcast to ``shape`` and flattened to one row per configuration."""
        return type(self)(*(np.broadcast_to(getattr(self, f), shape).reshape(-1) for f in self.__dataclass_fields__))

    def take(self, index) -> "Target":
        """Rows ``index`` of a flat target."""
        return type(self)(*(np.asarray(getattr(self, f))[index] for f in self.__dataclass_fields__))

    def met(self, pl, rows) -> tuple[np.ndarray, dict]:
        """(met, achieved): per-row booleans and risk values for a flat batch of losses."""
        m, achieved = self.margin(rows)
        return m >= 0, achieved

    def margin(self, rows) -> tuple[np.ndarray, dict]:
        """(margin, achieved): how far inside the target each row is (>= 0: met), and the
        risk values. The margin grows with privacy, so calibration can interpolate it."""
        raise NotImplementedError

    def gdp_mu(self) -> np.ndarray:
        raise NotImplementedError

    def standard_epsilon(self, delta) -> np.ndarray:
        raise NotImplementedError

    def met_without_noise(self, leak_probability) -> np.ndarray:
        raise NotImplementedError


@dataclass(frozen=True)
class ErrRates(Target):
    """Every attack with FPR <= alpha has FNR >= beta (Eq. 16-18): f(alpha) >= beta.

    Equivalently TPR = 1 - beta is bounded at FPR alpha; see :meth:`from_tpr`.
    """

    alpha: object
    beta: object
    reports = ("beta",)

    def __post_init__(self):
        a = _v.real_array("alpha", self.alpha, low=0.0, high=1.0, low_open=True, high_open=True)
        b = _v.real_array("beta", self.beta, low=0.0, high=1.0, low_open=True, high_open=True)
        if np.any(a + b >= 1):
            raise ValueError(
                f"alpha + beta must be < 1 (alpha + beta >= 1 is met by a coin flip and bounds nothing), "
                f"got alpha={self.alpha!r}, beta={self.beta!r}"
            )
        object.__setattr__(self, "alpha", a)
        object.__setattr__(self, "beta", b)

    @classmethod
    def from_tpr(cls, alpha, tpr) -> "ErrRates":
        """Attack TPR at most ``tpr`` at FPR ``alpha``."""
        t = _v.real_array("tpr", tpr, low=0.0, high=1.0, low_open=True, high_open=True)
        return cls(alpha, 1.0 - t)

    def shape(self):
        return np.broadcast_shapes(self.alpha.shape, self.beta.shape)


    def margin(self, rows):
        from . import analyse

        b = np.asarray(analyse.beta_kernel(*rows, np.asarray(self.alpha).reshape(-1, 1)))[:, 0]
        return b - self.beta.reshape(-1), {"beta": b}

    def gdp_mu(self):
        return norm.isf(self.alpha) - norm.ppf(self.beta)

    def standard_epsilon(self, delta):
        # (eps, delta)-DP curve max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)) >= beta
        a, b = self.alpha, self.beta
        with np.errstate(divide="ignore", invalid="ignore"):
            e1 = np.log((1 - delta - b) / a)
            e2 = np.log((1 - delta - a) / b)
        return np.maximum(np.maximum(e1, e2), 0.0)

    def met_without_noise(self, leak_probability):
        return (1 - leak_probability) * (1 - self.alpha) >= self.beta


@dataclass(frozen=True)
class Advantage(Target):
    """Membership advantage TPR - FPR of every attack at most ``advantage`` (Eq. 13-14)."""

    advantage: object
    reports = ("advantage",)

    def __post_init__(self):
        a = _v.real_array("advantage", self.advantage, low=0.0, high=1.0, low_open=True, high_open=True)
        object.__setattr__(self, "advantage", a)

    def shape(self):
        return self.advantage.shape


    def margin(self, rows):
        from . import analyse

        adv = np.asarray(analyse.advantage_kernel(*rows))
        return self.advantage.reshape(-1) - adv, {"advantage": adv}

    def gdp_mu(self):
        return 2 * norm.ppf((1 + self.advantage) / 2)

    def standard_epsilon(self, delta):
        # Proposition 2.6: advantage <= (e^eps - 1 + 2 delta) / (e^eps + 1)
        eta = self.advantage
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.maximum(np.log((1 + eta - 2 * delta) / (1 - eta)), 0.0)

    def met_without_noise(self, leak_probability):
        return leak_probability <= self.advantage


@dataclass(frozen=True)
class Epsilon(Target):
    """Standard calibration (Eq. 2): the mechanism is (epsilon, delta)-DP."""

    epsilon: object
    delta: object
    reports = ("epsilon",)

    def __post_init__(self):
        e = _v.real_array("epsilon", self.epsilon, low=0.0, low_open=True)
        d = _v.real_array("delta", self.delta, low=0.0, high=1.0, low_open=True, high_open=True)
        object.__setattr__(self, "epsilon", e)
        object.__setattr__(self, "delta", d)

    def shape(self):
        return np.broadcast_shapes(self.epsilon.shape, self.delta.shape)


    def margin(self, rows):
        from . import analyse

        eps = np.asarray(analyse.epsilon_kernel(*rows, np.asarray(self.delta).reshape(-1, 1)))[:, 0]
        return self.epsilon.reshape(-1) - eps, {"epsilon": eps}

    def gdp_mu(self):
        out = np.empty(np.broadcast_shapes(self.epsilon.shape, self.delta.shape))
        eps = np.broadcast_to(self.epsilon, out.shape)
        delta = np.broadcast_to(self.delta, out.shape)
        for i in np.ndindex(out.shape):
            out[i] = brentq(lambda m: gdp_delta(eps[i], m) - delta[i], 1e-6, 1e3)
        return out

    def standard_epsilon(self, delta):
        return self.epsilon

    def met_without_noise(self, leak_probability):
        return leak_probability <= self.delta
