"""Tight mu-GDP and its regret for a batch of privacy losses (Gomez et al. 2025, "(epsilon,
delta) considered harmful: report Gaussian DP"): mu from the breakpoints of the trade-off curve
(Eq. 11 / Appendix B, Eq. 29) and the regret Delta(f, f_mu) (Eq. 13 / Theorem B.2), both for
the symmetrised curve h that dpax reports (convex hull of min(f, f^-1), see
:mod:`dpax._engine.analyse`), and their certified brackets. The compiled kernels, and the
geometry behind them, are in :mod:`dpax._engine.mu_regret`; here they run on the rows of a
:class:`~dpax.PrivacyLoss`, in chunks that fit the memory budget.
"""

from __future__ import annotations

from collections.abc import Callable
from statistics import NormalDist
from typing import Any

import jax.numpy as jnp
import numpy as np
from numpy.typing import ArrayLike

from .._engine import batching as _batching
from .._engine import grid as _grid
from .._engine import pair as _pair
from .._engine import validation as _v
from .._engine.analyse import UNDERFLOW
from .._engine.mu_regret import MuRegret, kernel_length, mu_regret_kernel, regret_upper_kernel
from .._engine.x64 import as_result, float64
from ..privacy_loss import Interval, PrivacyLoss
from ..privacy_loss.fields import gdp_bound_rows
from ..privacy_loss.interval import uncrossed
from ..privacy_loss.tails import booked_roundoff, tight_tails

__all__ = ["DEFAULT_TAIL", "MuRegret", "gdp_bound", "mu_and_regret", "mu_regret_rows", "regret_bracket",
           "regret_upper_rows", "regret_witness"]

#: Default tail: mu is the tightest GDP parameter for every attack whose FPR and FNR lie in
#: [tail, 1 - tail] (the grid's truncated mass, kept pessimistically at +-inf, is not GDP for any
#: finite mu). The paper's and gdpnum's value.
DEFAULT_TAIL = 1e-10


def check_loss(pl: object, name: str = "pl") -> None:
    """Refuse anything but a :class:`~dpax.PrivacyLoss` with a TypeError naming the argument.

    Args:
        pl: the value to check.
        name: the argument's name in the message (default ``"pl"``).

    Returns:
        None; ``pl`` is a PrivacyLoss.

    Raises:
        TypeError: ``pl`` is not a PrivacyLoss.

    >>> import dpax
    >>> check_loss(dpax.gaussian(1.0, grid_step=1e-2))
    >>> check_loss(1.0, "loss")
    Traceback (most recent call last):
    ...
    TypeError: loss must be a dpax.PrivacyLoss, got float
    """
    if not isinstance(pl, PrivacyLoss):
        raise TypeError(f"{name} must be a dpax.PrivacyLoss, got {type(pl).__name__}")


def _by_rows(pl: PrivacyLoss, at_mu: ArrayLike | None,
             call: Callable[[_pair.Pair, np.ndarray | None], Any], outputs: int) -> Any:
    """``outputs`` per-row results of ``call(padded chunk of pl's pair, its rows' at_mu or
    None)``, shaped like the batch.

    Rows are independent: they run in chunks that fit the memory budget
    (:func:`dpax._engine.grid.rows_per_chunk`, checked before any kernel runs), so peak
    memory is the results plus one chunk's working arrays, and the answers do not depend
    on the chunking.
    """
    check_loss(pl)
    pair = pl.pair
    rows, n = pair.pmf_x.shape
    length = kernel_length(n)
    chunk = _batching.chunk_size(_grid.rows_per_chunk(
        rows, length * _grid.BYTES_PER_POINT, 0, "mu_and_regret", f"{rows} row(s) of {length} grid points"))
    rows_mu = None if at_mu is None else np.asarray(at_mu, np.float64)
    if rows_mu is not None and rows_mu.size != rows:
        raise ValueError(f"at_mu must hold one mu per row of the PrivacyLoss ({rows}), got {rows_mu.size} "
                         f"(shape {rows_mu.shape})")
    rows_mu = None if rows_mu is None else rows_mu.reshape(rows)
    out = np.empty((outputs, rows))
    for index, real in _batching.row_chunks(rows, chunk):
        part = _pair.padded(pair.take(jnp.asarray(index)) if chunk < rows else pair, _batching.group_size(chunk),
                            length)
        # at_mu padded like the rows: the chunk's last one repeated
        m = None if rows_mu is None else np.pad(rows_mu[index], (0, part.pmf_x.shape[0] - index.size), mode="edge")
        values = call(part, m)
        out[:, index[:real]] = [np.asarray(v)[:real] for v in values]
    return tuple(as_result(v, pl.batch_shape) for v in out)


