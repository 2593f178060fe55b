"""Discrete dominating pairs on the grid ``k * grid_step`` (Kulynych et al. 2024, Appendix E.1).

Two constructions:

* :func:`split_cells` — for mechanisms whose privacy-loss law is known in closed form
  (Gaussian, Poisson-subsampled Gaussian, mixture of Gaussians, Laplace; the ``*_log_cdfs``
  functions give the laws, the ``*_kernel`` functions the pairs). Each grid cell (a, b] of
  losses is split between its two end points so that both its Q-mass and its P-mass are
  kept: a pair with likelihood ratio in [e^a, e^b] is a post-processing of the two-point
  pair with ratios exactly e^a and e^b. This is the connect-the-dots pair of Doroshenko et al. (Algorithm 2
  of Kulynych et al. 2024), but computed from *first* differences of the loss CDFs, evaluated in
  log space in both tails, instead of second differences of delta(epsilon). The rounding
  error of a cumulative probability is then about 1e-16 / grid_step relative, instead of
  1e-16 / grid_step^2 absolute, so the construction stays exact at grid 1e-5.
  Losses outside the grid are collapsed the same way: the region above the last point
  becomes that point plus the +inf atom of Y, the region below the first point becomes
  that point plus the -inf atom of X. Nothing is dropped, so the pair is dominating.

* :func:`connect_the_dots` — Algorithm 2 literally, from a vectorised privacy profile
  delta(epsilon), for mechanisms known only through their profile. Its accuracy is that
  of second differences: about 1e-16 / grid_step^2 per point mass.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import batching as _batching
from . import cache as _cache
from . import grid as _grid
from .grid import MAX_LOSS, loss_grid, padded_length
from .pair import Pair
from .special import log_ndtr_pair

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
    q_hi = jnp.clip((q_cell - jnp.exp(a) * p_cell) / shrink, 0.0, q_cell)
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
    pmf_y = pmf_y.at[:, -1].add(jnp.exp(g_last) * p_high)
    inf_y = jnp.maximum(q_high - jnp.exp(g_last) * p_high, 0.0)
    neginf_x = jnp.maximum(p_low - jnp.exp(-g0) * q_low, 0.0)
    # Pr[X = x] = e^-x Pr[Y = x] holds cell by cell; computed in log space so that
    # vanishing Y mass far below zero cannot turn into 0 * inf.
    pmf_x = jnp.exp(jnp.log(pmf_y) - grid)
    return pmf_x, pmf_y, inf_y, neginf_x


def subsampled_gaussian_log_cdfs(loss, sigma, p):
    """Log CDFs of the loss L = log(Q/P)(o) of the Poisson-subsampled Gaussian pair
    P = N(0, sigma^2), Q = (1 - p) N(0, sigma^2) + p N(1, sigma^2) (p = 1: plain Gaussian).

    L(o) = log(1 - p + p exp((2o - 1) / (2 sigma^2))) is increasing in o, so
    Pr[L <= eps] = Pr[o <= o(eps)] with o(eps) = sigma^2 log((e^eps - 1 + p) / p) + 1/2.
    Returns (log Pr_Q[L <= g], log Pr_Q[L > g], log Pr_P[L <= g], log Pr_P[L > g]).
    """
    log1mp = jnp.log1p(-p)  # -inf for p == 1
    above = loss > log1mp
    z = jnp.where(above, loss - log1mp, 1.0)
    # log(e^eps - (1 - p)) = eps + log(1 - e^-(eps - log(1-p)))
    log_excess = loss + jnp.log(-jnp.expm1(-z))
    o = jnp.where(above, sigma**2 * (log_excess - jnp.log(p)) + 0.5, -jnp.inf)
    u = o / sigma
    v = (o - 1.0) / sigma
    lf_x, ls_x = log_ndtr_pair(u)
    lf_v, ls_v = log_ndtr_pair(v)
    lf_y = jnp.logaddexp(log1mp + lf_x, jnp.log(p) + lf_v)
    ls_y = jnp.logaddexp(log1mp + ls_x, jnp.log(p) + ls_v)
    return lf_y, ls_y, lf_x, ls_x


def _subsampled_gaussian_cdfs(sigma, p, offset, grid_step, n):
    grid = loss_grid(offset, n, grid_step)
    return grid, subsampled_gaussian_log_cdfs(grid, sigma[:, None], p[:, None])


_subsampled_gaussian_cdfs = _cache.kernel(jax.jit(_subsampled_gaussian_cdfs, static_argnames=("n",)), "sg_cdfs")
_split_cells = _cache.kernel(jax.jit(split_cells), "split_cells")


def _as_pair(masses, offset) -> Pair:
    """The :class:`Pair` of the masses ``(pmf_x, pmf_y, inf_y, neginf_x)`` placed at ``offset``."""
    pmf_x, pmf_y, inf_y, neginf_x = masses
    return Pair(pmf_x, pmf_y, offset, inf_y, neginf_x)


def subsampled_gaussian_kernel(sigma, p, offset, grid_step, n) -> Pair:
    """Discrete dominating pair of the Poisson-subsampled Gaussian, rows of length n.

    Two compiled stages (CDFs, then cell splitting): one fused kernel would recompute the
    CDFs inside every consumer and take several times longer to compile.
    """
    grid, cdfs = _subsampled_gaussian_cdfs(sigma, p, offset, grid_step, n=n)
    return _as_pair(_split_cells(grid, grid_step, *cdfs), offset)


def _half_pair(grid, delta):
    """Connect-the-dots masses at the losses grid[1:] > 0 from delta on grid = [0, step, ...].

    The slope of delta against e^eps on (e_i, e_{i+1}) is -Pr_P[X > eps_i]; its jumps are the
    P-masses p_i, and Q-masses are e^{eps_i} p_i (Algorithm 2). Only non-negative eps are
    used, where e^eps >= 1 keeps the second differences from being amplified.
    Returns (p, q, Pr_P[X > 0], delta(eps_last)).
    """
    d = jnp.clip(delta, 0.0, 1.0)
    e = jnp.exp(grid)
    slope = (d[1:] - d[:-1]) / (e[1:] - e[:-1])  # non-decreasing, <= 0
    slope = jnp.concatenate([slope, jnp.zeros((1,), slope.dtype)])
    p = jnp.maximum(slope[1:] - slope[:-1], 0.0)
    q = jnp.exp(jnp.log(p) + grid[1:])
    return p, q, -slope[0], d[-1]


@functools.partial(_cache.kernel, name="connect_the_dots")
@jax.jit
def connect_the_dots(grid, delta, reverse_delta):
    """Algorithm 2 of Kulynych et al. 2024 (after Doroshenko et al. 2022) from privacy-profile values.

    ``grid`` = [0, step, ..., eps_max]; ``delta`` holds D_{e^eps}(Q || P) and
    ``reverse_delta`` D_{e^eps}(P || Q) there. Positive losses come from ``delta``; negative
    losses from the swapped pair, whose PLRVs are (-Y, -X), built the same way from
    ``reverse_delta``; the mass at loss 0 is what is left. delta(eps_max) is the +inf atom of
    Y, reverse_delta(eps_max) the -inf atom of X. Returns arrays on the losses
    -eps_max..eps_max: ``(pmf_x, pmf_y, inf_y, neginf_x)``.
    """
    p_pos, q_pos, _, inf_y = _half_pair(grid, delta)
    q_neg, p_neg, _, neginf_x = _half_pair(grid, reverse_delta)  # swapped pair: its P is our Q
    p_zero = jnp.maximum(1.0 - jnp.sum(p_pos) - jnp.sum(p_neg) - neginf_x, 0.0)
    q_zero = jnp.maximum(1.0 - jnp.sum(q_pos) - jnp.sum(q_neg) - inf_y, 0.0)
    zero = jnp.minimum(p_zero, q_zero)[None]
    pmf_x = jnp.concatenate([jnp.flip(p_neg), zero, p_pos])
    pmf_y = jnp.concatenate([jnp.flip(q_neg), zero, q_pos])
    return tuple(a[0] for a in close_mass(pmf_x[None], pmf_y[None], inf_y[None], neginf_x[None]))


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
    if len(keys) == 1 and _grid.rows_per_chunk(rows, cost(out_len), 0, what, detail) >= rows:
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


# -- mechanisms with a known loss law: Laplace, atoms -------------------------------------


def inverse_subsampled_loss(loss, p):
    """t(g) = log((e^g - (1 - p)) / p): the base loss L with log(1 - p + p e^L) = g.

    -inf where g <= log(1 - p) (no base loss maps there); t(g) = g when p = 1.
    """
    log1mp = jnp.log1p(-p)
    above = loss > log1mp
    z = jnp.where(above, loss - log1mp, 1.0)
    return jnp.where(above, loss + jnp.log(-jnp.expm1(-z)) - jnp.log(p), -jnp.inf)


def laplace_log_cdfs(loss, eps):
    """Log CDFs of the Laplace loss L = (|o| - |o - D|) / b for P = Lap(0, b), Q = Lap(D, b).

    With eps = D / b, L lies in [-eps, eps] with atoms at both ends (o <= 0 and o >= D) and
    L = (2o - D) / b in between; at u = o / b = (g + eps) / 2 in [0, eps):
    Pr_P[L <= g] = 1 - e^-u / 2 and Pr_Q[L <= g] = e^(u - eps) / 2 (right-continuous: the
    atom at -eps is included at g = -eps, the atom at eps only from g >= eps on).
    Returns (log Pr_Q[L <= g], log Pr_Q[L > g], log Pr_P[L <= g], log Pr_P[L > g]).
    """
    u = jnp.clip(0.5 * (loss + eps), 0.0, eps)
    below = loss < -eps
    top = loss >= eps
    ninf = -jnp.inf

    def pick(v, low_value, top_value):
        return jnp.where(below, low_value, jnp.where(top, top_value, v))

    lf_x = pick(jnp.log1p(-0.5 * jnp.exp(-u)), ninf, 0.0)
    ls_x = pick(-u + _LOG_HALF, 0.0, ninf)
    lf_y = pick(u - eps + _LOG_HALF, ninf, 0.0)
    ls_y = pick(jnp.log1p(-0.5 * jnp.exp(u - eps)), 0.0, ninf)
    return lf_y, ls_y, lf_x, ls_x


def subsampled_laplace_log_cdfs(loss, eps, p):
    """Log CDFs of log(1 - p + p e^L) for the Laplace loss L (P = Lap(0, b),
    Q = (1 - p) Lap(0, b) + p Lap(D, b)): the transform is increasing, so
    Pr[L' <= g] = Pr[L <= t(g)] (:func:`inverse_subsampled_loss`), and under Q the mixture
    Pr_Q'[.] = (1 - p) Pr_P[.] + p Pr_Q[.]."""
    t = inverse_subsampled_loss(loss, p)
    lf_y, ls_y, lf_x, ls_x = laplace_log_cdfs(t, eps)
    log1mp, logp = jnp.log1p(-p), jnp.log(p)
    return (
        jnp.logaddexp(log1mp + lf_x, logp + lf_y),
        jnp.logaddexp(log1mp + ls_x, logp + ls_y),
        lf_x,
        ls_x,
    )


def _laplace_pair(eps, p, offset, grid_step, n):
    grid = loss_grid(offset, n, grid_step)
    cdfs = subsampled_laplace_log_cdfs(grid, eps[:, None], p[:, None])
    return close_rounding(*split_cells_open(grid, grid_step, *cdfs), finite_law=True)


_laplace_pair = _cache.kernel(jax.jit(_laplace_pair, static_argnames=("n",)), "laplace_pair")


def laplace_kernel(eps, p, offset, grid_step, n) -> Pair:
    """Discrete dominating pair of the (Poisson-subsampled) Laplace mechanism (rows, n)."""
    return _as_pair(_laplace_pair(eps, p, offset, grid_step, n=n), offset)


def atoms_log_cdfs(grid, loss, log_p, log_q):
    """Log CDFs at the grid points of a loss law made of atoms (rows, m).

    ``loss`` is sorted ascending per row (may hold -inf: P-only mass, and +inf: Q-only
    mass; padding atoms carry log mass -inf); ``log_p``, ``log_q`` are the atoms' log
    masses under P and Q. Pr[L <= g] counts the atoms at g (right-continuous CDFs); sums
    are taken in log space from the near end, so both tails keep relative precision.
    """

    def one(g, loss_row, lp, lq):
        m = loss_row.shape[0]
        k = jnp.searchsorted(loss_row, g, side="right")  # atoms with loss <= g

        def cdf_sf(lm):
            below = jax.lax.cumlogsumexp(lm)
            above = jnp.flip(jax.lax.cumlogsumexp(jnp.flip(lm)))
            lf = jnp.where(k > 0, below[jnp.clip(k - 1, 0, m - 1)], -jnp.inf)
            ls = jnp.where(k < m, above[jnp.clip(k, 0, m - 1)], -jnp.inf)
            return lf, ls

        lf_y, ls_y = cdf_sf(lq)
        lf_x, ls_x = cdf_sf(lp)
        return lf_y, ls_y, lf_x, ls_x

    return jax.vmap(one)(grid, loss, log_p, log_q)


def split_atoms(loss, log_p, log_q, offset, grid_step, n):
    """Connect-the-dots masses (rows, n) of a loss law made of atoms, atom by atom.

    An atom with loss l in the cell [a, b] = [k h, (k + 1) h] and masses (p, q),
    p = q e^-l, goes to a with Q-mass q e^(a - l) (1 - e^(l - b)) / (1 - e^-h) and to b
    with Q-mass q (1 - e^(a - l)) / (1 - e^-h): both P- and Q-mass are kept, and the
    expm1 forms leave only float64 rounding (no cancellation, unlike differences of
    CDFs). An atom on a grid point goes there whole. Atoms below the first point go to it
    with P-mass e^-g0 q (the rest of their P-mass to X = -inf); atoms above the last go to
    it with Q-mass e^g_last p (the rest to Y = +inf); atoms at -inf / +inf are the
    infinite atoms. Returns ``(pmf_x, pmf_y, inf_y, neginf_x)`` before closing the mass.
    """
    h = grid_step
    rows = loss.shape[0]
    finite = jnp.isfinite(loss)
    loss_f = jnp.where(finite, loss, 0.0)
    g0 = offset[:, None] * h
    g_last = (offset[:, None] + n - 1) * h
    q = jnp.exp(log_q)
    p = jnp.exp(log_p)
    pos = loss_f / h
    near = jnp.round(pos)
    on_grid = jnp.abs(pos - near) < 1e-11 * jnp.maximum(1.0, jnp.abs(pos))
    k = jnp.where(on_grid, near, jnp.floor(pos))
    a = k * h
    frac = loss_f - a  # in [0, h)
    q_lo = jnp.where(on_grid, q, jnp.exp(log_q - frac) * -jnp.expm1(frac - h) / -jnp.expm1(-h))
    q_hi = jnp.where(on_grid, 0.0, q * -jnp.expm1(-frac) / -jnp.expm1(-h))
    idx = k.astype(jnp.int64) - offset[:, None]
    below = finite & (idx < 0)
    above = finite & (idx + jnp.where(on_grid, 0, 1) > n - 1)
    inside = finite & ~below & ~above
    zero = jnp.zeros_like(q)
    r = jnp.arange(rows)[:, None]
    pmf_y = jnp.zeros((rows, n), q.dtype)
    pmf_y = pmf_y.at[r, jnp.clip(idx, 0, n - 1)].add(jnp.where(inside, q_lo, zero))
    pmf_y = pmf_y.at[r, jnp.clip(idx + 1, 0, n - 1)].add(jnp.where(inside, q_hi, zero))
    pmf_y = pmf_y.at[:, 0].add(jnp.sum(jnp.where(below, q, zero), -1))
    # e^g_last p = q e^(g_last - l) <= q above the grid, e^-g0 q = p e^(l - g0) <= p below it:
    # written as these ratios, no factor overflows (a grid padded past 709 nats would give inf * 0)
    top_q = jnp.sum(jnp.where(above, q * jnp.exp(jnp.minimum(g_last - loss_f, 0.0)), zero), -1)
    pmf_y = pmf_y.at[:, -1].add(top_q)
    inf_y = jnp.sum(jnp.where(loss == jnp.inf, q, zero), -1) + jnp.maximum(
        jnp.sum(jnp.where(above, q, zero), -1) - top_q, 0.0)
    neginf_x = jnp.sum(jnp.where(loss == -jnp.inf, p, zero), -1) + jnp.maximum(
        jnp.sum(jnp.where(below, p * -jnp.expm1(jnp.minimum(loss_f - g0, 0.0)), zero), -1), 0.0)
    grid = loss_grid(offset, n, h)
    pmf_x = jnp.exp(jnp.log(pmf_y) - grid)
    return pmf_x, pmf_y, inf_y, neginf_x


def _atoms_pair(loss, log_p, log_q, offset, grid_step, n):
    return close_rounding(*split_atoms(loss, log_p, log_q, offset, grid_step, n))


_atoms_pair = _cache.kernel(jax.jit(_atoms_pair, static_argnames=("n",)), "atoms_pair")


def _atoms_cdfs(loss, log_p, log_q, offset, grid_step, n):
    grid = loss_grid(offset, n, grid_step)
    return grid, atoms_log_cdfs(grid, loss, log_p, log_q)


_atoms_cdfs = _cache.kernel(jax.jit(_atoms_cdfs, static_argnames=("n",)), "atoms_cdfs")


def atoms_kernel(loss, log_p, log_q, offset, grid_step, n) -> Pair:
    """Connect-the-dots pair (rows, n) of a loss law made of exact atoms (p = q e^-l at
    finite losses: randomized response, discrete Laplace / Gaussian, (epsilon, delta)
    worst case), split atom by atom (:func:`split_atoms`)."""
    return _as_pair(_atoms_pair(loss, log_p, log_q, offset, grid_step, n=n), offset)


def regrid_kernel(loss, log_p, log_q, offset, grid_step, n) -> Pair:
    """Connect-the-dots pair (rows, n) of any discrete pair given as atoms, from the CDFs
    at the new grid points (:func:`split_cells`): valid even where the atoms' P- and
    Q-masses are not in ratio e^-l (a pair imported from elsewhere); each cell's content
    is replaced by the two-point pair with ratios e^a, e^b (a post-processing)."""
    grid, cdfs = _atoms_cdfs(loss, log_p, log_q, offset, grid_step, n=n)
    return _as_pair(_split_cells(grid, grid_step, *cdfs), offset)


# -- Poisson-subsampled Gaussian under substitution (replace one) ---------------------------


def substitution_output_of_loss(loss, sigma, p):
    """Output o(g) with L(o) = g for the pair Q = p N(1, s^2) + (1 - p) N(0, s^2),
    P = p N(-1, s^2) + (1 - p) N(0, s^2) (replace-one neighbours under Poisson subsampling).

    With A = 1 - p, B = p e^(-1/(2 s^2)) and z = e^(o / s^2), L = log((A + B z) / (A + B / z))
    is increasing and odd in o, and L = g solves B z^2 + A (1 - e^g) z - e^g B = 0:
    z = (A (e^g - 1) + sqrt(A^2 (e^g - 1)^2 + 4 B^2 e^g)) / (2B) for g >= 0 (no
    cancellation), o(-g) = -o(g). Computed in log space.
    """
    g = jnp.abs(loss)
    log_a = jnp.log1p(-p)  # -inf for p = 1
    log_b = jnp.log(p) - 0.5 / sigma**2
    log_ae = log_a + jnp.log(jnp.expm1(g))  # -inf at g = 0 or p = 1
    log_root = 0.5 * jnp.logaddexp(2.0 * log_ae, jnp.log(4.0) + 2.0 * log_b + g)
    u = jnp.logaddexp(log_ae, log_root) - jnp.log(2.0) - log_b
    return jnp.sign(loss) * sigma**2 * u


def subsampled_gaussian_substitution_log_cdfs(loss, sigma, p):
    """Log CDFs of L = log(Q/P) for the replace-one pair of :func:`substitution_output_of_loss`:
    Pr[L <= g] = Pr[o <= o(g)] under the mixtures Q and P.
    Returns (log Pr_Q[L <= g], log Pr_Q[L > g], log Pr_P[L <= g], log Pr_P[L > g])."""
    o = substitution_output_of_loss(loss, sigma, p)
    log1mp, logp = jnp.log1p(-p), jnp.log(p)

    lf_o, ls_o = log_ndtr_pair(o / sigma)

    def mix(shift):
        lf_s, ls_s = log_ndtr_pair((o - shift) / sigma)
        return jnp.logaddexp(log1mp + lf_o, logp + lf_s), jnp.logaddexp(log1mp + ls_o, logp + ls_s)

    lf_y, ls_y = mix(1.0)
    lf_x, ls_x = mix(-1.0)
    return lf_y, ls_y, lf_x, ls_x


def _substitution_cdfs(sigma, p, offset, grid_step, n):
    grid = loss_grid(offset, n, grid_step)
    return grid, subsampled_gaussian_substitution_log_cdfs(grid, sigma[:, None], p[:, None])


_substitution_cdfs = _cache.kernel(jax.jit(_substitution_cdfs, static_argnames=("n",)), "sg_sub_cdfs")


def subsampled_gaussian_substitution_kernel(sigma, p, offset, grid_step, n) -> Pair:
    """Discrete dominating pair (rows, n) of the Poisson-subsampled Gaussian, replace-one."""
    grid, cdfs = _substitution_cdfs(sigma, p, offset, grid_step, n=n)
    return _as_pair(_split_cells(grid, grid_step, *cdfs), offset)


def pair_from_atoms(loss, log_p, log_q, grid_step: float, *, tail: float, exact_ratio: bool, what: str) -> Pair:
    """Connect-the-dots :class:`Pair` (host side: picks each row's grid, then one kernel) of
    a loss law made of atoms (rows, m): ``loss`` log(Q/P) of each atom (-inf: P-mass only,
    +inf: Q-mass only), ``log_p`` / ``log_q`` their log masses.

    Row r's grid spans the finite atoms from where the P-mass below exceeds ``tail`` to
    where the Q-mass above exceeds it; atoms outside collapse onto the end points plus the
    infinite atoms (pessimistically). ``exact_ratio``: p = q e^-l on every finite atom
    (:func:`atoms_kernel`); otherwise the CDFs are split cell by cell (:func:`regrid_kernel`),
    which holds for any pair. ``what`` names the mechanism in errors.
    """
    loss = np.atleast_2d(np.asarray(loss, np.float64))
    lp, lq = (np.broadcast_to(np.atleast_2d(np.asarray(a, np.float64)), loss.shape) for a in (log_p, log_q))
    order = np.argsort(loss, axis=-1, kind="stable")
    loss, lp, lq = (np.take_along_axis(a, order, -1) for a in (loss, lp, lq))
    finite = np.isfinite(loss) & ((lp > -np.inf) | (lq > -np.inf))
    cp = np.cumsum(np.where(finite, np.exp(lp), 0.0), -1)
    rq = np.flip(np.cumsum(np.flip(np.where(finite, np.exp(lq), 0.0), -1), -1), -1)
    lo_ok = finite & (cp > tail)
    hi_ok = finite & (rq > tail)
    lo = np.min(np.where(lo_ok, loss, np.inf), -1)
    hi = np.max(np.where(hi_ok, loss, -np.inf), -1)
    lo = np.where(np.isfinite(lo), lo, np.where(np.isfinite(hi), hi, 0.0))  # e.g. delta = 1: no finite atom
    hi = np.where(np.isfinite(hi), hi, lo)
    hi = np.maximum(hi, lo)
    if np.any(hi > MAX_LOSS) or np.any(lo < -MAX_LOSS):
        raise ValueError(f"{what}: privacy loss beyond {MAX_LOSS:g} nats, outside float64 range")
    step = float(grid_step)
    offset = np.floor(lo / step + 1e-9).astype(np.int64)
    needed = np.ceil(hi / step - 1e-9).astype(np.int64) - offset + 1
    kernel = atoms_kernel if exact_ratio else regrid_kernel
    return by_row_length(kernel, (loss, lp, lq, offset), step, needed, what, min_points=loss.shape[-1])




# -- mixture of Gaussians (add/remove) --------------------------------------------------------

#: Most iterations of :func:`mixture_output_of_loss` (safeguarded Newton steps; the loop
#: ends as soon as every point has converged, after a handful of steps in practice).
MIXTURE_MAX_ITERATIONS = 200
#: Working memory of a mixture construction per grid point and component, in bytes (the
#: solver's terms and the components' log CDFs, (rows, n, m) arrays), beside
#: CONSTRUCT_BYTES_PER_POINT.
MIXTURE_BYTES_PER_COMPONENT = 96


def _logsumexp(x, axis=-1):
    """log sum exp over ``axis``: -inf, never NaN, where every term is -inf."""
    top = jnp.max(x, axis)
    fin = jnp.where(jnp.isfinite(top), top, 0.0)
    total = jnp.sum(jnp.exp(x - jnp.expand_dims(fin, axis)), axis)
    return jnp.where(top == -jnp.inf, -jnp.inf, fin + jnp.log(total))


def mixture_output_of_loss(loss, log_p0, shifts, log_p):
    """Output o(g), in units of the noise s, with L(o) = g for the pair P = N(0, 1),
    Q = p_0 N(0, 1) + sum_i p_i N(c_i, 1) (c_i > 0; absent components have log p_i = -inf).

    L(o) = log(p_0 + e^G(o)) with G(o) = logsumexp_i(w_i + c_i o), w_i = log p_i - c_i^2 / 2,
    so L(o) = g solves G(o) = r := log(e^g - p_0) (no output reaches g <= log p_0: o = -inf
    there). G is convex and increasing, its slope a weighted mean of the c_i, so the root
    lies in [o_lo, o_hi] with o_hi = min_i (r - w_i) / c_i (one term alone reaches r there)
    and o_lo = min_i (r - log M - w_i) / c_i (each of the M terms at most r - log M). Newton
    steps from o_hi descend to the root monotonically in exact arithmetic (a tangent of a
    convex function lies below it); a step that leaves the bracket kept from the signs of
    G - r (rounding) is replaced by bisection, and a point stops when its step is within
    round-off of G's evaluation. One component is solved by the first step: o = (r - w) / c,
    the closed form of the (subsampled) Gaussian. A row without components (Q = P, the loss
    is 0) gets o = +inf for g >= 0 and -inf below.

    Shapes: ``loss`` (rows, n); ``log_p0`` (rows, 1); ``shifts`` c_i and ``log_p``
    (rows, 1, m). Returns o (rows, n).
    """
    m = shifts.shape[-1]
    valid = log_p > -jnp.inf
    present = jnp.any(valid, -1)  # (rows, 1): False for the identity mechanism
    dummy = jnp.arange(m) == 0  # a stand-in component for those rows, so that nothing is NaN
    use = jnp.where(present[..., None], valid, dummy)
    c = jnp.where(use, shifts, 1.0)
    w = jnp.where(valid, log_p - 0.5 * shifts**2, jnp.where(use, 0.0, -jnp.inf))
    log_count = jnp.log(jnp.sum(use, -1).astype(loss.dtype))[..., None]  # (rows, 1, 1)
    above = loss > log_p0
    z = jnp.where(above, loss - log_p0, 1.0)
    r = jnp.where(above, loss + jnp.log(-jnp.expm1(-z)), 0.0)  # log(e^g - p_0); 0 below: unused
    hi = jnp.min(jnp.where(use, (r[..., None] - w) / c, jnp.inf), -1)
    lo = jnp.min(jnp.where(use, (r[..., None] - log_count - w) / c, jnp.inf), -1)
    eps = jnp.finfo(loss.dtype).eps

    def evaluate(o):
        e = w + c * o[..., None]
        top = jnp.max(e, -1)
        t = jnp.exp(e - top[..., None])
        total = jnp.sum(t, -1)
        magnitude = jnp.where(use, jnp.abs(w), 0.0) + jnp.abs(c * o[..., None])  # of each term
        size = jnp.sum(t * magnitude, -1) / total
        return top + jnp.log(total), jnp.sum(t * c, -1) / total, size

    def cond(state):
        _, _, _, done, k = state
        return (k < MIXTURE_MAX_ITERATIONS) & ~jnp.all(done)

    def body(state):
        o, lo, hi, done, k = state
        value, slope, size = evaluate(o)
        f = value - r
        hi = jnp.where(f > 0, o, hi)
        lo = jnp.where(f < 0, o, lo)
        step = f / slope
        newton = o - step
        # G's round-off (a few ulps of its terms) moves the root by this much: stop there
        noise = 8.0 * eps * (jnp.abs(o) + (jnp.abs(r) + size + 1.0) / slope)
        converged = (f == 0) | (jnp.abs(step) <= noise) | (hi - lo <= noise)
        mid = 0.5 * (lo + hi)
        inside = (newton > lo) & (newton < hi)
        new = jnp.where(converged | inside | ~jnp.isfinite(mid), newton, mid)
        return jnp.where(done, o, new), lo, hi, done | converged, k + 1

    start = (hi, lo, hi, ~above | ~present, jnp.asarray(0))
    o = jax.lax.while_loop(cond, body, start)[0]
    identity = jnp.where(loss >= 0, jnp.inf, -jnp.inf)
    return jnp.where(present, jnp.where(above, o, -jnp.inf), identity)


def mixture_log_cdfs(loss, log_p0, shifts, log_p):
    """Log CDFs of the loss L = log(Q/P) of the mixture-of-Gaussians pair P = N(0, 1),
    Q = p_0 N(0, 1) + sum_i p_i N(c_i, 1) (outputs in units of the noise s, c_i > 0).

    L is increasing in the output o, so Pr[L <= g] = Pr[o <= o(g)]
    (:func:`mixture_output_of_loss`): Pr_P[L <= g] = Phi(o(g)) and
    Pr_Q[L <= g] = p_0 Phi(o(g)) + sum_i p_i Phi(o(g) - c_i), the mixture summed in log
    space (both tails keep their relative precision). Shapes as
    :func:`mixture_output_of_loss`.
    Returns (log Pr_Q[L <= g], log Pr_Q[L > g], log Pr_P[L <= g], log Pr_P[L > g]).
    """
    o = mixture_output_of_loss(loss, log_p0, shifts, log_p)
    # the laws N(0, 1) (P's) and N(c_i, 1) at o(g) in one call; Q mixes them with p_0, p_i
    every = jnp.concatenate([jnp.zeros_like(shifts[..., :1]), shifts], -1)
    weights = jnp.concatenate([jnp.broadcast_to(log_p0[..., None], log_p[..., :1].shape), log_p], -1)
    lf, ls = log_ndtr_pair(o[..., None] - every)
    return _logsumexp(weights + lf), _logsumexp(weights + ls), lf[..., 0], ls[..., 0]


def _mixture_cdfs(log_p0, shifts, log_p, offset, grid_step, n):
    grid = loss_grid(offset, n, grid_step)
    return grid, mixture_log_cdfs(grid, log_p0[:, None], shifts[:, None], log_p[:, None])


_mixture_cdfs = _cache.kernel(jax.jit(_mixture_cdfs, static_argnames=("n",)), "mog_cdfs")


def mixture_of_gaussians_kernel(log_p0, shifts, log_p, offset, grid_step, n) -> Pair:
    """Discrete dominating pair (rows, n) of the mixture-of-Gaussians mechanism
    (:func:`mixture_log_cdfs`; ``log_p0`` (rows,), ``shifts`` and ``log_p`` (rows, m)), in
    the two compiled stages of :func:`subsampled_gaussian_kernel`."""
    grid, cdfs = _mixture_cdfs(log_p0, shifts, log_p, offset, grid_step, n=n)
    return _as_pair(_split_cells(grid, grid_step, *cdfs), offset)
