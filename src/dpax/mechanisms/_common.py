"""Shared by the mechanism families: the single-step tail and noise limits, the
neighbouring relations, argument checks and descriptions."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtri

from .._engine import grid as _grid
from .._engine import validation as _v

#: Mass allowed in each tail of a single step before it is collapsed onto the grid's end
#: point plus an infinite atom (pessimistically; nothing is dropped).
SINGLE_STEP_TAIL = 1e-20
_MAX_LOSS = _grid.MAX_LOSS
#: Smallest noise / sensitivity of a Gaussian whose privacy loss stays within MAX_LOSS out to
#: the outputs that leave SINGLE_STEP_TAIL of the mass beyond: the loss there is x^2 / 2 + z x
#: (x = sensitivity / noise, z = -Phi^-1(SINGLE_STEP_TAIL) = 9.26), at most MAX_LOSS for
#: x <= sqrt(z^2 + 2 MAX_LOSS) - z: noise >= 0.0376 sensitivity. Sample rates below 1 and
#: mixtures only shrink the loss, so it is enough for every one of them.
_LEAST_NOISE_RATIO = float(1.0 / (np.sqrt(ndtri(SINGLE_STEP_TAIL) ** 2 + 2.0 * _MAX_LOSS) + ndtri(SINGLE_STEP_TAIL)))


def _at_least(value: float) -> str:
    """``value`` rounded up to 3 significant digits, for the 'use ... >= X' of a message (X works)."""
    digits = 2 - int(np.floor(np.log10(value)))
    return f"{np.ceil(value * 10.0**digits) / 10.0**digits:.{max(digits, 0)}f}"


def _describe(name: str, neighbouring: str = "add_remove", **params: ArrayLike) -> str:
    """``name(param=value, ...)`` for ``PrivacyLoss.description``; arrays show their shape,
    and a neighbouring relation other than add/remove is named last."""
    parts = []
    for k, v in params.items():
        v = np.asarray(v)
        if v.ndim:
            parts.append(f"{k}=<{v.shape} array>")
        else:
            try:
                parts.append(f"{k}={float(v):g}")
            except (TypeError, ValueError):
                parts.append(f"{k}={_v.brief(v.item(), 40)}")
    if neighbouring != "add_remove":
        parts.append(f"neighbouring={neighbouring}")
    return f"{name}({', '.join(parts)})"


# -- neighbouring relations ---------------------------------------------------------------

#: Neighbouring relations: add/remove one record (default) and substitution (replace one).
NEIGHBOURING = ("add_remove", "substitution")


def _neighbouring(value: object) -> str:
    if not isinstance(value, str) or value not in NEIGHBOURING:
        raise ValueError(f"neighbouring must be one of {NEIGHBOURING}, got {_v.brief(value)}")
    return value


def _check_noise(s: np.ndarray, too_small: np.ndarray, factor: float = 1.0) -> None:
    """A ValueError naming the first noise multiplier whose privacy loss leaves float64 range
    (``too_small``: its bound is above MAX_LOSS, or NaN because the noise is so small that
    the bound itself overflows), and the noise that is enough at every sample rate (``factor``
    2 under substitution: the sensitivity doubled)."""
    if np.any(too_small):
        worst = s[np.argmax(too_small)]
        raise ValueError(
            f"noise_multiplier={worst:g} is too small: its privacy loss exceeds {_MAX_LOSS:g} nats, "
            f"beyond float64 range; use noise_multiplier >= {_at_least(factor * _LEAST_NOISE_RATIO)} (enough at "
            "every sample rate)"
        )


def _substitution_factor(neighbouring: str) -> float:
    """Sensitivity multiplier of an additive-noise mechanism under ``neighbouring``.

    A sum of per-record contributions bounded by C changes by at most C when a record is
    added or removed, and by up to 2C when one record is replaced by another.
    """
    return 2.0 if _neighbouring(neighbouring) == "substitution" else 1.0
