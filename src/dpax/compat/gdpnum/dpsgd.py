"""gdpnum's ``gdpnum.dpsgd`` on the dpax engine: mu and regret of DP-SGD
(:func:`get_mu_and_regret_for_dpsgd`) and gdpnum's Opacus-style :class:`CTDAccountant`.

DP-SGD is built from the exact loss CDFs of the Poisson-subsampled Gaussian
(:func:`dpax.dpsgd`), not from dp-accounting's PLD, so at fine grids its curve is closer to
the truth than gdpnum's; mu and regret are :func:`dpax.gdp.mu_and_regret`'s.
"""

from __future__ import annotations

from ... import gdp as _gdp
from ...mechanisms import dpsgd as _dpsgd
from .._ctd import CTDBase, compat_options
from .converter import PLDConverter

__all__ = ["CTDAccountant", "get_mu_and_regret_for_dpsgd"]


def get_mu_and_regret_for_dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=1e-4, err=1e-10):
    """(mu, regret) of DP-SGD: mu-GDP for every attack with FPR and FNR in [err, 1 - err]."""
    return _gdp.mu_and_regret(_dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=grid_step), tail=err)


class CTDAccountant(CTDBase):
    """gdpnum's ``CTDAccountant`` on dpax: ``get_beta(alpha)`` (default FPRs as
    :meth:`PLDConverter.get_beta`), ``get_mu_and_regret()``, ``get_epsilon(delta=)``,
    ``get_advantage()``, every query taking ``grid_step=``; ``get_pld`` gives a dp-accounting PLD."""

    def get_epsilon(self, *, delta, grid_step=1e-4, **kwargs):
        compat_options("get_epsilon", kwargs)
        return super().get_epsilon(delta, grid_step=grid_step)

    def get_beta(self, alpha=None, grid_step=1e-4, **kwargs):
        compat_options("get_beta", kwargs)
        if alpha is None:
            return PLDConverter(self._recorded("get_beta", grid_step)).get_beta()
        return super().get_beta(alpha, grid_step=grid_step)

    def get_mu_and_regret(self, grid_step=1e-4, **kwargs):
        err = kwargs.pop("err", _gdp.DEFAULT_TAIL)  # gdpnum's name of the tail (PLDConverter.get_mu_and_regret)
        compat_options("get_mu_and_regret", kwargs)
        return super().get_mu_and_regret(grid_step=grid_step, tail=err)

    def get_advantage(self, grid_step=1e-4, **kwargs):
        compat_options("get_advantage", kwargs)
        return super().get_advantage(grid_step=grid_step)
