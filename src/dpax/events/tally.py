"""Reading a dp-accounting ``DpEvent`` tree into a *tally*: each distinct mechanism (a leaf
and its parameters) with the number of times it runs, under one neighbouring relation, with
dp-accounting's ``PLDAccountant`` rules for which event allows which relation.
"""

from __future__ import annotations

import math
import types
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .._engine import validation as _v

if TYPE_CHECKING:  # dp-accounting is optional: imported when an event is read
    from dp_accounting.dp_event import DpEvent
    from dp_accounting.privacy_accountant import NeighboringRelation

#: The neighbouring relations, by dpax's name; each maps to dp-accounting's enum name.
RELATIONS = {"add_remove": "ADD_OR_REMOVE_ONE", "substitution": "REPLACE_ONE", "replace_special": "REPLACE_SPECIAL"}
_BY_DP_ACCOUNTING_NAME = {v: k for k, v in RELATIONS.items()}
#: Largest count a tally holds for one mechanism (dpax's composition counts are at most 2**53).
MAX_COUNT = 2**53


def dp_event_module() -> types.ModuleType:
    """``dp_accounting.dp_event``, or an ImportError that says how to install it.

    Returns:
        The module ``dp_accounting.dp_event``.

    Raises:
        ImportError: dp-accounting is not installed (the message gives the pip command).

    >>> dp_event_module().__name__
    'dp_accounting.dp_event'
    """
    try:
        from dp_accounting import dp_event
    except ImportError as exc:  # pragma: no cover - dp-accounting is in the test extra
        raise ImportError("reading DpEvents needs dp-accounting: pip install 'dp-accounting>=0.4.4'") from exc
    return dp_event


def relation(value: str | NeighboringRelation, name: str = "neighbouring") -> str:
    """dpax's name of a neighbouring relation given by name or as dp-accounting's enum
    (``name``: the argument's name in the error).

    Args:
        value: dpax's name (``"add_remove"``, ``"substitution"``, ``"replace_special"``),
            dp-accounting's name (``"ADD_OR_REMOVE_ONE"``, ``"REPLACE_ONE"``,
            ``"REPLACE_SPECIAL"``) or a ``dp_accounting.NeighboringRelation`` member.
        name: the argument's name in the error message (default ``"neighbouring"``).

    Returns:
        dpax's name of the relation, a key of :data:`RELATIONS`.

    Raises:
        ValueError: ``value`` is none of these (the message lists them).

    >>> relation("REPLACE_ONE"), relation("add_remove")
    ('substitution', 'add_remove')
    >>> from dp_accounting import NeighboringRelation
    >>> relation(NeighboringRelation.REPLACE_SPECIAL)
    'replace_special'
    """
    given = getattr(value, "name", value)
    if isinstance(given, str):
        if given in RELATIONS:
            return given
        if given in _BY_DP_ACCOUNTING_NAME:
            return _BY_DP_ACCOUNTING_NAME[given]
    raise ValueError(f"{name} must be one of {tuple(RELATIONS)} or dp-accounting's NeighboringRelation "
                     f"({', '.join(RELATIONS.values())}), got {_v.brief(value)}")


class Leaf(NamedTuple):
    """One mechanism of an event tree: its family and its parameters (hashable).

    ``params`` by ``kind``: ``"gaussian"`` (mu,), the sensitivity over the noise (doubled
    under substitution); ``"laplace"`` (scale,); ``"discrete_laplace"`` (noise parameter,
    sensitivity); ``"randomized_response"`` (noise parameter, buckets, relation);
    ``"subsampled_gaussian"`` (noise multiplier, sampling probability, relation);
    ``"subsampled_laplace"`` (scale, sampling probability); ``"mixture_of_gaussians"``
    (standard deviation, sensitivities, sampling probabilities), the last two tuples;
    ``"truncated_subsampled_gaussian"`` (dataset size, sampling probability, truncated batch
    size, noise multiplier, relation).

    >>> Leaf("gaussian", (0.5,))
    Leaf(kind='gaussian', params=(0.5,))
    """

    kind: str
    params: tuple  # floats, ints, relation names and tuples of floats, by kind (above)


class Tally(NamedTuple):
    """An event tree read: each distinct mechanism with its number of runs, and whether a
    mechanism without privacy (``NonPrivateDpEvent``, zero noise) ran.

    >>> from dp_accounting import dp_event
    >>> tally(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(2.0), 3))
    Tally(counts={Leaf(kind='gaussian', params=(0.5,)): 3}, non_private=False)
    """

    counts: dict[Leaf, int]
    non_private: bool


