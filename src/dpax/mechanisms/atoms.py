"""Mechanisms made of atoms: :func:`from_atoms`, randomized response, the (epsilon, delta)
worst case, and the discrete Laplace and discrete Gaussian mechanisms."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._engine import construct as _construct
from .._engine import optimistic as _optimistic
from .._engine import validation as _v
from .._engine.grid import DEFAULT_GRID_STEP
from .._engine.host_special import logsumexp
from .._engine.x64 import float64
from ..privacy_loss import PrivacyLoss
from ..privacy_loss.companion import optimistic
from ..privacy_loss.fields import replaced
from ._common import _MAX_LOSS, SINGLE_STEP_TAIL, _at_least, _describe, _neighbouring, _substitution_factor

#: Largest integer support (points) of the discrete mechanisms.
_MAX_INTEGER_SUPPORT = 4_000_000


@float64
def from_atoms(loss: ArrayLike, p_mass: ArrayLike, q_mass: ArrayLike, grid_step: float, *,
               shape: tuple[int, ...] | None = None, description: str = "atoms", tail: float = SINGLE_STEP_TAIL,
               log_masses: bool = False, exact_ratio: bool = True) -> PrivacyLoss:
    """Connect-the-dots pair of a loss law made of atoms (rows, m) on the grid ``grid_step``.

    The grid of row r spans the finite atoms from where the P-mass below exceeds ``tail``
    to where the Q-mass above exceeds it; atoms outside collapse onto the end points plus
    the infinite atoms (pessimistically). The helper behind the atom mechanisms
    (:func:`dpax._engine.construct.pair_from_atoms`); inputs are not validated.

    Args:
        loss: ``loss[r, j]`` is the loss log(Q/P) of atom j of row r (-inf: mass under P
            only, +inf: under Q only); shape (rows, m), or (m,) for one row.
        p_mass: the atoms' masses under P, the shape of ``loss``.
        q_mass: the atoms' masses under Q, the shape of ``loss``.
        grid_step: the loss grid's step.
        shape: batch shape of the result (its product is the number of rows; ``None``:
            ``()`` for one row, ``(rows,)`` otherwise).
        description: a label for ``repr`` and reports.
        tail: mass allowed in each tail before it is collapsed.
        log_masses: ``p_mass`` and ``q_mass`` are natural logs of the masses.
        exact_ratio: Pr[X = x] = e^-x Pr[Y = x] holds for the atoms.

    Returns:
        A :class:`PrivacyLoss` on the grid ``k * grid_step``.

    Randomized response with epsilon = 1:

    >>> import numpy as np
    >>> from dpax.mechanisms import from_atoms
    >>> e = np.e
    >>> pl = from_atoms([-1.0, 1.0], [e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)], 1e-2)
    >>> round(pl.advantage(), 4)
    0.4621
    """
    loss = np.atleast_2d(np.asarray(loss, np.float64))
    with np.errstate(divide="ignore"):
        lp = np.asarray(p_mass, np.float64) if log_masses else np.log(np.asarray(p_mass, np.float64))
        lq = np.asarray(q_mass, np.float64) if log_masses else np.log(np.asarray(q_mass, np.float64))
    step = float(grid_step)
    pair = _construct.pair_from_atoms(loss, lp, lq, step, tail=tail, exact_ratio=exact_ratio, what=description)
    shape = (() if loss.shape[0] == 1 else (loss.shape[0],)) if shape is None else tuple(shape)
    pl = PrivacyLoss.from_pair(pair, step, description, shape, exact_ratio)
    return replaced(pl, companion="it was built by from_atoms from atoms given by the caller; dpax's own atom "
                                     "mechanisms (randomized_response, discrete_laplace, discrete_gaussian) have one")


def _atoms_mechanism(loss: np.ndarray, lp: np.ndarray, lq: np.ndarray, step: float, shape: tuple[int, ...],
                     desc: str) -> PrivacyLoss:
    """:func:`from_atoms` for a mechanism whose atoms are its exact loss law, with the
    optimistic companion (each atom to its nearest point of the same grid)."""
    pl = from_atoms(loss, lp, lq, step, shape=shape, description=desc, log_masses=True)
    offset, n = np.asarray(pl.pair.offset), pl.support_length
    return replaced(pl, companion=lambda: optimistic(
        PrivacyLoss, _optimistic.merge_to_grid(loss, lp, lq, offset, step, n), step, pl.batch_shape))


def _rows(shape: tuple[int, ...], *arrays: np.ndarray) -> list[np.ndarray]:
    return [np.broadcast_to(a, shape).reshape(-1) for a in arrays]


@float64
def randomized_response(epsilon: ArrayLike, k: ArrayLike = 2, grid_step: float = DEFAULT_GRID_STEP,
                        neighbouring: str = "add_remove") -> PrivacyLoss:
    """k-ary randomized response: the true value with probability e^eps / (e^eps + k - 1),
    each other value with probability 1 / (e^eps + k - 1).

    Atoms: losses -eps, 0, eps with P-masses (e^eps, k - 2, 1) / (e^eps + k - 1) and Q the
    mirror. It is a local randomiser: one record changes one input, so add/remove and
    substitution give the same pair. For k = 2 the trade-off curve is
    max(0, 1 - e^eps a, e^-eps (1 - a)) (Kairouz, Oh & Viswanath), the epsilon-DP worst case.
    ``neighbouring="replace_special"`` replaces the record by a special one whose output is
    uniform over the k values (dp-accounting's REPLACE_SPECIAL): P uniform, two atoms, loss
    log(k e^eps / (e^eps + k - 1)) on the record's value and log(k / (e^eps + k - 1)) elsewhere.

    Args:
        epsilon: the randomiser's epsilon, in [0, 600] (beyond, its losses leave float64 range).
        k: number of possible values, integers >= 2.
        grid_step: the loss grid's step, in [1e-7, 1].
        neighbouring: ``"add_remove"`` or ``"substitution"`` (the same pair), or
            ``"replace_special"``.

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> round(dpax.randomized_response(1.0, grid_step=1e-2).advantage(), 4)
    0.4621
    """
    eps = _v.real_array("epsilon", epsilon, low=0.0, high=_MAX_LOSS)
    kk = _v.positive_int_array("k", k, minimum=2)
    special = neighbouring == "replace_special"
    if not special:
        _neighbouring(neighbouring)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("epsilon", eps), ("k", kk))
    e, kf = _rows(shape, eps, kk.astype(np.float64))
    log_norm = np.logaddexp(e, np.log(kf - 1.0))
    if special:  # Q: the record's value with probability e^eps / (e^eps + k - 1); P: uniform
        lq = np.stack([e - log_norm, np.log(kf - 1.0) - log_norm], -1)
        lp = np.stack([-np.log(kf), np.log1p(-1.0 / kf)], -1)
        desc = _describe("randomized_response", "replace_special", epsilon=epsilon, k=k)
        return _atoms_mechanism(lq - lp, lp, lq, step, shape, desc)
    with np.errstate(divide="ignore"):
        log_mid = np.log(kf - 2.0) - log_norm
    loss = np.stack([-e, np.zeros_like(e), e], -1)
    lp = np.stack([e - log_norm, log_mid, -log_norm], -1)
    lq = np.stack([-log_norm, log_mid, e - log_norm], -1)
    desc = _describe("randomized_response", epsilon=epsilon, k=k)
    return _atoms_mechanism(loss, lp, lq, step, shape, desc)


@float64
def approximate_dp(epsilon: ArrayLike, delta: ArrayLike = 0.0, grid_step: float = DEFAULT_GRID_STEP) -> PrivacyLoss:
    """A mechanism known only to be (epsilon, delta)-DP (delta = 0: epsilon-DP).

    Its worst case (Kairouz, Oh & Viswanath 2015): losses -inf, -eps, eps, +inf with
    P-masses (delta, (1 - delta) e^eps / (1 + e^eps), (1 - delta) / (1 + e^eps), 0) and Q
    the mirror; trade-off curve max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)), which
    every (epsilon, delta)-DP mechanism's curve lies above.

    Args:
        epsilon: the guarantee's epsilon, in [0, 600] (beyond, its losses leave float64 range).
        delta: the guarantee's delta, in [0, 1].
        grid_step: the loss grid's step, in [1e-7, 1].

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> pl = dpax.approximate_dp(1.0, 1e-5, grid_step=1e-2)
    >>> round(pl.epsilon(1e-5), 4), round(pl.beta(0.1), 4)
    (1.0, 0.7282)
    """
    eps = _v.real_array("epsilon", epsilon, low=0.0, high=_MAX_LOSS)
    d = _v.probabilities("delta", delta)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("epsilon", eps), ("delta", d))
    e, dd = _rows(shape, eps, d)
    with np.errstate(divide="ignore"):
        log_rest = np.log1p(-dd) - np.logaddexp(0.0, e)
        log_d = np.log(dd)
    ninf = np.full_like(e, -np.inf)
    loss = np.stack([ninf, -e, e, -ninf], -1)
    lp = np.stack([log_d, log_rest + e, log_rest, ninf], -1)
    lq = np.stack([ninf, log_rest, log_rest + e, log_d], -1)
    desc = _describe("approximate_dp", epsilon=epsilon, delta=delta)
    pl = from_atoms(loss, lp, lq, step, shape=shape, description=desc, log_masses=True)
    return replaced(pl, companion="approximate_dp is the worst case of every (epsilon, delta)-DP mechanism, not "
                                     "one mechanism's law: the truth it stands for is unknown, so it has a safe "
                                     "side only")


def _check_integer_noise(name: str, noise: np.ndarray, sens: np.ndarray, loss: np.ndarray, law: str,
                         least: float, neighbouring: str) -> None:
    """A ValueError naming the first row whose privacy loss ``loss`` (the loss of the atom at
    0, which holds at least half of P's mass, so the grid must reach it) leaves float64 range,
    NaN or inf included (a noise so small that its square underflows): ``law`` says what the
    loss is, ``least`` the smallest noise per unit of sensitivity."""
    too_small = ~(loss <= _MAX_LOSS)
    if np.any(too_small):
        i = int(np.argmax(too_small))
        factor = int(_substitution_factor(neighbouring))
        given = f"{int(sens[i]) // factor} ({int(sens[i])} under substitution)" if factor == 2 else f"{int(sens[i])}"
        which = "the sensitivity doubled" if factor == 2 else "the sensitivity"
        raise ValueError(f"{name}={noise[i]:g} is too small for sensitivity {given}: its privacy loss {law} exceeds "
                         f"{_MAX_LOSS:g} nats, beyond float64 range; {name} must be at least {_at_least(least)} x "
                         f"{which} (here {_at_least(least * float(sens[i]))})")


def _int_sensitivity(sensitivity: ArrayLike, neighbouring: str) -> np.ndarray:
    sens = _v.positive_int_array("sensitivity", sensitivity)
    factor = int(_substitution_factor(neighbouring))
    if np.any(sens * factor > _MAX_INTEGER_SUPPORT):
        raise ValueError(f"sensitivity must be at most {_MAX_INTEGER_SUPPORT // factor:,} (the integer support "
                         f"would not fit in memory), got {int(np.max(sens)):,}")
    return sens * factor


@float64
def discrete_laplace(scale: ArrayLike, sensitivity: ArrayLike = 1, grid_step: float = DEFAULT_GRID_STEP,
                     neighbouring: str = "add_remove") -> PrivacyLoss:
    """Discrete Laplace mechanism: integer noise with Pr[Z = z] proportional to
    exp(-|z| / scale), on an integer query of sensitivity D (dp-accounting's parameter is
    1 / scale).

    Atoms at the integers o: loss (|o| - |o - D|) / scale, i.e. -D/scale (o <= 0, P-mass
    1 / (1 + e^(-1/scale))), (2o - D) / scale for 0 < o < D, D/scale (o >= D).
    ``neighbouring="substitution"`` doubles the sensitivity.

    Args:
        scale: the noise scale, at least sensitivity / 600 (a smaller one's loss D / scale
            leaves float64 range: a ValueError).
        sensitivity: the query's sensitivity D, integers >= 1.
        grid_step: the loss grid's step, in [1e-7, 1].
        neighbouring: ``"add_remove"`` (default) or ``"substitution"``.

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> round(dpax.discrete_laplace(1.0, grid_step=1e-2).epsilon(0.0), 4)
    1.0
    """
    t = _v.real_array("scale", scale, low=0.0, low_open=True)
    sens = _int_sensitivity(sensitivity, neighbouring)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("scale", t), ("sensitivity", sens))
    tt, dd = _rows(shape, t, sens)
    with np.errstate(over="ignore"):  # a subnormal scale: D / scale = inf, refused below
        _check_integer_noise("scale", tt, dd, dd / tt, "sensitivity / scale", 1.0 / _MAX_LOSS, neighbouring)
    m = int(np.max(dd)) + 1
    o = np.arange(m)[None, :].astype(np.float64)  # o = 0 .. D (0 stands for o <= 0, D for o >= D)
    D = dd[:, None].astype(np.float64)
    b = tt[:, None]
    log_c = np.log(-np.expm1(-1.0 / b)) - np.log1p(np.exp(-1.0 / b))  # Pr[Z = 0]
    log_tail = -np.log1p(np.exp(-1.0 / b))  # Pr[Z <= 0]
    valid = o <= D
    lp = np.where(o == 0, log_tail, log_c - o / b)
    lp = np.where(o == D, log_tail - D / b, lp)
    lq = np.where(o == 0, log_tail - D / b, log_c - (D - o) / b)
    lq = np.where(o == D, log_tail, lq)
    loss = np.where(valid, (2.0 * o - D) / b, np.inf)
    lp, lq = (np.where(valid, a, -np.inf) for a in (lp, lq))
    desc = _describe("discrete_laplace", neighbouring, scale=scale, sensitivity=sensitivity)
    return _atoms_mechanism(loss, lp, lq, step, shape, desc)


#: Half-width in standard deviations of the integer range kept by the discrete Gaussian:
#: the mass beyond is below e^-(39^2/2) ~ 1e-330, zero in float64.
_DG_WIDTH = 39.0


@float64
def discrete_gaussian(sigma: ArrayLike, sensitivity: ArrayLike = 1, grid_step: float = DEFAULT_GRID_STEP,
                      neighbouring: str = "add_remove") -> PrivacyLoss:
    """Discrete Gaussian mechanism (Canonne, Kamath & Steinke 2020): integer noise with
    Pr[Z = z] proportional to exp(-z^2 / (2 sigma^2)), on an integer query of sensitivity D.

    Atoms at the integers o: loss (2 o D - D^2) / (2 sigma^2) with masses from the
    normalised pmf (normaliser summed over |z| <= 39 sigma, exact in float64).
    ``neighbouring="substitution"`` doubles the sensitivity.

    Args:
        sigma: the noise parameter, at least sensitivity / sqrt(1200) (0.0289 sensitivity: below,
            the loss D^2 / (2 sigma^2) of the atom at 0 leaves float64 range, a ValueError; a large
            sensitivity needs somewhat more) and at most about 5e4.
        sensitivity: the query's sensitivity D, integers >= 1.
        grid_step: the loss grid's step, in [1e-7, 1].
        neighbouring: ``"add_remove"`` (default) or ``"substitution"``.

    Returns:
        A :class:`PrivacyLoss` with the broadcast shape of the arguments as batch shape.

    >>> import dpax
    >>> round(dpax.discrete_gaussian(4.0, sensitivity=2).epsilon(1e-5), 4)
    1.9889
    """
    s = _v.real_array("sigma", sigma, low=0.0, low_open=True)
    sens = _int_sensitivity(sensitivity, neighbouring)
    step = _v.grid_step(grid_step)
    shape = _v.broadcast_shapes(("sigma", s), ("sensitivity", sens))
    ss, dd = _rows(shape, s, sens)
    with np.errstate(over="ignore", under="ignore"):  # sigma^2 underflows below ~1e-154: inf, refused below
        _check_integer_noise("sigma", ss, dd, 0.5 * (dd / ss) ** 2, "sensitivity^2 / (2 sigma^2)",
                             1.0 / np.sqrt(2.0 * _MAX_LOSS), neighbouring)
    if np.any(_DG_WIDTH * ss > _MAX_INTEGER_SUPPORT):
        raise ValueError(f"sigma must be at most about 5e4 (the integer support would not fit in memory), "
                         f"got {float(np.max(ss)):g}")
    half = np.ceil(_DG_WIDTH * ss + 1).astype(np.int64)
    if np.max(2 * half + dd) > _MAX_INTEGER_SUPPORT:
        raise ValueError(f"sigma (at most about 5e4) and sensitivity together give an integer support of "
                         f"{int(np.max(2 * half + dd)):,} points, over {_MAX_INTEGER_SUPPORT:,}: "
                         "it would not fit in memory")
    lo_o = -half
    m = int(np.max(2 * half + dd)) + 1
    o = (lo_o[:, None] + np.arange(m)[None, :]).astype(np.float64)
    D = dd[:, None].astype(np.float64)
    sig2 = (ss**2)[:, None]
    valid = o <= (half + dd)[:, None]
    z = np.arange(-np.max(half) - 1, np.max(half) + 2, dtype=np.float64)
    log_norm = logsumexp(-(z[None, :] ** 2) / (2.0 * sig2), axis=-1, keepdims=True)
    lp = np.where(valid, -(o**2) / (2.0 * sig2) - log_norm, -np.inf)
    lq = np.where(valid, -((o - D) ** 2) / (2.0 * sig2) - log_norm, -np.inf)
    loss = np.where(valid, (2.0 * o * D - D**2) / (2.0 * sig2), np.inf)
    desc = _describe("discrete_gaussian", neighbouring, sigma=sigma, sensitivity=sensitivity)
    return _atoms_mechanism(loss, lp, lq, step, shape, desc)
