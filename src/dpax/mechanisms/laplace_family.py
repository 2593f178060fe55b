"""Laplace family: the Laplace mechanism and the Poisson-subsampled Laplace, from the exact
Laplace loss law."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._engine import construct as _construct
from .._engine import grid as _grid
from .._engine import optimistic as _optimistic
from .._engine import validation as _v
from .._engine.grid import DEFAULT_GRID_STEP
from .._engine.x64 import float64
from ..privacy_loss import PrivacyLoss
from ..privacy_loss.companion import optimistic
from ..privacy_loss.fields import replaced
from ._common import _MAX_LOSS, _describe, _substitution_factor


def _laplace_loss(eps: np.ndarray, p: np.ndarray, step: float, shape: tuple[int, ...], desc: str) -> PrivacyLoss:
    eps = np.broadcast_to(eps, shape).reshape(-1)
    p = np.broadcast_to(p, shape).reshape(-1)
    with np.errstate(divide="ignore"):
        high = np.logaddexp(np.log1p(-p), np.log(p) + eps)
        low = np.logaddexp(np.log1p(-p), np.log(p) - eps)
    if np.any(high > _MAX_LOSS):
        worst = float(eps[np.argmax(high > _MAX_LOSS)])
        raise ValueError(f"sensitivity / scale must be at most {_MAX_LOSS:g} (privacy loss beyond float64 range), "
                         f"got {_v.shown(worst)}; use a larger scale")
    offset = np.floor(low / step).astype(np.int64)
    n = _grid.padded_length(int(np.max(np.ceil(high / step).astype(np.int64) - offset)) + 1, "construct")
    needed = np.ceil(high / step).astype(np.int64) - offset + 1  # each row on its own length
    pair = _construct.by_row_length(_construct.laplace_kernel, (eps, p, offset), step, needed, desc.split("(")[0])
    pl = PrivacyLoss.from_pair(pair, step, desc, shape, exact_ratio=True)
    return replaced(pl, companion=lambda: optimistic(
        PrivacyLoss, _optimistic.laplace_kernel(eps, p, offset, step, n), step, shape))


@float64
def laplace(scale: ArrayLike, sensitivity: ArrayLike = 1.0, grid_step: float = DEFAULT_GRID_STEP,
            neighbouring: str = "add_remove") -> PrivacyLoss:
    """Laplace mechanism: noise Lap(0, ``scale``) on a query of L1 ``sensitivity``.

    Exact loss law (:func:`dpax._engine.construct.laplace_log_cdfs`): L in [-eps, eps],
    eps = sensitivity / scale, with atoms at the ends; its trade-off curve T(Lap(0, 1),
    Lap(eps, 1)) (Dong, Roth & Su) is 1 - e^eps a for a < e^-eps / 2, e^-eps / (4a) up to
    a = 1/2, e^-eps (1 - a) beyond. ``neighbouring="substitution"`` doubles the sensitivity.

    Args:
        scale: the Laplace noise scale b, > 0, and at least sensitivity / 600 (the loss
            sensitivity / scale leaves float64's range beyond 600 nats; refused).
        sensitivity: L1 sensitivity of the query, > 0.
        grid_step: the loss grid's step, in [1e-7, 1].
        neighbouring: ``"add_remove"`` (default) or ``"substitution"``.

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> pl = dpax.laplace(1.0, grid_step=1e-2)
    >>> round(pl.epsilon(0.0), 4), round(pl.advantage(), 4)
    (1.0, 0.3935)
    """
    b = _v.real_array("scale", scale, low=0.0, low_open=True)
    sens = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True) * _substitution_factor(neighbouring)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("scale", b), ("sensitivity", sens))
    desc = _describe("laplace", neighbouring, scale=scale, sensitivity=sensitivity)
    with np.errstate(over="ignore", under="ignore"):  # beyond float64: refused / exactly 0 below
        eps = sens / b
    return _laplace_loss(eps, np.ones(shape), step, shape, desc)


@float64
def subsampled_laplace(scale: ArrayLike, sample_rate: ArrayLike, sensitivity: ArrayLike = 1.0,
                       grid_step: float = DEFAULT_GRID_STEP) -> PrivacyLoss:
    """Poisson-subsampled Laplace mechanism, add/remove neighbouring.

    Pair P = Lap(0, b), Q = (1 - p) Lap(0, b) + p Lap(D, b); its loss log(1 - p + p e^L) is
    an increasing transform of the Laplace loss L, so its CDFs are exact
    (:func:`dpax._engine.construct.subsampled_laplace_log_cdfs`). Risks are reported for the
    symmetrised curve (the other direction is the swapped pair).

    Args:
        scale: the Laplace noise scale b, > 0, and at least sensitivity / 600 (beyond 600
            nats the loss leaves float64's range; refused).
        sample_rate: Poisson sampling probability p, in (0, 1].
        sensitivity: L1 sensitivity D of the query, > 0.
        grid_step: the loss grid's step, in [1e-7, 1].

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> round(dpax.subsampled_laplace(1.0, 0.1, grid_step=1e-2).epsilon(0.0), 4)
    0.16
    """
    b = _v.real_array("scale", scale, low=0.0, low_open=True)
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    sens = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("scale", b), ("sample_rate", p), ("sensitivity", sens))
    desc = _describe("subsampled_laplace", scale=scale, sample_rate=sample_rate, sensitivity=sensitivity)
    with np.errstate(over="ignore", under="ignore"):
        eps = sens / b
    return _laplace_loss(eps, p, step, shape, desc)