@float64
def mu_regret_rows(pl: PrivacyLoss, tail: float, at_mu: ArrayLike | None = None
                   ) -> tuple[float | np.ndarray, float | np.ndarray, float | np.ndarray]:
    """(mu, regret, witness) of every row of ``pl``, shaped like its batch; with ``at_mu``
    (one value per row), the regret against f_m at those m (:func:`_by_rows`).

    Where the mechanism knows a closed-form GDP bound for every attack (:func:`gdp_bound`), mu
    is the smaller of the grid's and that bound, for every ``tail``, and the regret is taken
    against it: at ``tail`` = 0 (every attack) the grid's curve cannot certify the corners of
    the square (its truncated tails are kept as infinite atoms, below every f_mu), and at a
    tail of 1e-300 its corners are its far tails' round-off (a Gaussian's mu was 29 or inf
    for a truth of 1).

    Args:
        pl: the privacy loss, one configuration or a batch.
        tail: the attacks left out of mu: those with an FPR or FNR outside
            [tail, 1 - tail]; one number in [0, 0.5) (:func:`mu_and_regret`).
        at_mu: ``None`` (default): each row's own mu; else one mu >= 0 per row (``pl``'s
            batch size, any shape), against which the regret and witness are taken.

    Returns:
        ``(mu, regret, witness)``: floats for one configuration, else arrays of ``pl``'s
        batch shape. mu is never below the mechanism's (see :func:`mu_and_regret`); with
        ``at_mu`` the first entry is the curve's own mu. The regret is exact where the
        symmetrised curve is convex and a lower bound otherwise; the witness is the FPR
        where it is attained (:func:`regret_witness`).

    Raises:
        TypeError: ``pl`` is not a PrivacyLoss, or ``tail`` not real.
        ValueError: ``tail`` outside [0, 0.5), NaN or more than one number; ``at_mu`` not
            one value per row; a row too large for the memory budget
            (``MemoryBudgetError``, a ValueError).

    >>> import dpax
    >>> mu, regret, witness = mu_regret_rows(dpax.gaussian(2.0, grid_step=1e-2), 1e-10)
    >>> round(mu, 3), regret < 1e-3, 0.0 <= witness <= 0.5
    (0.5, True, True)
    """
    check_loss(pl)
    t = np.float64(_v.scalar("tail", tail, low=0.0, high=0.5, high_open=True))  # one tail for the batch
    own = np.full(int(np.prod(pl.batch_shape, dtype=np.int64)), np.nan)  # NaN: the curve's own mu
    # a companion's breakpoints read as upper bounds despite underflow (mu_regret_kernel's slack)
    slack = lambda part: np.float64(part.pmf_x.shape[-1] * UNDERFLOW if pl.optimistic else 0.0)
    on = lambda loss, m_rows: _by_rows(loss, m_rows, lambda part, m: mu_regret_kernel(part, t, m, slack(part)), 3)
    run = lambda m_rows: _tighter(pl, t, m_rows, on)
    out = run(own if at_mu is None else at_mu)
    bound = gdp_bound(pl)  # for every attack, so for those of any box
    if bound is None:
        return out
    mu = np.minimum(np.asarray(out[0], np.float64), bound)
    if at_mu is None and np.any(mu < np.asarray(out[0])):  # the regret against the reported mu
        out = run(np.reshape(mu, -1))
    return (as_result(mu, pl.batch_shape),) + tuple(out[1:])


