"""Risk targets for calibration (Sections 2-3 and Table 1 of Kulynych, Gomez, Kaissis, du Pin
Calmon and Troncoso, "Attack-aware noise calibration for differential privacy", NeurIPS 2024;
"Kulynych et al. 2024" below).

A target says what the calibrated mechanism must guarantee. Each one knows

* how far a batch of privacy losses is inside it (``margin``: >= 0 where met),
* the mu of the Gaussian-DP mechanism that just meets it (a starting point for the search),
* the epsilon that *standard* calibration at a given delta would need to guarantee the same
  bound (Eq. 2 with Proposition 2.5 / 2.6), for the comparison a user wants to see,
* what subsampling alone guarantees: with no noise, T Poisson-subsampled steps at rate p
  leak membership with probability q = 1 - (1 - p)^T and are otherwise perfectly private,
  so the trade-off curve is (1 - q)(1 - alpha).

Fields may be arrays; they broadcast against the configuration arguments. Pass a target to
:func:`dpax.calibrate`; a list of targets means "meet all of them" (:class:`All`).

>>> import dpax
>>> from dpax.targets import Advantage
>>> margin, achieved = Advantage(0.4).margin(dpax.gaussian(1.0, grid_step=1e-2).pair)
>>> margin.round(4), achieved["advantage"].round(4)
(array([0.0171]), array([0.3829]))
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import ndtri
from numpy.typing import ArrayLike
from scipy.special import erfinv as _erfinv
from scipy.special import ndtri as _np_ndtri  # scipy.stats.norm.ppf; isf(q) = -ndtri(q)

from ._engine import analyse
from ._engine import cache as _cache
from ._engine import validation as _v
from ._engine.pair import Pair
from ._engine.special import ndtr
from ._engine.x64 import float64
from .conversions import mu_from_epsilon_delta


def _shape(shape: Any) -> tuple[int, ...]:
    """``shape`` as a tuple of integers >= 0 (a TypeError / ValueError naming it otherwise)."""
    try:
        if isinstance(shape, (str, bytes)) or any(isinstance(d, (bool, np.bool_)) for d in shape):
            raise TypeError
        out = tuple(int(operator.index(d)) for d in shape)
    except TypeError:
        raise TypeError(f"shape must be a tuple of integers, got {_v.brief(shape)}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"shape must hold integers >= 0, got {out}")
    return out


def _row_index(index: object) -> object:
    """``index`` as integer row indices, a boolean mask or a slice (TypeError naming it)."""
    if isinstance(index, slice):
        return index
    if isinstance(index, (bool, np.bool_)):
        raise TypeError(f"index must be integer row indices, a boolean mask or a slice, got {_v.brief(index)}")
    try:
        arr = np.asarray(index)
    except Exception:
        arr = np.asarray(None, dtype=object)
    if arr.size == 0 and arr.dtype.kind in "fiub":  # no rows
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iub":
        raise TypeError(f"index must be integer row indices, a boolean mask or a slice, got {_v.brief(index)}")
    return arr


def _checked(method, check):
    """``method`` with its one argument checked by ``check`` first (same name and doc)."""
    @functools.wraps(method)
    def wrapped(self, arg):
        return method(self, check(arg))

    return wrapped


#: The argument checks every target's methods get (:meth:`Target.__init_subclass__`).
_CHECKS = {
    "broadcast": _shape,
    "flat": _shape,
    "take": _row_index,
    "margin": lambda pair: pair if isinstance(pair, Pair) else (_ for _ in ()).throw(
        TypeError(f"pair must be a PrivacyLoss's .pair (PLRV rows), got {type(pair).__name__}")),
    "standard_epsilon": lambda delta: _v.probabilities("delta", delta, high_open=True),
    "met_without_noise": lambda q: _v.probabilities("leak_probability", q),
}


class Target:
    """Base class: a risk bound the mechanism must meet.

    Subclasses are frozen dataclasses whose fields are the bound's parameters (arrays after
    validation); :class:`All` combines several. The examples below use :class:`ErrRates`.
    Every target's ``broadcast``, ``flat``, ``take``, ``margin``, ``standard_epsilon`` and
    ``met_without_noise`` check their argument first (a TypeError or ValueError naming it).
    """

    #: names of the risk values this target reports as achieved
    reports: tuple[str, ...] = ()
    # set by @dataclass on the subclasses whose broadcast / flat / take use it (not on All)
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        for name, check in _CHECKS.items():
            if name in vars(cls):
                setattr(cls, name, _checked(vars(cls)[name], check))

    def shape(self) -> tuple[int, ...]:
        """The broadcast shape of the target's fields.

        >>> from dpax.targets import ErrRates
        >>> ErrRates([0.01, 0.1], 0.5).shape()
        (2,)
        """
        raise NotImplementedError

    def broadcast(self, shape: tuple[int, ...]) -> Target:
        """The target with every field broadcast to ``shape``.

        Args:
            shape: a shape the fields broadcast to.

        Returns:
            A target of the same type with fields of shape ``shape``.

        >>> from dpax.targets import ErrRates
        >>> ErrRates(0.01, [0.5, 0.6]).broadcast((2,)).alpha
        array([0.01, 0.01])
        """
        return type(self)(*(np.broadcast_to(getattr(self, f), shape) for f in self.__dataclass_fields__))

    def flat(self, shape: tuple[int, ...]) -> Target:
        """Broadcast to ``shape`` and flattened to one row per configuration.

        Args:
            shape: the batch shape of the configurations.

        Returns:
            A target of the same type with 1-D fields of length ``prod(shape)``.

        >>> from dpax.targets import ErrRates
        >>> ErrRates(0.01, 0.5).flat((2, 2)).beta
        array([0.5, 0.5, 0.5, 0.5])
        """
        return type(self)(*(np.broadcast_to(getattr(self, f), shape).reshape(-1) for f in self.__dataclass_fields__))

    def take(self, index: ArrayLike | slice) -> Target:
        """Rows ``index`` of a flat target.

        Args:
            index: integer row indices, a boolean mask or a slice into the rows (as from
                :meth:`flat`).

        Returns:
            A target of the same type holding the selected rows.

        >>> from dpax.targets import ErrRates
        >>> ErrRates([0.01, 0.1], 0.5).flat((2,)).take([1]).alpha
        array([0.1])
        """
        shape = self.shape()
        rows = _v.batch_rows("index", index, shape, "target")  # _row_index has checked its type (see _CHECKS)
        return type(self)(*(np.broadcast_to(getattr(self, f), shape).reshape(-1)[rows]
                            for f in self.__dataclass_fields__))

    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """How far inside the target each row of ``pair`` is (>= 0: met), and the risk values.

        The margin grows with privacy, so calibration can interpolate it.

        Args:
            pair: PLRV rows, one per configuration of a flat target
                (:attr:`dpax.PrivacyLoss.pair`).

        Returns:
            ``(margin, achieved)``: float64 arrays of one entry per row, and a dict from the
            names in :attr:`reports` to the achieved risk values per row.

        >>> import dpax
        >>> from dpax.targets import ErrRates
        >>> margin, achieved = ErrRates(0.01, 0.5).margin(dpax.gaussian(1.0, grid_step=1e-2).pair)
        >>> margin.round(4), achieved["beta"].round(4)
        (array([0.4076]), array([0.9076]))
        """
        raise NotImplementedError

    def gdp_mu(self) -> np.ndarray:
        """The mu of the Gaussian-DP mechanism that just meets the target (a search start).

        Returns:
            mu, with the target's shape.

        >>> from dpax.targets import ErrRates
        >>> round(float(ErrRates(0.01, 0.5).gdp_mu()), 4)
        2.3263
        """
        raise NotImplementedError

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """The epsilon that standard calibration at ``delta`` needs to guarantee the target
        (Eq. 2 with Proposition 2.5 / 2.6).

        Args:
            delta: the delta of the (epsilon, delta)-DP guarantee, in [0, 1).

        Returns:
            epsilon, with the broadcast shape of the target and ``delta`` (NaN where no
            (epsilon, delta) guarantee implies the target).

        >>> from dpax.targets import ErrRates
        >>> round(float(ErrRates(0.01, 0.5).standard_epsilon(1e-5)), 4)
        3.912
        """
        raise NotImplementedError

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """Whether subsampling alone meets the target: the trade-off curve
        (1 - q)(1 - alpha) of noiseless steps that leak with probability q.

        Args:
            leak_probability: q = 1 - (1 - p)^T for T steps at sample rate p, in [0, 1].

        Returns:
            Booleans, with the broadcast shape of the target and ``leak_probability``.

        >>> from dpax.targets import ErrRates
        >>> bool(ErrRates(0.01, 0.5).met_without_noise(0.01))
        True
        """
        raise NotImplementedError


for _name, _check in _CHECKS.items():  # the base class's own methods as well
    setattr(Target, _name, _checked(vars(Target)[_name], _check))
del _name, _check


@dataclass(frozen=True)
class ErrRates(Target):
    """Every attack with FPR <= alpha has FNR >= beta (Eq. 16-18): f(alpha) >= beta.

    Equivalently TPR = 1 - beta is bounded at FPR alpha; see :meth:`from_tpr`.

    Args:
        alpha: the attack's false-positive rate, in (0, 1).
        beta: the least false-negative rate allowed at ``alpha``, in (0, 1),
            alpha + beta < 1.

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
                f"got alpha={a_b[i]:g}, beta={b_b[i]:g}"
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
                             f"tpr={float(np.ravel(t_b)[i]):g} at alpha={float(np.ravel(a_b)[i]):g}")
        return cls(alpha, 1.0 - t)

    def shape(self) -> tuple[int, ...]:
        """The broadcast shape of ``alpha`` and ``beta``."""
        return np.broadcast_shapes(self.alpha.shape, self.beta.shape)

    @float64
    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """f(alpha) - beta per row; achieved ``{"beta": f(alpha)}`` (see :meth:`Target.margin`)."""
        b = np.asarray(analyse.beta_kernel(pair, np.asarray(self.alpha).reshape(-1, 1)))[:, 0]
        return b - self.beta.reshape(-1), {"beta": b}

    def gdp_mu(self) -> np.ndarray:
        """mu = Phi^-1(1 - alpha) - Phi^-1(beta): G_mu passes through (alpha, beta).

        Below 0.01 the difference of the two quantiles cancels (alpha + beta near 1): mu is
        the integral of 1 / phi(Phi^-1(p)) over p from beta to 1 - alpha instead, whose width
        is formed exactly (8-point Gauss-Legendre; the integrand varies by under 50% there).
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
        """The epsilon whose (epsilon, delta) curve passes above (alpha, beta) (Prop. 2.5)."""
        # (eps, delta)-DP curve max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)) >= beta
        a, b = self.alpha, self.beta
        d = cast(np.ndarray, delta)  # a float64 array: checked by _CHECKS["standard_epsilon"]
        with np.errstate(divide="ignore", invalid="ignore"):
            e1 = np.log((1 - d - b) / a)
            e2 = np.log((1 - d - a) / b)
        return np.maximum(np.maximum(e1, e2), 0.0)

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """(1 - q)(1 - alpha) >= beta."""
        q = cast(np.ndarray, leak_probability)  # a float64 array: checked by _CHECKS["met_without_noise"]
        return (1 - q) * (1 - self.alpha) >= self.beta


@dataclass(frozen=True)
class Advantage(Target):
    """Membership advantage TPR - FPR of every attack at most ``advantage`` (Eq. 13-14).

    Args:
        advantage: the largest advantage allowed, in (0, 1).

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
        """The shape of ``advantage``."""
        return self.advantage.shape

    @float64
    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """advantage bound - achieved advantage per row (see :meth:`Target.margin`)."""
        adv = np.asarray(analyse.advantage_kernel(pair))
        return self.advantage.reshape(-1) - adv, {"advantage": adv}

    def gdp_mu(self) -> np.ndarray:
        """mu = 2 Phi^-1((1 + advantage) / 2), the mu-GDP advantage inverted: -2 Phi^-1((1 -
        advantage) / 2) above 1/2 (1 - advantage is exact there; (1 + advantage) / 2 rounds to 1
        at advantage 1 - 2**-53), 2 sqrt(2) erfinv(advantage) below (no cancellation for a tiny one)."""
        a = self.advantage
        with np.errstate(under="ignore"):
            return np.where(a > 0.5, -2.0 * _np_ndtri((1.0 - a) / 2.0), 2.0 * np.sqrt(2.0) * _erfinv(a))

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """epsilon = log((1 + advantage - 2 delta) / (1 - advantage)) (Prop. 2.6), >= 0."""
        # Proposition 2.6: advantage <= (e^eps - 1 + 2 delta) / (e^eps + 1)
        eta = self.advantage
        d = cast(np.ndarray, delta)  # a float64 array: checked by _CHECKS["standard_epsilon"]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.maximum(np.log((1 + eta - 2 * d) / (1 - eta)), 0.0)

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """q <= advantage (the noiseless curve's advantage is q)."""
        return leak_probability <= self.advantage


