"""gdpnum's ``gdpnum.dpsgd`` on the dpax engine: mu and regret of DP-SGD
(:func:`get_mu_and_regret_for_dpsgd`) and gdpnum's Opacus-style :class:`CTDAccountant`.

DP-SGD is built from the exact loss CDFs of the Poisson-subsampled Gaussian
(:func:`dpax.dpsgd`), not from dp-accounting's PLD, so at fine grids its curve is closer to
the truth than gdpnum's; mu and regret are :func:`dpax.gdp.mu_and_regret`'s.
"""

from __future__ import annotations

from ... import gdp as _gdp
from ...accountants import PLDAccountant
from ...mechanisms import dpsgd as _dpsgd
from .converter import PLDConverter
from ..._engine import validation as _v

__all__ = ["CTDAccountant", "get_mu_and_regret_for_dpsgd"]


def get_mu_and_regret_for_dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=1e-4, err=1e-10):
    """(mu, regret) of DP-SGD: mu-GDP for every attack with FPR and FNR in [err, 1 - err]."""
    return _gdp.mu_and_regret(_dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=grid_step), tail=err)


def _compat_options(method, options):
    """The keyword arguments the original accountant's ``method`` takes and dpax does not
    need (``use_connect_dots``: dpax builds DP-SGD from the exact loss CDFs), checked; any
    other is refused by name."""
    for name, value in options.items():
        if name != "use_connect_dots":
            raise TypeError(f"{method}() got an unexpected keyword argument {name!r} (besides grid_step, it takes "
                            "use_connect_dots)")
        _v.flag(name, value)


class CTDAccountant(PLDAccountant):
    """gdpnum's ``CTDAccountant`` on dpax: ``get_beta(alpha)`` (default FPRs as
    :meth:`PLDConverter.get_beta`), ``get_mu_and_regret()``, ``get_epsilon(delta=)``,
    ``get_advantage()``, every query taking ``grid_step=``; ``get_pld`` gives a dp-accounting PLD."""

    def get_pld(self, grid_step=1e-4, use_connect_dots=True):
        """The composed privacy loss as a dp-accounting ``PrivacyLossDistribution``."""
        _v.flag("use_connect_dots", use_connect_dots)  # dpax needs no choice here, but the flag is checked
        return self._recorded("get_pld", grid_step).to_dp_accounting()

    def get_epsilon(self, *, delta, grid_step=1e-4, **kwargs):
        _compat_options("get_epsilon", kwargs)
        return super().get_epsilon(delta, grid_step=grid_step)

    def get_beta(self, alpha=None, grid_step=1e-4, **kwargs):
        _compat_options("get_beta", kwargs)
        if alpha is None:
            return PLDConverter(self._recorded("get_beta", grid_step)).get_beta()
        return super().get_beta(alpha, grid_step=grid_step)

    def get_mu_and_regret(self, grid_step=1e-4, **kwargs):
        err = kwargs.pop("err", _gdp.DEFAULT_TAIL)  # gdpnum's name of the tail (PLDConverter.get_mu_and_regret)
        _compat_options("get_mu_and_regret", kwargs)
        return super().get_mu_and_regret(grid_step=grid_step, tail=err)

    def get_advantage(self, grid_step=1e-4, **kwargs):
        _compat_options("get_advantage", kwargs)
        return super().get_advantage(grid_step=grid_step)

    @classmethod
    def mechanism(cls) -> str:
        return "ctd"
