"""The PLRV arrays of a batch of discrete dominating pairs, as the kernels take them.

A :class:`Pair` holds, for ``rows`` configurations flattened into rows, the laws of the privacy
loss random variables on the grid ``x_i = (offset + i) * grid_step`` (Definition 3.3 of
Kulynych, Gomez, Kaissis, du Pin Calmon and Troncoso, "Attack-aware noise calibration for
differential privacy", NeurIPS 2024): Y = log(Q/P) under Q with its mass at +inf, X = log(Q/P)
under P with its mass at -inf. It is a NamedTuple, hence a JAX pytree: kernels take and return
it whole. The grid step is not part of it (a batch shares one; kernels take it as an argument).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import cache as _cache
from .grid import loss_grid


class Pair(NamedTuple):
    """PLRV arrays of ``rows`` discrete pairs with ``n`` grid points each.

    Attributes:
        pmf_x: Pr[X = x_i], shape (rows, n).
        pmf_y: Pr[Y = x_i], shape (rows, n).
        offset: grid index of each row's first point (int64), shape (rows,).
        inf_y: Pr[Y = +inf], shape (rows,).
        neginf_x: Pr[X = -inf], shape (rows,).

    On finite points Pr[X = x] = e^-x Pr[Y = x] for an exact pair; after truncation or
    import the two may differ, and no kernel assumes otherwise.
    """

    pmf_x: Any
    pmf_y: Any
    offset: Any
    inf_y: Any
    neginf_x: Any

    @property
    def support_length(self) -> int:
        """Number of grid points per row, n."""
        return int(self.pmf_x.shape[-1])

    def losses(self, grid_step: float):
        """The grid losses (offset + i) * grid_step of every row, shape (rows, n)."""
        return loss_grid(self.offset, self.support_length, grid_step)

    def _xp(self):
        """NumPy for host arrays, jax.numpy for device arrays and tracers."""
        return np if isinstance(self.pmf_x, np.ndarray) else jnp

    def reversed(self) -> Pair:
        """PLRVs of the swapped pair (Q, P): X' = -Y and Y' = -X on the mirrored grid."""
        n, xp = self.support_length, self._xp()
        return Pair(xp.flip(self.pmf_y, -1), xp.flip(self.pmf_x, -1), -(self.offset + n - 1),
                    self.neginf_x, self.inf_y)

    def take(self, index) -> Pair:
        """The rows at ``index`` (an integer array), every array gathered on axis 0."""
        xp = self._xp()
        return Pair(*(xp.take(xp.asarray(a), index, axis=0) for a in self))


@functools.partial(_cache.kernel, name="pad_pair", fusion_emitters=False)
@functools.partial(jax.jit, static_argnames=("rows", "length"))
def _pad(pair: Pair, rows: int, length: int) -> Pair:
    extra_rows, extra_points = rows - pair.pmf_x.shape[0], length - pair.pmf_x.shape[1]
    pmf = lambda a: jnp.pad(jnp.pad(a, ((0, 0), (0, extra_points))), ((0, extra_rows), (0, 0)), mode="edge")
    row = lambda a: jnp.pad(a, (0, extra_rows), mode="edge")
    return Pair(pmf(pair.pmf_x), pmf(pair.pmf_y), row(pair.offset), row(pair.inf_y), row(pair.neginf_x))


def padded(pair: Pair, rows: int, length: int) -> Pair:
    """``pair`` with zero masses appended to every row up to ``length`` points and its last
    row repeated up to ``rows`` rows: the same laws (a zero-mass point beyond the last adds
    no breakpoint of its own), in a shape that a kernel compiled once can serve for many
    supports and batch sizes. The answers of the first rows are those of the original ones.
    """
    if (rows, length) == (pair.pmf_x.shape[0], pair.support_length):
        return pair
    if rows < pair.pmf_x.shape[0] or length < pair.support_length:
        raise ValueError(f"cannot pad {pair.pmf_x.shape} to ({rows}, {length})")
    return _pad(pair, rows=int(rows), length=int(length))
