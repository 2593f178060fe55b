"""Any mechanism given by its privacy profile delta(epsilon) (Algorithm 2, generic path)."""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp
import numpy as np
from numpy.typing import ArrayLike

from .._engine import construct as _construct
from .._engine import grid as _grid
from .._engine import validation as _v
from .._engine.grid import DEFAULT_GRID_STEP
from .._engine.x64 import float64
from ..privacy_loss import PrivacyLoss
from ..privacy_loss.fields import replaced
from ._common import _MAX_LOSS


@float64
def from_privacy_profile(
    delta: Callable[[np.ndarray], ArrayLike],
    *,
    grid_step: float = DEFAULT_GRID_STEP,
    epsilon_max: float | None = None,
    reverse_delta: Callable[[np.ndarray], ArrayLike] | None = None,
    description: str = "privacy profile",
) -> PrivacyLoss:
    """Discrete dominating pair from a privacy profile delta(epsilon) (Algorithm 2, generic path).

    ``delta`` is a vectorised callable: an array of epsilon >= 0 in, the hockey-stick
    divergence delta(epsilon) = D_{e^eps}(Q || P) of the mechanism's dominating pair out
    (NumPy or JAX). Negative losses come from the swapped pair's profile
    ``reverse_delta`` = D_{e^eps}(P || Q), which defaults to ``delta`` itself (a symmetric
    pair: Gaussian, Laplace, randomized response...), evaluated at positive epsilon too, so
    no factor e^eps < 1 amplifies rounding. The grid covers [-epsilon_max, epsilon_max] (by default the first of
    1, 2, 4, ..., 512 where both profiles are <= 1e-18); delta(epsilon_max) becomes the +inf
    atom of Y and the mass below -epsilon_max the -inf atom of X, both pessimistically.

    Accuracy: the masses are second differences of delta, so each carries a rounding error
    of about 1e-16 / grid_step^2 (1e-8 at grid 1e-4, 1e-6 at 1e-5), and the pmf may sum to
    1 +- that. Prefer a mechanism with a closed-form loss law (``gaussian``,
    ``subsampled_gaussian``), which is built from first differences of the loss CDFs.
    Add/remove pairs: pass the profile of one direction; risks are reported for the
    symmetrised curve, whose other direction is the swapped pair.

    Args:
        delta: vectorised callable epsilon -> delta(epsilon) = D_{e^eps}(Q || P), values
            in [0, 1].
        grid_step: the loss grid's step, in [1e-7, 1].
        epsilon_max: half-width of the finite grid (``None``: chosen as above).
        reverse_delta: vectorised callable epsilon -> D_{e^eps}(P || Q) (``None``: ``delta``).
        description: a label for ``repr`` and reports.

    Returns:
        A single-mechanism :class:`PrivacyLoss` (batch shape ``()``).

    The Laplace mechanism with epsilon 1 from its profile, delta(epsilon) = 1 - e^((epsilon - 1) / 2)
    below 1 (0 above); its advantage is delta(0) = 1 - e^(-1/2) = 0.39347:

    >>> import dpax, numpy as np
    >>> profile = lambda e: np.where(e < 1.0, -np.expm1((e - 1.0) / 2), 0.0)
    >>> round(dpax.from_privacy_profile(profile, grid_step=1e-2).advantage(), 4)
    0.3935
    """
    if not callable(delta):
        raise TypeError(f"delta must be a callable epsilon -> delta(epsilon), got {type(delta).__name__}")
    if reverse_delta is None:
        reverse_delta = delta
    elif not callable(reverse_delta):
        raise TypeError(f"reverse_delta must be a callable or None, got {type(reverse_delta).__name__}")
    step = _v.grid_step(grid_step)

    def evaluate(fn: Callable[[np.ndarray], ArrayLike], name: str, eps: np.ndarray) -> np.ndarray:
        # real numbers in [0, 1] (round-off of 1e-12 either side is clipped), one per epsilon
        vals = _v.returned(f"{name}(epsilon)", fn(eps), eps.size, low=-1e-12, high=1 + 1e-12)
        return np.clip(vals.reshape(np.shape(eps)), 0.0, 1.0)

    if epsilon_max is None:
        probes = 2.0 ** np.arange(10)
        small = ((evaluate(delta, "delta", probes) <= 1e-18)
                 & (evaluate(reverse_delta, "reverse_delta", probes) <= 1e-18))
        if not small.any():
            raise ValueError("delta(epsilon) stays above 1e-18 up to epsilon=512; pass epsilon_max")
        epsilon_max = probes[np.argmax(small)]
    emax = _v.one_number("epsilon_max", epsilon_max, low=0.0, high=_MAX_LOSS, low_open=True)
    k = _grid.padded_length(int(np.ceil(emax / step)) + 1) - 1
    _grid.check_memory(1, 2 * k + 1, "from_privacy_profile")
    grid = np.arange(k + 1) * step
    forward = evaluate(delta, "delta", grid)
    backward = evaluate(reverse_delta, "reverse_delta", grid)
    pmf_x, pmf_y, inf_y, neginf_x = _construct.connect_the_dots(
        jnp.asarray(grid), jnp.asarray(forward), jnp.asarray(backward)
    )
    pl = PrivacyLoss(pmf_x, pmf_y, jnp.asarray(-k, jnp.int64), inf_y, neginf_x, step, description, exact_ratio=True)
    return replaced(pl, companion="it was built from a privacy profile (Algorithm 2), which gives no loss law to "
                                     "post-process; use a mechanism with a closed-form loss law")
