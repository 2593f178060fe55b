"""The PrivacyLoss value: a batch of discrete PLRV pairs on one uniform grid.

A ``PrivacyLoss`` holds, for every configuration in a batch (leading axes), the PLRVs of a
discrete dominating pair (P, Q) on the losses ``(offset + i) * grid_step``
(Kulynych et al. 2024, Definition 3.3): ``pmf_y`` is the law of Y = log(Q/P) under Q with its mass at
+inf beside it (``inf_mass_y``), ``pmf_x`` the law of X = log(Q/P) under P with its mass at
-inf (``neginf_mass_x``). The two are not assumed to satisfy Pr[X = x] = e^-x Pr[Y = x]
exactly. It is a JAX pytree, so it can be passed through ``jax.jit`` and ``jax.vmap``.

Every risk method reports the symmetrised (add/remove) curve; the kernels behind them are in
:mod:`dpax._engine.analyse` (risks) and :mod:`dpax._engine.composition` (composition).

>>> import dpax
>>> pl = dpax.gaussian(1.0, grid_step=1e-2)
>>> round(pl.advantage(), 4), round(pl.epsilon(1e-5), 4)
(0.3829, 4.3772)
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import ArrayLike

from ._engine import analyse as _analyse
from ._engine import composition as _compose
from ._engine import construct as _construct
from ._engine import grid as _grid
from ._engine import optimistic as _optimistic
from ._engine import pld as _pld
from ._engine import validation as _v
from ._engine.pair import Pair
from ._engine.x64 import as_result, float64

#: Largest epsilon the delta kernel is given: e^eps is finite in float64 below 709.7827.
#: delta(epsilon) decreases in epsilon, so a larger epsilon is answered by this one: the
#: same number unless the grid has a point with 0 < Pr[X > x] < ~1e-308 (then an upper
#: bound, on the safe side), never the NaN of inf * 0.
_DELTA_EPSILON_MAX = 709.78

#: Why a pair has no optimistic companion, unless its constructor says more.
NO_COMPANION = ("it was not built by a dpax mechanism with a closed-form loss law (gaussian, subsampled_gaussian, "
                "dpsgd, laplace, subsampled_laplace, randomized_response, discrete_laplace, discrete_gaussian, "
                "mixture_of_gaussians, or compositions of these); a pair built from arrays, from a privacy profile, "
                "from atoms, approximate_dp or imported from dp-accounting is bounded from the safe side only")


#: A law given to :class:`PrivacyLoss` by hand must have a total mass (its infinite atom
#: included) within this of 1.
MASS_TOLERANCE = 1e-6


def _checked_arrays(pmf_x: ArrayLike, pmf_y: ArrayLike, offset: ArrayLike, inf_mass_y: ArrayLike,
                    neginf_mass_x: ArrayLike, grid_step: Any) -> tuple:
    """The arrays of a PrivacyLoss built by hand, checked (each message names its argument):
    masses finite and non-negative, both laws of one shape ``batch_shape + (n,)``, offsets
    whole numbers of that batch shape, atoms probabilities broadcasting to it, every law's
    total mass 1 within :data:`MASS_TOLERANCE`, the grid step a positive number."""
    step = _v.scalar("grid_step", grid_step, low=0.0, low_open=True)
    px, py = _v.real_array("pmf_x", pmf_x, low=0.0), _v.real_array("pmf_y", pmf_y, low=0.0)
    for name, a in (("pmf_x", px), ("pmf_y", py)):
        if a.ndim == 0:
            raise ValueError(f"{name} must be an array of masses over the grid (shape batch_shape + (n,)), "
                             "got one number")
    if px.shape != py.shape:
        raise ValueError(f"pmf_x (shape {px.shape}) and pmf_y (shape {py.shape}) must have the same shape")
    batch = px.shape[:-1]
    off = _v.real_array("offset", offset, low=-2.0**53, high=2.0**53)
    if off.shape != batch:
        raise ValueError(f"offset must have the batch shape of pmf_x, {batch} (one grid index per row), "
                         f"got shape {off.shape}")
    if np.any(off != np.round(off)):
        raise ValueError("offset must hold whole numbers (grid indices), "
                         f"got {float(off[off != np.round(off)].ravel()[0]):g}")
    atoms = []
    for name, mass in (("inf_mass_y", inf_mass_y), ("neginf_mass_x", neginf_mass_x)):
        arr = _v.probabilities(name, mass)
        try:
            atoms.append(np.broadcast_to(arr, batch))
        except ValueError:
            raise ValueError(f"{name} (shape {arr.shape}) must broadcast to the batch shape {batch}") from None
    for name, law, atom in (("pmf_x", px, atoms[1]), ("pmf_y", py, atoms[0])):
        total = np.sum(law, -1) + atom
        bad = np.abs(total - 1.0) > MASS_TOLERANCE
        if np.any(bad):
            which = "neginf_mass_x" if name == "pmf_x" else "inf_mass_y"
            raise ValueError(f"{name} with {which} must have a total mass of 1 (within {MASS_TOLERANCE:g}), got "
                             f"{float(total[bad].ravel()[0]):.10g}")
    return px, py, off.astype(np.int64), atoms[0], atoms[1], step


class Interval(NamedTuple):
    """A reported number with its certified bracket.

    ``safe`` is the number dpax reports without ``bounds=True`` (from the dominating pair:
    beta never above the truth, advantage / epsilon / delta never below it); ``optimistic``
    is the same quantity from the optimistic companion (:meth:`PrivacyLoss.bounds`), on the
    other side of the truth. So the truth lies in ``[lower, upper]``, and ``width`` is what
    the grid's discretisation can cost. Fields and properties are floats for a single
    value, arrays (any batch shape) otherwise.

    >>> import dpax
    >>> b = dpax.gaussian(1.0, grid_step=1e-2).beta(0.1, bounds=True)
    >>> round(b.lower, 4), round(b.upper, 4), b.width < 1e-4
    (0.6109, 0.6109, True)
    """

    safe: Any
    optimistic: Any

    def _shape(self) -> tuple[int, ...]:
        """The broadcast shape of the two sides (a ValueError naming them where they do not
        broadcast: an Interval built by hand)."""
        return _v.broadcast_shapes(("safe", np.shape(self.safe)), ("optimistic", np.shape(self.optimistic)))

    @property
    def lower(self) -> Any:
        """The smaller end of the bracket."""
        return as_result(np.minimum(self.safe, self.optimistic), self._shape())

    @property
    def upper(self) -> Any:
        """The larger end of the bracket."""
        return as_result(np.maximum(self.safe, self.optimistic), self._shape())

    @property
    def width(self) -> Any:
        """``upper - lower`` (``nan`` where both ends are infinite)."""
        with np.errstate(invalid="ignore"):
            return as_result(np.abs(np.subtract(self.safe, self.optimistic)), self._shape())

    def contains(self, value: ArrayLike, tol: float = 0.0) -> Any:
        """Whether ``value`` lies in ``[lower - tol, upper + tol]`` (elementwise).

        ``value``: real numbers, +-inf allowed (an epsilon may be inf), NaN not; ``tol`` >= 0."""
        tol = _v.scalar("tol", tol, low=0.0)
        v = _real_or_infinite("value", value)
        inside = (v >= np.asarray(self.lower) - tol) & (v <= np.asarray(self.upper) + tol)
        return inside.item() if inside.ndim == 0 else inside


def _query_values(check: Callable[[str, Any], np.ndarray], name: str, value: ArrayLike) -> np.ndarray:
    """``check(name, value)`` for the query array of a risk method, which may have any shape,
    an empty one included (it gets answers of its own shape, empty): an empty array's dtype
    is checked on one zero of it (booleans, strings and objects are refused as ever)."""
    try:
        raw = np.asarray(value)
    except Exception:  # noqa: BLE001 - not an array: the check says why
        return check(name, value)
    if raw.size or np.ma.isMaskedArray(value):
        return check(name, value)
    try:
        check(name, np.zeros(1, raw.dtype))
    except TypeError as exc:  # quote the array given, not the zero
        raise TypeError(f"{str(exc).rsplit('; got ', 1)[0]}; got {_v.brief(value)}") from None
    return np.zeros(raw.shape)


def _real_or_infinite(name: str, value: ArrayLike) -> np.ndarray:
    """``value`` as float64, real numbers or +-inf (NaN and non-numbers refused, named)."""
    checked = value
    try:
        raw = np.asarray(value)
    except Exception:  # ragged lists: real_array names them
        raw = None
    if raw is not None and raw.dtype.kind == "f":  # infinities allowed: checked as 0
        checked = np.where(np.isinf(raw), 0.0, raw)
    _v.real_array(name, checked)
    return np.asarray(value, np.float64)


#: Sides of a bracket that cross by at most this (relative, plus 1e-15 absolute) are float64
#: round-off of two equal numbers: the optimistic side is set to the safe one.
CROSSING_ROUNDOFF = 1e-12


def _uncrossed(safe: Any, optimistic: Any, safe_is_upper: bool, trivial: Any, what: str) -> Interval:
    """``Interval(safe, optimistic)`` that is a certificate: where the companion's number lies
    beyond the safe one by more than round-off (its float64 sums lost the precision a tiny
    risk needs, e.g. a sample rate of 1e-12), the optimistic side is replaced by the bound
    every mechanism meets (0 for advantage, epsilon and delta; 1 - alpha for beta), with a
    RuntimeWarning. The safe side is never changed."""
    s = np.asarray(safe, np.float64)
    o = np.asarray(optimistic, np.float64)
    with np.errstate(invalid="ignore"):
        over = (o - s) if safe_is_upper else (s - o)  # > 0: the sides cross
        limit = CROSSING_ROUNDOFF * np.abs(s) + 1e-15
        crossed = over > limit
        o = np.where((over > 0) & ~crossed, s, o)
    if np.any(crossed):
        warnings.warn(f"{what}: the optimistic companion's answer crossed the safe one (float64 round-off of a "
                      f"risk this small, at {int(np.sum(crossed))} value(s)); the optimistic side there is the "
                      f"trivial bound ({'0' if safe_is_upper else '1 - alpha'}), so the bracket stays a certificate; "
                      "a coarser grid_step may give a narrower one", RuntimeWarning, stacklevel=4)
        o = np.where(crossed, np.broadcast_to(trivial, o.shape), o)
    return Interval(safe, as_result(o, np.shape(s)))


@jax.tree_util.register_pytree_node_class
class PrivacyLoss:
    """Discrete PLRVs (X, Y) of a batch of mechanisms on the grid ``k * grid_step``.

    The arrays may be given with any batch shape (``pmf_x.shape == batch_shape + (n,)``,
    ``offset.shape == batch_shape``); they are kept with the batch flattened into rows, the
    form the kernels take, and shown with the batch shape by the properties below. Most
    users get one from a mechanism (:mod:`dpax.mechanisms`) rather than building it.

    Args:
        pmf_x: Pr[X = (offset + i) * grid_step], shape ``batch_shape + (n,)``.
        pmf_y: Pr[Y = (offset + i) * grid_step], shape ``batch_shape + (n,)``.
        offset: integer grid index of the first support point, shape ``batch_shape``.
        inf_mass_y: Pr[Y = +inf], shape ``batch_shape``.
        neginf_mass_x: Pr[X = -inf], shape ``batch_shape``.
        grid_step: the grid's step, > 0 (one number for the whole batch).
        description: a label shown by ``repr`` and in reports (a string).
        batch_shape: internal (with :meth:`from_pair`): the arrays are already flat rows
            and this is the batch shape to show; ``None`` reads it from ``offset``.
        exact_ratio: True when Pr[X = x] = e^-x Pr[Y = x] holds on every finite point by
            construction.
        optimistic: True for an optimistic companion (see :meth:`bounds`); built by dpax,
            not by hand.

    Raises:
        ValueError, TypeError: (built by hand) a mass negative or not finite, the two laws
            of different shapes, offsets not whole numbers of the batch shape, atoms outside
            [0, 1], a law whose total mass (its atom included) is not 1 within
            :data:`MASS_TOLERANCE`, a grid step that is not a positive number; each
            message names the argument.

    Randomized response with epsilon = 1: losses -1, 0, 1 on the grid of step 1.

    >>> import numpy as np
    >>> from dpax import PrivacyLoss
    >>> e = np.e
    >>> rr = PrivacyLoss([e / (1 + e), 0.0, 1 / (1 + e)], [1 / (1 + e), 0.0, e / (1 + e)],
    ...                  offset=-1, inf_mass_y=0.0, neginf_mass_x=0.0, grid_step=1.0)
    >>> round(rr.advantage(), 4), round(rr.epsilon(0.0), 4)
    (0.4621, 1.0)
    """

    def __init__(self, pmf_x: ArrayLike, pmf_y: ArrayLike, offset: ArrayLike, inf_mass_y: ArrayLike,
                 neginf_mass_x: ArrayLike, grid_step: float, description: str = "privacy loss",
                 batch_shape: tuple[int, ...] | None = None, exact_ratio: bool = False,
                 optimistic: bool = False) -> None:
        exact_ratio, optimistic = _v.flag("exact_ratio", exact_ratio), _v.flag("optimistic", optimistic)
        if not isinstance(description, str):
            raise TypeError(f"description must be a string, got {_v.brief(description)}")
        if batch_shape is None:
            pmf_x, pmf_y, offset, inf_mass_y, neginf_mass_x, grid_step = _checked_arrays(
                pmf_x, pmf_y, offset, inf_mass_y, neginf_mass_x, grid_step)
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
        self.exact_ratio = exact_ratio
        #: True for an optimistic companion (:meth:`bounds`): its curve lies on or above the truth.
        self.optimistic = optimistic
        self._slack: _optimistic.Slack | None = None  # an optimistic pair's ratio bounds
        self._companion: Callable[[], PrivacyLoss] | None = None  # recipe of the companion
        self._no_companion = NO_COMPANION
        self._bounds: PrivacyLoss | None = None
        #: Per row (rows,), or None: a mu such that the mechanism itself (not the grid) is
        #: mu-GDP for every attack, from its closed form (:meth:`_with_gdp_bound`).
        self._gdp_bound: np.ndarray | None = None

    @classmethod
    def from_pair(cls, pair: Pair, grid_step: float, description: str, batch_shape: tuple[int, ...],
                  exact_ratio: bool = False) -> PrivacyLoss:
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
        try:
            if isinstance(batch_shape, (str, bytes)) or any(isinstance(d, (bool, np.bool_)) for d in batch_shape):
                raise TypeError
            shape = tuple(int(operator.index(d)) for d in batch_shape)
        except TypeError:
            raise TypeError(f"batch_shape must be a tuple of integers, got {_v.brief(batch_shape)}") from None
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
    def tree_unflatten(cls, aux: tuple[Any, ...], children: tuple[Any, ...]) -> PrivacyLoss:
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
        pmf_x, pmf_y, offset, inf_y, neginf_x = children  # the five PLRV arrays of tree_flatten
        pl = cls(pmf_x, pmf_y, offset, inf_y, neginf_x, grid_step, description, batch_shape=batch_shape,
                 exact_ratio=exact_ratio, optimistic=optimistic)
        pl._slack = _optimistic.Slack.from_aux(slack)
        pl._gdp_bound = None if gdp_bound is None else np.asarray(gdp_bound, np.float64)
        return pl

    # -- the optimistic companion ---------------------------------------------------------
    @classmethod
    def _optimistic_from(cls, built: tuple[Pair, _optimistic.Slack], grid_step: float,
                         batch_shape: tuple[int, ...]) -> PrivacyLoss:
        """The optimistic PrivacyLoss of an engine result ``(pair, slack)``."""
        pair, slack = built
        pl = cls.from_pair(pair, grid_step, "optimistic companion", batch_shape)
        pl.optimistic, pl._slack = True, slack
        return pl

    def _with_companion(self, recipe: Callable[[], PrivacyLoss] | None = None,
                        reason: str | None = None) -> PrivacyLoss:
        """Set how the companion is built (``recipe``, called on first use) or why there is
        none (``reason``); returns ``self``."""
        self._companion, self._bounds = recipe, None
        if reason is not None:
            self._no_companion = reason
        return self

    def _with_gdp_bound(self, mu: ArrayLike | None) -> PrivacyLoss:
        """Record that the mechanism is ``mu``-GDP for every attack (its closed form: the
        true curve lies on or above f_mu), ``mu`` broadcast to the batch (None: unknown);
        returns ``self`` (``mu`` may also be one value per row). Raised by a few ulps, so that
        the rounding of the closed form stays on the safe side. Read by
        :func:`dpax.gdp.mu_and_regret`, where the grid cannot certify the corners of the curve
        (its truncated tails); carried through indexing, broadcasting, regridding and
        composition (GDP composes exactly: mu = sqrt(sum of mu_i^2))."""
        if mu is None:
            self._gdp_bound = None
            return self
        arr = np.asarray(mu, np.float64)
        if arr.ndim != 1 or arr.size != self._rows_count():  # batch-shaped (or broadcasting), not rows
            arr = np.broadcast_to(arr, self.batch_shape).reshape(-1)
        with np.errstate(over="ignore", invalid="ignore"):
            rows = arr * (1.0 + 1e-15)
        self._gdp_bound = np.where(np.isnan(rows), np.inf, rows)
        return self

    def _gdp_bound_rows(self, index: Any) -> np.ndarray | None:
        """The GDP bound of the rows at ``index`` (None where unknown)."""
        return None if self._gdp_bound is None else np.asarray(self._gdp_bound)[np.reshape(index, -1)]

    def _derived(self, new: PrivacyLoss, make: Callable[[PrivacyLoss], PrivacyLoss],
                 rows: Any = None) -> PrivacyLoss:
        """``new``, derived from ``self``, with the companion ``make(self.bounds())`` (lazy);
        an optimistic ``new`` gets the slack of ``rows`` (an index array) instead."""
        if self.optimistic:
            new.optimistic = True
            new._slack = None if (self._slack is None or rows is None) else self._slack.take(rows)
        elif self._companion is not None:
            new._with_companion(lambda: make(self.bounds()))
        else:
            new._no_companion = self._no_companion
        return new

    def bounds(self) -> PrivacyLoss:
        """The optimistic companion: a pair whose trade-off curve lies on or above the truth.

        Built on first use (then kept) by one map of outputs to grid labels applied to both
        P and Q, with the cells' masses from the exact loss laws: each output's privacy loss
        rounded to the nearest grid point, or, for the add/remove subsampled Gaussian (hence
        DP-SGD), split between its cell's two ends by exponential interpolation. Either is a
        post-processing of the mechanism, so every number the companion gives (beta, or
        advantage / epsilon / delta from below) is on the optimistic side of the truth.
        Compositions compose the companions (the add/remove ones by exponentially tilted
        FFTs that keep their far tails). :mod:`dpax._engine.optimistic` has the argument and
        its equations. The risk methods take ``bounds=True`` to return both sides as an
        :class:`Interval`.

        Returns:
            The companion :class:`PrivacyLoss` (``optimistic`` True, same grid step and
            batch shape); ``self`` if this pair is itself a companion.

        Raises:
            ValueError: the pair has no companion (built from arrays, a privacy profile,
                atoms, ``approximate_dp``, or imported from dp-accounting).

        >>> import dpax
        >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
        >>> round(pl.advantage(), 4), round(pl.bounds().advantage(), 4)
        (0.3829, 0.3829)
        """
        if self.optimistic:
            return self
        if self._bounds is None:
            if self._companion is None:
                raise ValueError(f"no optimistic companion exists for {self.description}: {self._no_companion}")
            with jax.enable_x64(True):
                comp = self._companion()
            comp.description = f"{self.description} (optimistic)"
            self._bounds = comp
        return self._bounds

    def _need_slack(self) -> _optimistic.Slack:
        """The slack of an optimistic pair, or a ValueError (lost on a rebuild from arrays)."""
        if self._slack is None:
            raise ValueError(f"{self.description}: this optimistic pair has lost its ratio bounds (rebuilt from "
                             "its arrays?); compose or regrid the PrivacyLoss that bounds() returned instead")
        return self._slack

    def _bracket(self, safe: Any, method: str, *args: Any) -> Interval:
        """``Interval(safe, companion.method(*args))``, never crossed (:func:`_uncrossed`)."""
        return _uncrossed(safe, getattr(self.bounds(), method)(*args), True, 0.0, method)

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

    def __repr__(self) -> str:
        shape = "" if not self.batch_shape else f", batch_shape={self.batch_shape}"
        tail = np.max(self.inf_mass_y + self.neginf_mass_x)
        return (
            f"PrivacyLoss({self.description}, grid_step={self.grid_step:g}{shape}, "
            f"support_length={self.support_length}, tail_mass<={tail:.3g})"
        )

    @float64
    def broadcast_to(self, shape: tuple[int, ...]) -> PrivacyLoss:
        """The same losses repeated over a broadcast batch shape.

        Args:
            shape: a shape that ``batch_shape`` broadcasts to (NumPy rules).

        Returns:
            A :class:`PrivacyLoss` with ``batch_shape == shape`` (``self`` if unchanged).

        >>> import dpax
        >>> dpax.gaussian([1.0, 2.0], grid_step=1e-2).broadcast_to((3, 2)).batch_shape
        (3, 2)
        """
        try:
            if any(isinstance(d, (bool, np.bool_)) for d in shape):
                raise TypeError
            shape = tuple(int(operator.index(d)) for d in shape)
        except TypeError:
            raise TypeError(f"shape must be a tuple of integers, got {_v.brief(shape)}") from None
        if any(d < 1 for d in shape):
            raise ValueError(f"shape must hold integers >= 1 (a batch of configurations), got {shape}")
        if shape == self.batch_shape:
            return self
        rows = np.arange(max(1, int(np.prod(self.batch_shape, dtype=int)))).reshape(self.batch_shape)
        try:
            index = np.broadcast_to(rows, shape).reshape(-1)
        except ValueError:
            raise ValueError(f"shape {shape} is not one that batch_shape {self.batch_shape} broadcasts to") from None
        new = PrivacyLoss.from_pair(self._pair.take(index), self.grid_step, self.description, shape, self.exact_ratio)
        new._gdp_bound = self._gdp_bound_rows(index)
        return self._derived(new, lambda c: c.broadcast_to(shape), index)

    def _rows_count(self) -> int:
        return int(np.shape(self._pair.pmf_x)[0])

    def _check_queries(self, kernel: Callable, value: Any, argument: str, bounds: bool) -> None:
        """Refuse, before ``value`` is converted, a query array whose answers (both sides'
        with ``bounds``) and dpax's copy of it exceed the memory budget."""
        shape = getattr(value, "shape", None)
        if not isinstance(shape, tuple) or not all(isinstance(d, (int, np.integer)) for d in shape):
            return  # not an array yet: converting it is the caller's
        m = int(np.prod(shape, dtype=np.int64))
        if m:
            rows = self._rows_count()
            _analyse.query_plan(kernel, self._pair, rows, m, argument, held=m * 8 + (rows * m * 8 if bounds else 0))

    def _answers(self, kernel: Callable, values: np.ndarray, argument: str, shape: tuple[int, ...],
                 held: float = 0) -> Any:
        """``kernel``'s answers at every one of ``values`` (validated, float64) for every row,
        shaped ``batch_shape + shape``; ``held``: bytes the caller keeps meanwhile."""
        rows = np.broadcast_to(values.reshape(-1), (self._rows_count(), values.size))
        if self.optimistic:  # a companion bounds P-masses that underflow (analyse.UNDERFLOW)
            kernel = _analyse.for_companion(kernel)
        return as_result(_analyse.per_query(kernel, self._pair, rows, argument, held=values.nbytes + held),
                         self.batch_shape + shape)

    def _query(self, kernel: Callable, values: np.ndarray, argument: str, shape: tuple[int, ...],
               bounds: bool) -> Any:
        """:meth:`_answers` of this pair, and with ``bounds`` the :class:`Interval` with the
        companion's (computed while this pair's are held). An empty query has empty
        answers, ``batch_shape + shape``, on both sides."""
        if values.size == 0:
            empty = np.zeros(self.batch_shape + shape)
            return Interval(empty, empty.copy()) if bounds else empty
        out = self._answers(kernel, values, argument, shape)
        if not bounds:
            return out
        other = self.bounds()._answers(kernel, values, argument, shape, held=8 * np.size(out))
        if kernel is _analyse.beta_kernel:  # beta: the safe side is the lower one; 1 - alpha bounds every curve
            return _uncrossed(out, other, False, 1.0 - values.reshape(shape), "beta")
        return _uncrossed(out, other, True, 0.0, kernel.__name__.replace("_kernel", ""))

    # -- risk ---------------------------------------------------------------------------
    @float64
    def beta(self, alpha: ArrayLike, bounds: bool = False) -> float | np.ndarray | Interval:
        """FNR of the most powerful attack at FPR ``alpha`` (Algorithm 1, symmetrised).

        Args:
            alpha: false-positive rates in [0, 1], any shape (an empty array gives empty answers).
            bounds: also evaluate the optimistic companion (:meth:`bounds`) and return
                both sides as an :class:`Interval` (safe = lower end here).

        Returns:
            The trade-off curve at ``alpha``, never above the true curve: a float for a
            single mechanism and a scalar ``alpha``, else an array of shape
            ``batch_shape + alpha.shape``; an :class:`Interval` of two such with ``bounds``.

        >>> import dpax
        >>> round(dpax.gaussian(1.0, grid_step=1e-2).beta(0.1), 4)
        0.6109
        """
        want = _v.flag("bounds", bounds)
        self._check_queries(_analyse.beta_kernel, alpha, "alpha", want)
        a = _query_values(_v.probabilities, "alpha", alpha)
        return self._query(_analyse.beta_kernel, a, "alpha", a.shape, want)

    @float64
    def advantage(self, bounds: bool = False) -> float | np.ndarray | Interval:
        """Largest TPR - FPR of any membership-inference attack (Algorithm 3, Eq. 11).

        Args:
            bounds: also evaluate the optimistic companion and return an :class:`Interval`.

        Returns:
            The advantage, never below the truth: a float for a single mechanism, an array
            of shape ``batch_shape`` for a batch; an :class:`Interval` with ``bounds``.

        >>> import dpax
        >>> round(dpax.gaussian(1.0, grid_step=1e-2).advantage(), 4)
        0.3829
        """
        want = _v.flag("bounds", bounds)
        out = as_result(_analyse.advantage_kernel(self._pair, self.optimistic), self.batch_shape)
        return self._bracket(out, "advantage") if want else out

    @float64
    def delta(self, epsilon: ArrayLike, bounds: bool = False) -> float | np.ndarray | Interval:
        """delta(epsilon) of the symmetrised curve: the privacy profile.

        Args:
            epsilon: finite real numbers, any shape (an empty array gives empty answers).
            bounds: also evaluate the optimistic companion and return an :class:`Interval`.

        Returns:
            The smallest delta such that the mechanism is (epsilon, delta)-DP, never below
            the truth: a float for a single mechanism and a scalar ``epsilon``, else an
            array of shape ``batch_shape + epsilon.shape``; an :class:`Interval` with ``bounds``.

        >>> import dpax
        >>> round(dpax.gaussian(1.0, grid_step=1e-2).delta(1.0), 4)
        0.1269
        """
        want = _v.flag("bounds", bounds)
        self._check_queries(_analyse.delta_kernel, epsilon, "epsilon", want)
        e = _query_values(_v.real_array, "epsilon", epsilon)
        shape, e = e.shape, np.minimum(e, _DELTA_EPSILON_MAX)  # the validated copy is dropped
        return self._query(_analyse.delta_kernel, e, "epsilon", shape, want)

    @float64
    def epsilon(self, delta: ArrayLike, bounds: bool = False) -> float | np.ndarray | Interval:
        """Smallest epsilon >= 0 such that the mechanism is (epsilon, delta)-DP.

        Args:
            delta: probabilities in [0, 1], any shape (an empty array gives empty answers).
            bounds: also evaluate the optimistic companion and return an :class:`Interval`.

        Returns:
            epsilon, never below the truth: a float for a single mechanism and a scalar
            ``delta``, else an array of shape ``batch_shape + delta.shape``; an
            :class:`Interval` with ``bounds``. ``inf`` where the pair certifies no finite
            epsilon: delta below the +inf atom (which holds the mass a composition's window
            leaves out, at most ~1e-18 a tail, and the rounding of the constructions), or an
            epsilon beyond ~700 (the P-masses of such losses, e^-epsilon times the
            Q-masses, underflow float64). The optimistic side stays finite there (on or
            below the truth).

        >>> import dpax
        >>> round(dpax.gaussian(1.0, grid_step=1e-2).epsilon(1e-5), 4)
        4.3772
        """
        want = _v.flag("bounds", bounds)
        self._check_queries(_analyse.epsilon_kernel, delta, "delta", want)
        d = _query_values(_v.probabilities, "delta", delta)
        return self._query(_analyse.epsilon_kernel, d, "delta", d.shape, want)

    @float64
    def tradeoff_points(self, symmetric: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Breakpoints ``(alpha, beta)`` of the one-directional curve f = T(P, Q), alpha descending.

        The symmetrised curve used by :meth:`beta` is the convex hull of min(f, f^-1).
        ``symmetric=True`` returns that curve's breakpoints instead, alpha ascending: they
        lie among the breakpoints of f and f^-1 (the line of slope -1 joins the two where
        they cross the diagonal), so the curve is the linear interpolation of these points;
        made for plotting and reports.

        The sums behind the points are rounded in blocks, which can leave neighbours an ulp
        out of order; the arrays returned are made exactly monotone by moving such points an
        ulp down (smaller alpha or beta: the pessimistic side).

        Args:
            symmetric: return the symmetrised curve's breakpoints instead of f's.

        Returns:
            ``(alpha, beta)``, arrays shaped ``batch_shape + (support_length + 1,)``, or
            ``batch_shape + (2 support_length + 2,)`` (some repeated) when ``symmetric``.

        >>> import dpax
        >>> alpha, beta = dpax.dpsgd(1.0, 0.01, 100, grid_step=1e-3).tradeoff_points(symmetric=True)
        >>> alpha.shape, round(float(alpha[0]), 6), round(float(beta[0]), 6)
        ((12290,), 0.0, 1.0)
        """
        symmetric = _v.flag("symmetric", symmetric)
        table = self._rows_count() * (self.support_length + 1) * 8  # bytes of one (rows, n + 1) array
        if not symmetric:  # beside the two tables: the two arrays returned
            cx, cy = _analyse.tradeoff_tables(self._pair, held=2 * table)
            shape = self.batch_shape + (self.support_length + 1,)
            alpha = np.minimum.accumulate(np.asarray(cx), -1)
            beta = np.flip(np.minimum.accumulate(np.flip(np.asarray(cy), -1), -1), -1)
            return alpha.reshape(shape), beta.reshape(shape)
        # held beside each step: f's alphas and the reversed pair, then the sorted alphas of
        # both directions and the running minimum of the answers to come
        cx = _analyse.tradeoff_tables(self._pair)[0]
        rcx = _analyse.tradeoff_tables(self._pair.reversed(), held=3 * table)[0]
        alpha = np.concatenate([np.asarray(cx), np.asarray(rcx)], -1)
        del cx, rcx
        alpha.sort(-1)
        beta = _analyse.per_query(_analyse.beta_kernel, self._pair, alpha, "alpha", held=4 * table)
        beta = np.minimum.accumulate(np.asarray(beta), -1)
        shape = self.batch_shape + (alpha.shape[-1],)
        return alpha.reshape(shape), beta.reshape(shape)

    @float64
    def __getitem__(self, key: Any) -> PrivacyLoss:
        """Configurations of the batch selected by NumPy indexing (``pl[0]``, ``pl[1:3]``).

        Args:
            key: a NumPy index into ``batch_shape``.

        Returns:
            A :class:`PrivacyLoss` holding the selected configurations.

        Raises:
            IndexError: the PrivacyLoss is a single mechanism (``batch_shape == ()``), or ``key``
                is not an index into ``batch_shape`` (out of range, not integers).
            ValueError: ``key`` selects no configuration (an empty batch holds none).

        >>> import dpax
        >>> round(dpax.gaussian([0.5, 1.0], grid_step=1e-2)[1].advantage(), 4)
        0.3829
        """
        if not self.batch_shape:
            raise IndexError("a single PrivacyLoss (batch_shape ()) cannot be indexed")
        rows = _v.batch_rows("key", key, self.batch_shape, "PrivacyLoss")
        # the batch's description names its array arguments by shape: say which rows these are
        if np.ndim(rows) == 0:
            where = ", ".join(str(int(i)) for i in np.unravel_index(int(rows), self.batch_shape))
            description = f"{self.description}[{where}]"
        else:
            description = f"{self.description}[{np.size(rows)} of {int(np.prod(self.batch_shape, dtype=int))} rows]"
        new = PrivacyLoss.from_pair(self._pair.take(np.reshape(rows, -1)), self.grid_step, description,
                                    np.shape(rows), self.exact_ratio)
        new._gdp_bound = self._gdp_bound_rows(rows)
        return self._derived(new, lambda c: c[key], np.reshape(rows, -1))

    @float64
    def to_dp_accounting(self) -> Any:
        """This pair as a dp-accounting ``PrivacyLossDistribution``.

        Dense PMFs, no re-discretisation; see :mod:`dpax.interop`. Needs dp-accounting (an
        optional dependency).

        Returns:
            A ``PrivacyLossDistribution``, or for a batch a NumPy object array of them with
            the batch shape.

        >>> import dpax
        >>> pld = dpax.gaussian(1.0, grid_step=1e-2).to_dp_accounting()
        >>> round(pld.get_epsilon_for_delta(1e-5), 4)
        4.3772
        """
        plds = _pld.to_plds(self._pair, self.grid_step)
        if not self.batch_shape:
            return plds[0]
        arr = np.empty(len(plds), dtype=object)
        arr[:] = plds
        return arr.reshape(self.batch_shape)

    # -- re-discretisation --------------------------------------------------------------
    @float64
    def regrid(self, grid_step: float) -> PrivacyLoss:
        """The same pair on the grid ``k * grid_step``, by connect-the-dots (pessimistic).

        Every grid point of this pair is an atom (loss x, masses Pr[X = x], Pr[Y = x]);
        each is split between the two new grid points around it so that both its P- and
        Q-mass are kept, an exact post-processing of the new pair, so the result dominates
        this one (its curve lies on or below). A coarser grid loses accuracy; a grid whose
        points include the old ones (an integer divisor of the old step) is exact.

        Args:
            grid_step: the new grid's step, in [1e-7, 1].

        Returns:
            A :class:`PrivacyLoss` on the new grid (``self`` if the step is unchanged).

        >>> import dpax
        >>> coarse = dpax.gaussian(1.0, grid_step=1e-3).regrid(4e-3)
        >>> coarse.grid_step, round(coarse.advantage(), 4)
        (0.004, 0.3829)
        """
        step = _v.grid_step(grid_step)
        if step == self.grid_step:
            return self
        if self.optimistic:  # nearest new point: a post-processing, still optimistic
            built = _optimistic.regrid(self._pair, self._need_slack(), self.grid_step, step, _grid.padded_length)
            pl = PrivacyLoss._optimistic_from(built, step, self.batch_shape)
            pl.description = self.description
            return pl
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
        new = PrivacyLoss.from_pair(pair, step, self.description, self.batch_shape, self.exact_ratio)
        new._gdp_bound = self._gdp_bound  # the same mechanism
        return self._derived(new, lambda c: c.regrid(step))

    # -- composition --------------------------------------------------------------------
    def compose(self, other: PrivacyLoss, grid_step: float | str | None = None) -> PrivacyLoss:
        """Adaptive composition with ``other``; batches broadcast (see :func:`compose`).

        Args:
            other: the second mechanism: a :class:`PrivacyLoss`, or a ``(PrivacyLoss, count)``
                pair for ``count`` copies of it (copies of this one: :meth:`self_compose`).
            grid_step: the common grid when the steps differ (see :func:`compose`).

        Returns:
            The composed :class:`PrivacyLoss`.

        >>> import dpax
        >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
        >>> round(pl.compose(pl).advantage(), 4)
        0.5205
        """
        pair = isinstance(other, tuple) and len(other) == 2 and isinstance(other[0], PrivacyLoss)
        if not (isinstance(other, PrivacyLoss) or pair):
            hint = (f" (for {other} copies of this mechanism: self_compose({other}))"
                    if isinstance(other, (int, np.integer)) and not isinstance(other, bool) and other > 0 else "")
            raise TypeError(f"other must be a PrivacyLoss or a (PrivacyLoss, count) pair, got {_v.brief(other)}{hint}")
        return compose(self, other, grid_step=grid_step)

    @float64
    def self_compose(self, num_steps: ArrayLike) -> PrivacyLoss:
        """``num_steps``-fold composition by FFT; ``num_steps`` broadcasts against the batch.

        Args:
            num_steps: positive integers, any shape broadcasting with ``batch_shape``.

        Returns:
            The composed :class:`PrivacyLoss`, batch shape the broadcast shape.

        >>> import dpax
        >>> dpax.gaussian(1.0, grid_step=1e-2).self_compose([4, 16]).advantage().round(4)
        array([0.6827, 0.9545])
        """
        steps = _v.positive_int_array("num_steps", num_steps)
        shape = _v.broadcast_shapes(("the PrivacyLoss's batch", self.batch_shape), ("num_steps", steps))
        pl = self.broadcast_to(shape) if shape != self.batch_shape else self
        if np.all(steps == 1):
            return pl
        counts = np.broadcast_to(steps, shape).reshape(-1)
        try:
            arrays = _compose.compose_arrays((pl.pair,), (counts,), self.grid_step, self.exact_ratio,
                                             tilted=self.optimistic)
        except _grid.MemoryBudgetError as exc:  # say which argument made it so large
            raise _grid.MemoryBudgetError(f"num_steps up to {int(np.max(counts)):,}: {exc}") from exc
        desc = self.description
        if steps.ndim == 0:
            desc = f"{desc} x {int(steps)}"
        else:
            desc = f"{desc} x num_steps"
        if self.optimistic:  # tilted=True: compose_arrays gave a Tilted
            return _optimistic_result(cast(_compose.Tilted, arrays), [pl], [counts], self.grid_step, desc, shape)
        new = PrivacyLoss.from_pair(cast(Pair, arrays), self.grid_step, desc, shape, self.exact_ratio)
        if pl._gdp_bound is not None:
            new._with_gdp_bound(np.sqrt(counts) * pl._gdp_bound)
        return self._derived(new, lambda c: c.self_compose(num_steps))


@float64
def compose(*losses: PrivacyLoss | tuple[PrivacyLoss, ArrayLike],
            grid_step: float | str | None = None) -> PrivacyLoss:
    """Heterogeneous adaptive composition of privacy losses by FFT (batches broadcast).

    All factors are multiplied in the frequency domain in one kernel
    (:mod:`dpax._engine.composition`). Factors on different grids are brought to one by
    :meth:`PrivacyLoss.regrid`, an exact post-processing, hence pessimistic.

    Args:
        *losses: each a :class:`PrivacyLoss` or a pair ``(loss, count)`` meaning ``count``
            copies of it, e.g. ``compose((pl_a, 500), (pl_b, 1500))``; counts broadcast
            like the batches.
        grid_step: a step, or ``"coarsest"`` (the largest of the factors' steps, the
            default when they differ); ``None`` keeps a shared step.

    Returns:
        The composed :class:`PrivacyLoss`, batch shape the broadcast of every factor's
        batch shape and count shape.

    >>> import dpax
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> round(dpax.compose((pl, 2), (pl, 2)).advantage(), 4)
    0.6827
    """
    if not losses:
        raise ValueError("compose needs at least one PrivacyLoss")
    items = []
    for i, item in enumerate(losses):
        count: ArrayLike = 1
        if isinstance(item, tuple):
            if len(item) != 2:
                raise TypeError(f"compose argument {i} must be a PrivacyLoss or a (PrivacyLoss, count) pair, "
                                f"got a tuple of {len(item)}")
            item, count = item
        if not isinstance(item, PrivacyLoss):
            hint = " (pass grid_step by keyword: compose(pl_a, pl_b, grid_step=...))" if i and (
                isinstance(item, (int, float, str)) and not isinstance(item, bool)) else ""
            raise TypeError(f"compose argument {i} must be a PrivacyLoss, got {type(item).__name__}{hint}")
        items.append((item, _v.positive_int_array(f"count of compose argument {i}", count)))
    steps = {pl.grid_step for pl, _ in items}
    if grid_step is None and len(steps) != 1:
        grid_step = "coarsest"
    if isinstance(grid_step, str) and grid_step != "coarsest":
        raise ValueError(f"grid_step must be a number in (0, 1] or 'coarsest', got {_v.brief(grid_step)}")
    if grid_step is not None:
        target = max(steps) if isinstance(grid_step, str) and grid_step == "coarsest" else _v.grid_step(grid_step)
        regridded = []
        for i, (pl, c) in enumerate(items):
            try:
                regridded.append((pl.regrid(target), c))
            except ValueError as exc:  # the budget, or losses beyond the new grid's reach
                raise type(exc)(f"grid_step={target:g}: compose argument {i} cannot be brought to this grid "
                                f"(from {pl.grid_step:g}): {exc}") from exc
        items = regridded
    if len(items) == 1 and np.all(items[0][1] == 1):
        return items[0][0]
    shape = _v.broadcast_shapes(*((f"the batch of compose argument {i}", pl.batch_shape)
                                  for i, (pl, _) in enumerate(items)),
                                *((f"count of compose argument {i}", c) for i, (_, c) in enumerate(items)))
    rows = [pl.broadcast_to(shape).pair for pl, _ in items]
    counts = [np.broadcast_to(c, shape).reshape(-1) for _, c in items]
    exact = all(pl.exact_ratio for pl, _ in items)
    optimistic = {pl.optimistic for pl, _ in items}
    if len(optimistic) > 1:
        raise ValueError("compose cannot mix optimistic companions (from bounds()) with other pairs: compose the "
                         "pairs, then call bounds() on the result")
    try:
        arrays = _compose.compose_arrays(rows, counts, items[0][0].grid_step, exact, tilted=optimistic == {True})
    except _grid.MemoryBudgetError as exc:  # say which arguments made it so large
        raise _grid.MemoryBudgetError("the counts of compose's arguments (up to "
                                      f"{max(int(np.max(c)) for c in counts):,}) "
                                      f"at grid_step={items[0][0].grid_step:g}: {exc}") from exc
    parts = [
        pl.description if (c.ndim == 0 and int(c) == 1) else f"{pl.description} x {int(c) if c.ndim == 0 else 'counts'}"
        for pl, c in items
    ]
    desc = " + ".join(parts) if len(parts) <= 4 else f"{parts[0]} + ... + {parts[-1]} ({len(parts)} factors)"
    if optimistic == {True}:  # tilted=True: compose_arrays gave a Tilted
        return _optimistic_result(cast(_compose.Tilted, arrays), [pl.broadcast_to(shape) for pl, _ in items], counts,
                                  items[0][0].grid_step, desc, shape)
    new = PrivacyLoss.from_pair(cast(Pair, arrays), items[0][0].grid_step, desc, shape, exact)
    bounds = [pl.broadcast_to(shape)._gdp_bound for pl, _ in items]
    if all(b is not None for b in bounds):  # GDP composes exactly: sqrt(sum of count mu^2)
        mus = cast(list[np.ndarray], bounds)  # none is None (checked just above)
        new._with_gdp_bound(np.sqrt(sum(c * b**2 for c, b in zip(counts, mus))))
    return _compose_companion(new, losses, grid_step)


def _optimistic_result(arrays: _compose.Tilted, factors: list[PrivacyLoss], counts: list[np.ndarray], grid_step: float,
                       description: str, shape: tuple[int, ...]) -> PrivacyLoss:
    """The composition of optimistic companions: the FFT's result closed on the optimistic
    side, with ratio floors from the composed slack (:func:`dpax._engine.optimistic.reclose`)."""
    slack = _optimistic.composed_slack([pl._need_slack() for pl in factors], counts)
    pl = PrivacyLoss._optimistic_from((_optimistic.reclose(arrays, slack, grid_step), slack), grid_step, shape)
    pl.description = description
    return pl


def _compose_companion(new: PrivacyLoss, losses: tuple, grid_step: float | str | None) -> PrivacyLoss:
    """``new`` (the composition of ``losses``) with its companion: the composition of the
    factors' companions, or the first factor's reason why it has none."""
    factors = [(item if isinstance(item, tuple) else (item, 1)) for item in losses]
    for i, (pl, _) in enumerate(factors):
        if pl._companion is None:
            return new._with_companion(reason=f"compose argument {i} has none: {pl._no_companion}")
    return new._with_companion(lambda: compose(*((pl.bounds(), c) for pl, c in factors), grid_step=grid_step))


class Refined(NamedTuple):
    """Result of :func:`refine`: the bracket reached, the grid that reached it, its pair."""

    value: Interval  #: what ``evaluate`` returned on the last grid
    grid_step: float  #: the grid step that met the accuracy
    privacy_loss: PrivacyLoss  #: the pair built on that grid
    history: tuple[tuple[float, float], ...]  #: (grid_step, largest width) of every round


#: Smallest grid step :func:`refine` tries.
REFINE_MIN_STEP = 1e-6


@float64
def refine(build: Callable[[float], PrivacyLoss], evaluate: Callable[[PrivacyLoss], Interval], accuracy: float, *,
           grid_step: float = 1e-2, max_rounds: int = 8) -> Refined:
    """Refine the grid until a reported quantity's certified bracket is ``accuracy`` narrow.

    ``build(grid_step)`` makes the pair (any mechanism with an optimistic companion) and
    ``evaluate(pl)`` returns an :class:`Interval` (a risk method with ``bounds=True``). The
    widths shrink about as grid_step^2, so each round picks the next step from the last
    width (0.7 (accuracy / width)^(1/2) times the step, between 1/30 and 1/2 of it, rounded
    down to one significant digit so that kernels are reused) instead of a fixed ladder.
    Stops when every width is at most ``accuracy``.

    Args:
        build: grid step -> :class:`PrivacyLoss`.
        evaluate: :class:`PrivacyLoss` -> :class:`Interval`.
        accuracy: the largest bracket width accepted, > 0 (absolute, on the quantity).
        grid_step: the first grid step tried, in [1e-6, 1].
        max_rounds: the most grids tried, >= 1.

    Returns:
        A :class:`Refined` (value, grid_step, privacy_loss, history).

    Raises:
        ValueError: the accuracy was not reached: the memory budget, the smallest step
            (1e-6) or ``max_rounds`` stopped the refinement; the message gives the width
            reached and at which grid step. Or ``build`` returned an optimistic companion,
            a pair on another grid step than the one it was given, or a batch shape other
            than its first round's (the message names ``build``).
        TypeError: ``build`` did not return a :class:`PrivacyLoss`, or ``evaluate`` an
            :class:`Interval`.

    >>> import dpax
    >>> r = dpax.refine(lambda h: dpax.gaussian(1.0, grid_step=h), lambda pl: pl.beta(0.1, bounds=True), 1e-6)
    >>> r.grid_step, r.value.width <= 1e-6, round(r.value.lower, 6)
    (0.002, True, 0.610856)
    """
    if not callable(build) or not callable(evaluate):
        raise TypeError("build and evaluate must be callables (grid_step -> PrivacyLoss, PrivacyLoss -> Interval)")
    acc = float(_v.scalar("accuracy", accuracy, low=0.0, low_open=True))
    step = _v.grid_step(grid_step)
    rounds = _v.one_integer("max_rounds", max_rounds)
    history: list[tuple[float, float]] = []
    first: PrivacyLoss | None = None
    for _ in range(rounds):
        try:
            pl = _built(build(step), step, first)
            first = first or pl
            value = evaluate(pl)
        except _grid.MemoryBudgetError as exc:
            raise ValueError(f"accuracy={acc:g} not reached: {_reached(history)}; grid_step={step:.3g} is over the "
                             f"memory budget ({exc})") from exc
        if not isinstance(value, Interval):
            raise TypeError(f"evaluate must return an Interval (call the risk method with bounds=True), got "
                            f"{type(value).__name__}")
        width = float(np.nanmax(np.asarray(value.width, np.float64)))
        history.append((step, width))
        if width <= acc:
            return Refined(value, step, pl, tuple(history))
        if step <= REFINE_MIN_STEP:
            break
        step = refine_step(step, width, acc)
    raise ValueError(f"accuracy={acc:g} not reached: {_reached(history)} (at most {rounds} rounds down to "
                     f"grid_step={REFINE_MIN_STEP:g})")


def _built(pl: Any, step: float, first: PrivacyLoss | None) -> PrivacyLoss:
    """What ``build(step)`` returned in :func:`refine`, checked: a PrivacyLoss (not an
    optimistic companion, whose bracket with itself would be 0 wide) on the grid step asked
    for, with the batch shape of the first round's."""
    if not isinstance(pl, PrivacyLoss):
        raise TypeError(f"build must return a dpax.PrivacyLoss (build(grid_step) -> PrivacyLoss), got "
                        f"{type(pl).__name__} from build(grid_step={step:.6g})")
    if pl.optimistic:
        raise ValueError(f"build returned an optimistic companion (from bounds()) at grid_step={step:.6g}; build "
                         "must return the mechanism's own pair, whose bounds() refine evaluates")
    if pl.grid_step != step:
        raise ValueError(f"build(grid_step={step!r}) returned a PrivacyLoss on grid_step={pl.grid_step!r}; build "
                         "must build the pair on the grid step it is given")
    if first is not None and pl.batch_shape != first.batch_shape:
        raise ValueError(f"build(grid_step={step:.6g}) returned a batch of shape {pl.batch_shape}, the first "
                         f"round's was {first.batch_shape}; build must return the same configurations on every grid")
    return pl


def refine_step(grid_step: float, width: float, accuracy: float) -> float:
    """The next grid step of :func:`refine` (and of ``calibrate_dpsgd(accuracy=...)``): the
    widths shrink about as grid_step^2, so 0.7 (accuracy / width)^(1/2) times ``grid_step``,
    between 1/30 and 1/2 of it, rounded down to one significant digit (so that kernels are
    reused), at least :data:`REFINE_MIN_STEP`.

    Args:
        grid_step: the step that gave ``width``.
        width: the largest bracket width seen there (> accuracy; 0: half the step).
        accuracy: the width wanted.

    Returns:
        The next grid step (a float).

    >>> refine_step(1e-3, 2.1e-4, 1e-4)
    0.0004
    """
    ratio = 0.7 * np.sqrt(accuracy / width) if width > 0 else 0.5
    step_next = grid_step * float(np.clip(ratio, 1 / 30, 0.5))
    exponent = int(np.floor(np.log10(step_next)))
    digit = int(np.floor(step_next / 10.0**exponent * (1 + 1e-9)))
    return max(float(f"{digit}e{exponent}"), REFINE_MIN_STEP)


def _reached(history: list[tuple[float, float]]) -> str:
    if not history:
        return "no grid evaluated"
    step, width = history[-1]
    return f"width {width:.3g} at grid_step={step:.3g}"
