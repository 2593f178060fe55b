"""The PrivacyLoss value: a batch of discrete PLRV pairs on one uniform grid, and its operations.

:class:`PrivacyLoss` adds to its fields (:mod:`dpax.privacy_loss.fields`) what a user does
with a pair; each operation is one call into the module of its job: risks
(:mod:`~dpax.privacy_loss.risks`), the optimistic companion
(:mod:`~dpax.privacy_loss.companion`), rows (:mod:`~dpax.privacy_loss.shaping`), grids
(:mod:`~dpax.privacy_loss.regridding`) and composition (:mod:`~dpax.privacy_loss.composing`).

>>> import dpax
>>> pl = dpax.gaussian(1.0, grid_step=1e-2)
>>> round(pl.advantage(), 4), round(pl.epsilon(1e-5), 4)
(0.3829, 4.3772)
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from numpy.typing import ArrayLike

from .._engine import pld as _pld
from .._engine.x64 import float64
from . import companion as _companion
from . import composing as _composing
from . import regridding as _regridding
from . import risks as _risks
from . import shaping as _shaping
from .fields import Fields
from .interval import Interval


@jax.tree_util.register_pytree_node_class
class PrivacyLoss(Fields):
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

    def optimistic_companion(self) -> PrivacyLoss:
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
        >>> round(pl.advantage(), 4), round(pl.optimistic_companion().advantage(), 4)
        (0.3829, 0.3829)
        """
        return _companion.optimistic_companion(self)

    def bounds(self) -> PrivacyLoss:
        """Deprecated name of :meth:`optimistic_companion` (warns; removed in the next release)."""
        return _companion.deprecated_bounds(self)

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
        return _shaping.broadcast_to(self, shape)

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
        return _risks.beta(self, alpha, bounds)

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
        return _risks.advantage(self, bounds)

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
        return _risks.delta(self, epsilon, bounds)

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
        return _risks.epsilon(self, delta, bounds)

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
        >>> alpha, beta = dpax.gaussian(1.0, grid_step=1e-2).tradeoff_points(symmetric=True)
        >>> alpha.shape, round(float(alpha[0]), 6), round(float(beta[0]), 6)
        ((4098,), 0.0, 1.0)
        """
        return _risks.tradeoff_points(self, symmetric)

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
        return _shaping.select(self, key)

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
        plds = _pld.to_plds(self.pair, self.grid_step)
        if not self.batch_shape:
            return plds[0]
        arr = np.empty(len(plds), dtype=object)
        arr[:] = plds
        return arr.reshape(self.batch_shape)

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
        return _regridding.regrid(self, grid_step)

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
        >>> round(pl.compose((pl, 3)).advantage(), 4)   # four steps: mu = 2, advantage 2 Phi(1) - 1
        0.6827
        """
        return _composing.compose_with(self, other, grid_step)

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
        return _composing.self_compose(self, num_steps)


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
    return _composing.compose(*losses, grid_step=grid_step)
