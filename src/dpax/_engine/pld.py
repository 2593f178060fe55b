"""dp-accounting's PrivacyLossDistribution from PLRV arrays (the optional dependency
dp-accounting is imported on use; see :mod:`dpax.interop` for the correspondence of the PMFs).
"""

from __future__ import annotations

import numpy as np

from .pair import Pair


def require_dp_accounting():
    """dp-accounting's ``pld_pmf`` and ``privacy_loss_distribution`` modules (ImportError
    naming the package to install when it is missing)."""
    try:
        from dp_accounting.pld import pld_pmf, privacy_loss_distribution
    except ImportError as exc:  # pragma: no cover - dp-accounting is in the test extra
        raise ImportError("dpax interop needs dp-accounting: pip install dp-accounting") from exc
    return pld_pmf, privacy_loss_distribution


def dense(pmf):
    """(lower index, probs, infinity mass, discretization) of a Dense or Sparse PLD PMF."""
    dense_pmf = pmf.to_dense_pmf()
    probs = np.asarray(dense_pmf._probs, np.float64).reshape(-1)
    if probs.size == 0:
        probs = np.zeros(1)
    return int(dense_pmf._lower_loss), probs, float(dense_pmf._infinity_mass), float(dense_pmf._discretization)


def _trim(probs, lower):
    nz = np.flatnonzero(probs)
    if nz.size == 0:
        return np.zeros(1), lower
    return probs[nz[0] : nz[-1] + 1].copy(), lower + int(nz[0])


def _one_pld(pmf_x, pmf_y, offset, inf_y, neginf_x, step, pld_pmf, pld_module):
    probs_y, lo_y = _trim(pmf_y, int(offset))
    n = pmf_x.size
    probs_a, lo_a = _trim(pmf_x[::-1], -(int(offset) + n - 1))
    remove = pld_pmf.DensePLDPmf(step, lo_y, probs_y, float(inf_y), True)
    add = pld_pmf.DensePLDPmf(step, lo_a, probs_a, float(neginf_x), True)
    return pld_module.PrivacyLossDistribution(remove, add)


def to_plds(pair: Pair, grid_step: float) -> list:
    """One dp-accounting ``PrivacyLossDistribution`` per row of ``pair`` (dense PMFs):
    ``_pmf_remove`` from Y with Pr[Y = +inf], ``_pmf_add`` from -X with Pr[X = -inf]."""
    pld_pmf, pld_module = require_dp_accounting()
    pmf_x, pmf_y, offset, inf_y, neginf_x = (np.asarray(a) for a in pair)
    return [
        _one_pld(pmf_x[r], pmf_y[r], offset[r], inf_y[r], neginf_x[r], grid_step, pld_pmf, pld_module)
        for r in range(pmf_x.shape[0])
    ]
