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

A symmetric PLD (``_symmetric``, one PMF) gives X = -Y in law. The conversion moves the
arrays only (no re-discretisation), so a round trip keeps every number. dpax reports the
symmetrised curve of the pair, whose delta(epsilon) is the larger of the two directions',
exactly as dp-accounting's ``get_delta_for_epsilon``.
"""

from __future__ import annotations

import numpy as np

from . import grid as _grid
from ._x64 import float64
from .privacy_loss import PrivacyLoss


def _require_dp_accounting():
    try:
        from dp_accounting.pld import pld_pmf, privacy_loss_distribution
    except ImportError as exc:  # pragma: no cover - dp-accounting is in the test extra
        raise ImportError("dpax interop needs dp-accounting: pip install dp-accounting") from exc
    return pld_pmf, privacy_loss_distribution


def _dense(pmf):
    """(lower index, probs, infinity mass, discretization) of a Dense or Sparse PLD PMF."""
    dense = pmf.to_dense_pmf()
    probs = np.asarray(dense._probs, np.float64).reshape(-1)
    if probs.size == 0:
        probs = np.zeros(1)
    return int(dense._lower_loss), probs, float(dense._infinity_mass), float(dense._discretization)


@float64
def from_dp_accounting(pld, description=None) -> PrivacyLoss:
    """A :class:`PrivacyLoss` with the same PMFs as a dp-accounting
    ``PrivacyLossDistribution`` (Y from ``_pmf_remove``, X mirrored from ``_pmf_add``).

    The pair is taken as given (its two directions need not satisfy Pr[X = x] =
    e^-x Pr[Y = x]), so dpax's risks are exactly those of dp-accounting's PMFs; whether it
    is pessimistic is up to how it was built (``pessimistic_estimate=True``).
    """
    _require_dp_accounting()
    for attr in ("_pmf_remove", "_pmf_add"):
        if not hasattr(pld, attr):
            raise TypeError(f"pld must be a dp_accounting PrivacyLossDistribution, got {type(pld).__name__}")
    lo_y, probs_y, inf_y, step_y = _dense(pld._pmf_remove)
    lo_a, probs_a, neginf_x, step_a = _dense(pld._pmf_add)
    if step_y != step_a:
        raise ValueError(f"pld's two PMFs have different discretizations ({step_y:g}, {step_a:g})")
    # X = -(ADD loss): index j of pmf_add (loss (lo_a + j) h) is loss -(lo_a + j) h of X
    probs_x = probs_a[::-1]
    lo_x = -(lo_a + probs_a.size - 1)
    offset = min(lo_y, lo_x)
    end = max(lo_y + probs_y.size, lo_x + probs_x.size)
    n = _grid.padded_length(end - offset)
    _grid.check_memory(1, n, "from_dp_accounting")
    pmf_y = np.zeros(n)
    pmf_x = np.zeros(n)
    pmf_y[lo_y - offset : lo_y - offset + probs_y.size] = probs_y
    pmf_x[lo_x - offset : lo_x - offset + probs_x.size] = probs_x
    if description is None:
        description = "dp_accounting PLD"
    return PrivacyLoss(pmf_x, pmf_y, np.int64(offset), inf_y, neginf_x, step_y, description)


def _trim(probs, lower):
    nz = np.flatnonzero(probs)
    if nz.size == 0:
        return np.zeros(1), lower
    return probs[nz[0] : nz[-1] + 1].copy(), lower + int(nz[0])


def _one_to_dp_accounting(pmf_x, pmf_y, offset, inf_y, neginf_x, step, pld_pmf, pld_module):
    probs_y, lo_y = _trim(pmf_y, int(offset))
    n = pmf_x.size
    probs_a, lo_a = _trim(pmf_x[::-1], -(int(offset) + n - 1))
    remove = pld_pmf.DensePLDPmf(step, lo_y, probs_y, float(inf_y), True)
    add = pld_pmf.DensePLDPmf(step, lo_a, probs_a, float(neginf_x), True)
    return pld_module.PrivacyLossDistribution(remove, add)


@float64
def to_dp_accounting(pl: PrivacyLoss):
    """dp-accounting ``PrivacyLossDistribution`` (dense PMFs, pessimistic) with the same
    pair: ``_pmf_remove`` from Y with Pr[Y = +inf], ``_pmf_add`` from -X with Pr[X = -inf].

    A batch gives a NumPy object array of PLDs with the batch shape.
    """
    pld_pmf, pld_module = _require_dp_accounting()
    if not isinstance(pl, PrivacyLoss):
        raise TypeError(f"pl must be a PrivacyLoss, got {type(pl).__name__}")
    pmf_x, pmf_y, offset, inf_y, neginf_x = (np.asarray(a) for a in pl._rows())
    out = [
        _one_to_dp_accounting(pmf_x[r], pmf_y[r], offset[r], inf_y[r], neginf_x[r], pl.grid_step, pld_pmf, pld_module)
        for r in range(pmf_x.shape[0])
    ]
    if not pl.batch_shape:
        return out[0]
    arr = np.empty(len(out), dtype=object)
    arr[:] = out
    return arr.reshape(pl.batch_shape)