#: mu is computed again on the pair with its far tails tightened
#: (:func:`dpax.privacy_loss.tails.tight_tails`) for a batch where the FFT round-off booked on
#: the safe side could move some row's mu by more than this, relatively (:func:`_booking_moves_mu`).
TIGHTEN_ABOVE = 1e-4


def _booking_moves_mu(pl: PrivacyLoss, tail: np.float64, mu: Any) -> np.ndarray:
    """Per row (flat), whether the FFT round-off booked on ``pl``'s points could move its mu
    by more than :data:`TIGHTEN_ABOVE` relatively.

    A composition books ~eta on every point of its window (:mod:`dpax._engine.roundoff`),
    read here as the mass next to the window's far ends (where the law itself has long
    vanished, what is left is the booking), so the curve's probabilities move by at most
    B = (eta_x + eta_y) x the points. mu is set where an FPR or FNR is near ``tail``
    (Eq. 29's terms are largest at the box's corner for the mechanisms whose tails are heavier
    than a Gaussian's), where the other coordinate's probit is z = Phi^-1(1 - tail) - mu, so
    a term moves by about 2 B / phi(z). The test only decides whether the tighter pair is
    built: both pairs' mu are on the safe side."""
    budget = booked_roundoff(pl.pair)
    z = np.maximum(-NormalDist().inv_cdf(float(tail)) - np.asarray(mu, np.float64).reshape(-1), 0.0)
    density = np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        moves = 2.0 * budget / density > TIGHTEN_ABOVE * np.asarray(mu, np.float64).reshape(-1)
    return moves & np.isfinite(np.asarray(mu, np.float64).reshape(-1))


def _tighter(pl: PrivacyLoss, tail: np.float64, at_mu: Any, on: Callable[[PrivacyLoss, Any], Any]) -> Any:
    """``on(pl, at_mu)`` ((mu, regret, witness) shaped like the batch), and for the rows whose
    mu the booked round-off could move (:func:`_booking_moves_mu`), the same on ``pl`` with
    its far tails tightened where that gives a smaller mu (both are on the safe side)."""
    out = on(pl, at_mu)
    if pl._tails is None or tail <= 0.0 or not np.any(moves := _booking_moves_mu(pl, tail, out[0])):
        return out
    try:
        tight = tight_tails(pl)
    except _grid.MemoryBudgetError:  # the tilted laws do not fit: the plain pair's answers stand
        return out
    better = on(tight, at_mu)
    flat = lambda v: np.asarray(v, np.float64).reshape(-1)
    take = moves & (flat(better[0]) <= flat(out[0]))
    return tuple(as_result(np.where(take, flat(b), flat(a)), pl.batch_shape) for a, b in zip(out, better))