class UnsupportedEvent(Exception):
    """An event (or a subevent) that dpax cannot account for under the relation.

    Attributes:
        event: the offending subevent.
        message: why, in dp-accounting's words where it has them.

    >>> from dp_accounting import dp_event
    >>> try:
    ...     tally(dp_event.UnsupportedDpEvent())
    ... except UnsupportedEvent as exc:
    ...     print(exc.message, exc.event)
    Unsupported event. UnsupportedDpEvent()
    """

    def __init__(self, event: Any, message: str):
        super().__init__(message)
        self.event, self.message = event, message


def _need(event: Any, allowed: tuple[str, ...], rel: str, what: str) -> None:
    if rel not in allowed:
        names = " or ".join(f"`{RELATIONS[r]}`" for r in allowed)
        raise UnsupportedEvent(event, f"neighboring_relation must be {names} for {what}. Found {RELATIONS[rel]} "
                                      f"(dpax: neighbouring={rel!r})")


def _field(event: Any, name: str, value: Any, *, low: float = 0.0, high: float | None = None) -> float:
    where = f"{type(event).__name__}.{name}"
    if isinstance(value, (list, tuple)) or np.ndim(value) != 0:
        raise ValueError(f"{where} must be one number, got {_v.brief(value)}")
    return _v.one_number(where, value, low=low, high=high)


def _integer(event: Any, name: str, value: Any, minimum: int = 0) -> int:
    where = f"{type(event).__name__}.{name}"
    if isinstance(value, (list, tuple)) or np.ndim(value) != 0:
        raise ValueError(f"{where} must be one integer, got {_v.brief(value)}")
    return _v.one_integer(where, value, minimum=minimum)


