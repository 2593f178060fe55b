"""What an optimistic companion knows about its labels' likelihood ratios (:class:`Slack`),
how composition adds it up (:func:`composed_slack`), and a single step's (:func:`with_slack`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..pair import Pair


class Slack(NamedTuple):
    """What a companion knows about its labels' likelihood ratios, per row (rows,).

    With X_1 = X e^x and Y_1 = Y e^-x (the tilted laws at rate 1): X_1 <= e^ratio Y + E_p
    and Y_1 <= e^ratio X + E_q label by label, where E_p, E_q are non-negative measures of
    total mass at most ``tilted_p`` and ``tilted_q``. A single step's label carries the
    mass of outputs with loss within ``ratio`` of it (half a step by nearest point, one by
    interpolation), hence ratio dQ/dP >= e^(x - ratio), except the first point of an
    unbounded law (or atoms clamped to it), whose P-mass m adds e^(x_0) m to ``tilted_p``,
    and likewise the last point (Q-mass m, e^(-x_last) m to ``tilted_q``). Composition adds
    the ratios and counts the steps (:func:`composed_slack`).
    """

    ratio: Any
    tilted_p: Any
    tilted_q: Any
    steps: Any  #: single steps composed (the FFT's round-off grows with it)

    def take(self, index) -> Slack:
        """The rows at ``index``."""
        return Slack(*(np.take(np.asarray(a), index, axis=0) for a in self))

    def widened(self, by: float) -> Slack:
        """The slack after every label moved by at most ``by`` (a regrid): e^x changes by at
        most e^by, so the ratio widens by ``by`` and the tilted masses grow by e^by."""
        grow = np.exp(by)
        return Slack(np.asarray(self.ratio) + by, np.asarray(self.tilted_p) * grow, np.asarray(self.tilted_q) * grow,
                     self.steps)

    def to_aux(self) -> tuple:
        """A hashable form (for the pytree's static data)."""
        return tuple(tuple(float(v) for v in np.reshape(a, -1)) for a in self)

    @classmethod
    def from_aux(cls, aux) -> Slack | None:
        """The inverse of :meth:`to_aux` (``None`` stays ``None``)."""
        return None if aux is None else cls(*(np.asarray(a, np.float64) for a in aux))


def composed_slack(slacks, counts) -> Slack:
    """Slack of the composition of ``counts[i]`` copies of factor i (rows,).

    Composing X_1,i <= e^(r_i) Y_i + E_i gives X_1 <= e^R (Y + cross terms), R = sum T_i r_i,
    the cross terms (each with some E_i) of total at most (1 + u)^T expm1(sum T_i t_i) when
    every Y_i has mass at most 1 + u; the factor 2 covers (1 + u)^T for u <= 0.69 / T."""
    c = [np.asarray(x, np.float64) for x in counts]
    total = lambda i: sum(ci * np.asarray(s[i], np.float64) for s, ci in zip(slacks, c))
    ratio = total(0)
    with np.errstate(over="ignore", invalid="ignore"):
        cross_p, cross_q = [np.where(total(i) > 0, 2.0 * np.exp(ratio) * np.expm1(total(i)), 0.0) for i in (1, 2)]
    return Slack(ratio, cross_p, cross_q, total(3))

def with_slack(pair: Pair, grid_step: float, loss_min, loss_max, width: float | np.ndarray = 0.5,
               top=None) -> tuple[Pair, Slack]:
    """``pair`` and its :class:`Slack`: a label's mass comes from losses within ``width``
    steps of it (a float, or one per row); the first point (which absorbs L below it) keeps the lower ratio bound
    only if the law's smallest loss ``loss_min`` is that close, else its P-mass is
    irregular; likewise the last point (index ``top``, rows, default the grid's end) and
    ``loss_max`` (its Q-mass)."""
    rows, n = pair.pmf_x.shape
    half = width * grid_step
    offset = np.asarray(pair.offset)
    top = np.full(rows, n - 1) if top is None else np.asarray(top)
    first, last = offset * grid_step, (offset + top) * grid_step
    low_ok = np.broadcast_to(np.asarray(loss_min, np.float64), (rows,)) >= first - half
    high_ok = np.broadcast_to(np.asarray(loss_max, np.float64), (rows,)) <= last + half
    q_top = np.take_along_axis(np.asarray(pair.pmf_y), top[:, None], -1)[:, 0]
    with np.errstate(over="ignore"):
        irr_p = np.where(low_ok, 0.0, np.exp(first) * np.asarray(pair.pmf_x[:, 0]))
        irr_q = np.where(high_ok, 0.0, np.exp(-last) * q_top)
    return pair, Slack(np.full(rows, half), irr_p, irr_q, np.ones(rows))

