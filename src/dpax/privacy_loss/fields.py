"""What a PrivacyLoss is: the arrays of a batch of discrete PLRV pairs and what is known
about them, all fixed at construction.

A pair holds, for every configuration of a batch, the PLRVs of a discrete dominating pair
(P, Q) on the losses ``(offset + i) * grid_step`` (Kulynych et al. 2024, Definition 3.3).
Besides the arrays, a value dpax builds may carry its provenance: an optimistic pair's ratio
bounds (``slack``, :mod:`dpax._engine.optimistic`), the mechanism's own all-attack GDP bound
(Gomez et al. 2025: GDP composes exactly, mu = sqrt(sum of mu_i^2)) and how its optimistic
companion is obtained (a recipe, or why there is none). :class:`Fields` holds them;
:class:`dpax.PrivacyLoss` adds the operations. Nothing is set after construction: a
changed field is a new value (:func:`replaced`), sharing the arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Self, TypeVar

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import ArrayLike

from .._engine import grid as _grid
from .._engine import optimistic as _optimistic
from .._engine import validation as _v
from .._engine.pair import Pair
from .._engine.x64 import as_result
from .checks import checked_arrays

#: Why a pair has no optimistic companion, unless its constructor says more.
NO_COMPANION = ("it was not built by a dpax mechanism with a closed-form loss law (gaussian, subsampled_gaussian, "
                "dpsgd, laplace, subsampled_laplace, randomized_response, discrete_laplace, discrete_gaussian, "
                "mixture_of_gaussians, or compositions of these); a pair built from arrays, from a privacy profile, "
                "from atoms, approximate_dp or imported from dp-accounting is bounded from the safe side only")

#: How a value's optimistic companion is obtained: a recipe (called once, on first use, by
#: :func:`dpax.privacy_loss.companion.optimistic_companion`) or the reason why there is none.
Companion = Callable[[], "Fields"] | str

#: How a composed value's far tails are tightened (:mod:`dpax.privacy_loss.tails`): a recipe
#: (called once, on first use) for the same pair with its far tails bounded through tilted
#: laws, or None (a pair that is its own: a single step, arrays, an optimistic companion).
Tails = Callable[[], "Fields"] | None

V = TypeVar("V", bound="Fields")


class Fields:
    """The arrays and facts of a :class:`dpax.PrivacyLoss` (its base; see that class for
    the arguments), set once by the constructor or by :meth:`_make`.

    >>> import dpax
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> pl.grid_step, pl.exact_ratio, pl.optimistic
    (0.01, True, False)
    """

    def __init__(self, pmf_x: ArrayLike, pmf_y: ArrayLike, offset: ArrayLike, inf_mass_y: ArrayLike,
                 neginf_mass_x: ArrayLike, grid_step: float, description: str = "privacy loss",
                 batch_shape: tuple[int, ...] | None = None, exact_ratio: bool = False,
                 optimistic: bool = False) -> None:
        exact_ratio, optimistic = _v.flag("exact_ratio", exact_ratio), _v.flag("optimistic", optimistic)
        if not isinstance(description, str):
            raise TypeError(f"description must be a string, got {_v.brief(description)}")
        if batch_shape is None:
            pmf_x, pmf_y, offset, inf_mass_y, neginf_mass_x, grid_step = checked_arrays(
                pmf_x, pmf_y, offset, inf_mass_y, neginf_mass_x, grid_step)
            batch_shape = tuple(np.shape(offset))
            n = np.shape(pmf_x)[-1]
            with jax.enable_x64(True):  # a user's float64 arrays stay float64
                pmf_x, pmf_y, inf_mass_y, neginf_mass_x = (
                    jnp.reshape(jnp.asarray(a, jnp.float64), shp)
                    for a, shp in ((pmf_x, (-1, n)), (pmf_y, (-1, n)), (inf_mass_y, (-1,)), (neginf_mass_x, (-1,)))
                )
                offset = jnp.reshape(jnp.asarray(offset, jnp.int64), (-1,))
        self._set(Pair(pmf_x, pmf_y, offset, inf_mass_y, neginf_mass_x), grid_step, description, batch_shape,
                  exact_ratio, optimistic, None, None, NO_COMPANION)

    def _set(self, pair: Pair, grid_step: float, description: str, batch_shape: tuple[int, ...], exact_ratio: bool,
             optimistic: bool, slack: _optimistic.Slack | None, gdp_bound: np.ndarray | None,
             companion: Companion, tails: Tails = None) -> None:
        """Every field, once (the only place they are set)."""
        self._pair = pair
        self._batch_shape = tuple(batch_shape)
        self.grid_step = float(grid_step)
        self.description = description
        #: True when Pr[X = x] = e^-x Pr[Y = x] holds on every finite point by construction
        #: (dpax's own mechanisms); composition then rebuilds far tails from the larger side.
        self.exact_ratio = exact_ratio
        #: True for an optimistic companion (:meth:`optimistic_companion`): its curve lies on or above the truth.
        self.optimistic = optimistic
        self._slack = slack  # an optimistic pair's ratio bounds (None: unknown, e.g. rebuilt from arrays)
        #: Per row (rows,), or None: a mu such that the mechanism itself (not the grid) is
        #: mu-GDP for every attack, from its closed form (:func:`gdp_rows`).
        self._gdp_bound = gdp_bound
        self._companion = companion  # recipe of the companion, or why there is none
        self._tails = tails  # recipe of the pair with its far tails tightened, or None

    @classmethod
    def _make(cls, pair: Pair, grid_step: float, description: str, batch_shape: tuple[int, ...], *,
              exact_ratio: bool = False, optimistic: bool = False, slack: _optimistic.Slack | None = None,
              gdp_bound: np.ndarray | None = None, companion: Companion = NO_COMPANION, tails: Tails = None) -> Self:
        """A value of rows ``pair`` (as the kernels return them, unchecked) with its facts:
        how dpax's own operations build one."""
        pl = cls.__new__(cls)
        pl._set(pair, grid_step, description, batch_shape, exact_ratio, optimistic, slack, gdp_bound, companion, tails)
        return pl

    @classmethod
    def from_pair(cls, pair: Pair, grid_step: float, description: str, batch_shape: tuple[int, ...],
                  exact_ratio: bool = False) -> Self:
        """The PrivacyLoss whose rows are ``pair`` (as the kernels return them).

        Args:
            pair: the PLRV arrays with the batch flattened into rows.
            grid_step: the grid's step.
            description: a label shown by ``repr`` and in reports.
            batch_shape: the batch shape to show (its product is the number of rows).
            exact_ratio: see :class:`PrivacyLoss`.

        Returns:
            A :class:`PrivacyLoss` sharing the arrays of ``pair``.

        >>> import dpax
        >>> pl = dpax.gaussian([1.0, 2.0], grid_step=1e-2)
        >>> dpax.PrivacyLoss.from_pair(pl.pair, pl.grid_step, "copy", (2, 1)).batch_shape
        (2, 1)
        """
        if not isinstance(pair, Pair):
            raise TypeError(f"pair must be a dpax._engine.pair.Pair (a PrivacyLoss's .pair), got {type(pair).__name__}")
        step = _v.scalar("grid_step", grid_step, low=0.0, low_open=True)
        shape = _v.shape_tuple(batch_shape, name="batch_shape")
        rows = int(np.shape(pair.pmf_x)[0])
        if int(np.prod(shape, dtype=np.int64)) != rows or min(shape, default=1) < 1:
            raise ValueError(f"batch_shape {shape} does not hold the pair's {rows} row(s)")
        return cls(*pair, step, description, batch_shape=shape, exact_ratio=exact_ratio)

    @property
    def pair(self) -> Pair:
        """The PLRV arrays with the batch flattened into rows, as the kernels take them.

        Device arrays, float64; see :class:`dpax._engine.pair.Pair`.

        >>> import dpax
        >>> dpax.gaussian(1.0, grid_step=1e-2).pair._fields
        ('pmf_x', 'pmf_y', 'offset', 'inf_y', 'neginf_x')
        """
        return self._pair

    # -- arrays (NumPy float64 views, whatever the user's JAX x64 setting) ----------------
    def _view(self, i: int, extra: tuple[int, ...] = ()) -> Any:
        a = self._pair[i]
        if isinstance(a, jax.core.Tracer):  # inside jit / vmap: stay traced
            return jnp.reshape(a, self._batch_shape + extra)
        return np.asarray(a).reshape(self._batch_shape + extra)

    @property
    def pmf_x(self) -> np.ndarray:
        """Pr[X = x_i] on the grid, shape ``batch_shape + (support_length,)``.

        >>> import dpax
        >>> round(float(dpax.gaussian(1.0, grid_step=1e-2).pmf_x.sum()), 6)
        1.0
        """
        return self._view(0, (self.support_length,))

    @property
    def pmf_y(self) -> np.ndarray:
        """Pr[Y = x_i] on the grid, shape ``batch_shape + (support_length,)``.

        >>> import dpax
        >>> dpax.gaussian([1.0, 2.0], grid_step=1e-2).pmf_y.shape
        (2, 2048)
        """
        return self._view(1, (self.support_length,))

    @property
    def offset(self) -> np.ndarray:
        """Grid index of the first support point: x_i = (offset + i) * grid_step.

        >>> import dpax
        >>> int(dpax.gaussian(1.0, grid_step=1e-2).offset)
        -977
        """
        return self._view(2)

    @property
    def inf_mass_y(self) -> np.ndarray:
        """Pr[Y = +inf], shape ``batch_shape`` (Q-mass kept off the grid, pessimistically).

        >>> import dpax
        >>> round(float(dpax.approximate_dp(1.0, 1e-5, grid_step=1e-2).inf_mass_y), 10)
        1e-05
        """
        return self._view(3)

    @property
    def neginf_mass_x(self) -> np.ndarray:
        """Pr[X = -inf], shape ``batch_shape`` (P-mass kept off the grid, pessimistically).

        >>> import dpax
        >>> round(float(dpax.approximate_dp(1.0, 1e-5, grid_step=1e-2).neginf_mass_x), 10)
        1e-05
        """
        return self._view(4)

    # -- pytree -------------------------------------------------------------------------
    def tree_flatten(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """JAX pytree protocol: the five PLRV arrays (leaves) and the static fields.

        Returns:
            ``(children, aux)``: the arrays of :attr:`pair`, and ``(grid_step,
            description, batch_shape, exact_ratio, optimistic, slack, gdp_bound)`` (the
            recipe of an optimistic companion is not carried: a rebuilt pair has none).

        >>> import dpax, jax
        >>> len(jax.tree_util.tree_leaves(dpax.gaussian(1.0, grid_step=1e-2)))
        5
        """
        slack = None if self._slack is None else self._slack.to_aux()
        gdp_bound = None if self._gdp_bound is None else tuple(float(v) for v in self._gdp_bound)
        return tuple(self._pair), (self.grid_step, self.description, self._batch_shape, self.exact_ratio,
                                   self.optimistic, slack, gdp_bound)

    @classmethod
    def tree_unflatten(cls, aux: tuple[Any, ...], children: tuple[Any, ...]) -> Self:
        """JAX pytree protocol: the inverse of :meth:`tree_flatten`.

        Args:
            aux: ``(grid_step, description, batch_shape, exact_ratio, optimistic, slack, gdp_bound)``.
            children: the five PLRV arrays (rows).

        Returns:
            The rebuilt :class:`PrivacyLoss`.

        >>> import dpax, jax
        >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
        >>> round(jax.tree_util.tree_map(lambda a: a, pl).advantage(), 4)
        0.3829
        """
        grid_step, description, batch_shape, exact_ratio, optimistic, slack, gdp_bound = aux
        return cls._make(Pair(*children), grid_step, description, batch_shape, exact_ratio=exact_ratio,
                         optimistic=optimistic, slack=_optimistic.Slack.from_aux(slack),
                         gdp_bound=None if gdp_bound is None else np.asarray(gdp_bound, np.float64))

    # -- shape --------------------------------------------------------------------------
    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Shape of the batch of configurations (``()`` for a single mechanism).

        >>> import dpax
        >>> dpax.dpsgd([1.0, 2.0], 0.01, 100, grid_step=1e-3).batch_shape
        (2,)
        """
        return self._batch_shape

    @property
    def support_length(self) -> int:
        """Number of grid points per configuration (padded; shared by the batch).

        >>> import dpax
        >>> dpax.gaussian(1.0, grid_step=1e-2).support_length
        2048
        """
        return int(np.shape(self._pair.pmf_x)[-1])

    @property
    def tail_mass(self) -> float | np.ndarray:
        """Pr[Y = +inf] + Pr[X = -inf]: the mass the pair keeps off the finite grid.

        A float for a single mechanism, an array of shape ``batch_shape`` for a batch.

        >>> import dpax
        >>> round(dpax.approximate_dp(1.0, 1e-5, grid_step=1e-2).tail_mass, 10)
        2e-05
        """
        return as_result(self.inf_mass_y + self.neginf_mass_x, self.batch_shape)

    def loss_values(self) -> np.ndarray:
        """Grid losses ``(offset + i) * grid_step``, shaped ``batch_shape + (support_length,)``.

        >>> import dpax
        >>> dpax.gaussian(1.0, grid_step=1e-2).loss_values()[:3]
        array([-9.77, -9.76, -9.75])
        """
        return _grid.loss_grid(np.asarray(self._pair.offset), self.support_length, self.grid_step).reshape(
            self.batch_shape + (self.support_length,))

    def _rows_count(self) -> int:
        return int(np.shape(self._pair.pmf_x)[0])

    def __repr__(self) -> str:
        shape = "" if not self.batch_shape else f", batch_shape={self.batch_shape}"
        tail = np.max(self.inf_mass_y + self.neginf_mass_x)
        return (
            f"PrivacyLoss({self.description}, grid_step={self.grid_step:g}{shape}, "
            f"support_length={self.support_length}, tail_mass<={tail:.3g})"
        )


def gdp_rows(mu: ArrayLike, batch_shape: tuple[int, ...]) -> np.ndarray:
    """A mechanism's all-attack GDP bound ``mu`` (its closed form: the true curve lies on or
    above f_mu) as the value keeps it: one per row (``mu`` broadcast to ``batch_shape``, or
    already one per row), raised by a few ulps so that the closed form's rounding stays on the
    safe side, NaN read as inf. Read by :func:`dpax.gdp.mu_and_regret` where the grid cannot
    certify the corners of the curve (Gomez et al. 2025, Eq. 29).

    >>> gdp_rows(1.0, (2,))
    array([1., 1.])
    """
    arr = np.asarray(mu, np.float64)
    rows = int(np.prod(batch_shape, dtype=np.int64))
    if arr.ndim != 1 or arr.size != rows:  # batch-shaped (or broadcasting), not rows
        arr = np.broadcast_to(arr, batch_shape).reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        raised = arr * (1.0 + 1e-15)
    return np.where(np.isnan(raised), np.inf, raised)


def gdp_bound_rows(pl: Fields) -> np.ndarray | None:
    """The value's GDP bound, one per row (``None``: unknown, e.g. a pair built from arrays).

    >>> import dpax
    >>> gdp_bound_rows(dpax.gaussian(2.0, grid_step=1e-2)).round(6)
    array([0.5])
    """
    return getattr(pl, "_gdp_bound", None)


def replaced(pl: V, *, description: str | None = None, gdp_mu: ArrayLike | None = None,
             companion: Companion | None = None) -> V:
    """A new value with ``pl``'s arrays and facts, but for those given: its ``description``,
    its GDP bound ``gdp_mu`` (as :func:`gdp_rows` keeps it), how its companion is obtained
    (a recipe or the reason there is none). ``pl`` is unchanged.

    >>> import dpax
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> replaced(pl, description="renamed").description, pl.description
    ('renamed', 'gaussian(noise_multiplier=1, sensitivity=1)')
    """
    return type(pl)._make(
        pl._pair, pl.grid_step, pl.description if description is None else description, pl._batch_shape,
        exact_ratio=pl.exact_ratio, optimistic=pl.optimistic, slack=pl._slack,
        gdp_bound=pl._gdp_bound if gdp_mu is None else gdp_rows(gdp_mu, pl._batch_shape),
        companion=pl._companion if companion is None else companion, tails=pl._tails)
