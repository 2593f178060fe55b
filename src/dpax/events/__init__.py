"""dp-accounting's DpEvent trees as PrivacyLoss values.

TensorFlow Privacy, JAX Privacy and dp-accounting's users describe a training run or a
release as a tree of ``dp_accounting.dp_event`` objects: ``PoissonSampledDpEvent(q,
GaussianDpEvent(sigma))`` repeated ``SelfComposedDpEvent(..., T)``, ``ComposedDpEvent([...])``,
Laplace, randomized response, mixtures of Gaussians. :func:`from_dp_event` turns such a
tree into one :class:`~dpax.PrivacyLoss`, so that every dpax answer (beta, advantage, mu
and regret, calibration, sweeps, plots) works from events:

1. the tree is walked into a *tally*: each distinct mechanism (a leaf and its parameters)
   with the number of times it runs (:func:`tally`);
2. the Gaussian leaves are merged into one Gaussian (k runs of mu_i-GDP mechanisms are
   exactly sqrt(sum k_i mu_i^2)-GDP: Dong, Roth & Su, "Gaussian differential privacy",
   2022), the other leaves are built family by family, each family as one batch;
3. all of them are composed once, by FFT, with their counts (:func:`dpax.compose`).

The events and neighbouring relations are those of dp-accounting's ``PLDAccountant``
(dp-accounting 0.4 and later), with the same rules for which event allows which relation:

=====================================  =============================================  ==========================
event                                  dpax mechanism                                 relations
=====================================  =============================================  ==========================
``GaussianDpEvent(s)``                 :func:`~dpax.gaussian` (merged, see above)      all three
``LaplaceDpEvent(b)``                  :func:`~dpax.laplace`                           add/remove, special
``PoissonSampledDpEvent(q, Gaussian)`` :func:`~dpax.subsampled_gaussian`               all three
``PoissonSampledDpEvent(q, Laplace)``  :func:`~dpax.subsampled_laplace`                add/remove, special
``RandomizedResponseDpEvent(e, k)``    :func:`~dpax.randomized_response`               replace-one, special
``DiscreteLaplaceDpEvent(a, D)``       :func:`~dpax.discrete_laplace` (scale 1/a)      add/remove, special
``MixtureOfGaussiansDpEvent``          :func:`~dpax.mixture_of_gaussians`              add/remove, special
``TruncatedSubsampledGaussianDpEvent`` a mixture of two subsampled Gaussians           all three
``NoOpDpEvent``, ``NonPrivateDpEvent`` identity / no privacy (epsilon = inf)           all three
=====================================  =============================================  ==========================

Relations are named as dpax names them or as dp-accounting does: ``"add_remove"``
(``ADD_OR_REMOVE_ONE``), ``"substitution"`` (``REPLACE_ONE``: one record replaced by
another, which doubles an additive mechanism's sensitivity) and ``"replace_special"``
(``REPLACE_SPECIAL``: one record replaced by a special one; for additive noise the same
pair as add/remove). Any other event (sampling with or without replacement, tree
aggregation, repeat-and-select, zCDP, ``UnsupportedDpEvent``, a user's own class) raises
dp-accounting's ``UnsupportedEventError`` naming the event.

Every answer is on the safe side, as each mechanism's own is: the leaves are dpax's
pessimistic connect-the-dots pairs and composition keeps that side. dp-accounting is an
optional dependency (the ``test`` extra installs it); it is imported when an event is read.

>>> import dpax
>>> from dp_accounting import dp_event
>>> step = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0))
>>> pl = dpax.from_dp_event(dp_event.SelfComposedDpEvent(step, 100), grid_step=1e-3)
>>> round(pl.epsilon(1e-5), 3)
0.718
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._engine import validation as _v
from .._engine.grid import DEFAULT_GRID_STEP
from .._engine.x64 import float64
from ..privacy_loss import PrivacyLoss
from .build import from_tallies, identity, mixture, non_private
from .tally import MAX_COUNT, RELATIONS, Leaf, Tally, UnsupportedEvent, dp_event_module, relation, tally

if TYPE_CHECKING:  # dp-accounting is optional: imported when an event is read
    from dp_accounting.dp_event import DpEvent
    from dp_accounting.privacy_accountant import NeighboringRelation, UnsupportedEventError

__all__ = ["MAX_COUNT", "RELATIONS", "Leaf", "Tally", "UnsupportedEvent", "dp_event_module", "event_family",
           "from_dp_event", "from_tallies", "identity", "mixture", "non_private", "relation", "tally",
           "unsupported_error"]


@float64
def from_dp_event(event: DpEvent | list[DpEvent] | tuple[DpEvent, ...], grid_step: float = DEFAULT_GRID_STEP,
                  neighbouring: str | NeighboringRelation = "add_remove") -> PrivacyLoss:
    """The :class:`~dpax.PrivacyLoss` of a dp-accounting ``DpEvent`` tree (or of a sequence
    of trees, one batch row each).

    Args:
        event: a ``dp_accounting.dp_event.DpEvent``, or a non-empty list (or tuple) of them.
        grid_step: the loss grid's step, in [1e-7, 1] (dp-accounting's
            ``value_discretization_interval``; default 1e-4).
        neighbouring: ``"add_remove"`` (default), ``"substitution"`` (replace one) or
            ``"replace_special"``, or dp-accounting's ``NeighboringRelation``.

    Returns:
        A :class:`~dpax.PrivacyLoss` of batch shape ``()`` for one event, ``(len(event),)``
        for a list: dpax's pessimistic pairs composed, so every risk read from it is on the
        safe side.

    Raises:
        dp_accounting.privacy_accountant.UnsupportedEventError: the tree holds an event
            dpax cannot account for under ``neighbouring``, named in the message.
        ValueError: an event's parameter outside its range, a bad ``grid_step``, an unknown
            ``neighbouring``, an empty list, or Gaussian runs composed beyond float64's
            range (600 nats).
        TypeError: an event (or a list entry, named by its index) is not a DpEvent, or an
            event's parameter or ``grid_step`` not real.

    >>> import dpax
    >>> from dp_accounting import dp_event
    >>> pl = dpax.from_dp_event(dp_event.ComposedDpEvent(
    ...     [dp_event.GaussianDpEvent(1.0), dp_event.GaussianDpEvent(1.0)]), grid_step=1e-2)
    >>> round(pl.advantage(), 4) == round(dpax.gaussian(2 ** -0.5, grid_step=1e-2).advantage(), 4)
    True
    """
    step = _v.grid_step(grid_step)
    rel = relation(neighbouring)
    many = isinstance(event, (list, tuple))
    events = list(event) if many else [event]
    if many and not events:
        raise ValueError("event must be a DpEvent or a non-empty list of them, got an empty list")
    tallies = []
    for i, e in enumerate(events):
        try:
            tallies.append(tally(e, rel))
        except UnsupportedEvent as exc:
            raise unsupported_error(e, exc) from None
        except TypeError as exc:
            raise TypeError(f"event[{i}]: {exc}" if many else str(exc)) from None
    return from_tallies(tallies, step, None if many else ())


def unsupported_error(event: DpEvent, exc: UnsupportedEvent) -> UnsupportedEventError:
    """dp-accounting's ``UnsupportedEventError`` for ``exc`` raised on ``event``, in the
    words of its ``PrivacyAccountant.compose``.

    Args:
        event: the event (the whole tree) that was being read.
        exc: the :class:`UnsupportedEvent` raised on it (its subevent and reason).

    Returns:
        The error, not raised (the caller raises it).

    >>> from dp_accounting import dp_event
    >>> e = dp_event.UnsupportedDpEvent()
    >>> print(unsupported_error(e, UnsupportedEvent(e, "Unsupported event.")))
    Unsupported event: UnsupportedDpEvent(). Error: [Unsupported event.] caused by subevent UnsupportedDpEvent().
    """
    from dp_accounting.privacy_accountant import UnsupportedEventError

    return UnsupportedEventError(f"Unsupported event: {event}. Error: [{exc.message}] caused by subevent {exc.event}.")


def event_family(make_event: Callable[..., DpEvent], *, grid_step: float = DEFAULT_GRID_STEP,
                 neighbouring: str | NeighboringRelation = "add_remove") -> Callable[..., PrivacyLoss]:
    """A batched mechanism family for :func:`dpax.calibrate` from a function that maps one
    parameter value (and one value of each of calibrate's ``args``) to a ``DpEvent``.

    The family calls ``make_event`` once per row and builds the rows together
    (:func:`from_dp_event` of the list: rows of one shape share each batched kernel).

    Args:
        make_event: called as ``make_event(w, *args)`` with the parameter ``w`` (a float)
            and one Python scalar of each of calibrate's ``args``; returns a ``DpEvent``.
        grid_step: the loss grid's step, in [1e-7, 1] (default 1e-4).
        neighbouring: the neighbouring relation, as :func:`from_dp_event`'s (default
            ``"add_remove"``).

    Returns:
        ``family(w, *args)``: for ``w`` a number or a 1-D array of parameters (each of
        ``args`` broadcast to it), a :class:`~dpax.PrivacyLoss` of batch shape
        ``(w.size,)``, as :func:`dpax.calibrate` calls it; it raises what
        :func:`from_dp_event` raises.

    Raises:
        TypeError: ``make_event`` is not callable, or ``grid_step`` not real.
        ValueError: ``grid_step`` outside [1e-7, 1] or an unknown ``neighbouring``.

    >>> import dpax
    >>> from dp_accounting import dp_event
    >>> family = dpax.event_family(lambda s: dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(s), 10),
    ...                            grid_step=5e-2)
    >>> round(dpax.calibrate(family, dpax.targets.Epsilon(2.0, 1e-5), param_bounds=(2.0, 40.0)), 2)
    6.31
    """
    if not callable(make_event):
        raise TypeError(f"make_event must be a function from the parameter to a DpEvent, got "
                        f"{type(make_event).__name__}")
    step = _v.grid_step(grid_step)
    rel = relation(neighbouring)

    def family(w: Any, *args: Any) -> PrivacyLoss:
        w = np.atleast_1d(np.asarray(w, np.float64))
        cols = [np.broadcast_to(np.asarray(a), w.shape) for a in args]
        made = [make_event(float(w[i]), *(c[i].item() for c in cols)) for i in range(w.size)]
        pl = from_dp_event(made, step, rel)
        return pl

    return family
