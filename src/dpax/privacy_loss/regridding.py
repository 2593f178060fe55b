"""A PrivacyLoss moved to another grid step.

The dominating pair by connect-the-dots (Kulynych et al. 2024, Algorithm 2 applied to the
pair's own atoms): every grid point is an atom split between the two new grid points
around it so that both its P- and Q-mass are kept, an exact post-processing of the new
pair, so the result dominates the old one. An optimistic companion goes to the nearest new
point instead (:func:`dpax._engine.optimistic.regrid`), a post-processing, still optimistic.
"""

from __future__ import annotations

import numpy as np

from .._engine import construct as _construct
from .._engine import grid as _grid
from .._engine import optimistic as _optimistic
from .._engine import validation as _v
from .._engine.x64 import float64
from .companion import derived, need_slack, optimistic
from .fields import V


@float64
def regrid(pl: V, grid_step: float) -> V:
    """``pl`` on the grid ``k * grid_step`` (``pl`` if the step is unchanged); see
    :meth:`dpax.PrivacyLoss.regrid`.

    Args:
        pl: the value to move (a dominating pair or an optimistic companion).
        grid_step: the new grid's step, one number in [1e-7, 1].

    Returns:
        A value of ``pl``'s class on the new grid, same batch shape and description. For a
        dominating pair, by connect-the-dots: it dominates ``pl`` (its curve lies on or
        below, every risk on the safe side), exactly ``pl``'s risks where the new points
        include the old ones (an integer divisor of the old step), and it keeps the GDP
        bound and gets the regridded companion. For an optimistic companion, by nearest
        point: still optimistic. ``pl`` itself if the step is unchanged.

    Raises:
        TypeError: ``grid_step`` an array or not a real number.
        ValueError: ``grid_step`` outside (0, 1] or below 1e-7; an optimistic ``pl`` that
            lost its ratio bounds (rebuilt from arrays); or the new pair beyond the memory
            budget (:class:`dpax._engine.grid.MemoryBudgetError`, a ValueError).

    >>> import dpax
    >>> regrid(dpax.gaussian(1.0, grid_step=1e-2), 2e-2).grid_step
    0.02
    """
    step = _v.grid_step(grid_step)
    if step == pl.grid_step:
        return pl
    if pl.optimistic:  # nearest new point: a post-processing, still optimistic
        built = _optimistic.regrid(pl.pair, need_slack(pl), pl.grid_step, step, _grid.padded_length)
        return optimistic(type(pl), built, step, pl.batch_shape, pl.description)
    pmf_x, pmf_y, offset, inf_y, neginf_x = (np.asarray(a) for a in pl.pair)
    rows, n = pmf_x.shape
    loss = _grid.loss_grid(offset, n, pl.grid_step)
    col = np.ones((rows, 1))
    loss = np.concatenate([-np.inf * col, loss, np.inf * col], -1)
    with np.errstate(divide="ignore"):
        lp = np.concatenate([np.log(neginf_x)[:, None], np.log(pmf_x), -np.inf * col], -1)
        lq = np.concatenate([-np.inf * col, np.log(pmf_y), np.log(inf_y)[:, None]], -1)
    pair = _construct.pair_from_atoms(loss, lp, lq, step, tail=0.0, exact_ratio=pl.exact_ratio,
                                      what=pl.description)
    return type(pl)._make(pair, step, pl.description, pl.batch_shape, exact_ratio=pl.exact_ratio,
                          gdp_bound=pl._gdp_bound,  # the same mechanism
                          **derived(pl, lambda c: regrid(c, step)))
