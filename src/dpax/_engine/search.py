"""Vectorised bracketing: the smallest parameter meeting a monotone target, for many rows.

Calibration (Kulynych et al. 2024, Eq. 9, 14, 18) asks, for every configuration of a batch, for the
smallest noise whose privacy loss meets a risk target. Each round proposes a few candidate
parameters for every row still open, evaluates them all in one call, and keeps per row a
bracket [lo, hi]: lo verified to fail, hi verified to meet. Rows are independent; the
answer is always a verified hi, with hi / lo - 1 <= rtol.

Candidates: a row not yet bracketed gets ``candidates`` points spread over its guess
(widened each round until it brackets); a bracketed row gets its root estimated by inverse
interpolation (a cubic in the margin through the evaluated points nearest the root, regula
falsi in log-parameter while fewer than three are known) and either a tight pair of
candidates either side of a cubic estimate, or a cluster around a cruder one, or an even
split of a bracket that did not halve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import progress as _progress

#: points (nearest the root first) through which the root of a bracketed row is interpolated
INTERPOLATION_POINTS = 4
#: half-width of the pair of candidates placed at an interpolated root, in units of rtol
TIGHT_PAIR = 0.45
#: widest bracket (log of hi / lo) over which the margin is interpolated by a cubic
INTERPOLATION_WIDTH = 0.2
#: rounds after which a search that has not closed is a bug (the bracket shrinks every round)
MAX_ROUNDS = 200


def cluster(est: float, lo: float, hi: float, k: int, rtol: float) -> np.ndarray:
    """k points around ``est`` inside (lo, hi), adjacent ones rtol apart near est (so a root
    between them closes the bracket), the gaps doubling outwards: offsets +-0.5, +-1.5,
    +-3.5, ... x rtol for even k; 0, +-1, +-3, ... for odd k.

    >>> np.round(cluster(1.0, 0.5, 2.0, 2, 1e-2), 4)
    array([0.995, 1.005])
    """
    half = k // 2
    if k % 2 == 0:
        steps = np.log1p(rtol) * (2.0 ** np.arange(half) - 0.5)
        offsets = np.concatenate([-steps[::-1], steps])
    else:
        steps = np.log1p(rtol) * (2.0 ** (np.arange(half) + 1) - 1)
        offsets = np.concatenate([-steps[::-1], [0.0], steps])
    pts = np.exp(np.log(est) + offsets)
    return np.clip(pts, lo * (1 + 1e-12), hi / (1 + 1e-12))


def inverse_interpolation(log_params, margins) -> float:
    """Root (margin 0) of the polynomial through the points (margin_i, log param_i)
    (inverse interpolation, Lagrange form; margins distinct).

    >>> inverse_interpolation([0.0, 1.0], [-1.0, 1.0])
    0.5
    """
    est = 0.0
    for i, (x, m) in enumerate(zip(log_params, margins)):
        w = 1.0
        for j, mj in enumerate(margins):
            if j != i:
                w *= mj / (mj - m)
        est += w * x
    return est


@dataclass
class Brackets:
    """Per-row state of the search: the bracket [lo, hi], whether each end is verified, the
    margins there, and everything evaluated so far (for interpolation)."""

    lo: np.ndarray
    hi: np.ndarray
    lo_ok: np.ndarray = field(init=False)  #: lo was seen to fail
    hi_ok: np.ndarray = field(init=False)  #: hi was seen to meet
    m_lo: np.ndarray = field(init=False)
    m_hi: np.ndarray = field(init=False)
    floor_met: np.ndarray = field(init=False)  #: the lower bound itself meets the target
    infeasible: np.ndarray = field(init=False)  #: the upper bound fails
    width: np.ndarray = field(init=False)  #: log(hi / lo) when last proposed
    tight: np.ndarray = field(init=False)  #: the last round placed an interpolated pair
    history: list = field(init=False)  #: (log parameter, margin) evaluated, per row

    def __post_init__(self):
        n = self.lo.shape[0]
        self.lo_ok, self.hi_ok = np.zeros(n, bool), np.zeros(n, bool)
        self.m_lo, self.m_hi = np.full(n, -np.inf), np.full(n, np.inf)
        self.floor_met, self.infeasible = np.zeros(n, bool), np.zeros(n, bool)
        self.width, self.tight = np.full(n, np.inf), np.zeros(n, bool)
        self.history = [[] for _ in range(n)]

    def open_rows(self, rtol: float) -> np.ndarray:
        """Rows whose bracket is not yet rtol-narrow (and that are neither at the floor nor
        infeasible)."""
        done = (self.lo_ok & self.hi_ok & (self.hi / self.lo - 1 <= rtol)) | self.floor_met | self.infeasible
        return np.flatnonzero(~done)


def _nearest_points(s: Brackets, r: int, w_now: float, rtol: float) -> list:
    """Up to INTERPOLATION_POINTS evaluated (log parameter, margin) of row r, nearest the
    root first, within a few bracket widths, and no two closer than 2 rtol (a
    near-coincident pair would make the cubic ill-conditioned)."""
    log_lo, log_hi = np.log(s.lo[r]), np.log(s.hi[r])
    known: list[tuple[float, float]] = []
    if w_now <= INTERPOLATION_WIDTH:
        near = (x_m for x_m in sorted(s.history[r], key=lambda x_m: abs(x_m[1]))
                if np.isfinite(x_m[1]) and log_lo - 2 * w_now <= x_m[0] <= log_hi + 2 * w_now)
        for x, m in near:
            if all(abs(x - x2) > 2 * np.log1p(rtol) for x2, _ in known):
                known.append((x, m))
            if len(known) == INTERPOLATION_POINTS:
                break
    return known


def _root_estimate(s: Brackets, r: int, w_now: float, rtol: float) -> tuple[float, bool]:
    """(estimated root of row r inside its bracket, whether a cubic gave it)."""
    log_lo, log_hi = np.log(s.lo[r]), np.log(s.hi[r])
    known = _nearest_points(s, r, w_now, rtol)
    margins = [m for _, m in known]
    cubic = len(known) >= 3 and min(margins) < 0 <= max(margins) and len(set(margins)) == len(margins)
    if cubic:
        est_log = inverse_interpolation([x for x, _ in known], margins)
    else:
        est_log = log_lo + np.clip(-s.m_lo[r] / (s.m_hi[r] - s.m_lo[r]), 0.0, 1.0) * (log_hi - log_lo)
    # quantised to 2^-16 of the bracket so that round-off in the margins (e.g. a sharded
    # kernel's last bits) does not move the candidates
    w = np.round(np.clip((est_log - log_lo) / (log_hi - log_lo), 0.0, 1.0) * 65536) / 65536
    return s.lo[r] * (s.hi[r] / s.lo[r]) ** w, cubic


def _candidates(s: Brackets, r: int, k: int, rtol: float) -> np.ndarray:
    """The parameters to evaluate for row r this round."""
    lo, hi = s.lo[r], s.hi[r]
    if not (s.lo_ok[r] and s.hi_ok[r]):
        return lo * (hi / lo) ** (np.arange(k) / (k - 1))
    w_now = np.log(hi / lo)
    stalled = w_now > 0.5 * s.width[r]
    missed, s.tight[r] = s.tight[r], False
    s.width[r] = w_now
    if (stalled and not missed) or w_now <= (k + 1) * np.log1p(rtol) or not (
            np.isfinite(s.m_lo[r]) and np.isfinite(s.m_hi[r])):
        return lo * (hi / lo) ** (np.arange(1, k + 1) / (k + 1))
    est, cubic = _root_estimate(s, r, w_now, rtol)
    if cubic and not missed:
        s.tight[r] = True
        half = TIGHT_PAIR * np.log1p(rtol)
        return np.clip(est * np.exp([-half, half]), lo * (1 + 1e-12), hi / (1 + 1e-12))
    return cluster(est, lo, hi, k, rtol)


def _record(s: Brackets, r: int, g: np.ndarray, m: np.ndarray, bounds, widen: float) -> None:
    """Narrow (or widen) row r's bracket with the margins ``m`` of its candidates ``g``."""
    s.history[r].extend(zip(np.log(g), m))
    meet = m >= 0
    if not meet.any():
        s.lo[r], s.m_lo[r], s.lo_ok[r] = g[-1], m[-1], True
        if not s.hi_ok[r]:
            if s.hi[r] >= bounds[1]:
                s.infeasible[r] = True
                s.hi[r] = np.nan
            else:
                s.hi[r] = min(bounds[1], s.hi[r] * widen)
        return
    i = int(np.argmax(meet))
    if not s.hi_ok[r] or g[i] <= s.hi[r]:
        s.hi[r], s.m_hi[r], s.hi_ok[r] = g[i], m[i], True
    below = ~meet & (g < s.hi[r])
    if below.any():
        i2 = int(np.flatnonzero(below)[-1])
        if not s.lo_ok[r] or g[i2] >= s.lo[r]:
            s.lo[r], s.m_lo[r], s.lo_ok[r] = g[i2], m[i2], True
    elif not s.lo_ok[r]:
        if s.lo[r] <= bounds[0]:
            s.floor_met[r] = True
            s.lo[r] = np.nan
        else:
            s.lo[r] = max(bounds[0], s.lo[r] / widen)


