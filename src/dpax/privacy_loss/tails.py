"""A composed PrivacyLoss with its far tails tightened, built once per value on first use and
memoised beside it (never in it).

A composition books the FFT's round-off bound on every point of its safe side; far in the
tails that booking can outweigh the masses (:mod:`dpax._engine.tail_bounds`). The same
composition with the factors' big sides also composed under exponential tilts bounds those
tails within a relative error of ~T ulps instead, at the cost of more FFTs: dpax builds it
only where a risk reads the far tails and the booking could move it (mu, see
:func:`dpax.gdp.mu_and_regret`; an epsilon or delta at a delta below 1e-6, see
:func:`dpax.privacy_loss.risks.query`). A value carries how it is obtained
(:data:`dpax.privacy_loss.fields.Tails`); views of a composition (rows taken, broadcast,
regridded) take the same view of it.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from .._engine import composition as _compose
from .._engine import tail_bounds as _tail_bounds
from .._engine.pair import Pair
from .fields import Fields, V

#: value -> its tightened value, for as long as the value lives (keys compare by identity).
_MEMO: weakref.WeakKeyDictionary[Fields, Fields] = weakref.WeakKeyDictionary()


def tight_tails(pl: V) -> V:
    """``pl`` with its far tails tightened: the same composition, each point's round-off
    bound the tighter of the FFT value's and its tilted big side's; on the safe side like
    ``pl``, as close to the truth or closer. ``pl`` itself when it has no recipe (not a
    composition of dpax's exact-ratio pairs: a single step, arrays, an optimistic companion).

    Args:
        pl: the value (a :class:`dpax.PrivacyLoss`, or any subclass of its fields).

    Returns:
        A value of ``pl``'s class with its grid step, batch shape and length; the same
        object on every call while ``pl`` lives.

    Raises:
        TypeError: ``pl`` is not a PrivacyLoss.

    >>> import dpax
    >>> pl = dpax.dpsgd(1.0, 1e-3, 10, grid_step=1e-3)
    >>> tight = tight_tails(pl)
    >>> tight is tight_tails(pl), tight.batch_shape == pl.batch_shape, tight_tails(tight) is tight
    (True, True, True)
    """
    if not isinstance(pl, Fields):
        raise TypeError(f"pl must be a dpax.PrivacyLoss, got {type(pl).__name__}")
    if pl._tails is None:
        return pl
    built = _MEMO.get(pl)
    if built is None:
        with jax.enable_x64(True):
            built = pl._tails()
        _MEMO[pl] = built
    return cast(V, built)


#: Rows read at once by :func:`booked_roundoff` on the CPU (its boolean temporaries stay
#: below this many rows times the support).
_GATE_ROWS = 256


def _booked(xp: Any, x: Any, y: Any) -> Any:
    """:func:`booked_roundoff` of the rows ``x``, ``y`` (rows, n) with the array module ``xp``."""
    n = x.shape[-1]
    index = xp.arange(x.shape[0])
    first = xp.argmax(x > 0, -1)
    last = n - 1 - xp.argmax(y[:, ::-1] > 0, -1)
    eta = x[index, xp.minimum(first + 1, n - 1)] + y[index, xp.maximum(last - 1, 0)]
    return xp.maximum(last - first + 1, 1) * eta


#: :func:`booked_roundoff` off the CPU: one compiled call (run eagerly op by op, its
#: comparisons, flip and gathers were ~8 ms of host dispatch and waits on a GPU, more than
#: the composition and mu kernels themselves)
_booked_on_device = jax.jit(functools.partial(_booked, jnp))


def booked_roundoff(pair: Pair) -> np.ndarray:
    """Per row, about the most a composition's booked FFT round-off can move any of its tail
    sums: (eta_x + eta_y) x the window's points, eta read next to the window's far ends (the
    first X-mass and the last Y-mass), where the law itself has long vanished and only the
    booking is left. On the CPU from the arrays in place (NumPy, a few rows at a time);
    elsewhere on the device, in one compiled call."""
    cpu = next(iter(pair.pmf_x.devices())).platform == "cpu" if isinstance(pair.pmf_x, jax.Array) else True
    if not cpu:
        with jax.enable_x64(True):
            return np.asarray(_booked_on_device(pair.pmf_x, pair.pmf_y), np.float64)
    rows = pair.pmf_x.shape[0]
    out = np.empty(rows)
    pmf_x, pmf_y = np.asarray(pair.pmf_x), np.asarray(pair.pmf_y)
    for start in range(0, rows, _GATE_ROWS):  # (NumPy views)
        out[start:start + _GATE_ROWS] = _booked(np, pmf_x[start:start + _GATE_ROWS], pmf_y[start:start + _GATE_ROWS])
    return out


def tightened(cls: type[V], factors: list[V], counts: list[np.ndarray], grid_step: float, description: str,
              shape: tuple[int, ...], gdp_bound: np.ndarray | None) -> V:
    """The composition of ``factors`` (exact-ratio dominating pairs, each with its far tails
    tightened already, on one grid and batch) with ``counts`` (rows,) copies, its far tails
    bounded through tilted laws (:func:`dpax._engine.tail_bounds.tighten`)."""
    arrays = cast(_compose.Tilted, _compose.compose_arrays(
        [tight_tails(pl).pair for pl in factors], counts, grid_step, True, tilted=True, closed=False))
    steps = sum(np.asarray(c, np.float64) for c in counts)
    pair = _tail_bounds.tighten(arrays, steps, grid_step)
    return cls._make(pair, grid_step, description, shape, exact_ratio=True, gdp_bound=gdp_bound)
