"""The two-tier Gaussian-DP report (Gomez et al., Section 4): Tier I (mu, regret, whether
mu-GDP is a faithful summary) and Tier II (the trade-off curve at fixed FPRs and at the
advantage-maximising one), with epsilon at common deltas; as a dataclass, text or JSON.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .. import _text
from .._engine import analyse as _analyse
from .._engine import validation as _v
from .._engine.x64 import float64
from ..privacy_loss import PrivacyLoss
from .mu_regret import DEFAULT_TAIL, check_loss, mu_regret_rows

#: Regret below which the mu-GDP summary is faithful (Tier I of the paper).
REGRET_THRESHOLD = 1e-2

#: Tier II FPRs (Gomez et al. 2025, Section 4.3; gdpnum's defaults), then alpha* (see below).
TIER2_ALPHAS = (1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1)

#: deltas at which the report also gives epsilon (those of the paper's Table 3).
REPORT_DELTAS = (1e-5, 1e-6, 1e-9)


@dataclasses.dataclass(frozen=True)
class GDPReport:
    """Two-tier privacy report (Gomez et al., "(epsilon, delta) considered harmful: report
    Gaussian DP", 2025, Section 4), for one mechanism or a batch; built by :func:`report`.

    Tier I: ``mu`` (the tightest mu-GDP guarantee), ``regret`` (Delta of reporting mu-GDP
    instead of the curve) and ``gdp_ok`` (regret < :data:`REGRET_THRESHOLD`: mu alone is a
    faithful summary). Tier II: ``beta`` at ``alpha`` (the FPRs :data:`TIER2_ALPHAS` and
    alpha*, the FPR of the advantage-maximising attack). Also ``epsilon`` at ``deltas`` for
    readers who want it. Per-configuration fields are Python scalars for one mechanism and
    arrays with the batch shape in front for a batch.

    Args:
        description: the mechanism's description (:attr:`dpax.PrivacyLoss.description`).
        grid_step: the privacy loss's grid step.
        tail: the tail of the curve left out of mu (see :func:`dpax.gdp.mu_and_regret`).
        mu: the smallest mu such that the mechanism is mu-GDP.
        regret: Delta(f, f_mu), the cost of reporting mu-GDP instead of the curve.
        regret_alpha: the FPR where the regret is attained.
        gdp_ok: regret < :data:`REGRET_THRESHOLD`.
        advantage: the largest TPR - FPR of any attack.
        alpha: FPRs of Tier II, shape ``batch_shape + (8,)``: :data:`TIER2_ALPHAS` then alpha*.
        beta: the FNR at each of ``alpha``, the same shape.
        alpha_star: (1 - advantage) / 2, the FPR of the advantage-maximising attack.
        deltas: the deltas at which epsilon is given, shape ``(n,)``.
        epsilon: epsilon at each of ``deltas``, shape ``batch_shape + (n,)``.

    >>> import dpax
    >>> r = dpax.gdp.report(dpax.gaussian(2.0, grid_step=1e-2))
    >>> round(r.mu, 4), r.gdp_ok, r.alpha.shape, r.epsilon.round(2)
    (0.5, True, (8,), array([1.99, 2.25, 2.91]))
    """

    description: str
    grid_step: float
    tail: float
    mu: float | np.ndarray
    regret: float | np.ndarray
    regret_alpha: float | np.ndarray
    gdp_ok: bool | np.ndarray
    advantage: float | np.ndarray
    alpha: np.ndarray  # batch_shape + (8,): TIER2_ALPHAS then alpha*
    beta: np.ndarray
    alpha_star: float | np.ndarray
    deltas: np.ndarray
    epsilon: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict: plain floats, bools and lists; inf as the string "inf".

        Returns:
            A dict from each field's name to its value.

        >>> import dpax
        >>> d = dpax.gdp.report(dpax.gaussian(2.0, grid_step=1e-2)).to_dict()
        >>> round(d["mu"], 4), d["gdp_ok"], d["deltas"]
        (0.5, True, [1e-05, 1e-06, 1e-09])
        """
        return _text.jsonable({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    def to_json(self, **kwargs: Any) -> str:
        """The report as JSON (:meth:`to_dict`), with no NaN.

        Args:
            **kwargs: keyword arguments of ``json.dumps`` (``indent``, ``sort_keys``, ...).

        Returns:
            The JSON text.

        Raises:
            TypeError, ValueError: ``json.dumps`` refuses a keyword argument; the message
                names the arguments given.

        >>> import json, dpax
        >>> text = dpax.gdp.report(dpax.gaussian(2.0, grid_step=1e-2)).to_json(indent=1)
        >>> round(json.loads(text)["advantage"], 4)
        0.1974
        """
        try:
            return json.dumps(self.to_dict(), allow_nan=False, **kwargs)
        except (TypeError, ValueError) as exc:
            names = ", ".join(sorted(kwargs)) or "(none)"
            raise type(exc)(f"to_json's keyword arguments ({names}) are json.dumps': {exc}") from None

    def table(self) -> str:
        """Human-readable report: Tier I, the Tier II table and epsilon at each delta.

        Returns:
            The text, one block per configuration of a batch (the block's head names the
            configuration's index); ``str(report)`` gives the same.

        >>> import dpax
        >>> print(dpax.gdp.report(dpax.gaussian(2.0, grid_step=1e-2)).table())
        gaussian(noise_multiplier=2, sensitivity=1)
        <BLANKLINE>
        Tier I: Gaussian DP
          mu               0.5
          regret Delta     1.11e-16  (attained at FPR 0.394)
          mu-GDP faithful  yes  (regret < 0.01)
          advantage        0.197413
        ...
          delta  epsilon
          1e-05  1.99319
          1e-06   2.2542
          1e-09  2.90975
        """
        _fmt, _pairs, _table = _text.fmt, _text.pairs, _text.table
        mu = np.asarray(self.mu)
        blocks = []
        for idx in np.ndindex(mu.shape):
            def at(x: ArrayLike, idx: tuple[int, ...] = idx) -> Any:
                return np.asarray(x)[idx]

            head = self.description if not idx else f"{self.description} [{', '.join(map(str, idx))}]"
            lines = [head, "", "Tier I: Gaussian DP"]
            ok = bool(at(self.gdp_ok))
            lines += _pairs([
                ("mu", _fmt(at(self.mu))),
                ("regret Delta", f"{_fmt(at(self.regret), 3)}  (attained at FPR {_fmt(at(self.regret_alpha), 3)})"),
                ("mu-GDP faithful", f"{'yes' if ok else 'no'}  (regret {'<' if ok else '>='} {REGRET_THRESHOLD:g})"),
                ("advantage", _fmt(at(self.advantage))),
            ])
            lines += ["", "Tier II: trade-off curve (best membership-inference attack)"]
            alphas = at(self.alpha)
            betas = at(self.beta)
            rows = [(_fmt(a, 4) + (" (max advantage)" if i == len(alphas) - 1 else ""), _text.probability(b),
                     _text.probability(1 - b, complement=b))
                    for i, (a, b) in enumerate(zip(alphas, betas))]
            lines += _table(("FPR alpha", "FNR beta", "TPR"), rows)
            lines += [""]
            lines += _table(("delta", "epsilon"), [(_fmt(d), _fmt(e)) for d, e in zip(self.deltas, at(self.epsilon))])
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    def __str__(self) -> str:
        return self.table()


@float64
def report(pl: PrivacyLoss, deltas: ArrayLike = REPORT_DELTAS, tail: float = DEFAULT_TAIL) -> GDPReport:
    """Tier I / Tier II report of ``pl`` (Gomez et al. 2025, Section 4); see :class:`GDPReport`.

    mu and the regret are :func:`dpax.gdp.mu_and_regret`'s; beta is read at
    :data:`TIER2_ALPHAS` and at alpha* = (1 - advantage) / 2, the symmetric point of the
    slope -1 segment, where the attack maximising TPR - FPR operates.

    Args:
        pl: the privacy loss, one configuration or a batch.
        deltas: the deltas at which the report gives epsilon, in [0, 1] (flattened).
        tail: the tail of the curve left out of mu, in [0, 0.5) (see
            :func:`dpax.gdp.mu_and_regret`).

    Returns:
        The report; its per-configuration fields have ``pl``'s batch shape. Each risk is on
        the safe side, as ``pl``'s own answers are: mu, the advantage and epsilon never
        below the mechanism's, beta never above its curve; the regret is exact where the
        symmetrised curve is convex and a lower bound otherwise (:func:`dpax.gdp.mu_and_regret`).

    Raises:
        TypeError: ``pl`` is not a PrivacyLoss.
        ValueError, TypeError: ``deltas`` or ``tail`` outside its range or not real.
        ValueError: a NaN in the report (a numerical failure of dpax).

    >>> import dpax
    >>> r = dpax.gdp.report(dpax.gaussian(2.0, grid_step=1e-2))
    >>> round(r.mu, 4), round(r.regret, 6), round(r.alpha_star, 4), r.beta.round(3)
    (0.5, 0.0, 0.4013, array([1.   , 1.   , 1.   , 0.999, 0.995, 0.966, 0.783, 0.401]))
    """
    check_loss(pl)
    d = _v.probabilities("deltas", deltas).reshape(-1)
    mu, regret, witness = mu_regret_rows(pl, tail)
    adv = cast("float | np.ndarray", pl.advantage())
    a_star = 0.5 * (1.0 - np.asarray(adv))
    fixed = np.asarray(TIER2_ALPHAS, dtype=np.float64)
    shape = pl.batch_shape
    beta_fixed = np.asarray(pl.beta(fixed)).reshape(shape + (fixed.size,))
    b_star = np.asarray(
        _analyse.beta_kernel(pl.pair, np.asarray(a_star, np.float64).reshape(-1, 1))).reshape(shape + (1,))
    eps = np.asarray(pl.epsilon(d)).reshape(shape + (d.size,))
    alpha_col = np.concatenate([np.broadcast_to(fixed, shape + fixed.shape), np.reshape(a_star, shape + (1,))], -1)
    beta = np.concatenate([beta_fixed, b_star], -1)
    for name, value in (("mu", mu), ("regret", regret), ("advantage", adv), ("beta", beta)):
        if np.any(np.isnan(value)):  # never a silent NaN: a table of '-' and a failing renderer
            raise ValueError(f"pl: {pl.description}: the report's {name} is NaN (a numerical failure of dpax; "
                             "please report it with the mechanism's parameters)")
    return GDPReport(
        description=pl.description,
        grid_step=pl.grid_step,
        tail=float(tail),
        mu=mu,
        regret=regret,
        regret_alpha=witness,
        gdp_ok=np.asarray(regret) < REGRET_THRESHOLD if np.ndim(regret) else bool(regret < REGRET_THRESHOLD),
        advantage=adv,
        alpha=alpha_col,
        beta=beta,
        alpha_star=a_star if np.ndim(a_star) else float(a_star),
        deltas=d,
        epsilon=eps,
    )
