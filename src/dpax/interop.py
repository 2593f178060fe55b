"""Interoperability with Google's dp-accounting: PrivacyLossDistribution <-> PrivacyLoss.

dp-accounting's ``PrivacyLossDistribution`` keeps two PMFs of privacy losses on the grid
``i * discretization`` (``dp_accounting.pld.pld_pmf``): ``_pmf_remove``, the law of
log(mu_upper / mu_lower) under mu_upper for the REMOVE pair (mu_upper = the mixture with
the record, mu_lower = without it), with ``_infinity_mass`` = Pr[loss = +inf]; and
``_pmf_add``, the same for the ADD pair, which is the swapped pair (mu_upper and mu_lower
exchanged; ``privacy_loss_mechanism.AdditiveNoisePrivacyLoss``). With dpax's naming
(Q = mu_upper and P = mu_lower of the REMOVE pair):

* ``pmf_remove`` is the law of Y = log(Q/P) under Q, its infinity mass Pr[Y = +inf];
* ``pmf_add`` is the law of log(P/Q) under P, i.e. of -X, its infinity mass Pr[X = -inf].

``to_dp_accounting`` writes both. ``from_dp_accounting`` reads the pair dp-accounting itself
evaluates from ``_pmf_remove`` (see there). Neither re-discretises, so round trips keep
every number. dpax reports the symmetrised curve, whose delta(epsilon) is the larger of
the two directions', as dp-accounting's ``get_delta_for_epsilon`` is.

dp-accounting is an optional dependency (installed with the ``test`` extra); both functions
need it.

>>> import dpax
>>> pld = dpax.to_dp_accounting(dpax.gaussian(1.0, grid_step=1e-2))
>>> round(dpax.from_dp_accounting(pld).epsilon(1e-5), 4)
4.3772
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._engine import grid as _grid
from ._engine import pld as _pld
from ._engine.x64 import float64
from .privacy_loss import PrivacyLoss


@float64
def from_dp_accounting(pld: Any, description: str | None = None) -> PrivacyLoss:
    """A :class:`PrivacyLoss` from a dp-accounting ``PrivacyLossDistribution``.

    dp-accounting evaluates each of its PMFs on its own, as the pair whose Q-masses are the
    PMF's masses q_l and whose P-masses are q_l e^-l, with P's remaining mass at loss -inf
    (``get_delta_for_epsilon`` = sum_l q_l (1 - e^(eps - l))_+ + infinity mass). dpax takes
    exactly that pair from ``_pmf_remove``: Y = the PMF with Pr[Y = +inf] = its infinity
    mass, Pr[X = x] = e^-x Pr[Y = x], Pr[X = -inf] = 1 - sum. The pair dominates the
    mechanism in the REMOVE direction, hence also in the other (f' <= f implies
    f'^-1 <= f^-1), so the symmetrised curve dpax reports is safe; ``_pmf_add`` (the
    swapped pair, rounded separately) is not needed. Its own pessimistic rounding of the
    two PMFs need not agree point by point, so mixing them would not make one pair.

    Args:
        pld: a ``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution``.
        description: a label for ``repr`` and reports (default ``"dp_accounting PLD"``).

    Returns:
        A single-mechanism :class:`PrivacyLoss` on the PLD's grid (its discretization).

    Raises:
        TypeError: ``pld`` is not a ``PrivacyLossDistribution``.

    >>> import dpax
    >>> from dp_accounting.pld import privacy_loss_distribution as pld_lib
    >>> pld = pld_lib.from_gaussian_mechanism(1.0, value_discretization_interval=1e-2)
    >>> pl = dpax.from_dp_accounting(pld)
    >>> pl.grid_step, round(pl.epsilon(1e-5), 2)
    (0.01, 4.38)
    """
    _pld.require_dp_accounting()
    for attr in ("_pmf_remove", "_pmf_add"):
        if not hasattr(pld, attr):
            raise TypeError(f"pld must be a dp_accounting PrivacyLossDistribution, got {type(pld).__name__}")
    lo, probs, inf_y, step = _pld.dense(pld._pmf_remove)
    probs = np.clip(probs, 0.0, None)
    n = _grid.padded_length(probs.size)
    _grid.check_memory(1, n, "from_dp_accounting")
    pmf_y = np.zeros(n)
    pmf_y[: probs.size] = probs
    loss = (lo + np.arange(n)) * step
    with np.errstate(divide="ignore", over="ignore"):
        pmf_x = np.where(pmf_y > 0, np.exp(np.log(pmf_y) - loss), 0.0)
    total = float(np.sum(pmf_x))
    if total > 1.0:  # rounding (or an optimistic PMF): keep P a probability
        pmf_x /= total
    neginf_x = max(0.0, 1.0 - float(np.sum(pmf_x)))
    if description is None:
        description = "dp_accounting PLD"
    return PrivacyLoss(pmf_x, pmf_y, np.int64(lo), inf_y, neginf_x, step, description, exact_ratio=True)


@float64
def to_dp_accounting(pl: PrivacyLoss) -> Any:
    """dp-accounting ``PrivacyLossDistribution`` (dense PMFs, pessimistic) with the same
    pair: ``_pmf_remove`` from Y with Pr[Y = +inf], ``_pmf_add`` from -X with Pr[X = -inf].

    Args:
        pl: the privacy loss to convert (any batch shape).

    Returns:
        A ``PrivacyLossDistribution``, or for a batch a NumPy object array of them with
        the batch shape.

    Raises:
        TypeError: ``pl`` is not a :class:`PrivacyLoss`.

    >>> import dpax
    >>> pld = dpax.to_dp_accounting(dpax.gaussian(1.0, grid_step=1e-2))
    >>> round(pld.get_epsilon_for_delta(1e-5), 4)
    4.3772
    """
    if not isinstance(pl, PrivacyLoss):
        raise TypeError(f"pl must be a PrivacyLoss, got {type(pl).__name__}")
    return pl.to_dp_accounting()