def bracket_search(
    evaluate: Callable[[np.ndarray, np.ndarray], np.ndarray],
    lo,
    hi,
    *,
    bounds: tuple[float, float],
    rtol: float,
    candidates: int,
    what: str,
    widen: float = 4.0,
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Smallest parameter meeting a monotone target, for many rows at once.

    Args:
        evaluate: ``evaluate(params, rows)`` takes flat arrays of candidate parameters and
            their row indices and returns margins of the same shape: >= 0 where the
            parameter meets the target, growing with the parameter (larger = more private).
        lo, hi: per-row starting guesses (arrays of one length), widened by ``widen`` per
            round until they bracket.
        bounds: (smallest, largest) parameter allowed.
        rtol: relative width hi / lo - 1 at which a row is done.
        candidates: points per row per round before the row is bracketed (and around a
            crude root estimate); a cubic estimate gets a pair ``TIGHT_PAIR * rtol`` either
            side, which closes the bracket in one round when the margin is smooth.
        what: name for the error raised if the search does not converge.
        widen: factor by which an unbracketed guess is widened per round.

    Returns:
        ``(hi, lo, evaluations, infeasible)``: hi verified to meet, lo verified to fail
        (NaN where even ``bounds[0]`` meets), hi / lo - 1 <= rtol; ``infeasible`` marks the
        rows that fail even at ``bounds[1]`` (their hi is NaN); the other rows are
        unaffected. ``evaluations`` counts the parameters evaluated.

    >>> hi, lo, n, bad = bracket_search(lambda x, r: x - np.array([2.0, 3.0])[r], [1.0, 1.0], [4.0, 4.0],
    ...                                 bounds=(1e-3, 1e3), rtol=1e-6, candidates=3, what="demo")
    >>> np.round(hi, 5), bool(np.all(hi / lo - 1 <= 1e-6)), bad.tolist()
    (array([2., 3.]), True, [False, False])
    """
    lo = np.clip(np.array(lo, float), bounds[0], bounds[1])
    hi = np.clip(np.array(hi, float), bounds[0], bounds[1])
    s = Brackets(np.maximum(np.minimum(lo, hi / (1 + 2 * rtol)), bounds[0]), hi)
    evaluations = 0
    for _ in range(MAX_ROUNDS):
        active = s.open_rows(rtol)
        if active.size == 0:
            return s.hi, s.lo, evaluations, s.infeasible
        grids = [_candidates(s, r, candidates, rtol) for r in active]
        sizes = np.array([g.size for g in grids])
        flat_margins = np.asarray(evaluate(np.concatenate(grids), np.repeat(active, sizes)), float)
        evaluations += int(sizes.sum())
        for r, g, m in zip(active, grids, np.split(flat_margins, np.cumsum(sizes)[:-1])):
            _record(s, r, g, m, bounds, widen)
        _progress.advance(1, open=f"{s.open_rows(rtol).size}/{s.hi.size}", evaluations=evaluations)
    raise RuntimeError(f"{what}: calibration did not converge")  # pragma: no cover
