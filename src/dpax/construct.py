"""Discrete dominating pairs on the grid ``k * grid_step`` (seed paper, Appendix E.1).

Two constructions:

* :func:`discretise_loss_law` — for mechanisms whose privacy-loss law is known in closed
  form (Gaussian, Poisson-subsampled Gaussian). Each grid cell (a, b] of losses is split
  between its two end points so that both its Q-mass and its P-mass are kept: a pair with
  likelihood ratio in [e^a, e^b] is a post-processing of the two-point pair with ratios
  exactly e^a and e^b. This is the connect-the-dots pair of Doroshenko et al. (Algorithm 2
  of the seed paper), but computed from *first* differences of the loss CDFs, evaluated in
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
from jax.scipy.special import log_ndtr

_LOG_HALF = -0.6931471805599453


def _mass_between(lf_a, lf_b, ls_a, ls_b):
    """Pr[a < L <= b] from log CDF and log survival at a < b, from the smaller tail."""
    safe = lambda v: jnp.where(jnp.isfinite(v), v, 0.0)
    from_cdf = jnp.exp(lf_b) * -jnp.expm1(safe(lf_a) - safe(lf_b))
    from_cdf = jnp.where(lf_b == -jnp.inf, 0.0, jnp.where(lf_a == -jnp.inf, jnp.exp(lf_b), from_cdf))
    from_sf = jnp.exp(ls_a) * -jnp.expm1(safe(ls_b) - safe(ls_a))
    from_sf = jnp.where(ls_a == -jnp.inf, 0.0, jnp.where(ls_b == -jnp.inf, jnp.exp(ls_a), from_sf))
    return jnp.maximum(jnp.where(lf_b < _LOG_HALF, from_cdf, from_sf), 0.0)


def split_cells(grid, grid_step, lf_y, ls_y, lf_x, ls_x):
    """Connect-the-dots masses from the loss CDFs at the grid points (rows, n).

    ``lf_y, ls_y`` are log Pr_Q[L <= g], log Pr_Q[L > g] (the law of Y) and ``lf_x, ls_x``
    the same under P (the law of X). Returns ``(pmf_x, pmf_y, inf_y, neginf_x)``.
    """
    q_cell = _mass_between(lf_y[:, :-1], lf_y[:, 1:], ls_y[:, :-1], ls_y[:, 1:])
    p_cell = _mass_between(lf_x[:, :-1], lf_x[:, 1:], ls_x[:, :-1], ls_x[:, 1:])
    a, b = grid[:, :-1], grid[:, 1:]
    # q_hi + q_lo = Q(cell), q_hi e^-b + q_lo e^-a = P(cell)
    q_hi = jnp.maximum((q_cell - jnp.exp(a) * p_cell) / -jnp.expm1(-grid_step), 0.0)
    q_lo = jnp.maximum((jnp.exp(b) * p_cell - q_cell) / jnp.expm1(grid_step), 0.0)
    zero = jnp.zeros_like(grid[:, :1])
    pmf_y = jnp.concatenate([q_lo, zero], -1) + jnp.concatenate([zero, q_hi], -1)
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
    lf_x, ls_x = log_ndtr(u), log_ndtr(-u)
    lf_y = jnp.logaddexp(log1mp + lf_x, jnp.log(p) + log_ndtr(v))
    ls_y = jnp.logaddexp(log1mp + ls_x, jnp.log(p) + log_ndtr(-v))
    return lf_y, ls_y, lf_x, ls_x


@functools.partial(jax.jit, static_argnames=("n",))
def subsampled_gaussian_kernel(sigma, p, offset, grid_step, n):
    """Discrete dominating pair of the Poisson-subsampled Gaussian, rows of length n."""
    grid = (offset[:, None] + jnp.arange(n)[None, :]) * grid_step
    cdfs = subsampled_gaussian_log_cdfs(grid, sigma[:, None], p[:, None])
    # materialise the CDFs: otherwise XLA fuses (and so recomputes) them into every consumer
    cdfs = jax.lax.optimization_barrier(cdfs)
    return split_cells(grid, grid_step, *cdfs)


@functools.partial(jax.jit, static_argnames=("profile", "n"))
def connect_the_dots(profile, params, offset, grid_step, n):
    """Algorithm 2 of the seed paper (Doroshenko et al. 2022) from a privacy profile.

    ``profile(eps, *params)`` is delta(eps) of the pair (P, Q), vectorised. Masses of P at
    e_i come from second differences of delta over e^{eps}, Q = e^{eps} P; delta(e_last)
    is the +inf atom and the P-mass left over is the -inf atom.
    """
    grid = (offset[:, None] + jnp.arange(n)[None, :]) * grid_step
    prm = [jnp.asarray(v)[:, None] for v in params]
    d = jnp.clip(profile(grid, *prm), 0.0, 1.0)
    e = jnp.exp(grid)
    # slopes of delta against e^eps between consecutive points
    slope = (d[:, 1:] - d[:, :-1]) / (e[:, 1:] - e[:, :-1])
    # before e_0 the chord from (e^-inf, delta) = (0, 1); after the last point delta is flat
    first = ((d[:, 0] - 1.0) / e[:, 0])[:, None]
    left = jnp.concatenate([first, slope], -1)
    right = jnp.concatenate([slope, jnp.zeros_like(first)], -1)
    pmf_x = jnp.maximum(right - left, 0.0)
    pmf_y = jnp.exp(jnp.log(pmf_x) + grid)
    inf_y = d[:, -1]
    neginf_x = jnp.maximum(1.0 + first[:, 0], 0.0)
    return pmf_x, pmf_y, inf_y, neginf_x
