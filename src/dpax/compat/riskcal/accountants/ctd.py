"""riskcal's ``CTDAccountant`` (``riskcal.accountants.ctd``) on dpax's
:class:`~dpax.accountants.PLDAccountant`."""

from __future__ import annotations

from ..._ctd import CTDBase, compat_options

__all__ = ["CTDAccountant"]


class CTDAccountant(CTDBase):
    """riskcal's Opacus-compatible accountant on dpax: ``step(noise_multiplier=,
    sample_rate=)``, ``history``, ``get_epsilon(delta=)``, ``get_beta(alpha=)``,
    ``get_advantage()`` (every query taking riskcal's ``grid_step=``, default 1e-4, and
    ``use_connect_dots=``, which dpax does not need: it builds DP-SGD from the exact loss
    CDFs), ``get_pld()`` (the composed loss as a dp-accounting PLD), ``state_dict()`` /
    ``load_state_dict()`` with mechanism ``'ctd'``."""

    def get_epsilon(self, *, delta, grid_step=1e-4, **kwargs):
        """Smallest epsilon such that the steps so far are (epsilon, delta)-DP."""
        compat_options("get_epsilon", kwargs)
        return super().get_epsilon(delta, grid_step=grid_step)

    def get_beta(self, *, alpha, grid_step=1e-4, **kwargs):
        """FNR at FPR ``alpha`` of the best attack (Algorithm 1, symmetrised)."""
        compat_options("get_beta", kwargs)
        return super().get_beta(alpha, grid_step=grid_step)

    def get_advantage(self, grid_step=1e-4, **kwargs):
        """Largest TPR - FPR of any attack (Algorithm 3)."""
        compat_options("get_advantage", kwargs)
        return super().get_advantage(grid_step=grid_step)
