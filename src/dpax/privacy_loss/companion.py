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
from typing import TypedDict, cast

import jax
import numpy as np

from .._engine import optimistic as _optimistic
from .._engine.pair import Pair
from .fields import Companion, Fields, Tails, V, replaced
from .tails import tight_tails

#: value -> its companion, for as long as the value lives (keys compare by identity).
_MEMO: weakref.WeakKeyDictionary[Fields, Fields] = weakref.WeakKeyDictionary()


class DerivedFacts(TypedDict, total=False):
    """The companion facts of a derived value, as keyword arguments of ``Fields._make``
    (:func:`derived`): ``optimistic`` and ``slack`` for an optimistic value, ``companion``
    (a recipe or the reason there is none) and ``tails`` (how its far tails are tightened,
    :mod:`dpax.privacy_loss.tails`) for any other.

    >>> DerivedFacts(companion="none here")
    {'companion': 'none here'}
    """

    optimistic: bool
    slack: _optimistic.Slack | None
    companion: Companion
    tails: Tails


def optimistic_companion(pl: V) -> V:
    """The optimistic companion of ``pl`` (``pl`` itself if it is one), labelled
    ``"<description> (optimistic)"``; built by its recipe on first use, then memoised. See
    :meth:`dpax.PrivacyLoss.optimistic_companion` for what it is.

    Args:
        pl: the value (a :class:`dpax.PrivacyLoss`, or any subclass of its fields).

    Returns:
        A value of ``pl``'s class, ``optimistic`` True, with ``pl``'s grid step and batch
        shape, whose trade-off curve lies on or above the truth (every risk it gives is on
        the optimistic side); the same object on every call while ``pl`` lives.

    Raises:
        ValueError: ``pl`` has none (built from arrays, a privacy profile, atoms,
            ``approximate_dp``, or imported from dp-accounting); the message says why.

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
    DeprecationWarning pointing at the caller's line.

    Args:
        pl: the value whose companion is asked for.

    Returns:
        ``optimistic_companion(pl)``, the same object.

    Raises:
        ValueError: ``pl`` has no companion (as :func:`optimistic_companion`).

    Warns:
        DeprecationWarning: always; ``bounds()`` is removed in the next release.

    >>> import warnings, dpax
    >>> pl = dpax.gaussian(1.0, grid_step=1e-2)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     same = deprecated_bounds(pl) is optimistic_companion(pl)
    >>> same, caught[0].category.__name__
    (True, 'DeprecationWarning')
    """
    warnings.warn("PrivacyLoss.bounds() is deprecated and will be removed in the next release: it is "
                  "PrivacyLoss.optimistic_companion()", DeprecationWarning, stacklevel=3)
    return optimistic_companion(pl)


def optimistic(cls: type[V], built: tuple[Pair, _optimistic.Slack], grid_step: float, batch_shape: tuple[int, ...],
               description: str = "optimistic companion") -> V:
    """The optimistic value (of class ``cls``) of an engine result ``(pair, slack)``: the
    mechanisms' companion recipes end here.

    Args:
        cls: the class of the value to build (:class:`dpax.PrivacyLoss`).
        built: ``(pair, slack)``: the companion's PLRV arrays (rows, unchecked) and their
            ratio bounds, as :mod:`dpax._engine.optimistic` returns them.
        grid_step: the grid's step.
        batch_shape: the batch shape to show (its product is the number of rows).
        description: a label shown by ``repr`` and in reports.

    Returns:
        A ``cls`` value with ``optimistic`` True and the slack kept (it has no companion of
        its own: it is one).

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

    Args:
        pl: an optimistic value (from :func:`optimistic_companion`).

    Returns:
        Its :class:`dpax._engine.optimistic.Slack`, per row.

    Raises:
        ValueError: ``pl`` carries none (an optimistic pair rebuilt from its arrays, or a
            value that is not optimistic); the message names ``pl``'s description.

    >>> import dpax
    >>> need_slack(optimistic_companion(dpax.gaussian(1.0, grid_step=1e-2))) is not None
    True
    """
    if pl._slack is None:
        raise ValueError(f"{pl.description}: this optimistic pair has lost its ratio bounds (rebuilt from "
                         "its arrays?); compose or regrid the PrivacyLoss that optimistic_companion() returned instead")
    return pl._slack


def derived(parent: V, make: Callable[[V], Fields], rows: np.ndarray | None = None) -> DerivedFacts:
    """The companion facts of a value derived from ``parent`` (rows taken, broadcast,
    regridded, composed with itself), as keyword arguments of ``Fields._make``: an optimistic
    parent gives an optimistic value with the slack of ``rows`` (an index array; None: lost);
    otherwise the companion is ``make(optimistic_companion(parent))`` (built on first use), or ``parent``'s
    reason why there is none, and the tightened tails ``make(tight_tails(parent))`` where
    ``parent`` has a recipe for them (``make`` a view: rows, broadcast, another grid).

    Args:
        parent: the value derived from.
        make: what the derivation does, applied to ``parent``'s companion (called only when
            the derived value's companion is first asked for).
        rows: for an optimistic ``parent``, the flat row numbers the derived value keeps
            (its slack is taken at them); ``None`` (default) where the rows are not
            ``parent``'s (the slack is then lost, and the derived value cannot be composed
            or regridded).

    Returns:
        ``{"optimistic": True, "slack": ...}`` for an optimistic ``parent``;
        ``{"companion": recipe, "tails": ...}`` for one with a companion recipe;
        ``{"companion": reason, "tails": ...}`` (the string) for one without; ``tails`` the
        derived recipe, or None.

    >>> import dpax
    >>> derived(dpax.approximate_dp(1.0, 1e-5, grid_step=1e-2), lambda c: c)["companion"][:27]
    'approximate_dp is the worst'
    """
    if parent.optimistic:
        slack = None if (parent._slack is None or rows is None) else parent._slack.take(rows)
        return {"optimistic": True, "slack": slack}
    tails: Tails = None if parent._tails is None else (lambda: make(tight_tails(parent)))
    if isinstance(parent._companion, str):
        return {"companion": parent._companion, "tails": tails}
    return {"companion": lambda: make(optimistic_companion(parent)), "tails": tails}
