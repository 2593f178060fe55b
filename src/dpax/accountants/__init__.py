"""Privacy accountants backed by dpax: Opacus-style and dp-accounting's ``PrivacyAccountant``.

Neither imports its library before it is used: ``import dpax`` imports neither torch nor
dp-accounting.

Opacus.

:class:`PLDAccountant` implements the interface of Opacus' ``IAccountant``
(``opacus/accountants/accountant.py``): ``step(noise_multiplier=, sample_rate=)``, a
``history`` of ``(noise_multiplier, sample_rate, num_steps)`` that groups consecutive
identical steps, ``get_epsilon(delta)``, ``__len__``, ``mechanism()``, ``state_dict()`` /
``load_state_dict()`` and ``get_optimizer_hook_fn(sample_rate)``, so it can replace
``PrivacyEngine.accountant``. It adds the operational risks of the seed paper: ``get_beta``
(Algorithm 1), ``get_advantage`` (Algorithm 3), and ``get_mu_and_regret`` (GDP paper,
Eq. 11 / 13). Every answer is for the symmetrised add/remove curve of the composed
Poisson-subsampled Gaussian steps and is pessimistic (never below the truth).

Opacus (>= 1.6) looks accountants up by name in a registry (``register_accountant``);
:func:`register_with_opacus` puts dpax there, after which every Opacus call that takes an
accountant name accounts with dpax: ``PrivacyEngine(accountant="dpax")``,
``make_private_with_epsilon`` and ``get_noise_multiplier(..., accountant="dpax")``.
:func:`opacus_accountant` gives the class itself (a subclass of both :class:`PLDAccountant`
and Opacus' ``IAccountant``, whose ``mechanism()`` is the registered name) for Opacus' own
``register_accountant``. Both import opacus (and torch) when called, never before::

    import torch
    from opacus import PrivacyEngine
    from opacus.accountants.utils import get_noise_multiplier
    from dpax.accountants import register_with_opacus

    register_with_opacus()  # or: register_accountant("dpax", opacus_accountant("dpax"))
    sigma = get_noise_multiplier(target_epsilon=3.0, target_delta=1e-5, sample_rate=0.01,
                                 steps=1000, accountant="dpax")  # about 0.814

    model = torch.nn.Linear(4, 2)
    data = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=16)
    engine = PrivacyEngine(accountant="dpax")
    model, optimizer, loader = engine.make_private_with_epsilon(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=loader, target_epsilon=3.0, target_delta=1e-5, epochs=1, max_grad_norm=1.0)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    engine.get_epsilon(1e-5)          # <= 3.0, from dpax
    engine.accountant.get_beta(0.1)   # every PLDAccountant query is there too

A query's grid step is the class's (default 1e-4, ``opacus_accountant(grid_step=...)``) or a
``grid_step=`` keyword, which Opacus passes through: ``get_noise_multiplier(...,
accountant="dpax", grid_step=1e-3)``. Opacus 1.5 has no registry: assign an instance,
``engine.accountant = PLDAccountant()``, and use ``make_private`` (its
``make_private_with_epsilon`` cannot look a dpax accountant up by name).

Opacus' bisection asks for about 15 noise values; each new support length compiles dpax's
kernels once, so the first ``get_noise_multiplier`` in a process with an empty kernel cache
takes seconds (about 17 s on 2 CPU cores for the example; about 1 s once dpax's on-disk kernel
cache holds them), later ones under a second.

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

from .dp_events import DpEventAccounting, dp_event_accountant_class
from .opacus_style import (
    DEFAULT_GRID_STEP,
    OPACUS_NAME,
    PLDAccountant,
    opacus_accountant,
    register_with_opacus,
)

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
        return dp_event_accountant_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"DpEventAccountant"})
