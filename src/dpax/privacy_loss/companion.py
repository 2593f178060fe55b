"""The optimistic companion of a PrivacyLoss: a pair whose trade-off curve lies on or above
the truth, built once per value and memoised beside it (never in it).

A companion is a post-processing of the mechanism's output onto the grid (each output's
loss rounded to a grid point, or for the add/remove subsampled Gaussian split between its
cell's ends by exponential interpolation), so every number it gives is on the optimistic
side; compositions compose the companions. :mod:`dpax._engine.optimistic` has the argument
and its equations. A value carries only how its companion is obtained (a recipe, or the
reason there is none: :data:`dpax.privacy_loss.fields.Companion`); :func:`optimistic_companion` runs the
recipe on first use and keeps the result in a weak table keyed by the value's identity, so
a second ``pl.delta(1.0, bounds=True)`` reuses it and the value itself never changes.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import Any, cast

import jax

from .._engine import optimistic as _optimistic
from .._engine.pair import Pair
from .fields import Fields, V, replaced

#: value -> its companion, for as long as the value lives (keys compare by identity).
_MEMO: weakref.WeakKeyDictionary[Fields, Fields] = weakref.WeakKeyDictionary()


def optimistic_companion(pl: V) -> V:
    """The optimistic companion of ``pl`` (``pl`` itself if it is one), labelled
    ``"<description> (optimistic)"``; built by its recipe on first use, then memoised.

    Raises:
        ValueError: ``pl`` has none; the message says why.

    >>> import dpax
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> optimistic_companion(pl) is optimistic_companion(pl), optimistic_companion(pl).description
    (True, 'gaussian(noise_multiplier=1, sensitivity=1) (optimistic)')
    """
    if pl.optimistic:
        return pl
    comp = _MEMO.get(pl)
    if comp is None:
        recipe = pl._companion
        if isinstance(recipe, str):
            raise ValueError(f"no optimistic companion exists for {pl.description}: {recipe}")
        with jax.enable_x64(True):
            built = recipe()
        comp = replaced(built, description=f"{pl.description} (optimistic)")
        _MEMO[pl] = comp
    return cast(V, comp)


def deprecated_bounds(pl: V) -> V:
    """:func:`optimistic_companion` for the deprecated ``PrivacyLoss.bounds()``, with a
    DeprecationWarning pointing at the caller's line."""
    warnings.warn("PrivacyLoss.bounds() is deprecated and will be removed in the next release: it is "
                  "PrivacyLoss.optimistic_companion()", DeprecationWarning, stacklevel=3)
    return optimistic_companion(pl)


def optimistic(cls: type[V], built: tuple[Pair, _optimistic.Slack], grid_step: float, batch_shape: tuple[int, ...],
               description: str = "optimistic companion") -> V:
    """The optimistic value (of class ``cls``) of an engine result ``(pair, slack)``: the
    mechanisms' companion recipes end here.

    >>> import dpax
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> c = optimistic_companion(pl)
    >>> optimistic(type(pl), (c.pair, need_slack(c)), 1e-2, ()).optimistic
    True
    """
    pair, slack = built
    return cls._make(pair, grid_step, description, batch_shape, optimistic=True, slack=slack)


def need_slack(pl: Fields) -> _optimistic.Slack:
    """The slack (ratio bounds) of an optimistic pair, or a ValueError (lost on a rebuild
    from arrays).

    >>> import dpax
    >>> need_slack(optimistic_companion(dpax.gaussian(1.0, grid_step=1e-2))) is not None
    True
    """
    if pl._slack is None:
        raise ValueError(f"{pl.description}: this optimistic pair has lost its ratio bounds (rebuilt from "
                         "its arrays?); compose or regrid the PrivacyLoss that optimistic_companion() returned instead")
    return pl._slack


def derived(parent: V, make: Callable[[V], Fields], rows: Any = None) -> dict[str, Any]:
    """The companion facts of a value derived from ``parent`` (rows taken, broadcast,
    regridded, composed with itself), as keyword arguments of ``Fields._make``: an optimistic
    parent gives an optimistic value with the slack of ``rows`` (an index array; None: lost);
    otherwise the companion is ``make(optimistic_companion(parent))`` (built on first use), or ``parent``'s
    reason why there is none.

    >>> import dpax
    >>> derived(dpax.approximate_dp(1.0, 1e-5, grid_step=1e-2), lambda c: c)["companion"][:27]
    'approximate_dp is the worst'
    """
    if parent.optimistic:
        slack = None if (parent._slack is None or rows is None) else parent._slack.take(rows)
        return {"optimistic": True, "slack": slack}
    if isinstance(parent._companion, str):
        return {"companion": parent._companion}
    return {"companion": lambda: make(optimistic_companion(parent))}