def gdp_bound(pl: PrivacyLoss) -> np.ndarray | None:
    """The mechanism's own all-attack GDP bound per configuration (an array shaped like the
    batch), or None: a mu such that the mechanism itself (its exact laws, not the grid) is
    mu-GDP for every attack, recorded by the mechanisms that have one in closed form and
    carried through indexing, regridding and composition (GDP composes exactly,
    mu = sqrt(sum of mu_i^2)): ``gaussian`` (sensitivity / noise, its exact mu),
    ``subsampled_gaussian`` (1 / noise: sampling mixes Q with P, a post-processing; 2 / noise
    under substitution), ``dpsgd`` (sqrt(num_steps) / noise), ``mixture_of_gaussians``
    (the largest sensitivity over the noise). For the subsampled ones it is the exact
    all-attack mu too: as the FPR goes to 0 the curve's Eq. 29 term tends to it. None for a
    pair from arrays, a profile, atoms, approximate_dp or dp-accounting, and for any
    composition with one of those.

    Args:
        pl: the privacy loss, one configuration or a batch.

    Returns:
        A float64 array of ``pl``'s batch shape (0-d for one configuration, not a float),
        each entry a mu the mechanism is GDP with for every attack (a valid guarantee, exact
        for the mechanisms named above; ``inf`` for zero noise), or None where ``pl`` records
        none.

    >>> import dpax
    >>> gdp_bound(dpax.gaussian([1.0, 2.0], grid_step=1e-2))
    array([1. , 0.5])
    >>> gdp_bound(dpax.gaussian(1.0, grid_step=1e-2).self_compose(4))
    array(2.)
    >>> e = 2.718281828459045  # randomized response at epsilon 1, a pair from arrays
    >>> rr = dpax.PrivacyLoss([e / (1 + e), 0.0, 1 / (1 + e)], [1 / (1 + e), 0.0, e / (1 + e)], offset=-1,
    ...                       inf_mass_y=0.0, neginf_mass_x=0.0, grid_step=1.0)
    >>> gdp_bound(rr) is None
    True
    """
    bound = gdp_bound_rows(pl)
    return None if bound is None else np.asarray(bound, np.float64).reshape(pl.batch_shape)


@float64
def regret_upper_rows(pl: PrivacyLoss, at_mu: ArrayLike) -> float | np.ndarray:
    """:func:`dpax._engine.mu_regret.regret_upper_kernel` of every row of ``pl`` at ``at_mu`` (one per row).

    The upper end of :func:`regret_bracket`'s regret, read on the optimistic companion there.

    Args:
        pl: the privacy loss, one configuration or a batch.
        at_mu: one mu >= 0 per row of ``pl`` (its batch size, any shape).

    Returns:
        An upper bound on Delta(h, f_m) of each row (h ``pl``'s symmetrised curve, m its
        ``at_mu``): a float for one configuration, else an array of ``pl``'s batch shape.

    Raises:
        TypeError: ``pl`` is not a PrivacyLoss.
        ValueError: ``at_mu`` not one value per row (NumPy's reshape message); a row too
            large for the memory budget (``MemoryBudgetError``, a ValueError).

    >>> import dpax
    >>> lap = dpax.laplace(2.0, grid_step=1e-2)
    >>> mu, regret = dpax.gdp.mu_and_regret(lap)
    >>> f"{regret_upper_rows(lap, mu):.3g}", f"{regret:.3g}"   # tight: the Laplace curve is symmetric
    ('0.0272', '0.0272')
    """
    return _by_rows(pl, at_mu, lambda part, m: regret_upper_kernel(part, m), 1)[0]