@dataclass(frozen=True)
class Epsilon(Target):
    """Standard calibration (Eq. 2): the mechanism is (epsilon, delta)-DP.

    Args:
        epsilon: the guarantee's epsilon, > 0.
        delta: the guarantee's delta, in (0, 1).

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
        """The broadcast shape of ``epsilon`` and ``delta``."""
        return np.broadcast_shapes(self.epsilon.shape, self.delta.shape)

    @float64
    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """epsilon bound - achieved epsilon(delta) per row (see :meth:`Target.margin`)."""
        eps = np.asarray(analyse.epsilon_kernel(pair, np.asarray(self.delta).reshape(-1, 1)))[:, 0]
        return self.epsilon.reshape(-1) - eps, {"epsilon": eps}

    def gdp_mu(self) -> np.ndarray:
        """The largest mu whose mu-GDP mechanism is (epsilon, delta)-DP."""
        return np.asarray(mu_from_epsilon_delta(self.epsilon, self.delta), float)

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """The target's own ``epsilon`` (``delta`` is ignored)."""
        return self.epsilon

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """q <= delta (the noiseless pair is (0, q)-DP)."""
        return leak_probability <= self.delta


# ---------------------------------------------------------------------------------------
# Risk measures derived from FPR/FNR (Appendix C, Table 1; Kaissis et al. 2023)
# ---------------------------------------------------------------------------------------


