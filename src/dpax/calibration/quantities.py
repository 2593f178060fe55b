"""DP-SGD's quantities for calibration: the probability q that a record is used at all, the
CLT noise guess (Bu et al.), the support-width class that groups rows into kernel calls,
the risks re-evaluated at the calibrated noise, and the target's quantities without noise."""

from __future__ import annotations

from typing import cast

import numpy as np

from .. import targets as _targets
from .._engine import analyse as _analyse
from .._engine import batching as _batching
from .._engine import sharding as _sharding
from ..mechanisms import dpsgd


def _leak_probability(sample_rate: np.ndarray, num_steps: np.ndarray) -> np.ndarray:
    """q = 1 - (1 - p)^T, the probability that a record is used at all (1 at p = 1)."""
    with np.errstate(divide="ignore"):  # log1p(-1) = -inf at p = 1: q = 1, as it should
        return -np.expm1(num_steps * np.log1p(-sample_rate))


def _dpsgd_noise_guess(mu: np.ndarray, sample_rate: np.ndarray, num_steps: np.ndarray) -> np.ndarray:
    """Noise at which the CLT mu of DP-SGD, p sqrt(T (e^{1/s^2} - 1)), equals ``mu``."""
    ratio = (mu / sample_rate) ** 2 / num_steps
    return 1.0 / np.sqrt(np.log1p(ratio))


def _width_key(noise: np.ndarray, p: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Support-width class of DP-SGD rows (CLT mu, mu^2 + 10 mu, a factor 4 per class)."""
    with np.errstate(all="ignore"):
        mu = p * np.sqrt(t * np.expm1(np.minimum(1.0 / noise**2, 700.0)))
    return _batching.width_class(1.0 + mu * (mu + 10.0))


#: fewest rows of the final re-evaluation of the answers worth a kernel call of their own
#: (:func:`_achieved`; the search's groups use :data:`dpax._engine.batching.GROUP_MIN_ROWS`)
ACHIEVED_GROUP_MIN_ROWS = 8


def _achieved(noise: np.ndarray, p: np.ndarray, t: np.ndarray, target: _targets.Target, delta: np.ndarray,
              grid_step: float) -> dict[str, np.ndarray]:
    """Risk values of the calibrated configurations, re-evaluated at the requested grid
    (chunked to fit memory); NaN for infeasible rows."""
    rows = noise.shape[0]
    result = {"advantage": np.full(rows, np.nan), "epsilon": np.full(rows, np.nan)}
    alpha = getattr(target, "alpha", None)
    if alpha is not None:
        result["beta"] = np.full(rows, np.nan)
    have = np.flatnonzero(np.isfinite(noise) & (noise > 0))
    if have.size:

        def run(start: int, stop: int) -> np.ndarray:
            r = have[start:stop]
            pair = dpsgd(noise[r], p[r], t[r], grid_step).pair
            a = (alpha[r] if alpha is not None else np.full(r.size, 0.5)).reshape(-1, 1)
            adv, eps, beta = _analyse.risk_summary_kernel(pair, a, delta[r].reshape(-1, 1),
                                                          near_one=_analyse.needs_complements(a))
            return np.stack([np.asarray(adv), np.asarray(eps)[:, 0], np.asarray(beta)[:, 0]], -1)

        # rows grouped by support width, so small rows are not padded to the widest
        all_have, keys = have, _width_key(noise[have], p[have], t[have])
        for g in _batching.merge_groups(keys, ACHIEVED_GROUP_MIN_ROWS):
            have = all_have[np.isin(keys, g)]
            vals, _ = _sharding.map_chunks(run, have.size)
            result["advantage"][have] = vals[:, 0]
            result["epsilon"][have] = vals[:, 1]
            if alpha is not None:
                result["beta"][have] = vals[:, 2]
    zero = noise == 0
    q = _leak_probability(p[zero], t[zero])
    result["advantage"][zero] = q
    result["epsilon"][zero] = np.where(q <= delta[zero], 0.0, np.inf)
    if alpha is not None:
        result["beta"][zero] = (1 - q) * (1 - alpha[zero])
    return result


def _no_noise_quantities(target: _targets.Target, q: np.ndarray) -> dict[str, np.ndarray]:
    """The target's quantities (flat rows) without noise, where subsampling alone leaks with
    probability q: the curve (1 - q)(1 - alpha), advantage q, epsilon 0 if q <= delta else inf."""
    out: dict[str, np.ndarray] = {}
    for part in target.parts if isinstance(target, _targets.All) else (target,):
        if isinstance(part, _targets.Advantage):
            out["advantage"] = q
        elif isinstance(part, _targets.Epsilon):
            out["epsilon"] = np.where(q <= np.asarray(part.delta).reshape(-1), 0.0, np.inf)
        else:
            # the rest are ErrRates or _ViaErrRates: _accuracy_quantities refused every other kind
            er = part if isinstance(part, _targets.ErrRates) else cast(_targets._ViaErrRates, part).err_rates()
            out["beta"] = (1 - q) * (1 - np.asarray(er.alpha).reshape(-1))
    return out
