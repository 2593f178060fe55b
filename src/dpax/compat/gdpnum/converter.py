"""gdpnum's ``gdpnum.converter`` on the dpax engine: :class:`PLDConverter` (a privacy loss as
a trade-off curve, its tight mu and regret), :func:`get_worst_case_regret` and
:func:`gaussian_fdp`.

mu and regret come from :func:`dpax.gdp.mu_and_regret` (Eq. 11 / Appendix B Eq. 29 and Eq. 13
of Gomez, Kulynych, Kaissis, Hayes, Balle and Honkela, "(epsilon, delta) considered harmful:
best practices for reporting differential privacy guarantees", 2025), whose regret is evaluated
exactly at the tangent points (gdpnum bisects on a fixed grid of 10,000 FPRs and returns the
lower end, so it can be slightly smaller). A dp-accounting PLD is read by
:func:`dpax.from_dp_accounting`.
"""

from __future__ import annotations

import numpy as np

from ... import conversions as _conv
from ... import gdp as _gdp
from ..._engine import validation as _v
from ...interop import from_dp_accounting
from ...privacy_loss import PrivacyLoss

__all__ = ["PLDConverter", "gaussian_fdp", "get_worst_case_regret"]

#: gdpnum's default FPRs for Tier II reporting (alpha* = (1 - advantage) / 2 is appended).
DEFAULT_ALPHAS = (1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1)


def gaussian_fdp(mu):
    """The trade-off curve of mu-GDP as a function: alpha -> Phi(Phi^-1(1 - alpha) - mu)
    (Dong et al. 2019, Eq. 6), elementwise, float64."""
    m = _v.one_number("mu", mu, low=0.0)
    return lambda alpha: _gdp.tradeoff(m, alpha)


def get_worst_case_regret(alphas, betas, mu, tol=1e-10):
    """Delta(f, f_mu) of the piecewise-linear curve through (alphas, betas) (its lower convex
    hull) against mu-GDP (Eq. 8 / 13), exact at the tangent points (``tol`` is gdpnum's
    bisection tolerance, not needed)."""
    a = _v.probabilities("alphas", alphas).reshape(-1)
    b = _v.probabilities("betas", betas).reshape(-1)
    if a.size != b.size:
        raise ValueError(f"alphas and betas must have the same length, got {a.size} and {b.size}")
    _v.one_number("tol", tol, low=0.0, low_open=True)  # unused, but checked
    return _conv.delta_divergence(_conv.tabulated_curve(a, b), _conv.gdp_curve(_v.one_number("mu", mu, low=0.0)))


class PLDConverter:
    """A privacy loss (dp-accounting PLD or :class:`dpax.PrivacyLoss`) as a trade-off curve.

    ``MONOTONICITY_TOL`` is gdpnum's tolerance on the order of the breakpoints, kept for
    code that reads it: dpax's breakpoint tables are monotone by construction (sums of
    non-negative masses), so it is never needed.

    Attributes as in gdpnum: ``alphas`` / ``betas`` (breakpoints of the one-directional
    curve f = T(P, Q), alpha ascending), ``alphas_symm`` / ``betas_symm`` (breakpoints of the
    symmetrised curve, the lower convex hull of f and f^-1), ``is_symmetric``.
    """

    MONOTONICITY_TOL = 1e-12

    def __init__(self, pld):
        if isinstance(pld, PrivacyLoss):
            pl = pld
        else:
            pl = from_dp_accounting(pld)
        if pl.batch_shape:
            raise ValueError("PLDConverter takes one configuration; index a batch row by row")
        self.pld = pld
        self.privacy_loss = pl
        cx, cy = pl.tradeoff_points()
        # breakpoints are sums of probabilities: clip their float64 round-off into [0, 1]
        self.alphas = np.clip(np.asarray(cx[::-1], float), 0.0, 1.0)
        self.betas = np.clip(np.asarray(cy[::-1], float), 0.0, 1.0)
        self.is_symmetric = bool(getattr(pld, "_symmetric", False))
        hull = _conv.tabulated_curve(np.concatenate([self.alphas, self.betas, [0.0, 1.0]]),
                                     np.concatenate([self.betas, self.alphas, [1.0, 0.0]]))
        self.alphas_symm, self.betas_symm = hull.alpha, hull.beta_points

    def tradeoff_function(self, input_alphas):
        """The one-directional curve f = T(P, Q) at ``input_alphas`` (linear between breakpoints)."""
        return np.interp(input_alphas, self.alphas, self.betas)

    def inverse_tradeoff_function(self, input_alphas):
        """f^-1 at ``input_alphas``."""
        return np.interp(input_alphas, self.betas[::-1], self.alphas[::-1])

    def get_advantage(self) -> float:
        """Largest TPR - FPR (Algorithm 3)."""
        return self.privacy_loss.advantage()

    def get_beta(self, input_alphas=None):
        """The symmetrised curve at ``input_alphas`` (default: gdpnum's Tier II FPRs and
        alpha* = (1 - advantage) / 2)."""
        if input_alphas is None:
            input_alphas = np.concatenate([DEFAULT_ALPHAS, [0.5 * (1 - self.get_advantage())]])
        return self.privacy_loss.beta(input_alphas)

    def get_mu(self, err: float = 1e-10) -> float:
        """Tight mu-GDP of the symmetrised curve for attacks with FPR, FNR in [err, 1 - err]."""
        return _gdp.mu_and_regret(self.privacy_loss, tail=err)[0]

    def get_mu_and_regret(self, err: float = 1e-10) -> tuple[float, float]:
        """(mu, regret): :func:`dpax.gdp.mu_and_regret` with ``tail=err``."""
        return _gdp.mu_and_regret(self.privacy_loss, tail=err)
