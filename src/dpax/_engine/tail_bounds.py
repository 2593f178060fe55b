"""A composed dominating pair with its far tails bounded through tilted laws.

The FFT's round-off is absolute: every composed point carries up to ~T ulps of the law's
peak (:mod:`dpax._engine.roundoff`), and the safe side books that bound on every point. Far in
the tails, where the masses are a few times the bound or less, the booking dominates, and a
risk read there (mu, set at an FPR near its ``tail`` of 1e-10) is pessimistic by more than the
grid: DP-SGD (noise 1, sample rate 1e-3, 10 steps, grid 1e-4) gives mu 0.1028 for a
companion's 0.0704.

The exponential tilt commutes with composition, (Y e^(t x))^(*T) = Y^(*T) e^(t s), so the
composition of the tilted big sides Y e^(t2 x) and X e^(-t3 x) (their rates from Chernoff
bounds at the far tails, :func:`dpax._engine.chernoff.tilt_rates`) has its round-off
relative to the tilted law, whose peak sits in the far tail. Tilted back, its values bound
each far-tail mass within a relative error of ~T ulps, the circular wrap bounded by Chernoff
bounds as for a companion (:mod:`dpax._engine.optimistic`). :func:`tighten` takes, at every
point, the tighter of those bounds and the FFT value's own, and builds the safe pair of them
exactly as the plain composition does (:func:`dpax._engine.roundoff.masses_of_bounds`: upper
bounds on the big sides, the small sides e^-|x| times the other law's lower bounds, the
total closed by :func:`dpax._engine.roundoff.close_bounded`), so every argument for that
pair's safety holds with the tighter bounds.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import cache as _cache
from . import grid as _grid
from .grid import loss_grid
from .optimistic.reclose import ROUNDOFF_STEPS_MAX, big_side_bounds, tilted_back, wrapped_mass
from .pair import Pair
from .roundoff import close_bounded, masses_of_bounds, roundoff


def _tighten(raw: Pair, big: Pair, theta, alias, lo, hi, length, steps, grid_step) -> Pair:
    """The safe pair of a composition's unclosed values ``raw`` and its composed tilted big
    sides ``big`` (X e^(-t3 x), Y e^(t2 x); ``theta`` (rows, 4) the rates, ``alias`` the
    log-MGFs bounding their wrap), on the window [lo, hi] of an FFT of ``length`` points
    after ``steps`` composed steps (all (rows,))."""
    n = raw.pmf_x.shape[-1]
    index = loss_grid(raw.offset, n, 1)
    x = index * grid_step
    inside = (index >= lo[:, None]) & (index <= hi[:, None])
    eta = lambda a: jnp.where(inside, roundoff(jnp.max(a, -1), steps, length), 0.0)
    rel = (1.0 + 4.4e-16 * (steps + 4.0))[:, None]  # the tilts' own rounding (T ulps), and e^-(theta x)'s
    span = (length * grid_step)[:, None]
    log_mgfs, points = alias
    back_x = lambda m: tilted_back(m, theta[:, 3:] * jnp.maximum(-x, 0.0))
    back_y = lambda m: tilted_back(m, theta[:, 2:3] * jnp.maximum(x, 0.0))
    wrap_x = wrapped_mass(log_mgfs[:, 1], theta[:, 3:], -x + span, -x - span, span + points[:, 1:])
    wrap_y = wrapped_mass(log_mgfs[:, 0], theta[:, 2:3], x + span, x - span, span + points[:, :1])
    tilted_x = (back_x(big.pmf_x - eta(big.pmf_x) - wrap_x) * (2.0 - rel), back_x(big.pmf_x + eta(big.pmf_x)) * rel)
    tilted_y = (back_y(big.pmf_y - eta(big.pmf_y) - wrap_y) * (2.0 - rel), back_y(big.pmf_y + eta(big.pmf_y)) * rel)
    # beyond the round-off model's steps (first order in T ulps) the tilted bounds are not
    # used: infinite, so that big_side_bounds keeps the FFT value's own
    beyond = (steps > ROUNDOFF_STEPS_MAX)[:, None]
    tilted_x = (jnp.where(beyond, jnp.inf, tilted_x[0]), jnp.where(beyond, jnp.inf, tilted_x[1]))
    tilted_y = (jnp.where(beyond, jnp.inf, tilted_y[0]), jnp.where(beyond, jnp.inf, tilted_y[1]))
    # (the tilt back is e^-(t max(+-x, 0)), so these bound X at x <= 0 and Y at x >= 0 only:
    # masses_of_bounds reads X's bounds there and Y's there, the small sides from the other law)
    bounds_x = big_side_bounds(raw.pmf_x, eta(raw.pmf_x), tilted_x)
    bounds_y = big_side_bounds(raw.pmf_y, eta(raw.pmf_y), tilted_y)
    # on the small sides only the FFT value's own upper bound holds (close_bounded reads it
    # between a law's mode and loss 0 where the mode is on the small side)
    bounds_x = (bounds_x[0], jnp.where(x > 0, raw.pmf_x + eta(raw.pmf_x), bounds_x[1]))
    bounds_y = (bounds_y[0], jnp.where(x < 0, raw.pmf_y + eta(raw.pmf_y), bounds_y[1]))
    # each law's largest FFT value: where, and how much at least (the value less its round-off)
    peak_x, peak_y = jnp.max(raw.pmf_x, -1), jnp.max(raw.pmf_y, -1)
    eta_x, eta_y = roundoff(peak_x, steps, length)[:, 0], roundoff(peak_y, steps, length)[:, 0]
    at_x, at_y = raw.offset + jnp.argmax(raw.pmf_x, -1), raw.offset + jnp.argmax(raw.pmf_y, -1)
    modes = ((at_x, peak_x - eta_x), (at_y, peak_y - eta_y))
    # a far tail (beyond the law's mean and mode) whose bounds are loose (more than a factor 2
    # apart: round-off) keeps both masses on the small side too (the upper bound there), as
    # the plain composition's does
    mean = lambda pmf: jnp.sum(pmf * x, -1) / jnp.maximum(jnp.sum(pmf, -1), 1e-300)
    far_x = (x < jnp.minimum(mean(raw.pmf_x), at_x * grid_step)[:, None]) & (bounds_x[0] < 0.5 * bounds_x[1])
    far_y = (x > jnp.maximum(mean(raw.pmf_y), at_y * grid_step)[:, None]) & (bounds_y[0] < 0.5 * bounds_y[1])
    bounds = masses_of_bounds(bounds_x, bounds_y, (far_x, far_y), raw.offset, grid_step)
    bounds = tuple(tuple(jnp.where(inside, a, 0.0) for a in law) for law in bounds)
    # a far tail's small side holds e^-|x| times at most 4 eta (its bounds are more than a factor 2 apart)
    pmf_x, pmf_y, inf_y, neginf_x = close_bounded(bounds, raw.inf_y, raw.neginf_x, raw.offset, lo, hi, modes,
                                                  (eta_x, eta_y), grid_step, precise=True)
    return Pair(pmf_x, pmf_y, raw.offset, inf_y, neginf_x)


_tighten_kernel = _cache.kernel(jax.jit(_tighten), "tail_bounds", fusion_emitters=False)

#: Peak working memory of :func:`tighten` per row and grid point, in bytes: its inputs (four
#: laws), the tilted bounds, the masses and their closing (~30 float64 arrays; a third of
#: what the composition before it is allowed, :data:`dpax._engine.grid.BYTES_PER_POINT` per law).
TIGHTEN_BYTES_PER_POINT = 320


def tighten(comp: Any, steps, grid_step: float) -> Pair:
    """The safe pair of an unclosed tilted composition of exact-ratio factors
    (:func:`dpax._engine.composition.compose_arrays` with ``tilted`` and not ``closed``),
    ``steps`` (rows,) the composed steps of each row: each point's bounds the tighter of
    the FFT value's and the tilted big side's (see the module docstring)."""
    rows, n = comp.pair.pmf_x.shape
    _grid.check_bytes(TIGHTEN_BYTES_PER_POINT * rows * n, "far-tail bounds", f"{rows} row(s) of {n} grid points")
    host = lambda a, dtype=None: jnp.asarray(np.asarray(a, dtype))
    return _tighten_kernel(comp.pair, comp.tilted_big, jnp.asarray(comp.theta),
                           tuple(jnp.asarray(a) for a in comp.alias), host(comp.lo), host(comp.hi),
                           host(comp.length, np.float64), host(steps, np.float64), np.float64(grid_step))
