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

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import numpy as np
from scipy.special import bdtrc

from . import mechanisms as _mech
from ._engine import validation as _v
from ._engine.x64 import float64
from .privacy_loss import PrivacyLoss, compose

#: The neighbouring relations, by dpax's name; each maps to dp-accounting's enum name.
RELATIONS = {"add_remove": "ADD_OR_REMOVE_ONE", "substitution": "REPLACE_ONE", "replace_special": "REPLACE_SPECIAL"}
_BY_DP_ACCOUNTING_NAME = {v: k for k, v in RELATIONS.items()}
#: Largest count a tally holds for one mechanism (dpax's composition counts are at most 2**53).
MAX_COUNT = 2**53


def dp_event_module() -> Any:
    """``dp_accounting.dp_event``, or an ImportError that says how to install it."""
    try:
        from dp_accounting import dp_event
    except ImportError as exc:  # pragma: no cover - dp-accounting is in the test extra
        raise ImportError("reading DpEvents needs dp-accounting: pip install 'dp-accounting>=0.4.4'") from exc
    return dp_event


def relation(value: Any, name: str = "neighbouring") -> str:
    """dpax's name of a neighbouring relation given by name or as dp-accounting's enum
    (``name``: the argument's name in the error).

    >>> relation("REPLACE_ONE"), relation("add_remove")
    ('substitution', 'add_remove')
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
    """One mechanism of an event tree: its family and its parameters (hashable)."""

    kind: str
    params: tuple


class Tally(NamedTuple):
    """An event tree read: each distinct mechanism with its number of runs, and whether a
    mechanism without privacy (``NonPrivateDpEvent``, zero noise) ran."""

    counts: dict
    non_private: bool


class UnsupportedEvent(Exception):
    """An event (or a subevent) that dpax cannot account for under the relation.

    Attributes:
        event: the offending subevent.
        message: why, in dp-accounting's words where it has them.
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


