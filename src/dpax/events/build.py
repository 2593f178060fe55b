"""Building the composed :class:`~dpax.PrivacyLoss` of tallies: the Gaussian leaves merged into
one Gaussian (GDP composes exactly), the other leaves built family by family as batches, all
composed once by FFT; rows of different shapes stacked onto one grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .. import mechanisms as _mech
from .._engine import shapes as _shapes
from .._engine import validation as _v
from .._engine.host_special import bdtrc
from .._engine.x64 import float64
from ..privacy_loss import PrivacyLoss, compose
from ..privacy_loss.fields import replaced
from .tally import Leaf, Tally


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


def mixture(first: PrivacyLoss, second: PrivacyLoss, weight: ArrayLike, description: str = "mixture"
            ) -> PrivacyLoss:
    """The mechanism that runs ``first`` with probability ``weight``, else ``second``, and
    shows which it ran: both laws mixed point by point (dp-accounting's ``compute_mixture``).

    Showing the choice can only help an attacker, so the mixture is on the safe side of a
    mechanism that hides it. ``weight`` broadcasts against the (equal) batch shapes.

    Args:
        first: the mechanism run with probability ``weight``.
        second: the one run otherwise; the same grid step and batch shape as ``first``.
        weight: the probability of running ``first``, in [0, 1]; broadcasts to the batch
            shape.
        description: the result's description (default ``"mixture"``).

    Returns:
        A :class:`~dpax.PrivacyLoss` of the batch shape of ``first``: the mixed pair, on the
        safe side of both mixed mechanisms' truths if they are of theirs (dpax's are). It
        has no optimistic companion (``bounds=True`` on it raises a ValueError).

    Raises:
        ValueError: ``first`` and ``second`` of different grid steps or batch shapes;
            ``weight`` outside [0, 1], NaN or empty, or not broadcasting to the batch shape
            (NumPy's message).
        TypeError: ``weight`` not real.

    >>> import dpax
    >>> g = dpax.gaussian(1.0, grid_step=1e-2)
    >>> round(mixture(g, g, 0.3).advantage(), 4) == round(g.advantage(), 4)
    True
    """
    if first.grid_step != second.grid_step or first.batch_shape != second.batch_shape:
        raise ValueError("mixture needs two PrivacyLoss values of one grid step and batch shape, got "
                         f"{first.grid_step:g} {first.batch_shape} and {second.grid_step:g} {second.batch_shape}")
    w = _v.probabilities("weight", weight)
    try:
        w = np.broadcast_to(w, first.batch_shape).reshape(-1)
    except ValueError:
        raise ValueError(f"weight of shape {w.shape} does not broadcast to the batch shape "
                         f"{first.batch_shape}") from None
    lo, ((xa, ya, ia, na), (xb, yb, ib, nb)) = _aligned([first.pair, second.pair])
    mix = lambda a, b: (w.reshape((-1,) + (1,) * (a.ndim - 1)) * a + (1.0 - w.reshape((-1,) + (1,) * (a.ndim - 1))) * b)
    pl = PrivacyLoss(mix(xa, xb).reshape(first.batch_shape + (-1,)), mix(ya, yb).reshape(first.batch_shape + (-1,)),
                     np.full(first.batch_shape, lo, np.int64), mix(ia, ib).reshape(first.batch_shape),
                     mix(na, nb).reshape(first.batch_shape), first.grid_step, description,
                     exact_ratio=first.exact_ratio and second.exact_ratio)
    return replaced(pl, companion="it is a mixture of two pairs; dpax builds optimistic companions for single "
                                     "mechanisms and their compositions only")


def _stack(losses: list[PrivacyLoss], description: str, shape: tuple[int, ...]) -> PrivacyLoss:
    """Single PrivacyLoss values as the rows of one batch of shape ``shape``."""
    lo, arrays = _aligned([pl.pair for pl in losses])
    xs, ys, iy, nx = (np.concatenate([a[i] for a in arrays]) for i in range(4))
    pl = PrivacyLoss(xs.reshape(shape + (-1,)), ys.reshape(shape + (-1,)), np.full(shape, lo, np.int64),
                     iy.reshape(shape), nx.reshape(shape), losses[0].grid_step, description,
                     exact_ratio=all(p.exact_ratio for p in losses))
    return replaced(pl, companion="its rows were built one by one from events of different shapes")


def non_private(grid_step: float) -> PrivacyLoss:
    """A mechanism with no privacy: its outputs tell the two datasets apart surely
    (all mass at infinite loss; epsilon = inf, delta = 1, beta = 0).

    Args:
        grid_step: the loss grid's step, in [1e-7, 1].

    Returns:
        A :class:`~dpax.PrivacyLoss` of batch shape ``()`` described ``"non-private"``
        (``approximate_dp(0, 1)``): exact, advantage 1.

    Raises:
        ValueError: ``grid_step`` outside [1e-7, 1].
        TypeError: ``grid_step`` not real or not one number.

    >>> pl = non_private(1e-2)
    >>> pl.advantage(), pl.beta(0.0), pl.epsilon(0.5)
    (1.0, 0.0, inf)
    """
    return replaced(_mech.approximate_dp(0.0, 1.0, grid_step=grid_step), description="non-private")


def identity(grid_step: float) -> PrivacyLoss:
    """A mechanism whose output does not depend on the record (loss 0 surely).

    Args:
        grid_step: the loss grid's step, in [1e-7, 1].

    Returns:
        A :class:`~dpax.PrivacyLoss` of batch shape ``()`` described ``"no-op"``
        (``randomized_response(0, 2)``): exact, advantage 0, beta = 1 - alpha.

    Raises:
        ValueError: ``grid_step`` outside [1e-7, 1].
        TypeError: ``grid_step`` not real or not one number.

    >>> pl = identity(1e-2)
    >>> pl.advantage(), pl.beta(0.1), pl.epsilon(1e-5)
    (0.0, 0.9, 0.0)
    """
    return replaced(_mech.randomized_response(0.0, 2, grid_step=grid_step), description="no-op")


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
    single PrivacyLoss for one tally and ``shape=()``).

    Tallies with the same kinds of mechanisms are built together, each family as one
    batch; rows of different kinds are built apart and stacked onto one grid.

    Args:
        tallies: the tallies (:func:`dpax.events.tally`), at least one.
        grid_step: the loss grid's step, in [1e-7, 1].
        shape: ``None`` (default) or ``(len(tallies),)`` for a batch of one row per tally,
            or ``()`` for a single PrivacyLoss of exactly one tally.

    Returns:
        A :class:`~dpax.PrivacyLoss`: the Gaussian leaves merged (GDP composes exactly),
        the other leaves composed with their counts by FFT; every risk from it on the safe
        side, as each mechanism's own is.

    Raises:
        ValueError: ``shape`` other than those (it names the tally count); ``grid_step``
            outside [1e-7, 1]; the Gaussian runs composed reach a
            privacy loss beyond 600 nats (the message gives their count and mu); a
            mechanism's parameters outside what it accepts.
        TypeError: ``grid_step`` not real or not one number.

    >>> from dp_accounting import dp_event
    >>> from dpax.events import tally
    >>> rows = [tally(dp_event.GaussianDpEvent(2.0)), tally(dp_event.GaussianDpEvent(1.0))]
    >>> pl = from_tallies(rows, 1e-2)
    >>> pl.batch_shape, pl.advantage().round(4)
    ((2,), array([0.1974, 0.3829]))
    """
    step = _v.grid_step(grid_step)
    shape = (len(tallies),) if shape is None else _shapes.shape_tuple(shape, what="the batch shape")
    if shape not in ((len(tallies),), ()) or (shape == () and len(tallies) != 1):
        raise ValueError(f"shape must be None or ({len(tallies)},) for {len(tallies)} tallies, or () for exactly one, "
                         f"got {shape}")
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
