"""Privacy accountants backed by dpax: Opacus-style and dp-accounting's ``PrivacyAccountant``.

Neither imports its library before it is used: ``import dpax`` imports neither torch nor
dp-accounting.

Opacus.

:class:`PLDAccountant` implements the interface of Opacus' ``IAccountant``
(``opacus/accountants/accountant.py``): ``step(noise_multiplier=, sample_rate=)``, a
``history`` of ``(noise_multiplier, sample_rate, num_steps)`` that groups consecutive
identical steps, ``get_epsilon(delta)``, ``__len__``, ``mechanism()``, ``state_dict()`` /
``load_state_dict()`` and ``get_optimizer_hook_fn(sample_rate)``, so it can replace
``PrivacyEngine.accountant``. It adds the operational risks of Kulynych, Gomez, Kaissis,
du Pin Calmon and Troncoso, "Attack-aware noise calibration for differential privacy"
(NeurIPS 2024): ``get_beta`` (their Algorithm 1) and ``get_advantage`` (Algorithm 3), and
the tight mu-GDP with its regret of Gomez, Kulynych, Kaissis, Hayes, Balle and Honkela,
"(epsilon, delta) considered harmful: best practices for reporting differential privacy
guarantees" (2025), ``get_mu_and_regret`` (their Eq. 11 / 13). Every answer is for the
symmetrised add/remove curve of the composed Poisson-subsampled Gaussian steps and is
pessimistic (never below the truth). A query on an accountant that has recorded no step
raises a ``ValueError`` instead of answering 0.

Opacus (>= 1.6) looks accountants up by name in a registry (``register_accountant``);
:func:`register_with_opacus` puts dpax there, after which every Opacus call that takes an
accountant name accounts with dpax: ``PrivacyEngine(accountant="dpax")``,
``make_private_with_epsilon`` and ``get_noise_multiplier(..., accountant="dpax")``.
:func:`opacus_accountant` gives the class itself (a subclass of both :class:`PLDAccountant`
and Opacus' ``IAccountant``, whose ``mechanism()`` is the registered name) for Opacus' own
``register_accountant``. Both import opacus (and torch) when called, never before. The
accountant must be the engine's when ``make_private`` runs, which attaches it to the
optimizer: name it when the engine is made (``PrivacyEngine(accountant="dpax")``) or, with
an Opacus older than 1.6 (no registry), assign ``engine.accountant = PLDAccountant()``
before ``make_private``; one assigned afterwards never sees a step. The README's section
"Training with Opacus" is a whole training run.

A query's grid step is the class's (default 1e-4, ``opacus_accountant(grid_step=...)``) or a
``grid_step=`` keyword, which Opacus passes through: ``get_noise_multiplier(...,
accountant="dpax", grid_step=1e-3)``. Opacus' bisection asks for about 15 noise values; each
new support length compiles dpax's kernels once, so the first ``get_noise_multiplier`` in a
process with an empty kernel cache takes seconds, later ones under a second.

dp-accounting. ``DpEventAccountant`` is a ``dp_accounting.PrivacyAccountant`` for any
``DpEvent`` tree dp-accounting's PLD accountant reads (:mod:`dpax.events`); it takes the
PLD accountant's arguments, composes lazily (events are counted as they arrive and composed
once, by FFT, at the first query) and answers beta, advantage and mu beside epsilon and
delta (:class:`~dpax.accountants.dp_events.DpEventAccounting`)::

    from dp_accounting import dp_event, mechanism_calibration
    from dpax.accountants import DpEventAccountant

    acct = DpEventAccountant()  # as dp_accounting.pld.PLDAccountant()
    acct.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1)), 1000)
    acct.get_epsilon(1e-5), acct.get_beta(0.01), acct.get_mu_and_regret()
    mechanism_calibration.calibrate_dp_mechanism(  # dp-accounting's own search, dpax's numbers
        DpEventAccountant, lambda s: dp_event.SelfComposedDpEvent(
            dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(s)), 1000),
        target_epsilon=2.0, target_delta=1e-5)
"""

from __future__ import annotations

from typing import Any

from .._engine.grid import DEFAULT_GRID_STEP
from .dp_events import DpEventAccounting, _dp_event_accountant_class
from .opacus_registry import opacus_accountant, register_with_opacus
from .opacus_style import OPACUS_NAME, PLDAccountant

__all__ = [
    "DEFAULT_GRID_STEP",
    "DpEventAccountant",
    "DpEventAccounting",
    "OPACUS_NAME",
    "PLDAccountant",
    "opacus_accountant",
    "register_with_opacus",
]


def __getattr__(name: str) -> Any:
    # DpEventAccountant subclasses dp-accounting's PrivacyAccountant: made (and dp-accounting
    # imported) on first use, so that importing dpax stays free of it
    if name == "DpEventAccountant":
        return _dp_event_accountant_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"DpEventAccountant"})
