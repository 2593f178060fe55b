"""Shared by the mechanism families: the single-step tail and noise limits, the
neighbouring relations, argument checks and descriptions."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._engine import grid as _grid
from .._engine import validation as _v

#: Mass allowed in each tail of a single step before it is collapsed onto the grid's end
#: point plus an infinite atom (pessimistically; nothing is dropped).
SINGLE_STEP_TAIL = 1e-20
#: -Phi^-1(SINGLE_STEP_TAIL) (``-scipy.special.ndtri(SINGLE_STEP_TAIL)``, checked by the
#: tests): the standard normal quantile beyond which a Gaussian leaves that tail.
SINGLE_STEP_Z = 9.262340089798409
_MAX_LOSS = _grid.MAX_LOSS
#: Least noise / sensitivity of a Gaussian whose privacy loss stays within MAX_LOSS out to
#: the outputs that leave SINGLE_STEP_TAIL of the mass beyond: the loss there is x^2 / 2 + z x
#: (x = sensitivity / noise, z = -Phi^-1(SINGLE_STEP_TAIL) = 9.2623), at most MAX_LOSS for
#: x <= sqrt(z^2 + 2 MAX_LOSS) - z: noise >= sensitivity / (sqrt(z^2 + 1200) - z) =
#: 0.0376002227514754 sensitivity. Sample rates below 1 and mixtures only shrink the loss, but
#: the Gaussian family enforces this one number at every sample rate (twice it under
#: substitution), the number its docstrings and messages quote (:data:`LEAST_NOISE_TEXT`).
_LEAST_NOISE_RATIO = float(1.0 / (np.sqrt(SINGLE_STEP_Z**2 + 2.0 * _MAX_LOSS) - SINGLE_STEP_Z))
#: :data:`_LEAST_NOISE_RATIO` and twice it, rounded up to 5 significant digits, as the
#: docstrings state them ("at least 0.037601"): every value at or above the text is accepted.
LEAST_NOISE_TEXT = {1.0: "0.037601", 2.0: "0.075201"}


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


def least_noise(factor: float = 1.0) -> float:
    """The least noise multiplier (noise / sensitivity) of the Gaussian family:
    ``factor`` x :data:`_LEAST_NOISE_RATIO` (``factor`` 2 under substitution, which doubles
    the sensitivity), the same at every sample rate.

    >>> least_noise(), least_noise(2.0)
    (0.03760022275147539, 0.07520044550295078)
    """
    return factor * _LEAST_NOISE_RATIO


def least_noise_message(name: str, value: float, factor: float = 1.0, per: str = "", shown: str = "") -> str:
    """The refusal of ``name`` = ``value`` below :func:`least_noise` (``per``: what the least
    is relative to, e.g. " x sensitivity"; ``shown``: how the value is named, ``name`` by
    default), naming the exact least and the figure the docstrings quote (rounded up)."""
    least, text = least_noise(factor), LEAST_NOISE_TEXT[factor]
    equals = " = " if " " in (shown or name) else "="
    return (f"{shown or name}{equals}{value:.6g} is too small: the least is {least!r}{per} (rounded up {text}{per}, at "
            f"every sample rate); below it the privacy loss can exceed {_MAX_LOSS:g} nats, beyond float64 "
            f"range; use {name} >= {text}{per}")


def _check_noise(s: np.ndarray, factor: float = 1.0) -> None:
    """A ValueError naming the first noise multiplier below :func:`least_noise` (``factor``
    2 under substitution: the sensitivity doubled), the same bound at every sample rate."""
    too_small = ~(s >= least_noise(factor))
    if np.any(too_small):
        raise ValueError(least_noise_message("noise_multiplier", float(s[np.argmax(too_small)]), factor))


def _substitution_factor(neighbouring: str) -> float:
    """Sensitivity multiplier of an additive-noise mechanism under ``neighbouring``.

    A sum of per-record contributions bounded by C changes by at most C when a record is
    added or removed, and by up to 2C when one record is replaced by another.
    """
    return 2.0 if _neighbouring(neighbouring) == "substitution" else 1.0