# Returns tuple[float | np.ndarray, float | np.ndarray] | tuple[Interval, Interval]; annotated
# tuple[Any, Any]: callers that know their loss is one configuration and bounds=False (gdpnum's
# converter: tuple[float, float]) would need a cast first under the precise type.
def mu_and_regret(pl: PrivacyLoss, tail: float = DEFAULT_TAIL, bounds: bool = False) -> tuple[Any, Any]:
    """(mu, regret) of the symmetrised trade-off curve h of ``pl`` (floats, or arrays shaped
    like its batch); with ``bounds=True``, two :class:`dpax.Interval` brackets
    (:func:`regret_bracket`).

    mu (Eq. 11 / Appendix B Eq. 29): the smallest mu with f_mu(alpha) <= h(alpha) at every
    point of the curve whose FPR alpha and FNR beta lie in [tail, 1 - tail] (default 1e-10,
    as in the paper's code, gdpnum): it bounds every attack except those with FPR, TPR,
    FNR or TNR below ``tail``; exact for the discrete curve, which lies below the true one, so
    mu is never below the mechanism's. (Probabilities near 1 are read from complementary
    sums, so mu is the discrete curve's up to float64 rounding.) The box's attacks certify
    no mu above 2 Phi^-1(1 - tail) (12.72 at 1e-10): a curve that passes under the box's
    corner (tail, tail), such as ``gaussian(0.07)``'s (mu 14.3), gets exactly that value,
    the attack at the corner being achievable; a smaller ``tail`` or ``tail=0`` reaches
    further. ``tail=0`` asks for every attack. The grid's truncated tails (its mass at
    +-inf, 1e-25 for the Gaussian, or the few ulps its rounding leaves) lie below every
    f_mu, so the grid alone certifies no finite mu there; a mechanism with a closed-form GDP bound for every attack
    (:func:`gdp_bound`: the Gaussian, subsampled Gaussian, DP-SGD, mixture of Gaussians and
    their compositions) gives the smaller of the grid's mu and that bound (the Gaussian's
    exact mu, e.g. 1 for ``gaussian(1.0)``; sqrt(T) / noise for DP-SGD, its exact
    all-attack mu), any other pair with mass at +-inf gives inf.

    Far tails: mu reads the curve at an FPR or FNR near ``tail``, where a composition's safe
    side carries the FFT's round-off bound on every point (:mod:`dpax._engine.roundoff`).
    Where that booking could move a row's mu by more than :data:`TIGHTEN_ABOVE` (1e-4)
    relatively, mu and the regret are taken from the same composition with its far tails
    bounded through tilted laws (:func:`dpax.privacy_loss.tails.tight_tails`, built once per
    value: about twice the composition's FFT work): DP-SGD (noise 1, sample rate 1e-3, 10
    steps, grid 1e-4) gives 0.070377 instead of 0.102816 (the companion's 0.070375).

    regret (Eq. 13, Theorem B.2): Delta(h, f_mu), evaluated in closed form at the points of
    f_mu whose tangents are parallel to h's segments (where the maximum lies, see the module
    docstring), so it is exact up to float64 rounding (~1e-15) where h is convex, and an
    underestimate (a lower bound) otherwise; unlike gdpnum it is not limited to a fixed grid
    of 10,000 FPR values. The whole batch is one compiled kernel.

    Args:
        pl: the privacy loss, one configuration or a batch.
        tail: the attacks left out of mu, those with an FPR or FNR outside [tail, 1 - tail];
            one number in [0, 0.5) (default :data:`DEFAULT_TAIL`, 1e-10; 0: every attack).
        bounds: ``True``: certified brackets instead of points (default ``False``).

    Returns:
        ``(mu, regret)``: floats for one configuration, else arrays of ``pl``'s batch
        shape; mu is never below the mechanism's (the safe side), the regret exact up to
        float64 rounding where h is convex and a lower bound otherwise. With
        ``bounds=True``, ``(Interval, Interval)`` as :func:`regret_bracket` returns them.

    Raises:
        TypeError: ``pl`` is not a PrivacyLoss, ``bounds`` not a boolean, or ``tail`` not
            real.
        ValueError: ``tail`` outside [0, 0.5), NaN or more than one number; a row too large
            for the memory budget (``MemoryBudgetError``, a ValueError); with
            ``bounds=True``, ``pl`` without an optimistic companion.

    >>> import dpax
    >>> mu, regret = mu_and_regret(dpax.gaussian(2.0, grid_step=1e-2))
    >>> round(mu, 3), regret < 1e-3
    (0.5, True)
    >>> mu, regret = mu_and_regret(dpax.gaussian(2.0, grid_step=1e-2), tail=0.0)
    >>> round(mu, 12)                       # tail=0: the Gaussian's closed-form mu, every attack
    0.5
    """
    if _v.flag("bounds", bounds):
        return regret_bracket(pl, tail)
    mu, regret, _ = mu_regret_rows(pl, tail)
    return mu, regret


