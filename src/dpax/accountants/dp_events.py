"""dpax behind dp-accounting's ``PrivacyAccountant`` interface: :class:`DpEventAccounting`.

``dpax.accountants.DpEventAccountant`` is this class joined with
``dp_accounting.PrivacyAccountant`` (made on first use, so that ``import dpax`` does not
import dp-accounting): code that builds dp-accounting's ``PLDAccountant`` builds dpax's
with the same arguments, and every ``DpEvent`` the PLD accountant reads, dpax reads
(:mod:`dpax.events`).

Composition is lazy: ``compose(event, count)`` only counts the event's mechanisms (each
distinct mechanism once, with its number of runs); the first query composes them all at
once by FFT and keeps the result until the next ``compose``. A run of 10,000 DP-SGD steps
whose noise changes every 1,000 steps is ten mechanisms with their counts, not 10,000
convolutions.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .. import gdp
from .._engine import validation as _v
from .._engine.x64 import as_result
from ..events import RELATIONS, Tally, UnsupportedEvent, from_tallies, identity, non_private, relation, tally
from ..privacy_loss import Interval, PrivacyLoss

#: dp-accounting's default ``value_discretization_interval``, dpax's default grid step.
DEFAULT_GRID_STEP = 1e-4
#: Distinct events whose reading is remembered (a training loop composes the same few).
_MEMO_SIZE = 4096


class DpEventAccounting:
    """A privacy accountant for dp-accounting's ``DpEvent`` trees, by dpax.

    Used as ``dpax.accountants.DpEventAccountant`` (a subclass of this class and of
    ``dp_accounting.PrivacyAccountant``); its constructor takes the arguments of
    dp-accounting's ``PLDAccountant``.

    Args:
        neighboring_relation: dp-accounting's ``NeighboringRelation`` (default
            ``ADD_OR_REMOVE_ONE``), or dpax's name (``"add_remove"``, ``"substitution"``,
            ``"replace_special"``).
        value_discretization_interval: the loss grid's step, in [1e-7, 1] (default 1e-4).

    Beside dp-accounting's ``supports``, ``compose``, ``ledger``, ``get_epsilon`` and
    ``get_delta``, it answers what dpax answers for any :class:`~dpax.PrivacyLoss`:
    ``get_beta(alpha)`` (the false-negative rate of the best membership-inference attack
    at false-positive rate alpha), ``get_advantage()``, ``get_mu_and_regret()`` (the tight
    Gaussian-DP mu and its regret), each with ``bounds=True`` for a certified bracket
    where every composed mechanism has an optimistic companion; :meth:`privacy_loss` gives
    the composed :class:`~dpax.PrivacyLoss` itself.

    >>> from dp_accounting import dp_event
    >>> from dpax.accountants import DpEventAccountant
    >>> acct = DpEventAccountant(value_discretization_interval=1e-3)
    >>> step = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0))
    >>> _ = acct.compose(step, 50).compose(step, 50)
    >>> round(acct.get_epsilon(1e-5), 3), round(acct.get_beta(0.01), 3)
    (0.718, 0.985)
    """

    #: from ``dp_accounting.PrivacyAccountant``, the other base of ``DpEventAccountant``
    CompositionErrorDetails: Any

    def __init__(self, neighboring_relation: Any = None,
                 value_discretization_interval: float = DEFAULT_GRID_STEP) -> None:
        from dp_accounting.privacy_accountant import NeighboringRelation

        rel = ("add_remove" if neighboring_relation is None
               else relation(neighboring_relation, "neighboring_relation"))
        # the next class in the MRO is dp_accounting.PrivacyAccountant (see _dp_event_accountant_class)
        cast(Any, super()).__init__(NeighboringRelation[RELATIONS[rel]])
        self._relation = rel
        #: the loss grid's step of every query that does not pass its own ``grid_step``
        self.grid_step = _v.grid_step(value_discretization_interval, "value_discretization_interval")
        self._counts: dict = {}
        self._non_private = False
        self._memo: dict = {}
        self._composed: dict[float, PrivacyLoss] = {}

    # -- dp-accounting's interface --------------------------------------------------------
    def _read(self, event: Any) -> Tally:
        """The tally of one run of ``event``, remembered for hashable events."""
        try:
            return self._memo[event]
        except TypeError:  # an event holding lists (a mixture of Gaussians): not hashable
            return tally(event, self._relation)
        except KeyError:
            found = tally(event, self._relation)
            if len(self._memo) >= _MEMO_SIZE:
                self._memo.clear()
            self._memo[event] = found
            return found

    def _maybe_compose(self, event: Any, count: int, do_compose: bool) -> Any:
        """dp-accounting's traversal hook: None when ``event`` is supported (and, with
        ``do_compose``, counted ``count`` more times), else the offending subevent and why.
        A boolean ``count`` is refused here (dp-accounting's own check takes True for 1)."""
        if isinstance(count, (bool, np.bool_)):
            raise TypeError(f"count must be an integer >= 1, not a boolean; got {count!r}")
        try:
            found = self._read(event)
        except UnsupportedEvent as exc:
            return self.CompositionErrorDetails(invalid_event=exc.event, error_message=exc.message)
        if do_compose:
            for leaf, k in found.counts.items():
                self._counts[leaf] = self._counts.get(leaf, 0) + k * int(count)
            self._non_private = self._non_private or found.non_private
            self._composed.clear()
        return None

    def get_epsilon(self, target_delta: ArrayLike, *, bounds: bool = False,
                    grid_step: float | None = None) -> float | np.ndarray | Interval:
        """Smallest epsilon such that the composed events are (epsilon, target_delta)-DP.

        Args:
            target_delta: the guarantee's delta, in [0, 1] (any shape).
            bounds: also evaluate the optimistic companion and return both sides as an
                :class:`dpax.Interval`.
            grid_step: the grid's step, in [1e-7, 1] (default: the accountant's).

        Returns:
            epsilon >= 0 with the shape of ``target_delta`` (a float for one number): 0
            before any event, inf once a non-private event ran; an Interval with ``bounds``.

        Raises:
            ValueError: ``target_delta`` outside [0, 1], or ``bounds=True`` where a composed
                mechanism has no optimistic companion.
            TypeError: ``target_delta`` not real or ``bounds`` not a bool.

        >>> from dp_accounting import dp_event
        >>> from dpax.accountants import DpEventAccountant
        >>> acct = DpEventAccountant(value_discretization_interval=1e-3)
        >>> _ = acct.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 100)
        >>> round(acct.get_epsilon(1e-5), 4)
        0.7181
        """
        d = _v.probabilities("target_delta", target_delta)
        if self._non_private or not self._counts:
            value = as_result(np.full(d.shape, math.inf if self._non_private else 0.0))
            return Interval(value, value) if bounds else value
        return self.privacy_loss(grid_step).epsilon(d, bounds=bounds)

    def get_delta(self, target_epsilon: ArrayLike, *, bounds: bool = False,
                  grid_step: float | None = None) -> float | np.ndarray | Interval:
        """delta(target_epsilon): the smallest delta with (target_epsilon, delta)-DP.

        Args:
            target_epsilon: reals, or ``inf`` (the mass no epsilon covers), any shape.
            bounds: also evaluate the optimistic companion and return both sides as an
                :class:`dpax.Interval`.
            grid_step: the grid's step, in [1e-7, 1] (default: the accountant's).

        Returns:
            delta in [0, 1] with the shape of ``target_epsilon`` (a float for one number):
            0 before any event, 1 once a non-private event ran; an Interval with ``bounds``.

        Raises:
            ValueError: ``target_epsilon`` NaN or -inf, or ``bounds=True`` where a composed
                mechanism has no optimistic companion.
            TypeError: ``target_epsilon`` not real or ``bounds`` not a bool.

        >>> from dp_accounting import dp_event
        >>> from dpax.accountants import DpEventAccountant
        >>> acct = DpEventAccountant(value_discretization_interval=1e-3)
        >>> _ = acct.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 100)
        >>> f"{acct.get_delta(1.0):.3g}", acct.get_delta(float("inf")) < 1e-12   # inf: the grid's truncated tails
        ('6.68e-07', True)
        """
        e, infinite = _epsilons(target_epsilon)
        if self._non_private or not self._counts:
            value = as_result(np.full(e.shape, 1.0 if self._non_private else 0.0))
            return Interval(value, value) if bounds else value
        pl = self.privacy_loss(grid_step)
        if np.any(infinite):
            return self._delta_at_infinity(pl, e, infinite, bounds)
        return pl.delta(e, bounds=bounds)

    # -- dpax's answers -------------------------------------------------------------------
    def get_beta(self, alpha: ArrayLike, *, bounds: bool = False,
                 grid_step: float | None = None) -> float | np.ndarray | Interval:
        """False-negative rate of the best membership-inference attack at false-positive rate ``alpha``.

        Kulynych, Gomez et al., "Attack-aware noise calibration for differential privacy"
        (NeurIPS 2024), Algorithm 1, on the symmetrised curve (:meth:`dpax.PrivacyLoss.beta`).

        Args:
            alpha: false-positive rates in [0, 1] (any shape).
            bounds: also evaluate the optimistic companion and return both sides as an
                :class:`dpax.Interval`.
            grid_step: the grid's step, in [1e-7, 1] (default: the accountant's).

        Returns:
            beta in [0, 1] with the shape of ``alpha`` (a float for one number); an
            Interval with ``bounds``.

        Raises:
            ValueError: ``alpha`` outside [0, 1], or ``bounds=True`` where a composed
                mechanism has no optimistic companion.
            TypeError: ``alpha`` not real or ``bounds`` not a bool.

        >>> from dp_accounting import dp_event
        >>> from dpax.accountants import DpEventAccountant
        >>> acct = DpEventAccountant(value_discretization_interval=1e-3)
        >>> _ = acct.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 100)
        >>> acct.get_beta([0.01, 0.05, 0.1]).round(4)
        array([0.9849, 0.933 , 0.8729])
        """
        return self.privacy_loss(grid_step).beta(alpha, bounds=bounds)

    def get_advantage(self, *, bounds: bool = False, grid_step: float | None = None) -> float | Interval:
        """Largest TPR - FPR of any membership-inference attack (:meth:`dpax.PrivacyLoss.advantage`).

        Args:
            bounds: also evaluate the optimistic companion and return both sides as an
                :class:`dpax.Interval`.
            grid_step: the grid's step, in [1e-7, 1] (default: the accountant's).

        Returns:
            The advantage, in [0, 1]; an Interval with ``bounds``.

        Raises:
            ValueError: ``bounds=True`` where a composed mechanism has no optimistic companion.
            TypeError: ``bounds`` not a bool.

        >>> from dp_accounting import dp_event
        >>> from dpax.accountants import DpEventAccountant
        >>> acct = DpEventAccountant(value_discretization_interval=1e-3)
        >>> _ = acct.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 100)
        >>> round(acct.get_advantage(), 4)
        0.0507
        """
        return cast("float | Interval", self.privacy_loss(grid_step).advantage(bounds=bounds))

    def get_mu_and_regret(self, *, grid_step: float | None = None,
                          **kwargs: Any) -> tuple[float | Interval, float | Interval]:
        """Tight Gaussian-DP mu of the composed curve and its regret, by :func:`dpax.gdp.mu_and_regret`.

        Gomez et al., "(epsilon, delta) considered harmful: best practices for reporting
        differential privacy guarantees" (2025), Eq. 11 and 13.

        Args:
            grid_step: the grid's step, in [1e-7, 1] (default: the accountant's).
            **kwargs: keyword arguments of :func:`dpax.gdp.mu_and_regret` (``tail``, ``bounds``).

        Returns:
            ``(mu, regret)``: floats, or two :class:`dpax.Interval` with ``bounds=True``.

        Raises:
            ValueError, TypeError: ``grid_step`` or a keyword argument outside its range.

        >>> from dp_accounting import dp_event
        >>> from dpax.accountants import DpEventAccountant
        >>> acct = DpEventAccountant(value_discretization_interval=1e-3)
        >>> _ = acct.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 100)
        >>> mu, regret = acct.get_mu_and_regret()
        >>> round(mu, 3), round(regret, 3)
        (0.358, 0.046)
        """
        return cast("tuple[float | Interval, float | Interval]",
                    gdp.mu_and_regret(self.privacy_loss(grid_step), **kwargs))

    def privacy_loss(self, grid_step: float | None = None) -> PrivacyLoss:
        """The composed :class:`~dpax.PrivacyLoss` of every event so far, kept until the next ``compose``.

        Each distinct mechanism is built once and composed with its count by FFT
        (:mod:`dpax.events`).

        Args:
            grid_step: the grid's step, in [1e-7, 1] (default: the accountant's).

        Returns:
            The composed privacy loss: the identity (no-op) before any event, dpax's
            non-private pair after a non-private one.

        Raises:
            ValueError, TypeError: ``grid_step`` outside its range or not a number.

        >>> from dp_accounting import dp_event
        >>> from dpax.accountants import DpEventAccountant
        >>> acct = DpEventAccountant(value_discretization_interval=1e-3)
        >>> acct.privacy_loss().description
        'no-op'
        >>> _ = acct.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 100)
        >>> acct.privacy_loss().description
        'subsampled_gaussian(noise_multiplier=<(1,) array>, sample_rate=<(1,) array>)[0] x 100'
        """
        step = self.grid_step if grid_step is None else _v.grid_step(grid_step)
        if step not in self._composed:
            if self._non_private:
                built = non_private(step)
            elif not self._counts:
                built = identity(step)
            else:
                built = from_tallies([Tally(self._counts, False)], step, ())
            self._composed.clear()
            self._composed[step] = built
        return self._composed[step]

    @staticmethod
    def _delta_at_infinity(pl: PrivacyLoss, e: np.ndarray, infinite: Any, bounds: bool) -> Any:
        """delta(epsilon) with the entries at epsilon = inf set to the infinite-loss mass."""
        finite = pl.delta(e, bounds=bounds)
        at_inf = float(max(np.max(pl.inf_mass_y), np.max(pl.neginf_mass_x)))
        if bounds:
            bracket = cast(Interval, finite)  # delta(..., bounds=True) is an Interval
            companion = pl.optimistic_companion()
            low = float(max(np.max(companion.inf_mass_y), np.max(companion.neginf_mass_x)))
            return Interval(as_result(np.where(infinite, at_inf, bracket.safe)),
                            as_result(np.where(infinite, low, bracket.optimistic)))
        return as_result(np.where(infinite, at_inf, finite))

    def __repr__(self) -> str:
        runs = sum(self._counts.values())
        return (f"DpEventAccountant(neighbouring={self._relation!r}, grid_step={self.grid_step:g}, "
                f"mechanisms={len(self._counts)}, runs={runs:,}{', non-private' if self._non_private else ''})")


def _epsilons(value: Any) -> tuple[np.ndarray, Any]:
    """(epsilon array with +inf entries set to 0, where they were +inf)."""
    infinite: np.ndarray | np.bool_
    try:
        infinite = np.isposinf(np.asarray(value, np.float64))
    except (TypeError, ValueError):  # not numeric: real_array says so
        infinite = np.False_
    if np.any(infinite):
        value = np.where(infinite, 0.0, np.asarray(value, np.float64))
    return _v.real_array("target_epsilon", value), infinite


_CLASS: list[type] = []


def _dp_event_accountant_class() -> type:
    """``DpEventAccountant``: :class:`DpEventAccounting` as a subclass of
    ``dp_accounting.PrivacyAccountant`` (made once; imports dp-accounting)."""
    if not _CLASS:
        try:
            from dp_accounting.privacy_accountant import PrivacyAccountant
        except ImportError as exc:  # pragma: no cover - dp-accounting is in the test extra
            raise ImportError("dpax.accountants.DpEventAccountant needs dp-accounting: "
                              "pip install 'dp-accounting>=0.4.4'") from exc
        cls = type("DpEventAccountant", (DpEventAccounting, PrivacyAccountant),
                   {"__module__": "dpax.accountants", "__doc__": DpEventAccounting.__doc__})
        cls.__qualname__ = "DpEventAccountant"
        _CLASS.append(cls)
    return _CLASS[0]
