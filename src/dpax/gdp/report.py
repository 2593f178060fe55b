"""The two-tier Gaussian-DP report (Gomez et al., Section 4): Tier I (mu, regret, whether
mu-GDP is a faithful summary) and Tier II (the trade-off curve at fixed FPRs and at the
advantage-maximising one), with epsilon at common deltas; as a dataclass, text or JSON.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from .._engine import analyse as _analyse
from .._engine import text as _text
from .._engine import validation as _v
from .._engine.x64 import float64
from .mu_regret import DEFAULT_TAIL, check_loss, mu_regret_rows

#: Regret below which the mu-GDP summary is faithful (Tier I of the paper).
REGRET_THRESHOLD = 1e-2

#: Tier II FPRs (Gomez et al. 2025, Section 4.3; gdpnum's defaults), then alpha* (see below).
TIER2_ALPHAS = (1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1)

#: deltas at which the report also gives epsilon (those of the paper's Table 3).
REPORT_DELTAS = (1e-5, 1e-6, 1e-9)


@dataclasses.dataclass(frozen=True)
class GDPReport:
    """Two-tier privacy report (Section 4 of the paper), for one mechanism or a batch.

    Tier I: ``mu`` (the tightest mu-GDP guarantee), ``regret`` (Delta of reporting mu-GDP
    instead of the curve) and ``gdp_ok`` (regret < 1e-2: mu alone is a faithful summary).
    Tier II: ``beta`` at ``alpha`` (the FPRs 1e-10 ... 1e-1 and alpha*, the FPR of the
    advantage-maximising attack). Also ``epsilon`` at ``deltas`` for readers who want it.
    Array fields carry the batch shape in front.
    """

    description: str
    grid_step: float
    tail: float
    mu: object
    regret: object
    regret_alpha: object
    gdp_ok: object
    advantage: object
    alpha: np.ndarray  # batch_shape + (8,): TIER2_ALPHAS then alpha*
    beta: np.ndarray
    alpha_star: object
    deltas: np.ndarray
    epsilon: np.ndarray

    def to_dict(self) -> dict:
        """JSON-ready dict (plain floats and lists; inf as the string "inf")."""
        return _text.jsonable({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    def to_json(self, **kwargs) -> str:
        """The report as JSON (:meth:`to_dict`); keyword arguments go to ``json.dumps``
        (``indent``, ``sort_keys``, ...), and one it refuses is named."""
        try:
            return json.dumps(self.to_dict(), allow_nan=False, **kwargs)
        except (TypeError, ValueError) as exc:
            names = ", ".join(sorted(kwargs)) or "(none)"
            raise type(exc)(f"to_json's keyword arguments ({names}) are json.dumps': {exc}") from None

    def table(self) -> str:
        """Human-readable report (one block per configuration of a batch)."""
        _fmt, _pairs, _table = _text.fmt, _text.pairs, _text.table
        mu = np.asarray(self.mu)
        blocks = []
        for idx in np.ndindex(mu.shape):
            def at(x, idx=idx):
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
def report(pl, deltas=REPORT_DELTAS, tail=DEFAULT_TAIL) -> GDPReport:
    """Tier I / Tier II report of ``pl`` (a PrivacyLoss, possibly a batch); see :class:`GDPReport`.

    alpha* = (1 - advantage) / 2, the symmetric point of the slope -1 segment, where the
    attack maximising TPR - FPR operates.
    """
    check_loss(pl)
    d = _v.probabilities("deltas", deltas).reshape(-1)
    mu, regret, witness = mu_regret_rows(pl, tail)
    adv = pl.advantage()
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
