"""Calibration: the smallest noise that meets a risk target (seed paper, Eq. 9, 14, 18).

The search is vectorised: every round evaluates a whole grid of candidate noise values for
every configuration in one batched kernel call, keeps the bracket [lo, hi] where lo is a
candidate verified to *fail* the target and hi one verified to *meet* it at the requested
grid, and repeats until hi / lo - 1 <= rtol. The returned noise is always a verified hi:
it meets the target at the requested grid step, and a noise rtol (relative) smaller was
seen to fail there. The starting bracket comes from the Gaussian-DP closed form of the
target and the CLT approximation of DP-SGD (Bu et al.); it is widened until it brackets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import targets as _targets
from . import validation as _v
from ._x64 import float64
from .mechanisms import dpsgd
from .privacy_loss import PrivacyLoss

DEFAULT_RTOL = 1e-4
DEFAULT_CANDIDATES = 4
DEFAULT_STANDARD_DELTA = 1e-5
#: Bracketing phases (grid step, relative tolerance, candidates per round, how far the next
#: phase's bracket is opened below this one's answer). The last phase always runs at the
#: requested grid and tolerance, so the answer is verified there.
COARSE_PHASES = ((1e-2, 1e-2, 8, 0.35), (1e-3, 1e-3, 6, 0.03))


def _phases(grid_step, rtol, candidates):
    phases = [ph for ph in COARSE_PHASES if ph[0] > grid_step * 1.5 and ph[1] > rtol]
    return phases + [(grid_step, rtol, candidates, 0.0)]


@dataclass
class CalibrationResult:
    """Outcome of a calibration; array fields have the broadcast shape of the configurations."""

    noise_multiplier: object
    """Smallest noise found that meets the target at ``grid_step`` (0 where no noise is needed)."""
    noise_multiplier_failing: object
    """Largest noise seen to fail the target (the lower end of the final bracket)."""
    achieved: dict
    """Risk at ``noise_multiplier``: 'beta' (at the target alpha), 'advantage', 'epsilon' (at
    ``delta``)."""
    delta: object
    standard_epsilon: object
    """epsilon that standard (epsilon, delta) calibration would need to guarantee the same bound."""
    standard_noise_multiplier: object
    """Noise that standard calibration to (standard_epsilon, delta) would need (NaN if not run)."""
    status: object
    """'calibrated', or 'met_without_noise' where subsampling alone already meets the target."""
    target: _targets.Target
    grid_step: float
    rtol: float
    evaluations: int = 0
    details: dict = field(default_factory=dict)

    @property
    def noise_reduction(self):
        """1 - noise / standard noise: the share of noise attack-aware calibration saves."""
        return 1.0 - np.asarray(self.noise_multiplier) / np.asarray(self.standard_noise_multiplier)


def _scalarise(a):
    a = np.asarray(a)
    return a.item() if a.ndim == 0 else a


def _cluster(est, lo, hi, k, rtol):
    """k points around ``est`` inside (lo, hi): spacing rtol/2 near est, doubling outwards."""
    half = (k + 1) // 2
    steps = np.log1p(rtol) * 0.5 * (2.0 ** np.arange(half) * 2 - 1)  # 0.5, 1.5, 3.5, ... (x rtol)
    offsets = np.concatenate([-steps[::-1], steps])[:k] if k % 2 == 0 else np.concatenate([-steps[::-1], steps[1:]])
    pts = np.exp(np.log(est) + offsets)
    return np.clip(pts, lo * (1 + 1e-12), hi / (1 + 1e-12))


def bracket_search(
    evaluate: Callable[[np.ndarray, np.ndarray], np.ndarray],
    lo,
    hi,
    *,
    bounds,
    rtol,
    candidates,
    what,
    widen=4.0,
):
    """Smallest parameter meeting a monotone target, for many rows at once.

    ``evaluate(params, rows)`` takes an array (len(rows), k) of parameters for the given row
    indices and returns margins of the same shape: >= 0 where the parameter meets the target,
    growing with the parameter (larger parameter = more private). ``lo`` and ``hi`` are
    per-row starting guesses, widened by ``widen`` per round until they bracket. Once
    bracketed, candidates cluster around the root interpolated from the margins at the
    bracket ends (regula falsi in log-parameter), with spacing rtol / 2 at the estimate.
    Returns (hi, lo, evaluations): hi verified to meet, lo verified to fail (NaN where even
    ``bounds[0]`` meets), hi / lo - 1 <= rtol.
    """
    lo = np.clip(np.array(lo, float), bounds[0], bounds[1])
    hi = np.clip(np.array(hi, float), bounds[0], bounds[1])
    lo = np.maximum(np.minimum(lo, hi / (1 + 2 * rtol)), bounds[0])
    n_rows = lo.shape[0]
    lo_ok = np.zeros(n_rows, bool)
    hi_ok = np.zeros(n_rows, bool)
    m_lo = np.full(n_rows, -np.inf)
    m_hi = np.full(n_rows, np.inf)
    floor_met = np.zeros(n_rows, bool)
    evaluations = 0
    k = candidates
    for _ in range(100):
        done = (lo_ok & hi_ok & (hi / lo - 1 <= rtol)) | floor_met
        active = np.flatnonzero(~done)
        if active.size == 0:
            break
        grid = np.empty((active.size, k))
        for j, r in enumerate(active):
            if lo_ok[r] and hi_ok[r]:
                if np.log(hi[r] / lo[r]) <= (k + 1) * np.log1p(rtol) or not (np.isfinite(m_lo[r]) and np.isfinite(m_hi[r])):
                    grid[j] = lo[r] * (hi[r] / lo[r]) ** (np.arange(1, k + 1) / (k + 1))
                else:
                    w = -m_lo[r] / (m_hi[r] - m_lo[r])
                    est = lo[r] * (hi[r] / lo[r]) ** np.clip(w, 0.0, 1.0)
                    grid[j] = _cluster(est, lo[r], hi[r], k, rtol)
            else:
                grid[j] = lo[r] * (hi[r] / lo[r]) ** (np.arange(k) / (k - 1))
        margins = np.asarray(evaluate(grid, active), float)
        evaluations += grid.size
        for j, r in enumerate(active):
            g, m = grid[j], margins[j]
            meet = m >= 0
            if meet.any():
                i = int(np.argmax(meet))
                if not hi_ok[r] or g[i] <= hi[r]:
                    hi[r], m_hi[r], hi_ok[r] = g[i], m[i], True
                below = ~meet & (g < hi[r])
                if below.any():
                    i2 = int(np.flatnonzero(below)[-1])
                    if not lo_ok[r] or g[i2] >= lo[r]:
                        lo[r], m_lo[r], lo_ok[r] = g[i2], m[i2], True
                elif not lo_ok[r]:
                    if lo[r] <= bounds[0]:
                        floor_met[r] = True
                        lo[r] = np.nan
                    else:
                        lo[r] = max(bounds[0], lo[r] / widen)
            else:
                lo[r], m_lo[r], lo_ok[r] = g[-1], m[-1], True
                if not hi_ok[r]:
                    if hi[r] >= bounds[1]:
                        raise ValueError(
                            f"{what}: row {r} does not meet the target even at noise {bounds[1]:g} "
                            f"(the upper search bound); raise the bound or relax the target"
                        )
                    hi[r] = min(bounds[1], hi[r] * widen)
    else:  # pragma: no cover - the bracket shrinks every round
        raise RuntimeError(f"{what}: calibration did not converge")
    return hi, lo, evaluations


def _leak_probability(sample_rate, num_steps):
    return -np.expm1(num_steps * np.log1p(-sample_rate))


def _dpsgd_noise_guess(mu, sample_rate, num_steps):
    """Noise at which the CLT mu of DP-SGD, p sqrt(T (e^{1/s^2} - 1)), equals ``mu``."""
    ratio = (mu / sample_rate) ** 2 / num_steps
    return 1.0 / np.sqrt(np.log1p(ratio))


def _calibrate_dpsgd_rows(sample_rate, num_steps, target, grid_step, rtol, candidates, bounds):
    rows = sample_rate.shape[0]
    needs_noise = ~np.asarray(target.met_without_noise(_leak_probability(sample_rate, num_steps)), bool)
    noise = np.zeros(rows)
    failing = np.zeros(rows)
    evaluations = 0
    idx = np.flatnonzero(needs_noise)
    if idx.size:
        p, t = sample_rate[idx], num_steps[idx]
        sub_target = target.take(idx)
        guess = _dpsgd_noise_guess(np.asarray(sub_target.gdp_mu(), float), p, t)

        def evaluate_at(step):
            def evaluate(grid, active):
                k = grid.shape[1]
                pl = dpsgd(grid, p[active, None], t[active, None], step)
                margin, _ = sub_target.take(np.repeat(active, k)).margin(pl._rows())
                return margin.reshape(grid.shape)

            return evaluate

        lo, hi, widen = guess / 2, guess * 2, 4.0
        phases = _phases(grid_step, rtol, candidates)
        for i, (step, tol, k, _) in enumerate(phases):
            if i:  # the finer grid is less pessimistic: its answer lies a little lower
                margin = phases[i - 1][3]
                lo = np.where(np.isnan(lo), bounds[0], lo)
                lo, hi, widen = np.maximum(lo * (1 - margin), bounds[0]), hi * (1 + 0.1 * margin), 1 + 2 * margin
            hi, lo, ev = bracket_search(
                evaluate_at(step), lo, hi, bounds=bounds, rtol=tol, candidates=k, what="calibrate_dpsgd", widen=widen
            )
            evaluations += ev
        noise[idx], failing[idx] = hi, lo
    status = np.where(needs_noise, "calibrated", "met_without_noise")
    return noise, failing, status, evaluations


@float64
def calibrate_dpsgd(
    *,
    sample_rate,
    num_steps,
    target: _targets.Target,
    grid_step=1e-4,
    rtol=DEFAULT_RTOL,
    noise_bounds=(0.05, 1000.0),
    standard_delta=DEFAULT_STANDARD_DELTA,
    compare_standard: bool = True,
    candidates: int = DEFAULT_CANDIDATES,
) -> CalibrationResult:
    """Smallest DP-SGD noise multiplier meeting ``target`` at ``grid_step``.

    Targets: :class:`~dpax.targets.ErrRates` (Eq. 18: f(alpha*) >= beta*),
    :class:`~dpax.targets.Advantage` (Eq. 14) and :class:`~dpax.targets.Epsilon` (standard
    calibration, Eq. 2). ``sample_rate``, ``num_steps`` and the target's fields broadcast.
    The answer is verified at ``grid_step``: it meets the target there, and a noise ``rtol``
    (relative) smaller fails there. Where subsampling alone meets the target the noise is 0
    and ``status`` says 'met_without_noise'. With ``compare_standard`` the noise that
    standard calibration to (epsilon, ``standard_delta``) needs for the same bound is
    computed too (for an Epsilon target, delta is the target's own).
    """
    if not isinstance(target, _targets.Target):
        raise TypeError(f"target must be a dpax.targets target (ErrRates, Advantage, Epsilon), got {target!r}")
    p = _v.real_array("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    steps = _v.positive_int_array("num_steps", num_steps)
    step = _v.grid_step(grid_step)
    rtol = float(_v.real_array("rtol", rtol, low=1e-8, high=0.1))
    if not (isinstance(candidates, int) and 2 <= candidates <= 1024):
        raise ValueError(f"candidates must be an integer in [2, 1024], got {candidates!r}")
    bounds = tuple(float(b) for b in _v.real_array("noise_bounds", noise_bounds, low=0.0, low_open=True))
    if len(bounds) != 2 or bounds[0] >= bounds[1]:
        raise ValueError(f"noise_bounds must be (low, high) with 0 < low < high, got {noise_bounds!r}")
    standard_delta = float(_v.real_array("standard_delta", standard_delta, low=0.0, high=1.0, low_open=True, high_open=True))

    shape = np.broadcast_shapes(p.shape, steps.shape, target.shape())
    flat = lambda a: np.broadcast_to(a, shape).reshape(-1)
    p_rows, t_rows = flat(p), flat(steps)
    tgt_rows = target.flat(shape)

    noise, failing, status, evaluations = _calibrate_dpsgd_rows(p_rows, t_rows, tgt_rows, step, rtol, candidates, bounds)

    delta = tgt_rows.delta if isinstance(tgt_rows, _targets.Epsilon) else np.full(noise.shape, standard_delta)
    std_eps = np.broadcast_to(tgt_rows.standard_epsilon(delta), noise.shape)
    std_noise = np.full(noise.shape, np.nan)
    if compare_standard:
        if isinstance(tgt_rows, _targets.Epsilon):
            std_noise = noise.copy()
        else:
            finite = std_eps > 0
            if np.any(finite):
                eps_target = _targets.Epsilon(std_eps[finite], delta[finite])
                n2, _, _, ev2 = _calibrate_dpsgd_rows(p_rows[finite], t_rows[finite], eps_target, step, rtol, candidates, bounds)
                std_noise[finite] = n2
                evaluations += ev2

    achieved = _achieved(noise, p_rows, t_rows, tgt_rows, delta, step)
    out = lambda a: _scalarise(np.asarray(a).reshape(shape))
    return CalibrationResult(
        noise_multiplier=out(noise),
        noise_multiplier_failing=out(failing),
        achieved={k: out(v) for k, v in achieved.items()},
        delta=out(delta),
        standard_epsilon=out(std_eps),
        standard_noise_multiplier=out(std_noise),
        status=out(status),
        target=target,
        grid_step=step,
        rtol=rtol,
        evaluations=evaluations,
    )


def _achieved(noise, p, t, target, delta, grid_step):
    """Risk values of the calibrated configurations, re-evaluated at the requested grid."""
    from . import analyse

    rows = noise.shape[0]
    result = {"advantage": np.full(rows, np.nan), "epsilon": np.full(rows, np.nan)}
    if isinstance(target, _targets.ErrRates):
        result["beta"] = np.full(rows, np.nan)
    have = noise > 0
    if np.any(have):
        pl = dpsgd(noise[have], p[have], t[have], grid_step)
        r = pl._rows()
        result["advantage"][have] = np.asarray(analyse.advantage_kernel(*r))
        result["epsilon"][have] = np.asarray(analyse.epsilon_kernel(*r, delta[have].reshape(-1, 1)))[:, 0]
        if "beta" in result:
            result["beta"][have] = np.asarray(analyse.beta_kernel(*r, target.alpha[have].reshape(-1, 1)))[:, 0]
    q = _leak_probability(p[~have], t[~have])
    result["advantage"][~have] = q
    result["epsilon"][~have] = np.where(q <= delta[~have], 0.0, np.inf)
    if "beta" in result:
        result["beta"][~have] = (1 - q) * (1 - target.alpha[~have])
    return result


@float64
def calibrate(
    mechanism: Callable[[np.ndarray], PrivacyLoss],
    target: _targets.Target,
    *,
    bounds=(1e-2, 1e3),
    rtol=DEFAULT_RTOL,
    candidates: int = DEFAULT_CANDIDATES,
    guess=None,
):
    """Smallest parameter w in ``bounds`` such that ``mechanism(w)`` meets ``target`` (Eq. 9).

    ``mechanism`` maps an array of parameters to a batched :class:`PrivacyLoss` of the same
    shape and must be monotone: larger w, more private (e.g. a noise scale). Returns the
    verified parameter as a float (the target must be scalar).
    """
    if not callable(mechanism):
        raise TypeError("mechanism must be a callable parameter -> PrivacyLoss")
    if target.shape() != ():
        raise ValueError("calibrate takes a scalar target; use calibrate_dpsgd for batches")
    lo_b, hi_b = (float(b) for b in _v.real_array("bounds", bounds, low=0.0, low_open=True))
    g = np.sqrt(lo_b * hi_b) if guess is None else float(guess)

    def evaluate(grid, active):
        pl = mechanism(grid.reshape(-1))
        if not isinstance(pl, PrivacyLoss):
            raise TypeError(f"mechanism must return a PrivacyLoss, got {type(pl).__name__}")
        margin, _ = target.flat((grid.size,)).margin(pl._rows())
        return margin.reshape(grid.shape)

    hi, lo, _ = bracket_search(
        evaluate, np.array([g / 2]), np.array([g * 2]), bounds=(lo_b, hi_b), rtol=rtol, candidates=candidates, what="calibrate"
    )
    return float(hi[0])
