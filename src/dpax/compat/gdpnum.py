"""gdpnum's API on the dpax engine: ``from dpax.compat.gdpnum import ...``.

Mirrors gdpnum 0.1 (``get_mu_and_regret_for_dpsgd``, ``PLDConverter``, ``CTDAccountant``,
``get_worst_case_regret``) for the GDP paper's quantities: the tight mu of the symmetrised
trade-off curve (Eq. 11 / Appendix B, Eq. 29) and its regret Delta(h, f_mu) (Eq. 13).
Differences: mu and regret come from :func:`dpax.gdp.mu_and_regret`, whose regret is
evaluated exactly at the tangent points (gdpnum bisects on a fixed grid of 10,000 FPRs and
returns the lower end, so it can be slightly smaller); DP-SGD is built from the exact loss
CDFs (see :mod:`dpax.compat`).
"""

from __future__ import annotations

import numpy as np

from .. import conversions as _conv
from .. import gdp as _gdp
from ..accountants import PLDAccountant
from ..interop import from_dp_accounting
from ..mechanisms import dpsgd
from ..privacy_loss import PrivacyLoss

__all__ = ["CTDAccountant", "PLDConverter", "get_mu_and_regret_for_dpsgd", "get_worst_case_regret"]

#: gdpnum's default FPRs for Tier II reporting (alpha* = (1 - advantage) / 2 is appended).
DEFAULT_ALPHAS = (1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1)


def get_mu_and_regret_for_dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=1e-4, err=1e-10):
    """(mu, regret) of DP-SGD: mu-GDP for every attack with FPR and FNR in [err, 1 - err]."""
    return _gdp.mu_and_regret(dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=grid_step), tail=err)


def get_worst_case_regret(alphas, betas, mu, tol=1e-10):
    """Delta(f, f_mu) of the piecewise-linear curve through (alphas, betas) (its lower convex
    hull) against mu-GDP (Eq. 8 / 13), exact at the tangent points (``tol`` is gdpnum's
    bisection tolerance, not needed)."""
    return _conv.delta_divergence(_conv.tabulated_curve(alphas, betas), _conv.gdp_curve(mu))


class PLDConverter:
    """A privacy loss (dp-accounting PLD or :class:`dpax.PrivacyLoss`) as a trade-off curve.

    Attributes as in gdpnum: ``alphas`` / ``betas`` (breakpoints of the one-directional
    curve f = T(P, Q), alpha ascending), ``alphas_symm`` / ``betas_symm`` (breakpoints of the
    symmetrised curve, the lower convex hull of f and f^-1), ``is_symmetric``.
    """

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


class CTDAccountant(PLDAccountant):
    """gdpnum's ``CTDAccountant`` on dpax: ``get_beta(alpha)`` (default FPRs as
    :meth:`PLDConverter.get_beta`), ``get_mu_and_regret()``, ``get_epsilon(delta=)``,
    ``get_advantage()``, every query taking ``grid_step=``; ``get_pld`` gives a dp-accounting PLD."""

    def get_pld(self, grid_step=1e-4, use_connect_dots=True):
        """The composed privacy loss as a dp-accounting ``PrivacyLossDistribution``."""
        return self.privacy_loss(grid_step).to_dp_accounting()

    def get_epsilon(self, *, delta, grid_step=1e-4, **kwargs):
        return super().get_epsilon(delta, grid_step=grid_step)

    def get_beta(self, alpha=None, grid_step=1e-4, **kwargs):
        if alpha is None:
            return PLDConverter(self.privacy_loss(grid_step)).get_beta()
        return super().get_beta(alpha, grid_step=grid_step)

    def get_mu_and_regret(self, grid_step=1e-4, **kwargs):
        return super().get_mu_and_regret(grid_step=grid_step)

    def get_advantage(self, grid_step=1e-4, **kwargs):
        return super().get_advantage(grid_step=grid_step)

    @classmethod
    def mechanism(cls) -> str:
        return "ctd"
