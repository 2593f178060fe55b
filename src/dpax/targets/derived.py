"""Risk measures derived from the FPR / FNR (Kulynych et al. 2024, Appendix C and Table 1;
Kaissis et al. 2023): accuracy, positive predictive value and reconstruction success at a
fixed FPR, each checked as the equivalent :class:`~dpax.targets.ErrRates`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._engine import validation as _v
from .._engine.pair import Pair
from .base import Target
from .error_rates import ErrRates


class _ViaErrRates(Target):
    """A bound at a fixed FPR alpha that is equivalent to f(alpha) >= beta* for a derived
    beta* (Kulynych et al. 2024, Table 1); every check is that of the equivalent :class:`ErrRates`."""

    reports = ("beta",)

    def err_rates(self) -> ErrRates:
        """The equivalent :class:`ErrRates` target f(alpha) >= beta*.

        Returns:
            An :class:`ErrRates` with the target's alpha and the derived beta* (Kulynych
            et al. 2024, Table 1), fields in the target's shape.

        >>> from dpax.targets import Accuracy
        >>> round(float(Accuracy(0.1, 0.6).err_rates().beta), 4)
        0.7
        """
        raise NotImplementedError

    @property
    def beta(self) -> np.ndarray:
        """The derived FNR bound beta* (a float64 array of the target's shape).

        >>> from dpax.targets import Accuracy
        >>> Accuracy(0.1, [0.6, 0.7]).beta
        array([0.7, 0.5])
        """
        return self.err_rates().beta

    def shape(self) -> tuple[int, ...]:
        """The shape of the equivalent :class:`ErrRates` target.

        Returns:
            The broadcast shape of the target's fields, a tuple of integers.

        >>> from dpax.targets import Accuracy
        >>> Accuracy(0.1, [0.6, 0.7]).shape()
        (2,)
        """
        return self.err_rates().shape()

    def margin(self, pair: Pair) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The margin of the equivalent :class:`ErrRates` target (see :meth:`Target.margin`).

        Args:
            pair: PLRV rows, one per configuration of a flat target
                (:attr:`dpax.PrivacyLoss.pair`).

        Returns:
            ``(margin, achieved)``: f(alpha) - beta* per row (>= 0: met) and
            ``{"beta": f(alpha)}``, float64 arrays of one entry per row; f(alpha) is never
            above ``pair``'s curve.

        Raises:
            TypeError: ``pair`` is not a :class:`dpax.PrivacyLoss`'s ``.pair``.

        >>> import dpax
        >>> from dpax.targets import Accuracy
        >>> margin, achieved = Accuracy(0.1, 0.6).margin(dpax.gaussian(1.0, grid_step=1e-2).pair)
        >>> margin.round(4), achieved["beta"].round(4)
        (array([-0.0891]), array([0.6109]))
        """
        return self.err_rates().margin(pair)

    def gdp_mu(self) -> np.ndarray:
        """The mu of the equivalent :class:`ErrRates` target: G_mu passes through (alpha, beta*).

        Returns:
            mu, a float64 array of the target's shape (a search start only).

        >>> from dpax.targets import Accuracy
        >>> Accuracy(0.1, [0.6, 0.7]).gdp_mu().round(4)
        array([0.7572, 1.2816])
        """
        return self.err_rates().gdp_mu()

    def standard_epsilon(self, delta: ArrayLike) -> np.ndarray:
        """The standard epsilon of the equivalent :class:`ErrRates` target (Prop. 2.5).

        Args:
            delta: the delta of the (epsilon, delta)-DP guarantee, in [0, 1).

        Returns:
            epsilon, a float64 array with the broadcast shape of the target and ``delta``.

        Raises:
            TypeError: ``delta`` is not numeric.
            ValueError: an entry of ``delta`` lies outside [0, 1) or is not finite.

        >>> from dpax.targets import Accuracy
        >>> Accuracy(0.1, [0.6, 0.7]).standard_epsilon(1e-5).round(4)
        array([1.0986, 1.6094])
        """
        return self.err_rates().standard_epsilon(delta)

    def met_without_noise(self, leak_probability: ArrayLike) -> np.ndarray:
        """Whether subsampling alone meets the equivalent :class:`ErrRates` target:
        (1 - q)(1 - alpha) >= beta*.

        Args:
            leak_probability: q = 1 - (1 - p)^T for T steps at sample rate p, in [0, 1].

        Returns:
            A boolean array, with the broadcast shape of the target and
            ``leak_probability``.

        Raises:
            TypeError: ``leak_probability`` is not numeric.
            ValueError: an entry of ``leak_probability`` lies outside [0, 1] or is not
                finite.

        >>> from dpax.targets import Accuracy
        >>> Accuracy(0.1, [0.6, 0.7]).met_without_noise([[0.01], [0.5]])
        array([[ True,  True],
               [False, False]])
        """
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
        raise ValueError(f"{name} must lie in ({_v.shown(lo[i])}, {_v.shown(hi[i])}) {why}{where}, "
                         f"got {_v.shown(v[i])}")


@dataclass(frozen=True)
class Accuracy(_ViaErrRates):
    """Attack accuracy (1/2)((1 - alpha) + (1 - beta)) at FPR ``alpha`` at most ``accuracy``
    (Rezaei & Liu 2021; Kulynych et al. 2024, Appendix C, Table 1): f(alpha) >= 2 (1 - acc*) - alpha.

    Args:
        alpha: the attack's false-positive rate, in (0, 1).
        accuracy: the largest accuracy allowed at ``alpha``, in (1/2, 1 - alpha/2).

    Raises:
        TypeError: a field is not numeric (booleans and strings included).
        ValueError: a field is out of its range or not finite, or the fields do not
            broadcast together.

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
        """The equivalent bound f(alpha) >= 2 (1 - accuracy) - alpha.

        Returns:
            ``ErrRates(alpha, 2 (1 - accuracy) - alpha)``.

        >>> from dpax.targets import Accuracy
        >>> Accuracy(0.1, 0.6).err_rates()
        ErrRates(alpha=array(0.1), beta=array(0.7))
        """
        return ErrRates(self.alpha, 2.0 * (1.0 - self.accuracy) - self.alpha)


@dataclass(frozen=True)
class PPV(_ViaErrRates):
    """Attack precision (1 - beta) / (1 - beta + alpha) at FPR ``alpha`` (uniform prior) at most
    ``ppv`` (Jayaraman et al. 2021; Kulynych et al. 2024, Appendix C, Table 1):
    f(alpha) >= 1 - alpha ppv* / (1 - ppv*).

    Args:
        alpha: the attack's false-positive rate, in (0, 1).
        ppv: the largest precision allowed at ``alpha``, in (1/2, 1 / (1 + alpha)).

    Raises:
        TypeError: a field is not numeric (booleans and strings included).
        ValueError: a field is out of its range or not finite, or the fields do not
            broadcast together.

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
        """The equivalent bound f(alpha) >= 1 - alpha ppv / (1 - ppv).

        Returns:
            ``ErrRates(alpha, 1 - alpha ppv / (1 - ppv))``.

        >>> from dpax.targets import PPV
        >>> PPV(0.1, 0.6).err_rates()
        ErrRates(alpha=array(0.1), beta=array(0.85))
        """
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

    Raises:
        TypeError: a field is not numeric (booleans and strings included).
        ValueError: a field is out of its range or not finite, or the fields do not
            broadcast together.

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
        """The FPR of the equivalent bound: the baseline kappa (a float64 array).

        >>> from dpax.targets import Reconstruction
        >>> Reconstruction(baseline=0.1, success=0.3).alpha
        array(0.1)
        """
        return self.baseline

    def err_rates(self) -> ErrRates:
        """The equivalent bound f(kappa) >= 1 - success.

        Returns:
            ``ErrRates(baseline, 1 - success)``.

        >>> from dpax.targets import Reconstruction
        >>> Reconstruction(0.1, 0.3).err_rates()
        ErrRates(alpha=array(0.1), beta=array(0.7))
        """
        return ErrRates(self.baseline, 1.0 - self.success)
