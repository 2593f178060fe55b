"""Algorithm 2 of Kulynych et al. 2024 (the connect-the-dots construction of Doroshenko et al.
2022) from a vectorised privacy profile delta(epsilon), for mechanisms known only through it.
Its accuracy is that of second differences: about 1e-16 / grid_step^2 per point mass.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from .. import cache as _cache
from .cells import close_mass


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
