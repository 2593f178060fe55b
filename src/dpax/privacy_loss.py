"""The PrivacyLoss value: a batch of discrete PLRV pairs on one uniform grid.

A ``PrivacyLoss`` holds, for every configuration in a batch (leading axes), the PLRVs of a
discrete dominating pair (P, Q) on the losses ``(offset + i) * grid_step``
(seed paper, Definition 3.3): ``pmf_y`` is the law of Y = log(Q/P) under Q with its mass at
+inf beside it (``inf_mass_y``), ``pmf_x`` the law of X = log(Q/P) under P with its mass at
-inf (``neginf_mass_x``). The two are not assumed to satisfy Pr[X = x] = e^-x Pr[Y = x]
exactly. It is a JAX pytree, so it can be passed through ``jax.jit`` and ``jax.vmap``.

Every risk method reports the symmetrised (add/remove) curve; see :mod:`dpax.analyse`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._engine import analyse as _analyse
from ._engine import composition as _compose
from ._engine import construct as _construct
from ._engine import grid as _grid
from ._engine import pld as _pld
from ._engine import validation as _v
from ._engine.pair import Pair
from ._engine.x64 import float64


def _out(values, shape):
    arr = np.asarray(values, dtype=np.float64).reshape(shape)
    return float(arr) if arr.ndim == 0 else arr


@jax.tree_util.register_pytree_node_class
class PrivacyLoss:
    """Discrete PLRVs (X, Y) of a batch of mechanisms on the grid ``k * grid_step``.

    The arrays may be given with any batch shape (``pmf_x.shape == batch_shape + (n,)``,
    ``offset.shape == batch_shape``); they are kept with the batch flattened into rows, the
    form the kernels take, and shown with the batch shape by the properties below.
    """

    def __init__(self, pmf_x, pmf_y, offset, inf_mass_y, neginf_mass_x, grid_step, description="privacy loss",
                 batch_shape=None, exact_ratio=False):
        if batch_shape is None:
            batch_shape = tuple(np.shape(offset))
            n = np.shape(pmf_x)[-1]
            with jax.enable_x64(True):  # a user's float64 arrays stay float64
                pmf_x, pmf_y, inf_mass_y, neginf_mass_x = (
                    jnp.reshape(jnp.asarray(a, jnp.float64), shp)
                    for a, shp in ((pmf_x, (-1, n)), (pmf_y, (-1, n)), (inf_mass_y, (-1,)), (neginf_mass_x, (-1,)))
                )
                offset = jnp.reshape(jnp.asarray(offset, jnp.int64), (-1,))
        self._pair = Pair(pmf_x, pmf_y, offset, inf_mass_y, neginf_mass_x)
        self._batch_shape = tuple(batch_shape)
        self.grid_step = float(grid_step)
        self.description = description
        #: True when Pr[X = x] = e^-x Pr[Y = x] holds on every finite point by construction
        #: (dpax's own mechanisms); composition then rebuilds far tails from the larger side.
        self.exact_ratio = bool(exact_ratio)

    @classmethod
    def from_pair(cls, pair: Pair, grid_step: float, description: str, batch_shape: tuple[int, ...],
                  exact_ratio: bool = False) -> "PrivacyLoss":
        """The PrivacyLoss whose rows are ``pair`` (as the kernels return them), shown with
        ``batch_shape`` (whose product is the number of rows)."""
        return cls(*pair, grid_step, description, batch_shape=batch_shape, exact_ratio=exact_ratio)

    @property
    def pair(self) -> Pair:
        """The PLRV arrays with the batch flattened into rows, as the kernels take them
        (device arrays, float64; see :class:`dpax._engine.pair.Pair`)."""
        return self._pair

    # -- arrays (NumPy float64 views, whatever the user's JAX x64 setting) ----------------
    def _view(self, i, extra=()):
        a = self._pair[i]
        if isinstance(a, jax.core.Tracer):  # inside jit / vmap: stay traced
            return jnp.reshape(a, self._batch_shape + extra)
        return np.asarray(a).reshape(self._batch_shape + extra)

    @property
    def pmf_x(self) -> np.ndarray:
        """Pr[X = x_i] on the grid, shape ``batch_shape + (support_length,)``."""
        return self._view(0, (self.support_length,))

    @property
    def pmf_y(self) -> np.ndarray:
        """Pr[Y = x_i] on the grid, shape ``batch_shape + (support_length,)``."""
        return self._view(1, (self.support_length,))

    @property
    def offset(self) -> np.ndarray:
        """Grid index of the first support point: x_i = (offset + i) * grid_step."""
        return self._view(2)

    @property
    def inf_mass_y(self) -> np.ndarray:
        """Pr[Y = +inf]."""
        return self._view(3)

    @property
    def neginf_mass_x(self) -> np.ndarray:
        """Pr[X = -inf]."""
        return self._view(4)

    # -- pytree -------------------------------------------------------------------------
    def tree_flatten(self):
        return tuple(self._pair), (self.grid_step, self.description, self._batch_shape, self.exact_ratio)

    @classmethod
    def tree_unflatten(cls, aux, children):
        grid_step, description, batch_shape, exact_ratio = aux
        return cls(*children, grid_step, description, batch_shape=batch_shape, exact_ratio=exact_ratio)

    # -- shape --------------------------------------------------------------------------
    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Shape of the batch of configurations (``()`` for a single mechanism)."""
        return self._batch_shape

    @property
    def support_length(self) -> int:
        """Number of grid points per configuration (padded; shared by the batch)."""
        return int(np.shape(self._pair.pmf_x)[-1])

    @property
    def tail_mass(self):
        """Pr[Y = +inf] + Pr[X = -inf]: the mass the pair keeps off the finite grid."""
        return _out(self.inf_mass_y + self.neginf_mass_x, self.batch_shape)

    def loss_values(self) -> np.ndarray:
        """Grid losses ``(offset + i) * grid_step``, shaped ``batch_shape + (support_length,)``."""
        return _grid.loss_grid(np.asarray(self._pair.offset), self.support_length, self.grid_step).reshape(
            self.batch_shape + (self.support_length,))

    def __repr__(self) -> str:
        shape = "" if not self.batch_shape else f", batch_shape={self.batch_shape}"
        tail = np.max(self.inf_mass_y + self.neginf_mass_x)
        return (
            f"PrivacyLoss({self.description}, grid_step={self.grid_step:g}{shape}, "
            f"support_length={self.support_length}, tail_mass<={tail:.3g})"
        )

    @float64
    def broadcast_to(self, shape) -> "PrivacyLoss":
        """The same losses repeated over a broadcast batch shape."""
        shape = tuple(shape)
        if shape == self.batch_shape:
            return self
        rows = np.arange(max(1, int(np.prod(self.batch_shape, dtype=int)))).reshape(self.batch_shape)
        index = np.broadcast_to(rows, shape).reshape(-1)
        return PrivacyLoss.from_pair(self._pair.take(index), self.grid_step, self.description, shape, self.exact_ratio)

    def _rows_count(self) -> int:
        return int(np.shape(self._pair.pmf_x)[0])

    # -- risk ---------------------------------------------------------------------------
    @float64
    def beta(self, alpha):
        """FNR of the most powerful attack at FPR ``alpha`` (Algorithm 1, symmetrised).

        ``alpha`` in [0, 1], any shape; the result has shape ``batch_shape + alpha.shape``
        (a float for a single mechanism and a scalar alpha).
        """
        a = _v.probabilities("alpha", alpha)
        a_rows = np.broadcast_to(a.reshape(-1), (self._rows_count(), a.size))
        out = _analyse.beta_kernel(self._pair, a_rows)
        return _out(out, self.batch_shape + a.shape)

    @float64
    def advantage(self):
        """Largest TPR - FPR of any membership-inference attack (Algorithm 3, Eq. 11)."""
        return _out(_analyse.advantage_kernel(self._pair), self.batch_shape)

    @float64
    def delta(self, epsilon):
        """delta(epsilon) of the symmetrised curve; result shape ``batch_shape + epsilon.shape``."""
        e = _v.real_array("epsilon", epsilon)
        e_rows = np.broadcast_to(e.reshape(-1), (self._rows_count(), e.size))
        return _out(_analyse.delta_kernel(self._pair, e_rows), self.batch_shape + e.shape)

    @float64
    def epsilon(self, delta):
        """Smallest epsilon >= 0 such that the mechanism is (epsilon, delta)-DP.

        ``delta`` in [0, 1]; ``inf`` where no finite epsilon works (delta below the +inf atom).
        """
        d = _v.probabilities("delta", delta)
        d_rows = np.broadcast_to(d.reshape(-1), (self._rows_count(), d.size))
        return _out(_analyse.epsilon_kernel(self._pair, d_rows), self.batch_shape + d.shape)

    @float64
    def tradeoff_points(self, symmetric=False):
        """Breakpoints ``(alpha, beta)`` of the one-directional curve f = T(P, Q), alpha descending.

        Arrays shaped ``batch_shape + (support_length + 1,)``; the symmetrised curve used by
        :meth:`beta` is the convex hull of min(f, f^-1). ``symmetric=True`` returns that
        curve's breakpoints instead, alpha ascending, shaped ``batch_shape +
        (2 support_length + 2,)`` (some repeated): they lie among the breakpoints of f and
        f^-1 (the line of slope -1 joins the two where they cross the diagonal), so the
        curve is the linear interpolation of these points; made for plotting and reports.

        The sums behind the points are rounded in blocks, which can leave neighbours an ulp
        out of order; the arrays returned are made exactly monotone by moving such points an
        ulp down (smaller alpha or beta: the pessimistic side).
        """
        cx, cy = _analyse.tradeoff_points_kernel(self._pair)
        if not symmetric:
            shape = self.batch_shape + (self.support_length + 1,)
            alpha = np.minimum.accumulate(np.asarray(cx), -1)
            beta = np.flip(np.minimum.accumulate(np.flip(np.asarray(cy), -1), -1), -1)
            return alpha.reshape(shape), beta.reshape(shape)
        rcx, _ = _analyse.tradeoff_points_kernel(self._pair.reversed())
        alpha = np.sort(np.concatenate([np.asarray(cx), np.asarray(rcx)], -1), -1)
        beta = np.minimum.accumulate(np.asarray(_analyse.beta_kernel(self._pair, alpha)), -1)
        shape = self.batch_shape + (alpha.shape[-1],)
        return alpha.reshape(shape), beta.reshape(shape)

    @float64
    def __getitem__(self, key) -> "PrivacyLoss":
        """Configurations of the batch selected by NumPy indexing (``pl[0]``, ``pl[1:3]``)."""
        if not self.batch_shape:
            raise IndexError("a single PrivacyLoss (batch_shape ()) cannot be indexed")
        rows = np.arange(int(np.prod(self.batch_shape, dtype=int))).reshape(self.batch_shape)[key]
        return PrivacyLoss.from_pair(self._pair.take(np.reshape(rows, -1)), self.grid_step, self.description,
                                     np.shape(rows), self.exact_ratio)

    @float64
    def to_dp_accounting(self):
        """This pair as a dp-accounting ``PrivacyLossDistribution`` (dense PMFs, no
        re-discretisation; see :mod:`dpax.interop`). A batch gives a NumPy object array of
        PLDs with the batch shape. Needs dp-accounting (an optional dependency)."""
        plds = _pld.to_plds(self._pair, self.grid_step)
        if not self.batch_shape:
            return plds[0]
        arr = np.empty(len(plds), dtype=object)
        arr[:] = plds
        return arr.reshape(self.batch_shape)

    # -- re-discretisation --------------------------------------------------------------
    @float64
    def regrid(self, grid_step) -> "PrivacyLoss":
        """The same pair on the grid ``k * grid_step``, by connect-the-dots (pessimistic).

        Every grid point of this pair is an atom (loss x, masses Pr[X = x], Pr[Y = x]);
        each is split between the two new grid points around it so that both its P- and
        Q-mass are kept, an exact post-processing of the new pair, so the result dominates
        this one (its curve lies on or below). A coarser grid loses accuracy; a grid whose
        points include the old ones (an integer divisor of the old step) is exact.
        """
        step = _v.grid_step(grid_step)
        if step == self.grid_step:
            return self
        pmf_x, pmf_y, offset, inf_y, neginf_x = (np.asarray(a) for a in self._pair)
        rows, n = pmf_x.shape
        loss = _grid.loss_grid(offset, n, self.grid_step)
        col = np.ones((rows, 1))
        loss = np.concatenate([-np.inf * col, loss, np.inf * col], -1)
        with np.errstate(divide="ignore"):
            lp = np.concatenate([np.log(neginf_x)[:, None], np.log(pmf_x), -np.inf * col], -1)
            lq = np.concatenate([-np.inf * col, np.log(pmf_y), np.log(inf_y)[:, None]], -1)
        pair = _construct.pair_from_atoms(loss, lp, lq, step, tail=0.0, exact_ratio=self.exact_ratio,
                                          what=self.description)
        return PrivacyLoss.from_pair(pair, step, self.description, self.batch_shape, self.exact_ratio)

    # -- composition --------------------------------------------------------------------
    def compose(self, other: "PrivacyLoss", grid_step=None) -> "PrivacyLoss":
        """Adaptive composition with ``other``; batches broadcast (see :func:`compose`)."""
        return compose(self, other, grid_step=grid_step)

    @float64
    def self_compose(self, num_steps) -> "PrivacyLoss":
        """``num_steps``-fold composition by FFT; ``num_steps`` broadcasts against the batch."""
        steps = _v.positive_int_array("num_steps", num_steps)
        shape = np.broadcast_shapes(self.batch_shape, steps.shape)
        pl = self.broadcast_to(shape) if shape != self.batch_shape else self
        if np.all(steps == 1):
            return pl
        counts = np.broadcast_to(steps, shape).reshape(-1)
        arrays = _compose.compose_arrays((pl.pair,), (counts,), self.grid_step, self.exact_ratio)
        desc = self.description
        if steps.ndim == 0:
            desc = f"{desc} x {int(steps)}"
        else:
            desc = f"{desc} x num_steps"
        return PrivacyLoss.from_pair(arrays, self.grid_step, desc, shape, self.exact_ratio)