def tally(event: DpEvent, neighbouring: str | NeighboringRelation = "add_remove", count: int = 1) -> Tally:
    """The mechanisms of ``event`` run ``count`` times, with their counts.

    Args:
        event: a ``dp_accounting.dp_event.DpEvent``.
        neighbouring: the neighbouring relation (see :func:`relation`; default
            ``"add_remove"``).
        count: how many times ``event`` runs, an integer >= 0 (default 1).

    Returns:
        A :class:`Tally`: each leaf's count multiplied through the tree's
        ``SelfComposedDpEvent`` counts, and whether a mechanism without privacy ran.

    Raises:
        UnsupportedEvent: an event dpax does not support under ``neighbouring``.
        ValueError: an event's parameter outside its range (the message names the field),
            a mechanism run more than 2**53 times, or an unknown ``neighbouring``.
        TypeError: ``event`` is not a DpEvent, or an event's parameter not real.
        ImportError: dp-accounting is not installed.

    >>> from dp_accounting import dp_event
    >>> tally(dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(2.0), dp_event.LaplaceDpEvent(1.0)]), count=2)
    Tally(counts={Leaf(kind='gaussian', params=(0.5,)): 2, Leaf(kind='laplace', params=(1.0,)): 2}, non_private=False)
    """
    dp_event = dp_event_module()
    rel = relation(neighbouring)
    counts: dict[Leaf, int] = {}
    non_private = False

    def add(leaf: Leaf, k: int) -> None:
        counts[leaf] = counts.get(leaf, 0) + k
        if counts[leaf] > MAX_COUNT:
            raise ValueError(f"{leaf.kind} runs {counts[leaf]:,} times in all: "
                             "at most 2**53 compositions are supported")

    def walk(e: Any, k: int) -> None:
        nonlocal non_private
        if isinstance(e, dp_event.NoOpDpEvent):
            return
        if isinstance(e, dp_event.NonPrivateDpEvent):
            non_private = True
        elif isinstance(e, dp_event.SelfComposedDpEvent):
            inner = _integer(e, "count", e.count, minimum=0)
            if inner:
                walk(e.event, k * inner)
            else:  # composed zero times: nothing runs, but the subevent must be one dpax can read
                tally(e.event, rel)
        elif isinstance(e, dp_event.ComposedDpEvent):
            if not isinstance(e.events, (list, tuple)):
                raise ValueError(f"ComposedDpEvent.events must be a list of DpEvents, got {_v.brief(e.events)}")
            for sub in e.events:
                walk(sub, k)
        elif isinstance(e, dp_event.GaussianDpEvent):
            s = _field(e, "noise_multiplier", e.noise_multiplier)
            if s == 0.0:
                non_private = True
            else:  # mu = sensitivity / s, the sensitivity doubled by substitution
                add(Leaf("gaussian", ((2.0 if rel == "substitution" else 1.0) / s,)), k)
        elif isinstance(e, dp_event.LaplaceDpEvent):
            b = _field(e, "noise_multiplier", e.noise_multiplier)
            _need(e, ("add_remove", "replace_special"), rel, "`LaplaceDpEvent`")
            if b == 0.0:
                non_private = True
            else:
                add(Leaf("laplace", (b,)), k)
        elif isinstance(e, dp_event.DiscreteLaplaceDpEvent):
            a = _field(e, "noise_parameter", e.noise_parameter)
            sensitivity = _integer(e, "sensitivity", e.sensitivity, minimum=1)
            _need(e, ("add_remove", "replace_special"), rel, "`DiscreteLaplaceDpEvent`")
            if a == 0.0:
                non_private = True
            else:
                add(Leaf("discrete_laplace", (a, sensitivity)), k)
        elif isinstance(e, dp_event.RandomizedResponseDpEvent):
            eta = _field(e, "noise_parameter", e.noise_parameter, high=1.0)
            buckets = _integer(e, "num_buckets", e.num_buckets, minimum=1)
            _need(e, ("substitution", "replace_special"), rel, "`RandomizedResponseDpEvent`")
            if buckets == 1 or eta == 1.0:  # one bucket, or the output is uniform: independent of the input
                return
            if eta == 0.0:
                non_private = True
            else:
                add(Leaf("randomized_response", (eta, buckets, rel)), k)
        elif isinstance(e, dp_event.PoissonSampledDpEvent):
            q = _field(e, "sampling_probability", e.sampling_probability, high=1.0)
            inner = e.event
            if isinstance(inner, dp_event.GaussianDpEvent):
                s = _field(inner, "noise_multiplier", inner.noise_multiplier)
                if q == 0.0:
                    return
                if s == 0.0:
                    non_private = True
                else:
                    add(Leaf("subsampled_gaussian",
                             (s, q, "substitution" if rel == "substitution" else "add_remove")), k)
            elif isinstance(inner, dp_event.LaplaceDpEvent):
                _need(e, ("add_remove", "replace_special"), rel, "`PoissonSampledDpEvent` of a `LaplaceDpEvent`")
                b = _field(inner, "noise_multiplier", inner.noise_multiplier)
                if q == 0.0:
                    return
                if b == 0.0:
                    non_private = True
                else:
                    add(Leaf("subsampled_laplace", (b, q)), k)
            else:
                raise UnsupportedEvent(e, "Subevent of `PoissonSampledEvent` must be either `GaussianDpEvent` or "
                                          f"`LaplaceDpEvent`. Found {inner}.")
        elif isinstance(e, dp_event.MixtureOfGaussiansDpEvent):
            _need(e, ("add_remove", "replace_special"), rel, "`MixtureOfGaussiansDpEvent`")
            s = _field(e, "standard_deviation", e.standard_deviation)
            sens = tuple(float(c) for c in _v.real_array("MixtureOfGaussiansDpEvent.sensitivities", e.sensitivities,
                                                         low=0.0).reshape(-1))
            probs = tuple(float(c) for c in _v.probabilities("MixtureOfGaussiansDpEvent.sampling_probs",
                                                             e.sampling_probs).reshape(-1))
            if len(sens) != len(probs):
                raise ValueError(f"MixtureOfGaussiansDpEvent: sensitivities ({len(sens)}) and sampling_probs "
                                 f"({len(probs)}) must have the same length")
            if not math.isclose(sum(probs), 1.0, rel_tol=0.0, abs_tol=1e-9):
                raise ValueError(f"MixtureOfGaussiansDpEvent.sampling_probs must sum to 1, got {sum(probs):.12g}")
            if all(c == 0.0 or p == 0.0 for c, p in zip(sens, probs)):
                return  # the mixture is N(0, s^2) whatever the record: nothing is released about it
            if s == 0.0:
                non_private = True
            else:
                add(Leaf("mixture_of_gaussians", (s, sens, probs)), k)
        elif isinstance(e, dp_event.TruncatedSubsampledGaussianDpEvent):
            n = _integer(e, "dataset_size", e.dataset_size)
            q = _field(e, "sampling_probability", e.sampling_probability, high=1.0)
            b = _integer(e, "truncated_batch_size", e.truncated_batch_size)
            s = _field(e, "noise_multiplier", e.noise_multiplier)
            if q == 0.0 or b == 0 or n == 0:
                return
            if s == 0.0:
                non_private = True
            else:
                add(Leaf("truncated_subsampled_gaussian", (n, q, b, s, rel)), k)
        else:
            raise UnsupportedEvent(e, "Unsupported event.")

    if not isinstance(event, dp_event.DpEvent):
        raise TypeError(f"event must be a dp_accounting DpEvent, got {type(event).__name__}")
    walk(event, _v.one_integer("count", count, minimum=0))
    return Tally(counts, non_private)
