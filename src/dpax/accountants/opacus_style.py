"""dpax's Opacus-style accountant, :class:`PLDAccountant` (Opacus' accountant registry is in
:mod:`.opacus_registry`).

The package docstring (:mod:`dpax.accountants`) and the README (section "Opacus, riskcal and
gdpnum backends") show it in use with Opacus.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .. import gdp
from .._engine import validation as _v
from .._engine.grid import DEFAULT_GRID_STEP
from .._engine.x64 import float64
from ..mechanisms import dpsgd, subsampled_gaussian
from ..privacy_loss import Interval, PrivacyLoss, compose

#: the name :func:`register_with_opacus` registers dpax under in Opacus' accountant registry
OPACUS_NAME = "dpax"

_NO_STEP = ("{cls}.{query} has no step to account for: the accountant recorded no step, so it cannot "
            "answer for a training run. With Opacus, the accountant must be the one make_private attaches "
            "to the optimizer: register dpax and name it when the engine is made "
            "(dpax.accountants.register_with_opacus(); PrivacyEngine(accountant='dpax')), or assign "
            "engine.accountant = PLDAccountant() before make_private. An accountant assigned after "
            "make_private never sees a step.")


class _StepHistory:
    """The steps an Opacus-style accountant records, Opacus' accountant protocol (``step``,
    the optimizer hook, ``state_dict`` / ``load_state_dict``) and the composed privacy loss
    of the history; :class:`PLDAccountant` answers the queries."""

    def __init__(self, grid_step: float = DEFAULT_GRID_STEP) -> None:
        self.grid_step = _v.grid_step(grid_step)
        #: list of (noise_multiplier, sample_rate, num_steps); consecutive identical steps grouped
        self.history: list[tuple[float, float, int]] = []
        self._cache: dict[tuple[float, tuple[tuple[float, float, int], ...]], PrivacyLoss] = {}

    # -- Opacus interface ---------------------------------------------------------------
    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one DP-SGD step: the subsampled Gaussian mechanism with Poisson sampling.

        A step equal to the last one adds to its count in :attr:`history`; the composed
        privacy loss is recomputed at the next query.

        Args:
            noise_multiplier: the Gaussian noise's standard deviation over the clipping norm, > 0.
            sample_rate: the Poisson sampling rate, in (0, 1].

        Raises:
            ValueError, TypeError: an argument outside its range or not one number.

        >>> from dpax.accountants import PLDAccountant
        >>> acct = PLDAccountant()
        >>> acct.step(noise_multiplier=1.0, sample_rate=0.01)
        >>> acct.step(noise_multiplier=1.0, sample_rate=0.01)
        >>> acct.step(noise_multiplier=2.0, sample_rate=0.01)
        >>> acct.history, len(acct)
        ([(1.0, 0.01, 2), (2.0, 0.01, 1)], 3)
        """
        s = _v.one_number("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
        p = _v.one_number("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
        if self.history and self.history[-1][0] == s and self.history[-1][1] == p:
            last = self.history[-1]
            self.history[-1] = (s, p, last[2] + 1)
        else:
            self.history.append((s, p, 1))
        self._cache.clear()

    def __len__(self) -> int:
        """Total number of steps recorded."""
        return int(sum(t for _, _, t in self.history))

    @classmethod
    def mechanism(cls) -> str:
        """Name stored in ``state_dict()['mechanism']``.

        Returns:
            ``"dpax_pld"`` (an Opacus-registered subclass returns its registry name).

        >>> from dpax.accountants import PLDAccountant
        >>> PLDAccountant.mechanism()
        'dpax_pld'
        """
        return "dpax_pld"

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """Callback for Opacus' ``DPOptimizer.attach_step_hook``.

        The callback records one :meth:`step` per optimizer step, with the optimizer's
        ``noise_multiplier`` and the sample rate scaled by its ``accumulated_iterations``
        (as Opacus' own accountants do).

        Args:
            sample_rate: the Poisson sampling rate of one batch, in (0, 1].

        Returns:
            A function of the optimizer that records its step.

        Raises:
            ValueError, TypeError: ``sample_rate`` outside (0, 1] or not one number.

        >>> from types import SimpleNamespace
        >>> from dpax.accountants import PLDAccountant
        >>> acct = PLDAccountant()
        >>> hook = acct.get_optimizer_hook_fn(sample_rate=0.01)
        >>> hook(SimpleNamespace(noise_multiplier=1.0, accumulated_iterations=2))  # an optimizer's fields
        >>> acct.history
        [(1.0, 0.02, 1)]
        """

        sample_rate = _v.one_number("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)

        def hook_fn(optim: Any) -> None:
            self.step(noise_multiplier=optim.noise_multiplier,
                      sample_rate=sample_rate * optim.accumulated_iterations)

        return hook_fn

    def state_dict(self, destination: dict[str, Any] | None = None) -> dict[str, Any]:
        """The accountant's state, for :meth:`load_state_dict` (and Opacus' checkpoints).

        Args:
            destination: a dict to write the state into (default: a new one).

        Returns:
            ``destination`` with the keys ``history`` (a copy), ``mechanism`` and ``grid_step``.

        >>> from dpax.accountants import PLDAccountant
        >>> acct = PLDAccountant()
        >>> acct.step(noise_multiplier=1.0, sample_rate=0.01)
        >>> acct.state_dict()
        {'history': [(1.0, 0.01, 1)], 'mechanism': 'dpax_pld', 'grid_step': 0.0001}
        """
        if destination is None:
            destination = {}
        destination["history"] = copy.deepcopy(self.history)
        destination["mechanism"] = self.mechanism()
        destination["grid_step"] = self.grid_step
        return destination

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict`, replacing the history (and the grid
        step where the state has one).

        Args:
            state_dict: a dict with the keys ``history`` (``(noise_multiplier, sample_rate,
                num_steps)`` entries) and ``mechanism`` (this class's :meth:`mechanism`), and
                optionally ``grid_step``.

        Raises:
            TypeError: ``state_dict`` is not a dict, or an entry's number is not a number.
            ValueError: ``state_dict`` empty, a key missing, another mechanism's state, or
                an entry not a triple or outside its range; the message names the entry.

        >>> from dpax.accountants import PLDAccountant
        >>> acct = PLDAccountant()
        >>> acct.load_state_dict({"history": [(1.0, 0.01, 100)], "mechanism": "dpax_pld", "grid_step": 1e-3})
        >>> acct
        PLDAccountant(grid_step=0.001, steps=100, history=[(1.0, 0.01, 100)])
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"state_dict must be a dict saved by state_dict(), got {type(state_dict).__name__}")
        if not state_dict:
            raise ValueError("state_dict is None or empty and cannot be loaded into the accountant")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise ValueError(f"state_dict has no key {key!r}; cannot be loaded into the accountant")
        if state_dict["mechanism"] != self.mechanism():
            raise ValueError(f"state_dict of mechanism {state_dict['mechanism']!r} cannot be loaded into an "
                             f"accountant of mechanism {self.mechanism()!r}")
        history = []
        for i, entry in enumerate(state_dict["history"]):
            try:
                s, p, t = entry
            except (TypeError, ValueError):
                raise ValueError(f"state_dict['history'][{i}] must be (noise_multiplier, sample_rate, num_steps), "
                                 f"got {entry!r}") from None
            s = _v.one_number(f"history[{i}] noise_multiplier", s, low=0.0, low_open=True)
            p = _v.one_number(f"history[{i}] sample_rate", p, low=0.0, high=1.0, low_open=True)
            t = _v.one_integer(f"history[{i}] num_steps", t)
            history.append((s, p, t))
        self.history = history
        if "grid_step" in state_dict:
            self.grid_step = _v.grid_step(state_dict["grid_step"])
        self._cache.clear()

    # -- the composed privacy loss --------------------------------------------------------
    @float64
    def privacy_loss(self, grid_step: float | None = None) -> PrivacyLoss | None:
        """The composed :class:`~dpax.PrivacyLoss` of the history, kept until the next step.

        One kind of step is :func:`dpax.dpsgd`; several are built as one batch of
        :func:`dpax.subsampled_gaussian` and composed with their counts in one FFT
        (:func:`dpax.compose`).

        Args:
            grid_step: the grid's step, in [1e-7, 1] (default: the accountant's).

        Returns:
            The composed privacy loss, or None when no step was recorded.

        Raises:
            ValueError, TypeError: ``grid_step`` outside its range or not a number.

        >>> from dpax.accountants import PLDAccountant
        >>> acct = PLDAccountant(grid_step=1e-3)
        >>> print(acct.privacy_loss())
        None
        >>> acct.load_state_dict({"history": [(1.0, 0.01, 100)], "mechanism": "dpax_pld"})
        >>> acct.privacy_loss().description
        'dpsgd(noise_multiplier=1, sample_rate=0.01, num_steps=100)'
        """
        step = self.grid_step if grid_step is None else _v.grid_step(grid_step)
        if not self.history:
            return None
        key = (step, tuple(self.history))
        if key not in self._cache:
            if len(self.history) == 1:
                s, p, t = self.history[0]
                pl = dpsgd(s, p, t, grid_step=step)
            else:
                noises, rates, counts = (np.array(c) for c in zip(*self.history))
                steps = subsampled_gaussian(noises, rates, grid_step=step)  # one batched construction
                pl = compose(*[(steps[i], int(counts[i])) for i in range(len(counts))])
            self._cache.clear()
            self._cache[key] = pl
        return self._cache[key]

    # -- queries ------------------------------------------------------------------------
    def _recorded(self, query: str, grid_step: float | None) -> PrivacyLoss:
        """The composed privacy loss for ``query``; a ValueError when no step was recorded."""
        pl = self.privacy_loss(grid_step)
        if pl is None:
            raise ValueError(_NO_STEP.format(cls=type(self).__name__, query=query))
        return pl


class PLDAccountant(_StepHistory):
    """Opacus-style accountant: composes DP-SGD steps exactly on a privacy-loss grid.

    ``grid_step`` (default 1e-4) is the discretisation used by every query unless the query
    passes its own ``grid_step=``. The composed :class:`~dpax.PrivacyLoss` is cached until the
    next ``step``. Heterogeneous histories are composed in one FFT (:func:`dpax.compose` with
    counted factors). A query (``get_epsilon``, ``get_delta``, ``get_beta``,
    ``get_advantage``, ``get_mu_and_regret``) on an accountant that has recorded no step
    raises a ``ValueError``: with Opacus, an accountant assigned to ``engine.accountant``
    after ``make_private`` never sees a step, and answering 0 would report a trained model as
    perfectly private.

    Args:
        grid_step: the privacy-loss grid's step of every query that passes none, in
            [1e-7, 1] (default 1e-4).

    Raises:
        ValueError, TypeError: ``grid_step`` outside its range or not a number.

    >>> from dpax.accountants import PLDAccountant
    >>> acct = PLDAccountant(grid_step=1e-3)
    >>> for _ in range(100):
    ...     acct.step(noise_multiplier=1.0, sample_rate=0.01)
    >>> acct
    PLDAccountant(grid_step=0.001, steps=100, history=[(1.0, 0.01, 100)])
    >>> round(acct.get_epsilon(delta=1e-5), 3), round(acct.get_beta(alpha=0.1), 3), round(acct.get_advantage(), 4)
    (0.718, 0.873, 0.0507)
    """

    def get_epsilon(self, delta: ArrayLike, *, grid_step: float | None = None, **kwargs: Any) -> float | np.ndarray:
        """Smallest epsilon such that the composed steps are (epsilon, delta)-DP.

        Args:
            delta: the guarantee's delta, in [0, 1] (any shape).
            grid_step: the grid's step, in [1e-7, 1] (default: the accountant's).
            **kwargs: ignored: options of Opacus' other accountants (such as the PRV
                accountant's ``eps_error``), accepted so that calls written for them work.

        Returns:
            epsilon >= 0 with the shape of ``delta`` (a float for one number).

        Raises:
            ValueError: no step was recorded, or ``delta`` outside [0, 1].
            TypeError: ``delta`` or ``grid_step`` not real.

                >>> from dpax.accountants import PLDAccountant
        >>> acct = PLDAccountant(grid_step=1e-3)
        >>> acct.load_state_dict({"history": [(1.0, 0.01, 100)], "mechanism": "dpax_pld"})
        >>> round(acct.get_epsilon(1e-5), 4)
        0.7181
        """
        d = _v.probabilities("delta", delta)
        return cast("float | np.ndarray", self._recorded("get_epsilon", grid_step).epsilon(d))

    def get_delta(self, epsilon: ArrayLike, *, grid_step: float | None = None) -> float | np.ndarray:
        """delta(epsilon) of the composed steps: the smallest delta with (epsilon, delta)-DP.

        Args:
            epsilon: finite reals (any shape).
            grid_step: the grid's step, in [1e-7, 1] (default: the accountant's).

        Returns:
            delta in [0, 1] with the shape of ``epsilon`` (a float for one number).

        Raises:
            ValueError: no step was recorded, or ``epsilon`` not finite.
            TypeError: ``epsilon`` or ``grid_step`` not real.

                >>> from dpax.accountants import PLDAccountant
        >>> acct = PLDAccountant(grid_step=1e-3)
        >>> acct.load_state_dict({"history": [(1.0, 0.01, 100)], "mechanism": "dpax_pld"})
        >>> f"{acct.get_delta(1.0):.3g}"
        '6.68e-07'
        """
        e = _v.real_array("epsilon", epsilon)
        return cast("float | np.ndarray", self._recorded("get_delta", grid_step).delta(e))

    def get_beta(self, alpha: ArrayLike, *, grid_step: float | None = None, **kwargs: Any) -> float | np.ndarray:
        """FNR of the best membership-inference attack at FPR ``alpha``.

        Kulynych, Gomez et al., "Attack-aware noise calibration for differential privacy"
        (NeurIPS 2024), Algorithm 1, on the symmetrised curve.

        Args:
            alpha: false-positive rates in [0, 1] (any shape).
            grid_step: the grid's step, in [1e-7, 1] (default: the accountant's).
            **kwargs: ignored, as by :meth:`get_epsilon`.

        Returns:
            beta in [0, 1] with the shape of ``alpha`` (a float for one number).

        Raises:
            ValueError: no step was recorded, or ``alpha`` outside [0, 1].
            TypeError: ``alpha`` or ``grid_step`` not real.

                >>> from dpax.accountants import PLDAccountant
        >>> acct = PLDAccountant(grid_step=1e-3)
        >>> acct.load_state_dict({"history": [(1.0, 0.01, 100)], "mechanism": "dpax_pld"})
        >>> acct.get_beta([0.01, 0.05, 0.1]).round(4)
        array([0.9849, 0.933 , 0.8729])
        """
        a = _v.probabilities("alpha", alpha)
        return cast("float | np.ndarray", self._recorded("get_beta", grid_step).beta(a))

    def get_advantage(self, *, grid_step: float | None = None, **kwargs: Any) -> float:
        """Largest TPR - FPR of any membership-inference attack.

        Kulynych, Gomez et al., "Attack-aware noise calibration for differential privacy"
        (NeurIPS 2024), Algorithm 3.

        Args:
            grid_step: the grid's step, in [1e-7, 1] (default: the accountant's).
            **kwargs: ignored, as by :meth:`get_epsilon`.

        Returns:
            The advantage, in [0, 1].

        Raises:
            ValueError: no step was recorded.
            ValueError, TypeError: ``grid_step`` outside its range or not a number.

                >>> from dpax.accountants import PLDAccountant
        >>> acct = PLDAccountant(grid_step=1e-3)
        >>> acct.load_state_dict({"history": [(1.0, 0.01, 100)], "mechanism": "dpax_pld"})
        >>> round(acct.get_advantage(), 4)
        0.0507
        """
        return cast(float, self._recorded("get_advantage", grid_step).advantage())

    def get_mu_and_regret(self, *, grid_step: float | None = None,
                          **kwargs: Any) -> tuple[float | Interval, float | Interval]:
        """Tight mu-GDP of the composed curve and its regret, by :func:`dpax.gdp.mu_and_regret`.

        Gomez et al., "(epsilon, delta) considered harmful: best practices for reporting
        differential privacy guarantees" (2025), Eq. 11 and 13.

        Args:
            grid_step: the grid's step, in [1e-7, 1] (default: the accountant's).
            **kwargs: keyword arguments of :func:`dpax.gdp.mu_and_regret` (``tail``, ``bounds``).

        Returns:
            ``(mu, regret)``: floats, or two :class:`dpax.Interval` with ``bounds=True``.

        Raises:
            ValueError: no step was recorded.
            ValueError, TypeError: ``grid_step`` or a keyword argument outside its range.

                >>> from dpax.accountants import PLDAccountant
        >>> acct = PLDAccountant(grid_step=1e-3)
        >>> acct.load_state_dict({"history": [(1.0, 0.01, 100)], "mechanism": "dpax_pld"})
        >>> mu, regret = acct.get_mu_and_regret()
        >>> round(mu, 3), round(regret, 3)
        (0.358, 0.046)
        """
        return cast("tuple[float | Interval, float | Interval]",
                    gdp.mu_and_regret(self._recorded("get_mu_and_regret", grid_step), **kwargs))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(grid_step={self.grid_step:g}, steps={len(self)}, history={self.history!r})"
