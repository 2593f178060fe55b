"""A single step's optimistic companion: the mechanism's outputs mapped onto the grid by a
randomised map (cells split between neighbouring points, or each output to its nearest
point), a post-processing of the mechanism, so that its curve lies above the true one.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import cache as _cache
from ..construct import (
    _mass_between,
    inverse_subsampled_loss,
    laplace_log_cdfs,
    mixture_log_cdfs,
    subsampled_gaussian_log_cdfs,
    subsampled_gaussian_substitution_log_cdfs,
)
from ..grid import check_memory, loss_grid
from ..pair import Pair
from ..special import ndtr
from .slack import Slack, with_slack


def cell_masses(lf, ls):
    """Masses (rows, m + 1) of the cells (-inf, b_0], (b_0, b_1], ..., (b_{m-1}, +inf) of a
    loss law from its log CDF ``lf`` and log survival ``ls`` at the boundaries b (rows, m),
    each cell from the smaller tail (:func:`dpax._engine.construct._mass_between`)."""
    first = jnp.exp(lf[:, :1])
    last = jnp.exp(ls[:, -1:])
    mid = _mass_between(lf[:, :-1], lf[:, 1:], ls[:, :-1], ls[:, 1:])
    return jnp.concatenate([first, mid, last], -1)


def _boundary_cdfs(log_cdfs, offset, grid_step, n, *params):
    """Log CDFs ``log_cdfs(b, *params)`` at the boundaries b half-way between the grid
    points (rows, n - 1): the first compiled stage of a nearest-point companion. The
    boundaries are computed once: every law (P's and Q's) must see the same values, or an
    atom on a boundary could go to one cell under P and the next under Q."""
    bounds = jax.lax.optimization_barrier(loss_grid(offset, n - 1, grid_step) + 0.5 * grid_step)
    return log_cdfs(bounds, *(a[:, None] for a in params))


@jax.jit
def _cells(lf_y, ls_y, lf_x, ls_x, offset) -> Pair:
    """The second stage: companion masses (rows, n) from the boundary CDFs."""
    zero = jnp.zeros(offset.shape, lf_y.dtype)
    return Pair(cell_masses(lf_x, ls_x), cell_masses(lf_y, ls_y), offset, zero, zero)


_cells = _cache.kernel(_cells, "opt_cells")


@functools.partial(_cache.kernel, name="opt_cells_folded")
@jax.jit
def _folded_cells(lf_y, ls_y, lf_x, ls_x, offset) -> tuple[Pair, Any]:
    """:func:`_cells` ended by :func:`fold_top` at the Q-survival of the cells' upper
    boundaries (an unbounded law): (pair, index of its last point)."""
    survival = jnp.concatenate([jnp.exp(ls_y), jnp.zeros_like(ls_y[:, :1])], -1)
    # jax stubs: jit sets __wrapped__ (functools.wraps) but its JitWrapped type does not declare it
    return fold_top(_cells.__wrapped__(lf_y, ls_y, lf_x, ls_x, offset), survival)  # type: ignore[attr-defined]


def three_normal_tails(loss, sigma, p):
    """The arguments v_k = (o - k) / s and small tails Phi(-|v_k|) of N(k, s^2), k = 0, 1, 2,
    at the output o(loss) of the subsampled Gaussian pair
    (:func:`dpax._engine.construct.subsampled_gaussian_log_cdfs`): P, Q and R = Q^2 / P are
    mixtures of these laws (:func:`three_law_weights`), so their cell masses are mixtures
    of theirs (:func:`normal_cells`). One erfc per point and law, no logarithms: a cell's
    mass is a difference of the smaller tails, as precise as from log CDFs (10 times faster).

    L is increasing in the output o, so Pr[L <= g] = Pr[o <= o(g)]; with u = o / s,
    P = N(0, s^2), Q = (1 - p) N(0, s^2) + p N(1, s^2) and
    (Q/P)^2 P = (1 - p)^2 N(0, s^2) + 2 p (1 - p) N(1, s^2) + p^2 e^(1/s^2) N(2, s^2).
    Returns (v_0, v_1, v_2, tail_0, tail_1, tail_2).
    """
    t = inverse_subsampled_loss(loss, p)  # the base loss (2o - 1) / (2 s^2)
    u = jnp.where(t > -jnp.inf, (sigma**2 * t + 0.5) / sigma, -jnp.inf)
    v = tuple(u - k / sigma for k in range(3))
    return v + tuple(ndtr(-jnp.abs(a)) for a in v)


def normal_cells(v, tail):
    """Masses (rows, n - 1) of a normal law between consecutive arguments ``v`` (rows, n),
    from the smaller tails ``tail`` = Phi(-|v|), and the masses (rows, 1) below the first
    and above the last."""
    va, vb, ta, tb = v[:, :-1], v[:, 1:], tail[:, :-1], tail[:, 1:]
    mid = jnp.where(vb <= 0, tb - ta, jnp.where(va >= 0, ta - tb, 1.0 - ta - tb))
    first = jnp.where(v[:, :1] < 0, tail[:, :1], 1.0 - tail[:, :1])
    last = jnp.where(v[:, -1:] < 0, 1.0 - tail[:, -1:], tail[:, -1:])
    return jnp.maximum(mid, 0.0), first, last


def three_law_weights(sigma, p):
    """Log weights (rows, 1) of N(k, s^2), k = 0, 1, 2, in Q (two) and in (Q/P)^2 P (three)."""
    log1mp, logp = _log1mp(p), jnp.log(p)
    return (log1mp, logp), (2.0 * log1mp, jnp.log(2.0) + logp + log1mp, 2.0 * logp + 1.0 / sigma**2)


def _sg_cdfs(sigma, p, offset, grid_step, n):
    """The grid and the normal laws' tails there (the first of two compiled stages, as
    :func:`dpax._engine.construct.subsampled_gaussian_kernel`)."""
    grid = loss_grid(offset, n, grid_step)
    return (grid,) + three_normal_tails(grid, sigma[:, None], p[:, None])


def _sg_split(grid, v0, v1, v2, t0, t1, t2, sigma, p, offset, grid_step):
    """The masses of :func:`split_map` from the normal laws' cells c_k, mixed linearly.

    Each label's share of a cell [a, b] is a combination of the three laws' cell masses
    whose coefficients are formed in closed form (:func:`split_coefficients`), not as a
    difference of two mixed masses: at a small sample rate (p = 1e-12) the P-mass sent to
    b near the loss 0, (e^-a Q - P)(cell) / (e^h - 1) = (-p' c_0 + p c_1) / (e^h - 1), is
    a difference of two masses near 1/2 of which only ~p of each differs; formed as
    e^-a Q(cell) - P(cell) it kept ~1e-16 / h of absolute error (5e-10 at h = 1e-7, beside
    risks of 1e-12), here it keeps the relative precision of c_0 and c_1 (the c_k themselves,
    near 1/2 in that cell, differ by ~1 / sigma: where sigma / p exceeds
    :data:`SPLIT_MAX_NOISE_OVER_RATE` their rounding still reaches mu's tails, and
    :func:`subsampled_gaussian_kernel` maps those rows by nearest point instead).

    A coefficient grows as e^-a (and the weight p^2 e^(1/s^2) of N(2, s^2) in R with the
    noise: e^400 at s = 0.05), beside cell masses that fall below float64's normal range
    (below ~2.2e-308 they keep no relative precision, and underflow to 0): in such cells
    (far below the loss 0 of a small noise: the Gaussian at mu ~ 20) a product is inf, NaN
    (inf x 0) or unrelated to the cell. Those cells go whole to their lower end under both
    P and Q (another map that depends on the output alone, still a post-processing), so
    the shares of P and Q always come from one map."""
    (c0, f0, l0), (c1, f1, l1), (c2, _, _) = (normal_cells(v, t) for v, t in ((v0, t0), (v1, t1), (v2, t2)))
    (lq0, lq1), (lr0, lr1, lr2) = three_law_weights(sigma[:, None], p[:, None])
    wq0, wq1 = jnp.exp(lq0), jnp.exp(lq1)
    a = grid[:, :-1]
    p_up, p_down, q_up, q_down = split_coefficients(a, grid_step, sigma[:, None], p[:, None])
    mix = lambda coef: sum(k * c for k, c in zip(coef, (c0, c1, c2)))
    q_cell = wq0 * c0 + wq1 * c1
    first, last = (f0, wq0 * f0 + wq1 * f1), (l0, wq0 * l0 + wq1 * l1)
    shares = [mix(coef) for coef in (p_up, p_down, q_up, q_down)]
    # a law's cell below the normal range beside a coefficient above 1 (its log: the law's
    # weight in Q or R, plus log 2, less a): the product has no precision left
    tiny = jnp.finfo(c0.dtype).tiny
    log_coef = (jnp.maximum(lq0, lr0), jnp.maximum(lq1, lr1), lr2)
    bad = functools.reduce(jnp.logical_or, [(c < tiny) & (w + _LOG2 - a > 0.0) for c, w in zip((c0, c1, c2), log_coef)])
    bad = functools.reduce(jnp.logical_or, [~jnp.isfinite(x) for x in shares], bad)
    shares = [jnp.where(bad, fill, x) for x, fill in zip(shares, (0.0, jnp.inf, 0.0, jnp.inf))]  # all to a
    pair = split_map(grid_step, (c0, q_cell), tuple(shares), first, last, offset)
    survival = lambda v, t: jnp.where(v < 0, 1.0 - t, t)
    return fold_top(pair, wq0 * survival(v0, t0) + wq1 * survival(v1, t1))


def split_coefficients(a, grid_step, sigma, p):
    """Coefficients of the cell masses (c_0, c_1, c_2) of N(k, s^2) in the four numerators
    of :func:`split_map` on the cells [a, b = a + h] (each a tuple of three arrays):

        P-mass to b:  (e^-a Q - P)(cell)      = alpha_0 c_0 + alpha_1 c_1
        P-mass to a:  (e^h P - e^-a Q)(cell)  = alpha'_0 c_0 - alpha_1 c_1
        Q-mass to b:  (e^-a R - Q)(cell)      = (1 - p) alpha_0 c_0 + beta_1 c_1 + beta_2 c_2
        Q-mass to a:  (e^h Q - e^-a R)(cell)  = (1 - p) alpha'_0 c_0 + beta'_1 c_1 - beta_2 c_2

    (times e^h - 1), with P = N(0, s^2), Q = (1 - p) P + p N(1, s^2), R = Q^2 / P =
    (1 - p)^2 N(0, s^2) + 2p(1 - p) N(1, s^2) + p^2 e^(1/s^2) N(2, s^2):
    alpha_0 = (1 - p) e^-a - 1 = expm1(log(1 - p) - a), alpha'_0 = e^h - (1 - p) e^-a =
    -e^h expm1(log(1 - p) - b), alpha_1 = p e^-a, beta_1 = p (2 (1 - p) e^-a - 1),
    beta'_1 = p (e^h - 2 (1 - p) e^-a), beta_2 = p^2 e^(1/s^2 - a). Each is formed with its
    relative precision (expm1 where it is a difference near 1), so a numerator loses digits
    only where its terms truly cancel. p = 1 (the Gaussian): alpha_0 = -1, alpha'_0 = e^h."""
    h = grid_step
    log1mp, logp = _log1mp(p), jnp.log(p)
    w0 = jnp.exp(log1mp)
    e_h = jnp.exp(h)
    alpha0 = jnp.expm1(log1mp - a)
    alpha0_down = -e_h * jnp.expm1(log1mp - (a + h))
    alpha1 = jnp.exp(logp - a)
    kept = jnp.exp(log1mp - a)  # (1 - p) e^-a
    beta2 = jnp.exp(2.0 * logp + 1.0 / sigma**2 - a)
    zero = jnp.zeros_like(a)
    return ((alpha0, alpha1, zero), (alpha0_down, -alpha1, zero),
            (w0 * alpha0, p * (alpha0 + kept), beta2), (w0 * alpha0_down, p * (alpha0_down - kept), -beta2))


_LOG2 = 0.6931471805599453

#: :func:`fold_top` ends a companion where the law's Q-survival first falls to this, below
#: the batch's shared length (the grid's end is where it is at most 1e-20).
FOLD_TAIL = 2e-20


def fold_top(pair: Pair, q_survival) -> tuple[Pair, Any]:
    """``pair`` with every label above the first point where ``q_survival`` (Pr_Q[L > x] at
    the grid points, rows x n) is at most :data:`FOLD_TAIL` moved to that point (one map
    for P and Q: a post-processing), and that point's index (rows,). The point depends on
    the row's own law only, so a row's companion does not depend on the length its batch
    shares (a longer grid would spread the tail that the end point absorbs)."""
    n = q_survival.shape[-1]
    below = q_survival <= FOLD_TAIL
    top = jnp.where(jnp.any(below, -1), jnp.argmax(below, -1), n - 1)
    idx = jnp.arange(n)[None, :]
    above, at = idx > top[:, None], idx == top[:, None]

    def fold(pmf):
        moved = jnp.sum(jnp.where(above, pmf, 0.0), -1, keepdims=True)
        return jnp.where(above, 0.0, pmf) + jnp.where(at, moved, 0.0)

    return Pair(fold(pair.pmf_x), fold(pair.pmf_y), *pair[2:]), top


def _sg(sigma, p, offset, grid_step, n):
    """The exponential-interpolation map of a subsampled Gaussian (see :func:`split_map`), ended
    by :func:`fold_top`: (pair, index of its last point)."""
    return _sg_split(*_sg_cdfs(sigma, p, offset, grid_step, n=n), sigma, p, offset, grid_step)


def split_map(grid_step, cells, shares, first, last, offset) -> Pair:
    """Masses (rows, n) of the randomised map that sends an output of loss L in the cell
    [a, b] = [x_j, x_{j+1}] to b with probability w = (e^L - e^a) / (e^b - e^a), else to a
    (the same kernel under P and Q: a post-processing), outputs below the first point to
    it and above the last to it.

    With dQ = e^L dP and dR = e^L dQ (R = Q^2 / P): the P-mass sent to b is
    (Q(cell) - e^a P(cell)) / (e^b - e^a), the connect-the-dots pair's own, and the Q-mass
    (R(cell) - e^a Q(cell)) / (e^b - e^a), at most e^b times the P-mass (the
    connect-the-dots pair's Q-mass, which makes that pair dominate this one); the masses
    kept at a are (e^b P(cell) - Q(cell)) / (e^b - e^a) and (e^b Q(cell) - R(cell)) /
    (e^b - e^a). ``cells``: the cells' (rows, n - 1) P-mass and Q-mass; ``shares``: the four
    numerators times e^-a, (e^-a Q - P, e^h P - e^-a Q, e^-a R - Q, e^h Q - e^-a R)(cell),
    each formed on its own (:func:`split_coefficients`) so that a share keeps its relative
    precision however small (a share taken as the cell's mass less the other would keep
    only the cell's absolute precision); each is clipped to [0, the cell's mass], the two
    shares of a cell summing to its mass up to rounding. ``first`` and ``last``: the (P, Q)
    masses (rows, 1) below the first point and above the last.
    """
    p_cell, q_cell = cells
    p_up, p_down, q_up, q_down = shares
    scale = 1.0 / jnp.expm1(grid_step)  # e^-a / (e^b - e^a) = 1 / (e^h - 1)
    share = lambda num, cell: jnp.clip(num * scale, 0.0, cell)
    zero = jnp.zeros_like(p_cell[:, :1])

    def assemble(lo, hi, lo_end, hi_end):
        pmf = jnp.concatenate([lo, zero], -1) + jnp.concatenate([zero, hi], -1)
        return pmf.at[:, :1].add(lo_end).at[:, -1:].add(hi_end)

    none = jnp.zeros(offset.shape, p_cell.dtype)
    pmf_x = assemble(share(p_down, p_cell), share(p_up, p_cell), first[0], last[0])
    pmf_y = assemble(share(q_down, q_cell), share(q_up, q_cell), first[1], last[1])
    return Pair(pmf_x, pmf_y, offset, none, none)


def _sg_nearest_cdfs(sigma, p, offset, grid_step, n):
    return _boundary_cdfs(subsampled_gaussian_log_cdfs, offset, grid_step, n, sigma, p)


def _sg_nearest(sigma, p, offset, grid_step, n):
    """The nearest-point map of a subsampled Gaussian (add/remove): cells from the loss's
    log CDFs at the half-way boundaries, ended by :func:`fold_top`."""
    return _folded_cells(*_sg_nearest_cdfs(sigma, p, offset, grid_step, n=n), offset)


def _sg_sub_cdfs(sigma, p, offset, grid_step, n):
    return _boundary_cdfs(subsampled_gaussian_substitution_log_cdfs, offset, grid_step, n, sigma, p)


def _sg_sub(sigma, p, offset, grid_step, n):
    return _folded_cells(*_sg_sub_cdfs(sigma, p, offset, grid_step, n=n), offset)


def _logaddexp(a, b):
    """log(e^a + e^b) that is -inf, never NaN, where both are -inf (the mixtures below meet
    -inf + -inf at p = 1 and beyond atoms, where some XLA fusions of jnp.logaddexp gave NaN)."""
    m = jnp.maximum(a, b)
    fin = jnp.where(jnp.isfinite(m), m, 0.0)
    return jnp.where(m == -jnp.inf, -jnp.inf, fin + jnp.log(jnp.exp(a - fin) + jnp.exp(b - fin)))


def _subsampled_laplace_log_cdfs(loss, eps, p):
    """:func:`dpax._engine.construct.subsampled_laplace_log_cdfs` with :func:`_logaddexp`."""
    # the base loss once for both laws: XLA may evaluate log / expm1 to different ulps in
    # different fusions, which could put an atom on a cell boundary into two cells
    t = jax.lax.optimization_barrier(inverse_subsampled_loss(loss, p))
    lf_y, ls_y, lf_x, ls_x = laplace_log_cdfs(t, eps)
    log1mp, logp = _log1mp(p), jnp.log(p)
    whole = p >= 1.0  # no mixture (and no -inf arithmetic) for the plain Laplace mechanism
    lf_q = jnp.where(whole, lf_y, _logaddexp(log1mp + lf_x, logp + lf_y))
    ls_q = jnp.where(whole, ls_y, _logaddexp(log1mp + ls_x, logp + ls_y))
    return lf_q, ls_q, lf_x, ls_x


def _log1mp(p):
    """log(1 - p), exactly -inf at p = 1 (log1p(-1) is not -inf in every XLA code path)."""
    return jnp.where(p >= 1.0, -jnp.inf, jnp.log1p(-p))


def _laplace_cdfs(eps, p, offset, grid_step, n):
    return _boundary_cdfs(_subsampled_laplace_log_cdfs, offset, grid_step, n, eps, p)


def _laplace(eps, p, offset, grid_step, n):
    return _cells(*_laplace_cdfs(eps, p, offset, grid_step, n=n), offset)


_sg_cdfs = _cache.kernel(jax.jit(_sg_cdfs, static_argnames=("n",)), "opt_sg_cdfs")
_sg_split = _cache.kernel(jax.jit(_sg_split), "opt_sg_split")
_sg_sub_cdfs = _cache.kernel(jax.jit(_sg_sub_cdfs, static_argnames=("n",)), "opt_sg_sub_cdfs")
_sg_nearest_cdfs = _cache.kernel(jax.jit(_sg_nearest_cdfs, static_argnames=("n",)), "opt_sg_nearest_cdfs")
_laplace_cdfs = _cache.kernel(jax.jit(_laplace_cdfs, static_argnames=("n",)), "opt_laplace_cdfs")


def _run(kernel, a, b, offset, grid_step, n):
    check_memory(int(np.size(offset)), int(n), "optimistic companion")
    return kernel(jnp.asarray(a), jnp.asarray(b), jnp.asarray(offset), np.float64(grid_step), n=int(n))


#: Noise over sample rate above which the subsampled Gaussian's companion maps each output to
#: its nearest point instead of splitting it (:func:`split_map`). A split share of the cell
#: holding the loss 0 is a difference of cell masses near 1/2 that differ by ~p / sigma, and
#: its rounding reaches the tails that set mu: beyond this ratio the optimistic mu rose
#: above the truth (the Gaussian at sigma 1e9: 3e-8 against 1e-9; sigma 100 at p 1e-12: 7e-12
#: against 1e-14), below it (measured at p = 1 to 1e-12) it stayed under it. The nearest
#: point map's masses keep their own precision; there the risks are below ~1e-6 and the
#: companion close to the identity.
SPLIT_MAX_NOISE_OVER_RATE = 1e6


def subsampled_gaussian_kernel(sigma, p, offset, grid_step, n) -> tuple[Pair, Slack]:
    """Optimistic companion (rows, n) of the Poisson-subsampled Gaussian, add/remove
    (P = N(0, s^2), Q = (1 - p) N(0, s^2) + p N(1, s^2); p = 1: the Gaussian), by the
    randomised map of :func:`split_map` (by nearest point for the rows whose sigma / p
    exceeds :data:`SPLIT_MAX_NOISE_OVER_RATE`), and its :class:`Slack` (a label's mass comes
    from losses within one step of it, half a step by nearest point; the end points, which
    absorb the unbounded tails, are irregular: L has no upper bound, and no lower bound
    when p = 1)."""
    sigma, p = np.asarray(sigma, np.float64), np.asarray(p, np.float64)
    with np.errstate(divide="ignore"):
        loss_min = np.log1p(-p)  # L >= log(1 - p); -inf for p = 1
    nearest = sigma > SPLIT_MAX_NOISE_OVER_RATE * p
    if not nearest.any():
        pair, top = _run(_sg, sigma, p, offset, grid_step, n)
    elif nearest.all():
        pair, top = _run(_sg_nearest, sigma, p, offset, grid_step, n)
    else:  # both maps, each row taking its own
        (split, split_top), (near, near_top) = (_run(k, sigma, p, offset, grid_step, n) for k in (_sg, _sg_nearest))
        rows = jnp.asarray(nearest)[:, None]
        pair = Pair(jnp.where(rows, near.pmf_x, split.pmf_x), jnp.where(rows, near.pmf_y, split.pmf_y),
                    *split[2:])
        top = np.where(nearest, np.asarray(near_top), np.asarray(split_top))
    return with_slack(pair, grid_step, loss_min, np.inf, width=np.where(nearest, 0.5, 1.0), top=top)


def subsampled_gaussian_substitution_kernel(sigma, p, offset, grid_step, n) -> tuple[Pair, Slack]:
    """Optimistic companion (rows, n) of the Poisson-subsampled Gaussian, replace-one."""
    pair, top = _run(_sg_sub, sigma, p, offset, grid_step, n)
    return with_slack(pair, grid_step, -np.inf, np.inf, top=top)


def laplace_kernel(eps, p, offset, grid_step, n) -> tuple[Pair, Slack]:
    """Optimistic companion (rows, n) of the (Poisson-subsampled) Laplace mechanism. Its
    loss is bounded and lies inside the grid, so every cell is regular."""
    eps, p = np.asarray(eps, np.float64), np.asarray(p, np.float64)
    with np.errstate(divide="ignore"):
        loss_min = np.logaddexp(np.log1p(-p), np.log(p) - eps)
        loss_max = np.logaddexp(np.log1p(-p), np.log(p) + eps)
    return with_slack(_run(_laplace, eps, p, offset, grid_step, n), grid_step, loss_min, loss_max)


def _mixture_cdfs(log_p0, shifts, log_p, offset, grid_step, n):
    return _boundary_cdfs(mixture_log_cdfs, offset, grid_step, n, log_p0, shifts, log_p)


_mixture_cdfs = _cache.kernel(jax.jit(_mixture_cdfs, static_argnames=("n",)), "opt_mog_cdfs")


def mixture_of_gaussians_kernel(log_p0, shifts, log_p, offset, grid_step, n) -> tuple[Pair, Slack]:
    """Optimistic companion (rows, n) of the mixture-of-Gaussians mechanism
    (:func:`dpax._engine.construct.mixture_log_cdfs`; ``log_p0`` (rows,), ``shifts`` and
    ``log_p`` (rows, m)) by nearest point: each cell's masses from the exact loss CDFs at
    the half-way boundaries, ended by :func:`fold_top` (the loss has no upper bound), and
    its :class:`Slack` (the first point is regular when the loss is bounded below by
    log p_0 within half a step of it; a row without components is the identity: one atom
    at 0, regular)."""
    log_p0, shifts, log_p = (np.asarray(a, np.float64) for a in (log_p0, shifts, log_p))
    check_memory(int(np.size(offset)), int(n) * (1 + shifts.shape[-1]), "optimistic companion")
    cdfs = _mixture_cdfs(jnp.asarray(log_p0), jnp.asarray(shifts), jnp.asarray(log_p), jnp.asarray(offset),
                         np.float64(grid_step), n=int(n))
    pair, top = _folded_cells(*cdfs, jnp.asarray(offset))
    identity = ~np.any(log_p > -np.inf, -1)
    return with_slack(pair, grid_step, np.where(identity, 0.0, log_p0), np.where(identity, 0.0, np.inf), top=top)
