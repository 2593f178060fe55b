"""The rows of a PrivacyLoss: configurations selected by NumPy indexing, or repeated over a
broadcast batch shape. The new value shares the rows' arrays' kernels, keeps their GDP
bounds and gets the matching companion (the same rows of the companion).
"""

from __future__ import annotations

from types import EllipsisType

import numpy as np
from numpy.typing import ArrayLike

from .._engine import validation as _v
from .._engine.x64 import float64
from .companion import derived
from .fields import V


@float64
def broadcast_to(pl: V, shape: tuple[int, ...]) -> V:
    """``pl``'s losses repeated over the batch shape ``shape`` (``pl`` if unchanged); see
    :meth:`dpax.PrivacyLoss.broadcast_to`.

    Args:
        pl: the value to repeat.
        shape: a batch shape that ``pl.batch_shape`` broadcasts to (NumPy rules), integers
            >= 1.

    Returns:
        A value of ``pl``'s class with ``batch_shape == shape``, sharing the rows' kernels
        and keeping their GDP bounds and companion (``pl`` itself if the shape is
        unchanged). Its risks are ``pl``'s, repeated.

    Raises:
        TypeError: ``shape`` not a tuple of integers.
        ValueError: an entry of ``shape`` below 1, or ``pl.batch_shape`` not broadcasting
            to ``shape``.

    >>> import dpax
    >>> broadcast_to(dpax.gaussian(1.0, grid_step=1e-2), (2,)).batch_shape
    (2,)
    """
    shape = _v.shape_tuple(shape, low=1, what="a batch of configurations")
    if shape == pl.batch_shape:
        return pl
    rows = np.arange(max(1, int(np.prod(pl.batch_shape, dtype=int)))).reshape(pl.batch_shape)
    try:
        index = np.broadcast_to(rows, shape).reshape(-1)
    except ValueError:
        raise ValueError(f"shape {shape} is not one that batch_shape {pl.batch_shape} broadcasts to") from None
    return type(pl)._make(pl.pair.take(index), pl.grid_step, pl.description, shape, exact_ratio=pl.exact_ratio,
                          gdp_bound=_gdp_rows(pl, index), **derived(pl, lambda c: broadcast_to(c, shape), index))


@float64
def select(pl: V, key: int | slice | EllipsisType | ArrayLike | tuple[int | slice | EllipsisType | ArrayLike, ...]
           ) -> V:
    """The configurations of ``pl``'s batch at the NumPy index ``key``, labelled with the
    rows they are; see :meth:`dpax.PrivacyLoss.__getitem__`.

    Args:
        pl: a batch (``batch_shape`` not ``()``).
        key: a NumPy index into ``pl.batch_shape``: integers, a boolean mask, slices, or a
            tuple of them (``None`` and a bare ``True`` / ``False``, which add an axis, are
            refused).

    Returns:
        A value of ``pl``'s class holding the selected configurations, with the shape of the
        selection as its batch shape (``()`` for one row) and the description suffixed with
        the row (``[1]``) or the count of rows selected; it keeps their GDP bounds and
        companion.

    Raises:
        IndexError: ``pl`` is a single mechanism, or ``key`` is not an index into its batch
            (out of range, float entries, too many indices).
        TypeError: ``key`` would add an axis (``None``, a bare boolean).
        ValueError: ``key`` selects no configuration.

    >>> import dpax
    >>> select(dpax.gaussian([0.5, 1.0], grid_step=1e-2), 1).description
    'gaussian(noise_multiplier=<(2,) array>, sensitivity=1)[1]'
    """
    if not pl.batch_shape:
        raise IndexError("a single PrivacyLoss (batch_shape ()) cannot be indexed")
    rows = _v.batch_rows("key", key, pl.batch_shape, "PrivacyLoss")
    # the batch's description names its array arguments by shape: say which rows these are
    if np.ndim(rows) == 0:
        where = ", ".join(str(int(i)) for i in np.unravel_index(int(rows), pl.batch_shape))
        description = f"{pl.description}[{where}]"
    else:
        description = f"{pl.description}[{np.size(rows)} of {int(np.prod(pl.batch_shape, dtype=int))} rows]"
    flat = np.reshape(rows, -1)
    return type(pl)._make(pl.pair.take(flat), pl.grid_step, description, np.shape(rows), exact_ratio=pl.exact_ratio,
                          gdp_bound=_gdp_rows(pl, rows), **derived(pl, lambda c: select(c, key), flat))


def _gdp_rows(pl: V, index: np.ndarray) -> np.ndarray | None:
    """The GDP bound of ``pl``'s rows at ``index`` (None where unknown)."""
    return None if pl._gdp_bound is None else np.asarray(pl._gdp_bound)[np.reshape(index, -1)]
