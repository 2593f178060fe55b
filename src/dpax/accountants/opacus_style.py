"""dpax's Opacus-style accountant: :class:`PLDAccountant` and Opacus' accountant registry.

The package docstring (:mod:`dpax.accountants`) and the README (section "Opacus, riskcal and
gdpnum backends") show it in use with Opacus.
"""

from __future__ import annotations

import copy

import numpy as np

from .. import gdp
from .._engine import validation as _v
from .._engine.x64 import float64
from ..mechanisms import dpsgd, subsampled_gaussian
from ..privacy_loss import compose

DEFAULT_GRID_STEP = 1e-4
#: the name :func:`register_with_opacus` registers dpax under in Opacus' accountant registry
OPACUS_NAME = "dpax"

_NO_STEP = ("{cls}.{query} has no step to account for: the accountant recorded no step, so it cannot "
            "answer for a training run. With Opacus, the accountant must be the one make_private attaches "
            "to the optimizer: register dpax and name it when the engine is made "
            "(dpax.accountants.register_with_opacus(); PrivacyEngine(accountant='dpax')), or assign "
            "engine.accountant = PLDAccountant() before make_private. An accountant assigned after "
            "make_private never sees a step.")


class PLDAccountant:
    """Opacus-style accountant: composes DP-SGD steps exactly on a privacy-loss grid.

    ``grid_step`` (default 1e-4) is the discretisation used by every query unless the query
    passes its own ``grid_step=``. The composed :class:`~dpax.PrivacyLoss` is cached until the
    next ``step``. Heterogeneous histories are composed in one FFT (:func:`dpax.compose` with
    counted factors). A query (``get_epsilon``, ``get_delta``, ``get_beta``,
    ``get_advantage``, ``get_mu_and_regret``) on an accountant that has recorded no step
    raises a ``ValueError``: with Opacus, an accountant assigned to ``engine.accountant``
    after ``make_private`` never sees a step, and answering 0 would report a trained model as
    perfectly private.

    Example::

        acct = PLDAccountant()
        for _ in range(1000):
            acct.step(noise_multiplier=1.0, sample_rate=0.01)
        acct.get_epsilon(delta=1e-5), acct.get_beta(alpha=0.1), acct.get_advantage()
    """

    def __init__(self, grid_step: float = DEFAULT_GRID_STEP):
        self.grid_step = _v.grid_step(grid_step)
        #: list of (noise_multiplier, sample_rate, num_steps); consecutive identical steps grouped
        self.history: list[tuple[float, float, int]] = []
        self._cache: dict = {}

    # -- Opacus interface ---------------------------------------------------------------
    def step(self, *, noise_multiplier, sample_rate) -> None:
        """Record one DP-SGD step (Poisson sampling with ``sample_rate``)."""
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
        """Name stored in ``state_dict()['mechanism']``."""
        return "dpax_pld"

    def get_optimizer_hook_fn(self, sample_rate: float):
        """Callback for Opacus' ``DPOptimizer.attach_step_hook``: one :meth:`step` per
        optimizer step, with the sample rate scaled by ``optim.accumulated_iterations``
        (as Opacus' own accountants do)."""

        sample_rate = _v.one_number("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)

        def hook_fn(optim):
            self.step(noise_multiplier=optim.noise_multiplier,
                      sample_rate=sample_rate * optim.accumulated_iterations)

        return hook_fn

    def state_dict(self, destination=None) -> dict:
        """The accountant's state: ``{'history': [...], 'mechanism': ..., 'grid_step': ...}``."""
        if destination is None:
            destination = {}
        destination["history"] = copy.deepcopy(self.history)
        destination["mechanism"] = self.mechanism()
        destination["grid_step"] = self.grid_step
        return destination

    def load_state_dict(self, state_dict) -> None:
        """Restore a state saved by :meth:`state_dict` (checked: keys, mechanism, history)."""
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
    def privacy_loss(self, grid_step=None):
        """The composed :class:`~dpax.PrivacyLoss` of the history (None when empty)."""
        step = self.grid_step if grid_step is None else _v.grid_step(grid_step)
        if not self.history:
            return None
        key = (step, tuple(self.history))
        if key not in self._cache:
            if len(self.history) == 1:
                s, p, t = self.history[0]
                pl = dpsgd(s, p, t, grid_step=step)
            else:
                s, p, t = (np.array(c) for c in zip(*self.history))
                steps = subsampled_gaussian(s, p, grid_step=step)  # one batched construction
                pl = compose(*[(steps[i], int(t[i])) for i in range(len(t))])
            self._cache.clear()
            self._cache[key] = pl
        return self._cache[key]

    # -- queries ------------------------------------------------------------------------
    def _recorded(self, query: str, grid_step):
        """The composed privacy loss for ``query``; a ValueError when no step was recorded."""
        pl = self.privacy_loss(grid_step)
        if pl is None:
            raise ValueError(_NO_STEP.format(cls=type(self).__name__, query=query))
        return pl

    def get_epsilon(self, delta, *, grid_step=None, **kwargs) -> float:
        """Smallest epsilon with (epsilon, delta)-DP (a ValueError when no step was recorded)."""
        d = _v.probabilities("delta", delta)
        return self._recorded("get_epsilon", grid_step).epsilon(d)

    def get_delta(self, epsilon, *, grid_step=None):
        """delta(epsilon) of the composed mechanism (a ValueError when no step was recorded)."""
        e = _v.real_array("epsilon", epsilon)
        return self._recorded("get_delta", grid_step).delta(e)

    def get_beta(self, alpha, *, grid_step=None, **kwargs):
        """FNR of the best membership-inference attack at FPR ``alpha`` (Algorithm 1; a
        ValueError when no step was recorded)."""
        a = _v.probabilities("alpha", alpha)
        return self._recorded("get_beta", grid_step).beta(a)

    def get_advantage(self, *, grid_step=None, **kwargs) -> float:
        """Largest TPR - FPR of any attack (Algorithm 3; a ValueError when no step was recorded)."""
        return self._recorded("get_advantage", grid_step).advantage()

    def get_mu_and_regret(self, *, grid_step=None, **kwargs) -> tuple[float, float]:
        """Tight mu-GDP of the curve and its regret (:func:`dpax.gdp.mu_and_regret`; a
        ValueError when no step was recorded)."""
        return gdp.mu_and_regret(self._recorded("get_mu_and_regret", grid_step), **kwargs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(grid_step={self.grid_step:g}, steps={len(self)}, history={self.history!r})"


# -- Opacus' accountant registry ------------------------------------------------------------
_OPACUS_CLASSES: dict = {}


def _opacus_name(name) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a str (an Opacus accounting mechanism name), got {type(name).__name__}")
    if not name.strip():
        raise ValueError("name must be a non-empty str (an Opacus accounting mechanism name)")
    return name


def opacus_accountant(name: str = OPACUS_NAME, *, grid_step: float = DEFAULT_GRID_STEP) -> type:
    """The :class:`PLDAccountant` subclass of Opacus' ``IAccountant`` for ``register_accountant``.

    Its ``mechanism()`` is ``name`` (register it under that name: Opacus'
    ``make_private_with_epsilon`` looks the accountant up again by ``mechanism()``) and
    ``OpacusPLDAccountant()`` uses ``grid_step``. One class per ``(name, grid_step)``.
    Imports opacus (and torch); raises ``ImportError`` when it is not installed.
    """
    name = _opacus_name(name)
    step = float(_v.grid_step(grid_step))
    key = (name, step)
    if key not in _OPACUS_CLASSES:
        try:
            from opacus.accountants import IAccountant
        except ImportError as exc:
            raise ImportError("dpax.accountants.opacus_accountant needs opacus: pip install 'opacus>=1.6' "
                              "(dpax's opacus extra; for the CPU build of torch, first: pip install torch "
                              "--index-url https://download.pytorch.org/whl/cpu)") from exc
        _OPACUS_CLASSES[key] = _opacus_class(IAccountant, name, step)
    return _OPACUS_CLASSES[key]


def _opacus_class(base: type, name: str, step: float) -> type:
    class OpacusPLDAccountant(PLDAccountant, base):
        __doc__ = (f"dpax's :class:`PLDAccountant` as an Opacus ``IAccountant``, registered as {name!r} "
                   f"(grid step {step:g}).")

        def __init__(self, grid_step: float = step):
            PLDAccountant.__init__(self, grid_step)

        @classmethod
        def mechanism(cls) -> str:
            """The Opacus registry name this class was made for."""
            return name

        def __reduce__(self):
            # the class is made at run time: pickle / deepcopy rebuild it from (name, grid step)
            state = {k: v for k, v in self.__dict__.items() if k != "_cache"}
            return (_new_opacus_accountant, (name, step), state)

    OpacusPLDAccountant.__module__ = __name__
    OpacusPLDAccountant.__qualname__ = "OpacusPLDAccountant"
    return OpacusPLDAccountant


def _new_opacus_accountant(name: str, grid_step: float):
    return opacus_accountant(name, grid_step=grid_step)()


def register_with_opacus(name: str = OPACUS_NAME, *, grid_step: float = DEFAULT_GRID_STEP,
                         force: bool = False) -> type:
    """Register dpax in Opacus' accountant registry under ``name``; return the class.

    Afterwards ``PrivacyEngine(accountant=name)``, ``make_private_with_epsilon`` and
    ``get_noise_multiplier(..., accountant=name)`` account with dpax. Registering the same
    ``(name, grid_step)`` again does nothing; a name Opacus already holds for another
    accountant (``"rdp"``, ``"prv"``, ...) is replaced only with ``force=True``. Needs
    opacus >= 1.6 (``opacus.accountants.register_accountant``).
    """
    force = _v.flag("force", force)
    cls = opacus_accountant(name, grid_step=grid_step)
    try:
        from opacus.accountants import register_accountant
    except ImportError as exc:
        raise ImportError("dpax.accountants.register_with_opacus needs opacus >= 1.6 "
                          "(opacus.accountants.register_accountant); with an older Opacus assign "
                          "`engine.accountant = dpax.accountants.PLDAccountant()` before make_private instead") from exc
    from opacus.accountants import registry

    current = getattr(registry, "_ACCOUNTANTS", {}).get(name)
    if current is cls:
        return cls
    try:
        register_accountant(name, cls, force=bool(force))
    except ValueError:
        raise ValueError(f"name={name!r} is already registered with Opacus for {current!r}; pass force=True to "
                         f"replace it, or choose another name") from None
    return cls
