"""Connect-the-dots cell splitting on the grid ``k * grid_step`` (Kulynych et al. 2024,
Appendix E.1), shared by every construction from loss CDFs: each grid cell's Q- and P-mass
split between its two end points, the masses closed to 1 on the safe side, and the host-side
driver that runs a construction kernel with each row on its own support length.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import batching as _batching
from .. import cache as _cache
from .. import grid as _grid
from ..grid import padded_length
from ..pair import Pair

_LOG_HALF = -0.6931471805599453


def _mass_between(lf_a, lf_b, ls_a, ls_b):
    """Pr[a < L <= b] from log CDF and log survival at a < b, from the smaller tail:
    F(b) (1 - F(a) / F(b)) where F(b) < 1/2, else S(a) (1 - S(b) / S(a)). The side is
    chosen before the arithmetic, so each point costs one exp and one expm1 (both sides
    computed and then selected cost twice that, for the same bits)."""
    lower = lf_b < _LOG_HALF
    top, bottom = jnp.where(lower, lf_b, ls_a), jnp.where(lower, lf_a, ls_b)
    safe = lambda v: jnp.where(jnp.isfinite(v), v, 0.0)
    e_top = jnp.exp(top)
    mass = e_top * -jnp.expm1(safe(bottom) - safe(top))
    mass = jnp.where(top == -jnp.inf, 0.0, jnp.where(bottom == -jnp.inf, e_top, mass))
    return jnp.maximum(mass, 0.0)


def close_mass(pmf_x, pmf_y, inf_y, neginf_x):
    """Make each PLRV's total mass exactly 1, on the safe side (rows, n).

    Rounding leaves the masses a few ulps (single step) to ~1e-10 (10^4-fold composition)
    off 1. Missing Y mass goes to the +inf atom (more privacy loss); missing X mass to the
    -inf atom (it then never counts as a false positive). Excess mass, which rounding can
    also create, is removed by scaling the finite masses down to 1 minus the atom.
    """

    def close(pmf, atom):
        total = jnp.sum(pmf, -1)
        deficit = 1.0 - total - atom
        scale = jnp.where(deficit < 0, (1.0 - atom) / jnp.where(total > 0, total, 1.0), 1.0)
        return pmf * scale[:, None], atom + jnp.maximum(deficit, 0.0)

    pmf_y, inf_y = close(pmf_y, inf_y)
    pmf_x, neginf_x = close(pmf_x, neginf_x)
    return pmf_x, pmf_y, inf_y, neginf_x


def split_cells(grid, grid_step, lf_y, ls_y, lf_x, ls_x):
    """Connect-the-dots masses from the loss CDFs at the grid points (rows, n).

    ``lf_y, ls_y`` are log Pr_Q[L <= g], log Pr_Q[L > g] (the law of Y) and ``lf_x, ls_x``
    the same under P (the law of X). Returns ``(pmf_x, pmf_y, inf_y, neginf_x)``.
    """
    return close_mass(*split_cells_open(grid, grid_step, lf_y, ls_y, lf_x, ls_x))


def close_rounding(pmf_x, pmf_y, inf_y, neginf_x, finite_law=False):
    """:func:`close_mass` for laws whose infinite atoms are known exactly (Laplace, atoms).

    The few-ulp deficit that rounding leaves is spread over the finite masses (a relative
    change of ~1e-16) instead of going to the infinite atoms, so that a pure epsilon-DP
    mechanism keeps a finite epsilon at delta = 0. ``finite_law``: the law has no infinite
    atoms at all (its grid covers its whole support), so any mass the construction put
    there is rounding too and is spread the same way.
    """
    if finite_law:
        inf_y = jnp.zeros_like(inf_y)
        neginf_x = jnp.zeros_like(neginf_x)
    for _ in range(2):  # the second pass only fixes the last ulp
        sy = jnp.sum(pmf_y, -1)
        sx = jnp.sum(pmf_x, -1)
        pmf_y = pmf_y * jnp.where(sy > 0, (1.0 - inf_y) / jnp.where(sy > 0, sy, 1.0), 1.0)[:, None]
        pmf_x = pmf_x * jnp.where(sx > 0, (1.0 - neginf_x) / jnp.where(sx > 0, sx, 1.0), 1.0)[:, None]
    return pmf_x, pmf_y, inf_y, neginf_x


def split_cells_open(grid, grid_step, lf_y, ls_y, lf_x, ls_x):
    """:func:`split_cells` before its total masses are closed."""
    q_cell = _mass_between(lf_y[:, :-1], lf_y[:, 1:], ls_y[:, :-1], ls_y[:, 1:])
    p_cell = _mass_between(lf_x[:, :-1], lf_x[:, 1:], ls_x[:, :-1], ls_x[:, 1:])
    a = grid[:, :-1]
    # q_hi + q_lo = Q(cell), q_hi e^-b + q_lo e^-a = P(cell). q_hi is a difference of nearly
    # equal numbers over 1 - e^-h; q_lo is taken as the rest, so each cell's Q-mass is kept.
    # Were both solved for separately, their errors (~1e-13 of a cell at h = 1e-3) would not
    # cancel, and a shortfall, booked on the +inf atom by close_mass, would grow with every
    # composed step (1e-10 after 2000).
    # The difference is off by up to 4 eps (Q(cell) + e^a P(cell)) <= 8 eps Q(cell) (each
    # mass's exp, expm1 and product and the few ulps of its log CDFs near log(1/2), e^a, the
    # subtraction), so q_hi by up to 8 eps Q(cell) / (1 - e^-h). Where the loss fills the
    # cell, q_hi ~ Q(cell) / 2 and that is a relative 16 eps / h, the construction's own
    # precision; where the loss sits at the cell's lower end q_hi cancels and the error is
    # all of it (a Gaussian at mu = 1e-8 on grid 0.1: Q - P ~ 4e-9 from two masses near 1/2;
    # at the grid point 0 the split is exact, so this rounding alone decided the side). q_hi
    # is raised by that bound times (1 - 16 q_hi / Q(cell))_+: by the bound where it
    # cancels, by nothing once q_hi >= Q(cell) / 16 (every cell of an ordinary law: no mass
    # moves). It then falls short of the exact q_hi by at most the lesser of the bound and a
    # relative 128 eps / (1 - e^-h) (3e-10 at h = 1e-4, 3e-13 at 0.1), and so does every
    # risk, a sum over cells.
    # Q-mass moved up to b is the pessimistic direction: every delta(eps) =
    # sum Pr[Y = x] (1 - e^(eps - x))_+ grows, as that factor grows with x. The P-mass
    # beside it (pmf_x = e^-x pmf_y below) shrinks by e^-a - e^-b per unit moved, and
    # close_mass books that deficit on X = -inf, which raises each reverse delta by at least
    # what the cell's own terms lose (min(e^-x, e^eps) does not increase with x). (For the
    # Laplace laws close_rounding spreads it over the P-masses, as it does their rounding.)
    # That atom is why the bound is not added to every cell: ~8 eps on X = -inf in every
    # pair moves gdp.mu_and_regret's mu by ~1e9 times as much (it reads FPRs down to 1e-10).
    shrink = -jnp.expm1(-grid_step)
    # e^x times a mass, with e^x capped at e^709: a padded point past 709 nats (at the least
    # noise) holds no mass, and inf * 0 would be NaN; a mass there could only be a subnormal
    # P-mass, whose Q-mass the cap moves to the +inf atom (pessimistic). Below 709 the
    # expression is the plain product (as XLA contracts it, bit for bit)
    times_exp = lambda x, mass: jnp.exp(jnp.minimum(x, 709.0)) * mass
    q_hi = jnp.clip((q_cell - times_exp(a, p_cell)) / shrink, 0.0, q_cell)
    bound = 8.0 * jnp.finfo(q_cell.dtype).eps / shrink
    q_hi = jnp.minimum(q_hi + bound * jnp.maximum(q_cell - 16.0 * q_hi, 0.0), q_cell)
    q_lo = q_cell - q_hi
    zero = jnp.zeros_like(grid[:, :1])
    pmf_y = jnp.concatenate([q_lo, zero], -1) + jnp.concatenate([zero, q_hi], -1)
    # XLA may evaluate q_hi once per consumer, contracted to a fused multiply-add in one and
    # not the other: then 1 ulp of e^a P(cell), over h, is lost in the row total after all.
    # The split only moves mass, so the row is rescaled to the cells' own total (a relative
    # change of ~1e-13 at most).
    split_total = jnp.sum(pmf_y, -1, keepdims=True)
    pmf_y = pmf_y * jnp.where(split_total > 0,
                              jnp.sum(q_cell, -1, keepdims=True) / jnp.where(split_total > 0, split_total, 1.0), 1.0)
    # tails: below the first point -> (first point, X = -inf); above the last -> (last, Y = +inf)
    g0, g_last = grid[:, 0], grid[:, -1]
    q_low, p_low = jnp.exp(lf_y[:, 0]), jnp.exp(lf_x[:, 0])
    q_high, p_high = jnp.exp(ls_y[:, -1]), jnp.exp(ls_x[:, -1])
    pmf_y = pmf_y.at[:, 0].add(q_low)
    pmf_y = pmf_y.at[:, -1].add(times_exp(g_last, p_high))
    inf_y = jnp.maximum(q_high - times_exp(g_last, p_high), 0.0)
    neginf_x = jnp.maximum(p_low - times_exp(-g0, q_low), 0.0)
    # Pr[X = x] = e^-x Pr[Y = x] holds cell by cell; computed in log space so that
    # vanishing Y mass far below zero cannot turn into 0 * inf.
    pmf_x = jnp.exp(jnp.log(pmf_y) - grid)
    return pmf_x, pmf_y, inf_y, neginf_x


split_cells_kernel = _cache.kernel(jax.jit(split_cells), "split_cells", fusion_emitters=False)


def split_cells_ahead(rows: int, n: int, grid_step) -> None:
    """Compile :data:`split_cells_kernel` for ``rows`` rows of ``n`` points ahead of its first
    call (:func:`dpax._engine.cache.compile_ahead_of`): its inputs, the grid and four log
    CDFs, are float64 (rows, n), whatever computes them; ``grid_step`` as the call passes it."""
    spec = jax.ShapeDtypeStruct((rows, n), jnp.float64)
    split_cells_kernel.ahead(spec, grid_step, spec, spec, spec, spec)


def as_pair(masses, offset) -> Pair:
    """The :class:`Pair` of the masses ``(pmf_x, pmf_y, inf_y, neginf_x)`` placed at ``offset``."""
    pmf_x, pmf_y, inf_y, neginf_x = masses
    return Pair(pmf_x, pmf_y, offset, inf_y, neginf_x)


#: Peak working memory of a construction kernel, in bytes per row and grid point (164
#: measured on CPU: the grid, four log CDFs, the cells and their split; rounded up).
CONSTRUCT_BYTES_PER_POINT = 176


def row_lengths(needed) -> np.ndarray:
    """Each row's own padded support length for ``needed`` grid points (rows,): the length
    it gets alone. Inside :func:`dpax._engine.grid.shared_lengths` (a search, whose answer
    is evaluated again on its own) the batch shares one length, the longest row's or a
    longer one used before at the site ``"construct"``: fewer kernel shapes to compile."""
    needed = np.asarray(needed, np.int64).reshape(-1)
    if _grid.sharing():  # a search's batch: one length, the kernel shapes of earlier rounds
        return np.full(needed.shape, padded_length(int(np.max(needed)), "construct"), np.int64)
    ladder = {int(m): padded_length(int(m)) for m in np.unique(needed)}
    shared = {m: _grid.shared_size(m, "construct") for m in sorted(set(ladder.values()), reverse=True)}
    return np.array([shared[ladder[int(m)]] for m in needed], np.int64)


def one_call(rows: int, n: int, what: str, min_points: int = 0, bytes_per_point: int = CONSTRUCT_BYTES_PER_POINT
             ) -> bool:
    """Whether :func:`by_row_length` constructs ``rows`` rows of one length ``n`` in one
    kernel call (their working memory within the budget; MemoryBudgetError, naming
    ``what``, where not even one row fits)."""
    detail = f"{rows} row(s) of {n} grid points"
    return _grid.rows_per_chunk(rows, bytes_per_point * max(int(n), min_points), 0, what, detail) >= rows


def by_row_length(kernel, row_args: tuple, grid_step: float, needed, what: str, min_points: int = 0,
                  bytes_per_point: int = CONSTRUCT_BYTES_PER_POINT) -> Pair:
    """``kernel(*row_args, grid_step, n)`` (a construction kernel: row arrays (rows,) or
    (rows, m), then the step and the static length) with each row on its own length
    (:func:`row_lengths` of ``needed``), so that a row's pair is the one it has alone.

    Rows sharing a length are one call; rows are taken in chunks whose working memory
    (``bytes_per_point``, default CONSTRUCT_BYTES_PER_POINT, per point, at least
    ``min_points`` per row) fits the budget beside the assembled output; only an output
    over the budget is refused, before any kernel runs. The result holds every row on the
    longest length, zero beyond its own. ``what`` names the mechanism in errors.
    """
    length = row_lengths(needed)
    rows, out_len = length.size, int(length.max())
    step = np.float64(grid_step)
    detail = f"{rows} row(s) of {out_len} grid points"
    cost = lambda n: bytes_per_point * max(int(n), min_points)
    keys = sorted(set(length.tolist()), reverse=True)
    if len(keys) == 1 and one_call(rows, out_len, what, min_points, bytes_per_point):
        return kernel(*row_args, step, out_len)
    _grid.check_bytes(_batching.RowAssembly.size(rows, out_len), what, detail)  # before allocating it
    out = _batching.RowAssembly(rows, out_len)
    host = [np.asarray(a) for a in row_args]
    for n in keys:
        members = np.flatnonzero(length == n)
        chunk = _grid.rows_per_chunk(members.size, cost(n), out.nbytes, what, detail)
        chunk = _batching.chunk_size(min(chunk, _batching.group_size(members.size)))
        for index, real in _batching.row_chunks(members.size, chunk):
            part = kernel(*(a[members[index]] for a in host), step, n)
            out.put(members[index[:real]], part, real)
    return out.pair()