def regret_bracket(pl: PrivacyLoss, tail: float = DEFAULT_TAIL) -> tuple[Interval, Interval]:
    """Certified brackets of mu and of the regret, from ``pl`` (the dominating pair, curve
    f_s below the truth f) and its optimistic companion
    (:meth:`PrivacyLoss.optimistic_companion`, curve f_o above it).

    mu: ``Interval(safe=mu(f_s), optimistic=mu(f_o))``, mu(f_o) <= mu(f) <= mu(f_s) since a
    higher curve needs a smaller mu. Regret: Delta(h, g) grows with h and falls as g rises
    (it is the largest shift of h down-left onto g), the symmetrised curve h grows with f,
    and f_m falls as m grows; so with mu_o <= mu <= mu_s

        Delta(h_s, f_{mu_o}) <= Delta(h, f_mu) <= Delta(h_o, f_{mu_s}).

    The regret's Interval has ``safe`` = the upper end (the most the mu summary can miss)
    and ``optimistic`` = the lower end; the point regret of :func:`mu_and_regret` lies
    between them. Each end is evaluated as that function's regret is (exact where the
    symmetrised curve is convex, up to float64 rounding). Three kernel calls: f_s, f_o at
    mu_s, f_s at mu_o.

    Args:
        pl: the privacy loss, one configuration or a batch, with an optimistic companion.
        tail: the attacks left out of mu, one number in [0, 0.5) (default
            :data:`DEFAULT_TAIL`; see :func:`mu_and_regret`).

    Returns:
        ``(mu, regret)``, two :class:`dpax.Interval`: mu's ``safe`` end (the larger) and
        ``optimistic`` end, the regret's ``safe`` end (the upper) and ``optimistic`` end;
        each end a float for one configuration, else an array of ``pl``'s batch shape.

    Raises:
        TypeError: ``pl`` is not a PrivacyLoss, or ``tail`` not real.
        ValueError: ``pl`` has no optimistic companion (see
            :meth:`PrivacyLoss.optimistic_companion`); ``tail`` outside [0, 0.5), NaN or more
            than one number.

    >>> import dpax
    >>> mu, regret = dpax.gdp.mu_and_regret(dpax.gaussian(2.0, grid_step=1e-2), bounds=True)
    >>> round(mu.lower, 3), round(mu.upper, 3), regret.upper < 1e-3
    (0.5, 0.5, True)
    """
    check_loss(pl)
    companion = pl.optimistic_companion()
    mu_s = mu_regret_rows(pl, tail)[0]
    mu_o = mu_regret_rows(companion, tail)[0]
    lower = mu_regret_rows(pl, tail, at_mu=mu_o)[1]
    upper = regret_upper_rows(companion, mu_s)
    return uncrossed(mu_s, mu_o, True, 0.0, "mu"), uncrossed(upper, lower, True, 0.0, "regret")


def regret_witness(pl: PrivacyLoss, tail: float = DEFAULT_TAIL) -> float | np.ndarray:
    """FPR alpha at which the regret is attained: f(alpha + Delta) - Delta = f_mu(alpha)
    (the smaller of the two symmetric points).

    Args:
        pl: the privacy loss, one configuration or a batch.
        tail: as in :func:`mu_and_regret`, one number in [0, 0.5) (default
            :data:`DEFAULT_TAIL`).

    Returns:
        The FPR in [0, 1]: a float for one configuration, else an array of ``pl``'s batch
        shape (where the regret is 0 the witness carries no information).

    Raises:
        TypeError: ``pl`` is not a PrivacyLoss, or ``tail`` not real.
        ValueError: ``tail`` outside [0, 0.5), NaN or more than one number; a row too large
            for the memory budget (``MemoryBudgetError``, a ValueError).

    >>> import dpax
    >>> round(regret_witness(dpax.laplace(2.0, grid_step=1e-2)), 2)
    0.12
    """
    return mu_regret_rows(pl, tail)[2]