class _ViaErrRates(Target):
    """A bound at a fixed FPR alpha that is equivalent to f(alpha) >= beta* for a derived
    beta* (Kulynych et al. 2024, Table 1); every check is that of the equivalent :class:`ErrRates`."""

    reports = ("beta",)

    def err_rates(self) -> ErrRates:
        """The equivalent :class:`ErrRates` target f(alpha) >= beta*.

        >>> from dpax.targets import Accuracy
        >>> round(float(Accuracy(0.1, 0.6).err_rates().beta), 4)
        0.7
        """
        raise NotImplementedError

    @property
    def beta(self) -> np.ndarray:
        """The derived FNR bound beta*."""
        return self.err_rates().beta

    def shape(self) -> tuple[int, ...]:
        """The shape of the equivalent :class:`ErrRates` target."""
        return self.err_rates().shape()

    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The margin of the equivalent :class:`ErrRates` target (see :meth:`Target.margin`)."""
        return self.err_rates().margin(pair)

    def gdp_mu(self) -> np.ndarray:
        """The mu of the equivalent :class:`ErrRates` target."""
        return self.err_rates().gdp_mu()

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """The standard epsilon of the equivalent :class:`ErrRates` target."""
        return self.err_rates().standard_epsilon(delta)

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """Whether subsampling alone meets the equivalent :class:`ErrRates` target."""
        return self.err_rates().met_without_noise(leak_probability)


def _check_open(name: str, value: ArrayLike, low: ArrayLike, high: ArrayLike, why: str) -> None:
    """Entries of ``value`` strictly inside (low, high) (arrays broadcast), else a ValueError naming the row."""
    low, high = np.broadcast_arrays(np.asarray(low, float), np.asarray(high, float))
    shape = _v.broadcast_shapes((name, np.shape(value)), (f"the bounds of {name}", low.shape))
    v, lo, hi = (np.broadcast_to(a, shape) for a in (value, low, high))
    bad = (v <= lo) | (v >= hi)
    if np.any(bad):
        i = tuple(np.argwhere(bad)[0]) if bad.ndim else ()
        where = f" (row {[int(x) for x in i]})" if i else ""
        raise ValueError(f"{name} must lie in ({lo[i]:g}, {hi[i]:g}) {why}{where}, got {v[i]:g}")


@dataclass(frozen=True)
class Accuracy(_ViaErrRates):
    """Attack accuracy (1/2)((1 - alpha) + (1 - beta)) at FPR ``alpha`` at most ``accuracy``
    (Rezaei & Liu 2021; Kulynych et al. 2024, Appendix C, Table 1): f(alpha) >= 2 (1 - acc*) - alpha.

    Args:
        alpha: the attack's false-positive rate, in (0, 1).
        accuracy: the largest accuracy allowed at ``alpha``, in (1/2, 1 - alpha/2).

    >>> from dpax.targets import Accuracy
    >>> round(float(Accuracy(alpha=0.1, accuracy=0.6).beta), 4)
    0.7
    """

    # fields: any array-like when passed, a float64 np.ndarray once __post_init__ has run
    alpha: Any
    accuracy: Any

    def __post_init__(self) -> None:
        a = _v.real_array("alpha", self.alpha, low=0.0, high=1.0, low_open=True, high_open=True)
        acc = _v.real_array("accuracy", self.accuracy, low=0.0, high=1.0, low_open=True, high_open=True)
        _v.broadcast_shapes(("alpha", a), ("accuracy", acc))
        _check_open("accuracy", acc, 0.5, 1.0 - a / 2,
                    "(above 1/2 a coin flip meets it; below 1 - alpha/2 at FPR alpha)")
        object.__setattr__(self, "alpha", a)
        object.__setattr__(self, "accuracy", acc)

    def err_rates(self) -> ErrRates:
        """f(alpha) >= 2 (1 - accuracy) - alpha."""
        return ErrRates(self.alpha, 2.0 * (1.0 - self.accuracy) - self.alpha)


@dataclass(frozen=True)
class PPV(_ViaErrRates):
    """Attack precision (1 - beta) / (1 - beta + alpha) at FPR ``alpha`` (uniform prior) at most
    ``ppv`` (Jayaraman et al. 2021; Kulynych et al. 2024, Appendix C, Table 1):
    f(alpha) >= 1 - alpha ppv* / (1 - ppv*).

    Args:
        alpha: the attack's false-positive rate, in (0, 1).
        ppv: the largest precision allowed at ``alpha``, in (1/2, 1 / (1 + alpha)).

    >>> from dpax.targets import PPV
    >>> round(float(PPV(alpha=0.1, ppv=0.6).beta), 4)
    0.85
    """

    # fields: any array-like when passed, a float64 np.ndarray once __post_init__ has run
    alpha: Any
    ppv: Any

    def __post_init__(self) -> None:
        a = _v.real_array("alpha", self.alpha, low=0.0, high=1.0, low_open=True, high_open=True)
        v = _v.real_array("ppv", self.ppv, low=0.0, high=1.0, low_open=True, high_open=True)
        _v.broadcast_shapes(("alpha", a), ("ppv", v))
        _check_open("ppv", v, 0.5, 1.0 / (1.0 + a),
                    "(above 1/2 a coin flip meets it; below 1/(1 + alpha) at FPR alpha)")
        object.__setattr__(self, "alpha", a)
        object.__setattr__(self, "ppv", v)

    def err_rates(self) -> ErrRates:
        """f(alpha) >= 1 - alpha ppv / (1 - ppv)."""
        return ErrRates(self.alpha, 1.0 - self.alpha * self.ppv / (1.0 - self.ppv))


@dataclass(frozen=True)
class Reconstruction(_ViaErrRates):
    """Reconstruction robustness (Kaissis et al. 2023; Kulynych et al. 2024, Sec. 2.2): an attack whose
    baseline success (without the record's influence) is ``baseline`` = kappa succeeds with
    probability at most 1 - f(kappa); the target bounds that by ``success``:
    f(kappa) >= 1 - success.

    Args:
        baseline: the attack's baseline success kappa, in (0, 1).
        success: the largest success probability allowed, in (baseline, 1).

    >>> from dpax.targets import Reconstruction
    >>> round(float(Reconstruction(baseline=0.1, success=0.3).beta), 4)
    0.7
    """

    # fields: any array-like when passed, a float64 np.ndarray once __post_init__ has run
    baseline: Any
    success: Any

    def __post_init__(self) -> None:
        k = _v.real_array("baseline", self.baseline, low=0.0, high=1.0, low_open=True, high_open=True)
        s = _v.real_array("success", self.success, low=0.0, high=1.0, low_open=True, high_open=True)
        _v.broadcast_shapes(("baseline", k), ("success", s))
        _check_open("success", s, k, 1.0, "(above the baseline success, which no noise can lower)")
        object.__setattr__(self, "baseline", k)
        object.__setattr__(self, "success", s)

    @property
    def alpha(self) -> np.ndarray:
        """The FPR of the equivalent bound: the baseline kappa."""
        return self.baseline

    def err_rates(self) -> ErrRates:
        """f(kappa) >= 1 - success."""
        return ErrRates(self.baseline, 1.0 - self.success)


# ---------------------------------------------------------------------------------------
# Gaussian DP
# ---------------------------------------------------------------------------------------


@functools.partial(_cache.kernel, name="gdp_margin")
@jax.jit
def _gdp_margin_kernel(pair: Pair, mu: jax.Array) -> jax.Array:
    """min over breakpoints (alpha_i, beta_i) of both directions of beta_i - G_mu(alpha_i),
    plus the off-grid mass and GDP_SLACK (see :class:`GDP`)."""
    worst: float | jax.Array = jnp.inf
    for t in analyse.both_directions(pair):
        g = ndtr(-ndtri(jnp.clip(t.ccdf_x, 0.0, 1.0)) - mu[:, None])
        worst = jnp.minimum(worst, jnp.min(t.cdf_y - g, -1))
    return worst + pair.inf_y + pair.neginf_x + GDP_SLACK


#: absolute slack (in beta) of the GDP check, for float64 round-off of the breakpoint sums
GDP_SLACK = 1e-12


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
        m = np.asarray(_gdp_margin_kernel(pair, jnp.asarray(self.mu.reshape(-1), jnp.float64)))
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


# ---------------------------------------------------------------------------------------
# several targets at once
# ---------------------------------------------------------------------------------------


class All(Target):
    """Meet every one of several targets (fields of all of them broadcast together).

    The margin is the smallest of the parts' margins, so the calibrated noise is the largest
    of the parts' answers.

    Args:
        *targets: targets to meet together (nested :class:`All` are flattened).

    >>> import dpax
    >>> from dpax.targets import Advantage, All, ErrRates
    >>> both = All(Advantage(0.4), ErrRates(0.01, 0.5))
    >>> margin, achieved = both.margin(dpax.gaussian(1.0, grid_step=1e-2).pair)
    >>> margin.round(4), sorted(achieved)
    (array([0.0171]), ['advantage', 'beta'])
    """

    parts: tuple[Target, ...]

    def __init__(self, *targets: Target) -> None:
        parts: list[Target] = []
        for t in targets:
            if isinstance(t, All):
                parts.extend(t.parts)
            elif isinstance(t, Target):
                parts.append(t)
            else:
                raise TypeError(f"All takes dpax.targets targets, got {_v.brief(t)}")
        if not parts:
            raise ValueError("All needs at least one target")
        self.parts = tuple(parts)
        self.reports = tuple(dict.fromkeys(r for p in parts for r in p.reports))

    def __repr__(self) -> str:
        return f"All({', '.join(map(repr, self.parts))})"

    def shape(self) -> tuple[int, ...]:
        """The broadcast shape of every part."""
        return np.broadcast_shapes(*(p.shape() for p in self.parts))

    def broadcast(self, shape: tuple[int, ...]) -> All:
        """Every part broadcast to ``shape``."""
        return All(*(p.broadcast(shape) for p in self.parts))

    def flat(self, shape: tuple[int, ...]) -> All:
        """Every part broadcast to ``shape`` and flattened."""
        return All(*(p.flat(shape) for p in self.parts))

    def take(self, index: ArrayLike | slice) -> All:
        """Rows ``index`` of every (flat) part."""
        return All(*(p.take(index) for p in self.parts))

    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The smallest of the parts' margins; achieved values of all parts."""
        margin: np.ndarray | None = None
        achieved: dict[str, np.ndarray] = {}
        for p in self.parts:
            m, a = p.margin(pair)
            margin = m if margin is None else np.minimum(margin, m)
            achieved.update(a)
        assert margin is not None  # __init__ refuses an All of no parts
        return margin, achieved

    def gdp_mu(self) -> np.ndarray:
        """The smallest of the parts' mu."""
        return np.minimum.reduce(np.broadcast_arrays(*(np.asarray(p.gdp_mu(), float) for p in self.parts)))

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """The smallest of the parts' standard epsilons."""
        return np.minimum.reduce(np.broadcast_arrays(*(np.asarray(p.standard_epsilon(delta), float)
                                                       for p in self.parts)))

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """Whether subsampling alone meets every part."""
        return np.logical_and.reduce(np.broadcast_arrays(*(np.asarray(p.met_without_noise(leak_probability))
                                                           for p in self.parts)))


def as_target(target: Target | list[Target] | tuple[Target, ...]) -> Target:
    """A target, or a list / tuple of targets meaning "meet all of them" (:class:`All`).

    Args:
        target: a :class:`Target`, or a non-empty list / tuple of them.

    Returns:
        ``target`` itself, or ``All(*target)``.

    Raises:
        TypeError: ``target`` is neither.

    >>> from dpax.targets import GDP, Advantage, as_target
    >>> as_target([Advantage(0.3), GDP(1.0)])
    All(Advantage(advantage=array(0.3)), GDP(mu=array(1.)))
    """
    if isinstance(target, Target):
        return target
    if isinstance(target, (list, tuple)) and target:
        return All(*target)
    raise TypeError(
        "target must be a dpax.targets target (ErrRates, Advantage, Epsilon, Accuracy, PPV, GDP, "
        f"Reconstruction, All) or a list of them, got {_v.brief(target)}"
    )
