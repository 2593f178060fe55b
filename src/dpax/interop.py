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

``to_dp_accounting`` writes both and ``from_dp_accounting`` reads both, each where it holds
the larger law (see there). Neither re-discretises, so round trips keep every number of
dpax's mechanisms. dpax reports the symmetrised curve, whose delta(epsilon) is the larger
of the two directions', as dp-accounting's ``get_delta_for_epsilon`` is.

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

    Both PMFs are read, each where it holds the larger law: ``_pmf_remove`` gives Y (the
    loss under Q, Pr[Y = +inf] its infinity mass) and ``_pmf_add`` gives -X (Pr[X = -inf]
    its infinity mass). At losses x > 0 the Q-masses are taken as read and the P-masses
    are e^-x times them; at x < 0 the P-masses are taken as read and the Q-masses are e^x
    times them (the rule of :func:`dpax._engine.roundoff.use_exact_ratio`). So every
    mass keeps the relative precision of the larger one and none is multiplied by e^|x|:
    deriving all of P as e^-x times Q would turn the absolute round-off of Q's far lower
    tail (~1e-12 per point at grid 1e-4) into P-mass (dp-accounting's Gaussian PLD of
    sigma 0.5 would give a P of total mass 7.6). Each side is dp-accounting's own
    pessimistic discretisation of its direction, so the curve keeps its meaning: on
    dp-accounting's Gaussian PLDs (connect-the-dots or not, grids 1e-2 to 1e-4) beta,
    advantage, epsilon and mu lie on the safe side of the closed forms, within the grid's
    own error. Round-off is kept on the safe side: negative masses are set to 0, a side
    whose total exceeds 1 by more than round-off (:data:`ROUNDING`) is scaled down, and
    mass a side lacks goes to its infinite atom.
    Round trips through :func:`to_dp_accounting` keep every number of a pair with
    Pr[X = x] = e^-x Pr[Y = x] (every mechanism dpax builds), up to round-off.

    Args:
        pld: a ``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution``.
        description: a label for ``repr`` and reports (default ``"dp_accounting PLD"``).

    Returns:
        A single-mechanism :class:`PrivacyLoss` on the PLD's grid (its discretization).

    Raises:
        TypeError: ``pld`` is not a ``PrivacyLossDistribution``.
        ValueError: its two PMFs have different discretizations.

    >>> import dpax
    >>> from dp_accounting.pld import privacy_loss_distribution as pld_lib
    >>> pld = pld_lib.from_gaussian_mechanism(1.0, value_discretization_interval=2e-2)
    >>> pl = dpax.from_dp_accounting(pld)
    >>> pl.grid_step, pl.epsilon([1e-5, 1e-3]).round(2)
    (0.02, array([4.38, 3.14]))
    """
    _pld.require_dp_accounting()
    for attr in ("_pmf_remove", "_pmf_add"):
        if not hasattr(pld, attr):
            raise TypeError(f"pld must be a dp_accounting PrivacyLossDistribution, got {type(pld).__name__}")
    lo_y, probs_y, inf_y, step = _pld.dense(pld._pmf_remove)
    lo_a, probs_a, neginf_x, step_add = _pld.dense(pld._pmf_add)
    if step_add != step:
        raise ValueError(f"pld: its PMFs have different discretizations ({step} remove, {step_add} add)")
    lo_x = -(lo_a + probs_a.size - 1)  # X = -(loss of the ADD PMF): its points reversed
    lo = min(lo_y, lo_x)
    width = max(lo_y + probs_y.size, lo_x + probs_a.size) - lo
    n = _grid.padded_length(width)
    _grid.check_memory(1, n, "from_dp_accounting")
    read_x, read_y = np.zeros(n), np.zeros(n)
    read_y[lo_y - lo: lo_y - lo + probs_y.size] = np.clip(probs_y, 0.0, None)
    read_x[lo_x - lo: lo_x - lo + probs_a.size] = np.clip(probs_a[::-1], 0.0, None)
    index = lo + np.arange(n)
    shrink = np.exp(-np.abs(index * step))
    pmf_x = np.where(index > 0, read_y * shrink, read_x)
    pmf_y = np.where(index < 0, read_x * shrink, read_y)
    pmf_x, neginf_x, scaled_x = _probability(pmf_x, neginf_x)
    pmf_y, inf_y, scaled_y = _probability(pmf_y, inf_y)
    if description is None:
        description = "dp_accounting PLD"
    return PrivacyLoss(pmf_x, pmf_y, np.int64(lo), inf_y, neginf_x, step, description,
                       exact_ratio=not (scaled_x or scaled_y))


#: A side whose total exceeds 1 by at most this is float64 round-off, left as it is (so the
#: pair keeps Pr[X = x] = e^-x Pr[Y = x]); leaving it rather than scaling it down moves beta
#: and delta by at most this much. dpax's own pairs, written by :func:`to_dp_accounting`,
#: total 1 within 1e-12. dp-accounting's masses (from CDFs, or with connect-the-dots from
#: hockey-stick divergences) are each off by up to ~1e-11 at grid 1e-4, and the sides of its
#: single-mechanism PLDs total 1 within ~5e-12, the sign and size set by the last bits of
#: SciPy's ``logsumexp`` and ``norm.logcdf`` (which differ between SciPy 1.15 and 1.16),
#: so a smaller bound would scale some of them under one SciPy and not another. Larger
#: excesses (~6e-7 for its Gaussian PLD at grid 1e-4 without connect-the-dots, ~6e-9 for a
#: 2000-step DP-SGD PLD at grid 1e-3) are scaled down.
ROUNDING = 1e-10


def _probability(probs: np.ndarray, infinity_mass: float) -> tuple[np.ndarray, float, bool]:
    """(masses, infinite atom, whether scaled) of one side made a probability on the safe
    side: a total above 1 (beyond ``ROUNDING``) scaled down, the atom kept; a total below 1
    completed at the atom."""
    atom = min(max(float(infinity_mass), 0.0), 1.0)
    total = float(np.sum(probs))
    scaled = total + atom > 1.0 + ROUNDING and total > 0.0
    if scaled:
        probs = probs * ((1.0 - atom) / total)
    return probs, max(atom, 1.0 - float(np.sum(probs))), scaled


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
