"""Discrete dominating pair of the mixture-of-Gaussians mechanism P = N(0, 1),
Q = p_0 N(0, 1) + sum_i p_i N(c_i, 1): the loss's inverse by safeguarded Newton steps, its
log CDFs, split by :mod:`.cells`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import cache as _cache
from ..grid import loss_grid
from ..pair import Pair
from ..special import log_ndtr_pair
from .cells import as_pair, split_cells_kernel

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
    return as_pair(split_cells_kernel(grid, grid_step, *cdfs), offset)
