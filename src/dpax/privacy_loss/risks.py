"""The risks of a PrivacyLoss, of the symmetrised (add/remove) trade-off curve, and with
``bounds=True`` their certified brackets (the safe side from the pair, the optimistic one
from its companion, :mod:`dpax.privacy_loss.companion`).

beta(alpha) is Kulynych et al. 2024, Algorithm 1; the advantage Algorithm 3 (Eq. 11);
delta(epsilon) and epsilon(delta) the privacy profile and its inverse. The kernels are in
:mod:`dpax._engine.analyse`; this module checks the queries, plans their memory and shapes
the answers.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import numpy as np
from numpy.typing import ArrayLike

from .._engine import analyse as _analyse
from .._engine import queries as _queries
from .._engine import validation as _v
from .._engine.grid import MemoryBudgetError
from .._engine.x64 import as_result, float64
from .checks import query_values
from .companion import optimistic_companion as _bounds
from .fields import Fields
from .interval import Interval, uncrossed
from .tails import booked_roundoff, tight_tails

#: Largest epsilon the delta kernel is given: e^eps is finite in float64 below 709.7827.
#: delta(epsilon) decreases in epsilon, so a larger epsilon is answered by this one: the
#: same number unless the grid has a point with 0 < Pr[X > x] < ~1e-308 (then an upper
#: bound, on the safe side), never the NaN of inf * 0.
DELTA_EPSILON_MAX = 709.78


def check_queries(pl: Fields, kernel: Callable[..., jax.Array], value: ArrayLike, argument: str, bounds: bool) -> None:
    """Refuse, before ``value`` is converted, a query array whose answers (both sides'
    with ``bounds``) and dpax's copy of it exceed the memory budget.

    Args:
        pl: the value queried.
        kernel: the risk kernel that will answer (:mod:`dpax._engine.analyse`), whose
            working memory is planned.
        value: the query as the user gave it; only an object with an integer ``shape`` (an
            array) is planned, anything else is left to the conversion that follows.
        argument: the query's name, quoted in the message.
        bounds: whether the companion's answers will be held too.

    Returns:
        None: the query fits (or is not an array yet).

    Raises:
        MemoryBudgetError: (:class:`dpax._engine.grid.MemoryBudgetError`, a ValueError) the
            answers alone, or one row's working memory, exceed the budget
            (``DPAX_MEMORY_LIMIT_GB``); the message names ``argument`` and the sizes.

    >>> import dpax, numpy as np
    >>> from dpax._engine import analyse
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> check_queries(pl, analyse.beta_kernel, np.zeros(10), "alpha", False) is None
    True
    >>> check_queries(pl, analyse.beta_kernel, np.broadcast_to(0.1, (10**10,)), "alpha", False)
    Traceback (most recent call last):
    ...
    dpax._engine.grid.MemoryBudgetError: beta: alpha of 10,000,000,000 value(s) on 1 row(s) ...
    """
    shape = getattr(value, "shape", None)
    if not isinstance(shape, tuple) or not all(isinstance(d, (int, np.integer)) for d in shape):
        return  # not an array yet: converting it is the caller's
    m = int(np.prod(shape, dtype=np.int64))
    if m:
        rows = pl._rows_count()
        _queries.query_plan(kernel, pl.pair, rows, m, argument, held=m * 8 + (rows * m * 8 if bounds else 0))


def answers(pl: Fields, kernel: Callable[..., jax.Array], values: np.ndarray, argument: str, shape: tuple[int, ...],
            held: float = 0) -> float | np.ndarray:
    """``kernel``'s answers at every one of ``values`` (validated, float64) for every row,
    shaped ``batch_shape + shape``; ``held``: bytes the caller keeps meanwhile.

    Args:
        pl: the value queried (an optimistic companion gets the companion's kernel,
            :func:`dpax._engine.analyse.for_companion`).
        kernel: the risk kernel (:mod:`dpax._engine.analyse`), called as
            ``kernel(pair, queries)`` with the queries one row per configuration.
        values: the checked queries, float64, non-empty.
        argument: the query's name, quoted where the memory budget refuses it.
        shape: the shape of the answers per configuration (``values.size`` entries).
        held: bytes the caller holds meanwhile (default 0), counted against the budget.

    Returns:
        The answers as NumPy float64: a float where ``batch_shape + shape`` is ``()``, else
        an array of that shape, on the side of the truth the kernel computes (``pl``'s
        side: safe for a dominating pair, optimistic for a companion).

    Raises:
        MemoryBudgetError: (a ValueError) one call's memory exceeds the budget.

    >>> import dpax, jax, numpy as np
    >>> from dpax._engine import analyse
    >>> pl = dpax.gaussian([1.0, 2.0], grid_step=1e-2)
    >>> with jax.enable_x64(True):
    ...     out = answers(pl, analyse.delta_kernel, np.array([1.0]), "epsilon", (1,))
    >>> out.round(4)
    array([[0.1269],
           [0.0068]])
    """
    rows = np.broadcast_to(values.reshape(-1), (pl._rows_count(), values.size))
    if pl.optimistic:  # a companion bounds P-masses that underflow (analyse.UNDERFLOW)
        kernel = _analyse.for_companion(kernel)
    return as_result(_queries.per_query(kernel, pl.pair, rows, argument, held=values.nbytes + held),
                     pl.batch_shape + shape)


def query(pl: Fields, kernel: Callable[..., jax.Array], values: np.ndarray, argument: str, shape: tuple[int, ...],
          bounds: bool) -> float | np.ndarray | Interval:
    """:func:`answers` of ``pl``, and with ``bounds`` the :class:`Interval` with the
    companion's (computed while this pair's are held). An empty query has empty
    answers, ``batch_shape + shape``, on both sides. A composition's epsilon or delta at a
    delta below :data:`FAR_TAIL_DELTA` and within :data:`FAR_TAIL_FACTOR` times its booked
    round-off is read from its tightened far tails (:func:`_far_tails`).

    Args:
        pl: the value queried.
        kernel: the risk kernel (its name tells the bracket's sides apart: for
            ``beta_kernel`` the safe side is the lower one, else the upper one).
        values: the checked queries, float64 (may be empty).
        argument: the query's name, quoted where the memory budget refuses it.
        shape: the shape of the answers per configuration.
        bounds: also answer with the optimistic companion.

    Returns:
        :func:`answers` (a float or an array of shape ``batch_shape + shape``), or with
        ``bounds`` an :class:`Interval` of it and the companion's answers, kept a
        certificate by :func:`dpax.privacy_loss.interval.uncrossed`.

    Raises:
        ValueError: with ``bounds``, ``pl`` has no optimistic companion; a query beyond the
            memory budget (MemoryBudgetError).

    >>> import dpax, jax, numpy as np
    >>> from dpax._engine import analyse
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> with jax.enable_x64(True):
    ...     b = query(pl, analyse.delta_kernel, np.array([1.0]), "epsilon", (), True)
    >>> round(b.safe, 4), b.optimistic <= b.safe
    (0.1269, True)
    """
    if values.size == 0:
        empty = np.zeros(pl.batch_shape + shape)
        return Interval(empty, empty.copy()) if bounds else empty
    out = _far_tails(pl, kernel, values, argument, shape, answers(pl, kernel, values, argument, shape))
    if not bounds:
        return out
    other = answers(_bounds(pl), kernel, values, argument, shape, held=8 * np.size(out))
    if kernel.__name__ == "beta_kernel":  # beta: the safe side is the lower one; 1 - alpha bounds every curve
        return uncrossed(out, other, False, 1.0 - values.reshape(shape), "beta")
    return uncrossed(out, other, True, 0.0, kernel.__name__.replace("_kernel", ""))


#: An epsilon or delta is read again from the composition with its far tails tightened
#: (:func:`dpax.privacy_loss.tails.tight_tails`) where its delta is below this many times the
#: round-off the composition booked (:func:`dpax.privacy_loss.tails.booked_roundoff`), i.e.
#: where the booking could move it by more than 0.1% relatively ...
FAR_TAIL_FACTOR = 1e3
#: ... and below this: the booking is read (a pass over the pair, ~5% of an epsilon query on a
#: batch) only for such deltas; a longer composition's booking can exceed 1e-9 (~10^5 steps
#: and more), so its deltas from here to 1e3 times that stay pessimistic by up to 0.1%.
FAR_TAIL_DELTA = 1e-6


def _far_tails(pl: Fields, kernel: Callable[..., jax.Array], values: np.ndarray, argument: str,
               shape: tuple[int, ...], out: float | np.ndarray) -> float | np.ndarray:
    """``out`` (a composition's epsilon or delta answers, ``batch_shape + shape``) with the
    answers whose delta is below :data:`FAR_TAIL_DELTA` and within :data:`FAR_TAIL_FACTOR`
    times the booked round-off read again from the composition with its far tails
    tightened, the smaller kept (both are on the safe side). Other kernels, and values
    without a composition's recipe, as they are."""
    name = kernel.__name__
    if pl._tails is None or name not in ("epsilon_kernel", "delta_kernel"):
        return out
    rows = pl._rows_count()
    found = np.asarray(out, np.float64).reshape(rows, -1)
    deltas = np.broadcast_to(values.reshape(1, -1), found.shape) if name == "epsilon_kernel" else found
    if not np.any(deltas < FAR_TAIL_DELTA):
        return out
    near = (deltas < FAR_TAIL_DELTA) & (deltas < FAR_TAIL_FACTOR * booked_roundoff(pl.pair)[:, None])
    if not np.any(near):
        return out
    try:
        tight = tight_tails(pl)
    except MemoryBudgetError:  # the tilted laws do not fit: the plain pair's answers stand
        return out
    again = np.asarray(answers(tight, kernel, values, argument, shape), np.float64).reshape(rows, -1)
    return as_result(np.where(near, np.minimum(found, again), found), pl.batch_shape + shape)


@float64
def beta(pl: Fields, alpha: ArrayLike, bounds: bool = False) -> float | np.ndarray | Interval:
    """FNR of the most powerful attack at FPR ``alpha`` (Algorithm 1, symmetrised), never
    above the true curve; see :meth:`dpax.PrivacyLoss.beta`.

    Args:
        pl: the value queried.
        alpha: false-positive rates in [0, 1], any shape (an empty array gives empty answers).
        bounds: also evaluate the optimistic companion and return an :class:`Interval`
            (default False).

    Returns:
        The symmetrised trade-off curve at ``alpha``, never above the true curve: a float
        for a single mechanism and a scalar ``alpha``, else an array of shape
        ``batch_shape + alpha.shape``; with ``bounds`` an :class:`Interval` of two such
        (safe = the lower end, the companion's on or above the truth).

    Raises:
        ValueError: ``alpha`` outside [0, 1] or NaN; ``pl`` has no companion (with
            ``bounds``); the query beyond the memory budget (MemoryBudgetError).
        TypeError: ``alpha`` not real (a boolean, a string, complex), or ``bounds`` not a bool.

    >>> import dpax
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> round(beta(pl, 0.1), 4), beta(pl, [0.01, 0.1]).round(4)
    (0.6109, array([0.9076, 0.6109]))
    >>> b = beta(pl, 0.1, bounds=True)
    >>> b.safe <= b.optimistic, b.width < 1e-4
    (True, True)
    """
    want = _v.flag("bounds", bounds)
    check_queries(pl, _analyse.beta_kernel, alpha, "alpha", want)
    a = query_values(_v.probabilities, "alpha", alpha)
    return query(pl, _beta_kernel_for(a), a, "alpha", a.shape, want)


def _beta_kernel_for(alpha: np.ndarray) -> Callable[..., jax.Array]:
    """The beta kernel for the FPRs ``alpha``: with the complement tables where one is above
    1/2 (:func:`dpax._engine.analyse.needs_complements`), so that beta near alpha = 1 keeps
    its relative precision and beta(1) is exactly 0."""
    return _analyse.near_one(_analyse.beta_kernel) if _analyse.needs_complements(alpha) else _analyse.beta_kernel


@float64
def advantage(pl: Fields, bounds: bool = False) -> float | np.ndarray | Interval:
    """Largest TPR - FPR of any membership-inference attack (Algorithm 3, Eq. 11), never
    below the truth; see :meth:`dpax.PrivacyLoss.advantage`.

    Args:
        pl: the value queried.
        bounds: also evaluate the optimistic companion and return an :class:`Interval`
            (default False).

    Returns:
        The advantage in [0, 1], never below the truth: a float for a single mechanism, an
        array of shape ``batch_shape`` for a batch; with ``bounds`` an :class:`Interval`
        (safe = the upper end, the companion's on or below the truth).

    Raises:
        ValueError: ``pl`` has no companion (with ``bounds``).
        TypeError: ``bounds`` not a bool.

    >>> import dpax
    >>> round(advantage(dpax.gaussian(1.0, grid_step=1e-2)), 4)   # 2 Phi(1 / 2) - 1 = 0.3829
    0.3829
    >>> advantage(dpax.gaussian([1.0, 2.0], grid_step=1e-2)).round(4)   # mu = 1 / noise: 1, 0.5
    array([0.3829, 0.1974])
    """
    want = _v.flag("bounds", bounds)
    out = as_result(_analyse.advantage_kernel(pl.pair, pl.optimistic), pl.batch_shape)
    if not want:
        return out
    other = as_result(_analyse.advantage_kernel(_bounds(pl).pair, True), pl.batch_shape)
    return uncrossed(out, other, True, 0.0, "advantage")


@float64
def delta(pl: Fields, epsilon: ArrayLike, bounds: bool = False) -> float | np.ndarray | Interval:
    """delta(epsilon) of the symmetrised curve (the privacy profile), never below the
    truth; an epsilon above :data:`DELTA_EPSILON_MAX` is answered by it. See
    :meth:`dpax.PrivacyLoss.delta`.

    Args:
        pl: the value queried.
        epsilon: finite real numbers (negative allowed), any shape (an empty array gives
            empty answers).
        bounds: also evaluate the optimistic companion and return an :class:`Interval`
            (default False).

    Returns:
        The smallest delta such that the mechanism is (epsilon, delta)-DP, in [0, 1], never
        below the truth: a float for a single mechanism and a scalar ``epsilon``, else an
        array of shape ``batch_shape + epsilon.shape``; with ``bounds`` an :class:`Interval`
        (safe = the upper end).

    Raises:
        ValueError: ``epsilon`` NaN or infinite; ``pl`` has no companion (with ``bounds``);
            the query beyond the memory budget (MemoryBudgetError).
        TypeError: ``epsilon`` not real, or ``bounds`` not a bool.

    >>> import dpax
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> round(delta(pl, 1.0), 4), delta(pl, [0.0, 0.5, 1.0]).round(4)
    (0.1269, array([0.3829, 0.2384, 0.1269]))
    """
    want = _v.flag("bounds", bounds)
    check_queries(pl, _analyse.delta_kernel, epsilon, "epsilon", want)
    e = query_values(_v.real_array, "epsilon", epsilon)
    shape, e = e.shape, np.minimum(e, DELTA_EPSILON_MAX)  # the validated copy is dropped
    return query(pl, _analyse.delta_kernel, e, "epsilon", shape, want)


@float64
def epsilon(pl: Fields, delta: ArrayLike, bounds: bool = False) -> float | np.ndarray | Interval:
    """Smallest epsilon >= 0 such that the mechanism is (epsilon, delta)-DP, never below
    the truth (inf where the pair certifies none); see :meth:`dpax.PrivacyLoss.epsilon`.

    Args:
        pl: the value queried.
        delta: probabilities in [0, 1], any shape (an empty array gives empty answers).
        bounds: also evaluate the optimistic companion and return an :class:`Interval`
            (default False).

    Returns:
        epsilon >= 0, never below the truth: a float for a single mechanism and a scalar
        ``delta``, else an array of shape ``batch_shape + delta.shape``; ``inf`` where the
        pair certifies no finite epsilon (``delta`` below its +inf atom); with ``bounds`` an
        :class:`Interval` (safe = the upper end, the companion's finite there).

    Raises:
        ValueError: ``delta`` outside [0, 1] or NaN; ``pl`` has no companion (with
            ``bounds``); the query beyond the memory budget (MemoryBudgetError).
        TypeError: ``delta`` not real, or ``bounds`` not a bool.

    >>> import dpax
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> round(epsilon(pl, 1e-5), 4), epsilon(pl, [1.0, 0.0])
    (4.3772, array([ 0., inf]))
    """
    want = _v.flag("bounds", bounds)
    check_queries(pl, _analyse.epsilon_kernel, delta, "delta", want)
    d = query_values(_v.probabilities, "delta", delta)
    return query(pl, _analyse.epsilon_kernel, d, "delta", d.shape, want)


@float64
def tradeoff_points(pl: Fields, symmetric: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints ``(alpha, beta)`` of f = T(P, Q) (alpha descending), or with
    ``symmetric`` of the symmetrised curve (alpha ascending); made exactly monotone by
    moving out-of-order neighbours an ulp down. See :meth:`dpax.PrivacyLoss.tradeoff_points`.

    Args:
        pl: the value whose curve is wanted.
        symmetric: return the symmetrised curve's breakpoints instead of f's (default False).

    Returns:
        ``(alpha, beta)``, two float64 arrays in [0, 1] shaped ``batch_shape +
        (support_length + 1,)``, or ``batch_shape + (2 support_length + 2,)`` (some
        repeated) with ``symmetric``. For a dominating pair the points lie on or below the
        true curve (moved left or down where rounded), for a companion on or above it.

    Raises:
        TypeError: ``symmetric`` not a bool.
        ValueError: the tables beyond the memory budget (MemoryBudgetError).

    >>> import dpax
    >>> alpha, beta = tradeoff_points(dpax.gaussian(1.0, grid_step=1e-2))
    >>> alpha.shape, round(float(alpha[0]), 6), float(beta[0]), float(alpha[-1]), round(float(beta[-1]), 6)
    ((2049,), 1.0, 0.0, 0.0, 1.0)
    """
    symmetric = _v.flag("symmetric", symmetric)
    table = pl._rows_count() * (pl.support_length + 1) * 8  # bytes of one (rows, n + 1) array
    if not symmetric:  # beside the four tables: the two arrays returned
        cx, cy, nx, ny = (np.asarray(t) for t in _analyse.tradeoff_tables(pl.pair, held=2 * table, complement=True))
        shape = pl.batch_shape + (pl.support_length + 1,)
        # a point (alpha, beta) moved left or down stays below a decreasing curve: the safe side
        # rounds both down, an optimistic companion's both up (also by the masses that may
        # have underflowed, analyse.UNDERFLOW, as its beta kernel reads them)
        if pl.optimistic:
            slack = pl.support_length * _analyse.UNDERFLOW
            cx, cy = np.minimum(cx + slack, 1.0), np.minimum(cy + slack, 1.0)
        alpha = np.minimum.accumulate(near_one(cx, nx, not pl.optimistic), -1)
        beta = np.flip(np.minimum.accumulate(np.flip(near_one(cy, ny, not pl.optimistic), -1), -1), -1)
        return alpha.reshape(shape), beta.reshape(shape)
    # held beside each step: f's alphas and the reversed pair, then the sorted alphas of
    # both directions and the running minimum of the answers to come
    cx = _analyse.tradeoff_tables(pl.pair)[0]
    rcx = _analyse.tradeoff_tables(pl.pair.reversed(), held=3 * table)[0]
    alpha = np.concatenate([np.asarray(cx), np.asarray(rcx)], -1)
    del cx, rcx
    alpha.sort(-1)
    np.clip(alpha, 0.0, 1.0, out=alpha)  # a table's total may round above 1; beta is evaluated there
    kernel = _beta_kernel_for(alpha)
    if pl.optimistic:
        kernel = _analyse.for_companion(kernel)
    beta = _queries.per_query(kernel, pl.pair, alpha, "alpha", held=4 * table)
    beta = np.minimum.accumulate(np.asarray(beta), -1)
    shape = pl.batch_shape + (alpha.shape[-1],)
    return alpha.reshape(shape), beta.reshape(shape)


def near_one(p: np.ndarray, complement: np.ndarray, down: bool) -> np.ndarray:
    """Probabilities ``p`` (a table of sums) in [0, 1], those above 1/2 taken as 1 -
    ``complement`` (its sum from the other end, precise there) and rounded ``down`` or up. A
    table near 1 holds only ~1e-16 absolute precision, and its total may round above 1
    (gaussian(4.0, grid_step=1e-2)'s first breakpoint was (1 + 2.2e-16, 0)).

    Args:
        p: the probabilities as summed (any shape).
        complement: ``1 - p`` summed from the other end, the shape of ``p``.
        down: round ``1 - complement`` down (a dominating pair's side) or up (a companion's).

    Returns:
        A float64 array of ``p``'s shape in [0, 1]: ``p`` where it is at most 1/2, else
        ``1 - complement`` rounded to the side ``down`` asks.

    >>> near_one(np.array([1.0 + 2**-52, 0.25]), np.array([0.0, 0.75]), True)
    array([1.  , 0.25])
    """
    with np.errstate(invalid="ignore"):
        r = 1.0 - complement  # rounded; 1 - r is exact for r in [1/2, 1]
        if down:
            r = np.where(1.0 - r < complement, np.nextafter(r, -1.0), r)
        else:
            r = np.where(1.0 - r > complement, np.nextafter(r, 2.0), r)
    return np.clip(np.where(p > 0.5, r, p), 0.0, 1.0)
