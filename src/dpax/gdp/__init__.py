"""Gaussian-DP reporting: tight mu, its regret, Tier I/II reports and GDP closed forms.

Implements "(epsilon, delta) considered harmful: report Gaussian DP" (Gomez et al.):

* :func:`mu_and_regret` -- the smallest mu such that the mechanism is mu-GDP, from the
  breakpoints of the trade-off curve (Eq. 11 / Appendix B, Eq. 29), and the regret
  Delta(f, f_mu) (Eq. 13 / Theorem B.2), for a batch of privacy losses in one kernel
  (:mod:`.mu_regret`; its kernels and their branch and bound are private, in the engine);
* :func:`report` -- Tier I (mu, regret, regret < 1e-2) and Tier II (beta at fixed FPRs and at
  the advantage-maximising FPR), with epsilon at common deltas, as a dataclass, table or JSON
  (:mod:`.report`);
* closed forms of mu-GDP (Dong, Roth & Su 2022): :func:`tradeoff`, :func:`advantage`,
  :func:`delta`, :func:`epsilon`, :func:`compose`, :func:`gaussian_mu`, and the two
  *approximations* :func:`clt_mu` (Dong et al., Theorem 3.5) and :func:`subsampled_clt_mu`
  (Bu et al. / Dong et al., Corollary 5.4), which can be optimistic (:mod:`.closed_form`, the
  curves, and :mod:`.closed_form_mu`, the mus);
* the Delta-divergence between two trade-off curves, :func:`delta_divergence` (Eq. 8) and
  :func:`symmetric_delta_divergence` (Eq. 9) (:mod:`.divergence`, on the curves of :mod:`.curves`).

Both numbers are for the symmetrised curve h that dpax reports (convex hull of
min(f, f^-1), see :mod:`dpax._engine.analyse`).

>>> import dpax
>>> mu, regret = dpax.gdp.mu_and_regret(dpax.gaussian(2.0, grid_step=1e-2))
>>> round(mu, 3), regret < 1e-3        # the Gaussian mechanism with sigma = 2 is 0.5-GDP
(0.5, True)
"""

from .._engine.branch_and_bound import MU_ROUNDING
from .closed_form import advantage, delta, epsilon, tradeoff
from .closed_form_mu import clt_mu, compose, gaussian_mu, subsampled_clt_mu
from .divergence import delta_divergence, symmetric_delta_divergence
from .mu_regret import DEFAULT_TAIL, MuRegret, mu_and_regret, regret_witness
from .report import REGRET_THRESHOLD, REPORT_DELTAS, TIER2_ALPHAS, GDPReport, report

__all__ = [
    "DEFAULT_TAIL",
    "GDPReport",
    "MU_ROUNDING",
    "MuRegret",
    "REGRET_THRESHOLD",
    "REPORT_DELTAS",
    "TIER2_ALPHAS",
    "advantage",
    "clt_mu",
    "compose",
    "delta",
    "delta_divergence",
    "epsilon",
    "gaussian_mu",
    "mu_and_regret",
    "regret_witness",
    "report",
    "subsampled_clt_mu",
    "symmetric_delta_divergence",
    "tradeoff",
]