@float64
def compose(*losses, grid_step=None) -> PrivacyLoss:
    """Heterogeneous adaptive composition of privacy losses by FFT (batches broadcast).

    Each argument is a :class:`PrivacyLoss` or a pair ``(loss, count)`` meaning ``count``
    copies of it, e.g. ``compose((pl_a, 500), (pl_b, 1500))``; counts broadcast like the
    batches. All factors are multiplied in the frequency domain in one kernel. Factors on
    different grids are brought to one: ``grid_step`` is a step, or ``"coarsest"`` (the
    largest of theirs, the default when the steps differ); every factor is moved to it by
    :meth:`PrivacyLoss.regrid`, an exact post-processing, hence pessimistic.
    """
    if not losses:
        raise ValueError("compose needs at least one PrivacyLoss")
    items = []
    for i, item in enumerate(losses):
        count = 1
        if isinstance(item, tuple):
            if len(item) != 2:
                raise TypeError(f"compose argument {i} must be a PrivacyLoss or a (PrivacyLoss, count) pair")
            item, count = item
        if not isinstance(item, PrivacyLoss):
            raise TypeError(f"compose argument {i} must be a PrivacyLoss, got {type(item).__name__}")
        items.append((item, _v.positive_int_array(f"count of compose argument {i}", count)))
    steps = {pl.grid_step for pl, _ in items}
    if grid_step is None and len(steps) != 1:
        grid_step = "coarsest"
    if isinstance(grid_step, str) and grid_step != "coarsest":
        raise ValueError(f"grid_step must be a number in (0, 1] or 'coarsest', got {grid_step!r}")
    if grid_step is not None:
        target = max(steps) if isinstance(grid_step, str) and grid_step == "coarsest" else _v.grid_step(grid_step)
        items = [(pl.regrid(target), c) for pl, c in items]
    if len(items) == 1 and np.all(items[0][1] == 1):
        return items[0][0]
    shape = np.broadcast_shapes(*(pl.batch_shape for pl, _ in items), *(c.shape for _, c in items))
    rows = [pl.broadcast_to(shape).pair for pl, _ in items]
    counts = [np.broadcast_to(c, shape).reshape(-1) for _, c in items]
    exact = all(pl.exact_ratio for pl, _ in items)
    arrays = _compose.compose_arrays(rows, counts, items[0][0].grid_step, exact)
    parts = [
        pl.description if (c.ndim == 0 and int(c) == 1) else f"{pl.description} x {int(c) if c.ndim == 0 else 'counts'}"
        for pl, c in items
    ]
    desc = " + ".join(parts) if len(parts) <= 4 else f"{parts[0]} + ... + {parts[-1]} ({len(parts)} factors)"
    return PrivacyLoss.from_pair(arrays, items[0][0].grid_step, desc, shape, exact)
