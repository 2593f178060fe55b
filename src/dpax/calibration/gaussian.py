"""The exact noise of the plain Gaussian mechanism, :func:`calibrate_gaussian`, from the
closed forms of the target's mu-GDP (Kulynych et al. 2024, App. B)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .. import targets as _targets
from .._engine import validation as _v
from .result import _out


def calibrate_gaussian(
    target: _targets.Target | list[_targets.Target] | tuple[_targets.Target, ...],
    sensitivity: ArrayLike = 1.0,
) -> float | np.ndarray:
    """Exact noise standard deviation of the (plain) Gaussian mechanism meeting ``target``:
    sigma = sensitivity / mu* with mu* the largest mu-GDP meeting it (Kulynych et al. 2024, App. B).

    Advantage: Corollary B.3, mu* = 2 Phi^-1((1 + eta*) / 2). ErrRates (and Accuracy, PPV,
    Reconstruction via Table 1): Corollary B.4, mu* = Phi^-1(1 - alpha*) - Phi^-1(beta*).
    Epsilon: the analytic Gaussian mechanism (Balle & Wang 2018), Eq. 22 solved for mu.
    GDP: mu*; several targets: the smallest mu*. Arrays broadcast. A noise outside float64's
    positive range (0 or inf after the division) is a ValueError.

    Args:
        target: a :mod:`dpax.targets` target, or a list / tuple of them (meet all).
        sensitivity: the L2 sensitivity of the released query, > 0 (default 1.0: sigma is
            then the noise multiplier); broadcasts with the target's fields.

    Returns:
        sigma: a float for one configuration, else a float64 array of the broadcast shape
        of ``sensitivity`` and the target's fields. The closed forms are evaluated in
        float64 rounded to nearest (not directed), so sigma may lie a few ulps on either
        side of the exact value.

    Raises:
        TypeError: ``target`` is not a target (or list of them), or ``sensitivity`` is not
            numeric.
        ValueError: ``sensitivity`` is not finite or not > 0, it does not broadcast with the
            target's fields, or the noise is outside float64's positive range.

    >>> import dpax
    >>> round(dpax.calibrate_gaussian(dpax.targets.Advantage(0.2)), 4)   # Corollary B.3
    1.9736
    >>> from dpax.targets import GDP, Advantage   # several targets: the smallest mu*, per sensitivity
    >>> dpax.calibrate_gaussian([Advantage(0.2), GDP(1.0)], sensitivity=[1.0, 2.0]).round(4)
    array([1.9736, 3.9472])
    """
    target = _targets.as_target(target)
    sens = _v.real_array("sensitivity", sensitivity, low=0.0, low_open=True)
    shape = _v.broadcast_shapes(("sensitivity", sens), ("the target's fields", target.shape()))
    mu = np.broadcast_to(np.asarray(target.gdp_mu(), float), shape)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        noise = np.broadcast_to(sens, shape) / mu
    bad = ~(np.isfinite(noise) & (noise > 0))  # a noise of 0 or inf is no calibration
    if np.any(bad):
        i = int(np.argmax(bad.reshape(-1)))
        s_i, m_i = float(np.broadcast_to(sens, shape).reshape(-1)[i]), float(mu.reshape(-1)[i])
        raise ValueError(f"calibrate_gaussian: the noise sensitivity / mu* = {s_i:g} / {m_i:g} is outside float64's "
                         "positive range (about 5e-324 to 1.8e308); scale the sensitivity (the noise scales with it)")
    return _out(noise)