def tally(event: Any, neighbouring: Any = "add_remove", count: int = 1) -> Tally:
    """The mechanisms of ``event`` run ``count`` times, with their counts.

    Args:
        event: a ``dp_accounting.dp_event.DpEvent``.
        neighbouring: the neighbouring relation (see :func:`relation`).
        count: how many times ``event`` runs.

    Returns:
        A :class:`Tally`.

    Raises:
        UnsupportedEvent: an event dpax does not support under ``neighbouring``.
        ValueError: an event's parameter outside its range (the message names the field).
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
    walk(event, int(count))
    return Tally(counts, non_private)


# -- building a tally ------------------------------------------------------------------------


def _aligned(pairs: list) -> tuple[int, list[tuple[np.ndarray, ...]]]:
    """(first grid index, per pair: pmf_x, pmf_y, inf_y, neginf_x on rows of a common grid)."""
    lo = min(int(np.min(np.asarray(p.offset))) for p in pairs)
    hi = max(int(np.max(np.asarray(p.offset))) + p.support_length for p in pairs)
    out: list[tuple[np.ndarray, ...]] = []
    for p in pairs:
        off = np.asarray(p.offset).reshape(-1)
        rows, n = off.size, p.support_length
        xs, ys = np.zeros((rows, hi - lo)), np.zeros((rows, hi - lo))
        for r in range(rows):
            start = int(off[r]) - lo
            xs[r, start:start + n] = np.asarray(p.pmf_x)[r]
            ys[r, start:start + n] = np.asarray(p.pmf_y)[r]
        out.append((xs, ys, np.asarray(p.inf_y).reshape(-1), np.asarray(p.neginf_x).reshape(-1)))
    return lo, out


def mixture(first: PrivacyLoss, second: PrivacyLoss, weight: Any, description: str = "mixture") -> PrivacyLoss:
    """The mechanism that runs ``first`` with probability ``weight``, else ``second``, and
    shows which it ran: both laws mixed point by point (dp-accounting's ``compute_mixture``).

    Showing the choice can only help an attacker, so the mixture is on the safe side of a
    mechanism that hides it. ``weight`` broadcasts against the (equal) batch shapes.

    >>> import dpax
    >>> g = dpax.gaussian(1.0, grid_step=1e-2)
    >>> round(mixture(g, g, 0.3).advantage(), 4) == round(g.advantage(), 4)
    True
    """
    if first.grid_step != second.grid_step or first.batch_shape != second.batch_shape:
        raise ValueError("mixture needs two PrivacyLoss values of one grid step and batch shape, got "
                         f"{first.grid_step:g} {first.batch_shape} and {second.grid_step:g} {second.batch_shape}")
    w = np.broadcast_to(_v.probabilities("weight", weight), first.batch_shape).reshape(-1)
    lo, ((xa, ya, ia, na), (xb, yb, ib, nb)) = _aligned([first.pair, second.pair])
    mix = lambda a, b: (w.reshape((-1,) + (1,) * (a.ndim - 1)) * a + (1.0 - w.reshape((-1,) + (1,) * (a.ndim - 1))) * b)
    pl = PrivacyLoss(mix(xa, xb).reshape(first.batch_shape + (-1,)), mix(ya, yb).reshape(first.batch_shape + (-1,)),
                     np.full(first.batch_shape, lo, np.int64), mix(ia, ib).reshape(first.batch_shape),
                     mix(na, nb).reshape(first.batch_shape), first.grid_step, description,
                     exact_ratio=first.exact_ratio and second.exact_ratio)
    return pl._with_companion(reason="it is a mixture of two pairs; dpax builds optimistic companions for single "
                                     "mechanisms and their compositions only")


def _stack(losses: list[PrivacyLoss], description: str, shape: tuple[int, ...]) -> PrivacyLoss:
    """Single PrivacyLoss values as the rows of one batch of shape ``shape``."""
    lo, arrays = _aligned([pl.pair for pl in losses])
    xs, ys, iy, nx = (np.concatenate([a[i] for a in arrays]) for i in range(4))
    pl = PrivacyLoss(xs.reshape(shape + (-1,)), ys.reshape(shape + (-1,)), np.full(shape, lo, np.int64),
                     iy.reshape(shape), nx.reshape(shape), losses[0].grid_step, description,
                     exact_ratio=all(p.exact_ratio for p in losses))
    return pl._with_companion(reason="its rows were built one by one from events of different shapes")


def non_private(grid_step: float) -> PrivacyLoss:
    """A mechanism with no privacy: its outputs tell the two datasets apart surely
    (all mass at infinite loss; epsilon = inf, delta = 1, beta = 0)."""
    pl = _mech.approximate_dp(0.0, 1.0, grid_step=grid_step)
    pl.description = "non-private"
    return pl


def identity(grid_step: float) -> PrivacyLoss:
    """A mechanism whose output does not depend on the record (loss 0 surely)."""
    pl = _mech.randomized_response(0.0, 2, grid_step=grid_step)
    pl.description = "no-op"
    return pl


def _family(kind: str, params: list[tuple], step: float, shape: tuple[int, ...]) -> PrivacyLoss:
    """One batch (shape ``shape``, one row per entry of ``params``) of one family."""
    # a column is a tuple (of strings or tuples) or an array, as the family's parameters are
    cols: list[Any] = [c if isinstance(c[0], (str, tuple)) else np.array(c).reshape(shape) for c in zip(*params)]
    if kind == "gaussian":
        return _mech.gaussian(1.0 / cols[0], grid_step=step)
    if kind == "laplace":
        return _mech.laplace(cols[0], grid_step=step)
    if kind == "subsampled_laplace":
        return _mech.subsampled_laplace(cols[0], cols[1], grid_step=step)
    if kind == "discrete_laplace":
        return _mech.discrete_laplace(1.0 / cols[0], cols[1], grid_step=step)
    if kind == "subsampled_gaussian":
        rel = params[0][2]
        return _mech.subsampled_gaussian(cols[0], cols[1], grid_step=step, neighbouring=rel)
    if kind == "randomized_response":
        # noise parameter eta (dp-accounting's: the probability of a uniformly random output) over
        # k values is k-ary randomized response with e^eps = 1 + k (1 - eta) / eta
        eta, k, rel = cols[0], cols[1], params[0][2]
        return _mech.randomized_response(np.log1p(k * (1.0 - eta) / eta), k, grid_step=step, neighbouring=rel)
    if kind == "mixture_of_gaussians":
        if len(params) == 1:
            s, sens, probs = params[0]
            return _mech.mixture_of_gaussians(np.reshape(s, shape), sens, probs, grid_step=step)
        return _stack([_family(kind, [p], step, ()) for p in params], "mixture_of_gaussians rows", shape)
    if kind == "truncated_subsampled_gaussian":
        return _truncated(params, step, shape)
    raise AssertionError(kind)  # pragma: no cover - tally() makes no other kind


def _binomial_survival(k: np.ndarray, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Pr[Binomial(n, p) > k] (0 where k >= n)."""
    with np.errstate(invalid="ignore"):
        return np.where(k >= n, 0.0, bdtrc(np.minimum(k, n), n, p))


def _truncated(params: list[tuple], step: float, shape: tuple[int, ...]) -> PrivacyLoss:
    """Truncated Poisson-subsampled Gaussian (dp-accounting's
    ``from_truncated_subsampled_gaussian_mechanism``): with the probability t that the batch
    would overflow given that the record is in it, the record's sensitivity is taken as 2
    (replace-one Gaussian of half the noise, sampled with the conditional rate); otherwise
    the plain subsampled Gaussian. The two are mixed (:func:`mixture`)."""
    n, b = (np.array([p[i] for p in params], np.int64) for i in (0, 2))
    q, s = (np.array([p[i] for p in params], np.float64) for i in (1, 3))
    rel = params[0][4]
    trunc = _binomial_survival(b - 1, n - 1, q)
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(trunc > 0.0, _binomial_survival(b, n, q) * b / trunc / n, 1.0)
    cond = np.clip(cond, np.finfo(float).tiny, 1.0)
    plain = _mech.subsampled_gaussian(s.reshape(shape), q.reshape(shape), grid_step=step,
                                      neighbouring="substitution" if rel == "substitution" else "add_remove")
    if not np.any(trunc > 0.0):
        return plain
    doubled = _mech.subsampled_gaussian((s / 2.0).reshape(shape), cond.reshape(shape), grid_step=step,
                                        neighbouring="substitution")
    return mixture(doubled, plain, trunc.reshape(shape), "truncated_subsampled_gaussian")


def _group(leaf: Leaf) -> tuple[str, str]:
    """Leaves of one group are built as one batch: the same family under the same relation."""
    kind, params = leaf
    rel = params[2] if kind in ("subsampled_gaussian", "randomized_response") else (
        params[4] if kind == "truncated_subsampled_gaussian" else "")
    return kind, rel


def _signature(t: Tally) -> tuple:
    """Tallies of one signature are built together, position by position."""
    return (t.non_private,) + tuple(sorted(_group(leaf) for leaf in t.counts if leaf.kind != "gaussian"))


def _build_rows(tallies: list[Tally], step: float, shape: tuple[int, ...]) -> PrivacyLoss:
    """The composed PrivacyLoss of tallies of one signature, as a batch of shape ``shape``."""
    rows = len(tallies)
    if tallies[0].non_private:
        return non_private(step) if not shape else _stack([non_private(step)] * rows, "non-private", shape)
    factors: list[tuple[PrivacyLoss, Any]] = []
    mu2 = np.array([sum(k * leaf.params[0] ** 2 for leaf, k in t.counts.items() if leaf.kind == "gaussian")
                    for t in tallies])
    if np.any(mu2 > 0.0):  # rows without a Gaussian get one of (nearly) infinite noise
        with np.errstate(divide="ignore"):
            sigma = np.minimum(1.0 / np.sqrt(mu2), _mech._SIGMA_MAX)
        try:
            factors.append((_mech.gaussian(sigma.reshape(shape), grid_step=step), 1))
        except ValueError as exc:  # said in the events' terms: the composed noise is not what they gave
            if "is too small" not in str(exc):
                raise
            runs = max(sum(k for leaf, k in t.counts.items() if leaf.kind == "gaussian") for t in tallies)
            raise ValueError(f"the Gaussian mechanisms composed (up to {runs:,} runs, count included) reach "
                             f"mu = {float(np.sqrt(np.max(mu2))):.6g}: the privacy loss exceeds 600 nats, beyond "
                             "float64 range; compose fewer (a smaller count) or with more noise") from None
    # the other leaves: every row has the same groups, each row's leaves in a fixed order
    ordered = [sorted(((leaf, k) for leaf, k in t.counts.items() if leaf.kind != "gaussian"),
                      key=lambda lk: (_group(lk[0]), repr(lk[0].params))) for t in tallies]
    groups: dict[tuple, list[int]] = {}
    for j, (leaf, _) in enumerate(ordered[0]):
        groups.setdefault(_group(leaf), []).append(j)
    for (kind, _), positions in groups.items():
        built_shape = (len(positions),) + shape
        params = [ordered[r][j][0].params for j in positions for r in range(rows)]
        counts = np.array([[ordered[r][j][1] for r in range(rows)] for j in positions]).reshape(built_shape)
        batch = _family(kind, params, step, built_shape)
        factors += [(batch[i], counts[i]) for i in range(len(positions))]
    if not factors:
        return identity(step) if not shape else _stack([identity(step)] * rows, "no-op", shape)
    return compose(*factors)


@float64
def from_tallies(tallies: Sequence[Tally], grid_step: float, shape: tuple[int, ...] | None = None) -> PrivacyLoss:
    """The composed PrivacyLoss of each tally: one batch of ``len(tallies)`` rows (or a
    single PrivacyLoss for one tally and ``shape=()``)."""
    step = _v.grid_step(grid_step)
    if shape is None:
        shape = (len(tallies),)
    if shape == ():
        return _build_rows(list(tallies), step, ())
    groups: dict[tuple, list[int]] = {}
    for r, t in enumerate(tallies):
        groups.setdefault(_signature(t), []).append(r)
    if len(groups) == 1:
        return _build_rows(list(tallies), step, (len(tallies),))
    rows: list[PrivacyLoss | None] = [None] * len(tallies)
    for members in groups.values():
        built = _build_rows([tallies[r] for r in members], step, (len(members),))
        for i, r in enumerate(members):
            rows[r] = built[i]
    return _stack(cast(list[PrivacyLoss], rows), "events", (len(tallies),))  # every row is in one group


@float64
def from_dp_event(event: Any, grid_step: float = 1e-4, neighbouring: Any = "add_remove") -> PrivacyLoss:
    """The :class:`~dpax.PrivacyLoss` of a dp-accounting ``DpEvent`` tree (or of a sequence
    of trees, one batch row each).

    Args:
        event: a ``dp_accounting.dp_event.DpEvent``, or a list of them.
        grid_step: the loss grid's step, in [1e-7, 1] (dp-accounting's
            ``value_discretization_interval``).
        neighbouring: ``"add_remove"`` (default), ``"substitution"`` (replace one) or
            ``"replace_special"``, or dp-accounting's ``NeighboringRelation``.

    Returns:
        A :class:`~dpax.PrivacyLoss` of batch shape ``()`` for one event, ``(len(event),)``
        for a list.

    Raises:
        dp_accounting.privacy_accountant.UnsupportedEventError: the tree holds an event
            dpax cannot account for under ``neighbouring``, named in the message.
        ValueError: an event's parameter outside its range, or a bad ``grid_step``.

    >>> import dpax
    >>> from dp_accounting import dp_event
    >>> pl = dpax.from_dp_event(dp_event.ComposedDpEvent(
    ...     [dp_event.GaussianDpEvent(2.0), dp_event.GaussianDpEvent(2.0)]), grid_step=1e-2)
    >>> round(pl.advantage(), 4) == round(dpax.gaussian(2 ** 0.5, grid_step=1e-2).advantage(), 4)
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


def unsupported_error(event: Any, exc: UnsupportedEvent) -> Exception:
    """dp-accounting's ``UnsupportedEventError`` for ``exc`` raised on ``event``, in the
    words of its ``PrivacyAccountant.compose``."""
    from dp_accounting.privacy_accountant import UnsupportedEventError

    return UnsupportedEventError(f"Unsupported event: {event}. Error: [{exc.message}] caused by subevent {exc.event}.")


def event_family(make_event: Callable[..., Any], *, grid_step: float = 1e-4,
                 neighbouring: Any = "add_remove") -> Callable[..., PrivacyLoss]:
    """A batched mechanism family for :func:`dpax.calibrate` from a function that maps one
    parameter value (and one value of each of calibrate's ``args``) to a ``DpEvent``.

    The family calls ``make_event`` once per row and builds the rows together
    (:func:`from_dp_event` of the list: rows of one shape share each batched kernel).

    >>> import dpax
    >>> from dp_accounting import dp_event
    >>> family = dpax.event_family(lambda s: dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(s), 10),
    ...                            grid_step=5e-2)
    >>> round(dpax.calibrate(family, dpax.targets.Epsilon(2.0, 1e-5), bounds=(2.0, 40.0)), 2)
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
