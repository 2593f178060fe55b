"""riskcal's ``CTDAccountant`` (``riskcal.accountants.ctd``) on dpax's
:class:`~dpax.accountants.PLDAccountant`."""

from __future__ import annotations

from ....accountants import PLDAccountant
from ...._engine import validation as _v

__all__ = ["CTDAccountant"]


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
    """riskcal's Opacus-compatible accountant on dpax: ``step(noise_multiplier=,
    sample_rate=)``, ``history``, ``get_epsilon(delta=)``, ``get_beta(alpha=)``,
    ``get_advantage()`` (every query taking riskcal's ``grid_step=``, default 1e-4, and
    ``use_connect_dots=``, which dpax does not need: it builds DP-SGD from the exact loss
    CDFs), ``get_pld()`` (the composed loss as a dp-accounting PLD), ``state_dict()`` /
    ``load_state_dict()`` with mechanism ``'ctd'``."""

    def get_pld(self, grid_step=1e-4, use_connect_dots=True):
        """The composed privacy loss as a dp-accounting ``PrivacyLossDistribution``."""
        _v.flag("use_connect_dots", use_connect_dots)  # dpax needs no choice here, but the flag is checked
        return self._recorded("get_pld", grid_step).to_dp_accounting()

    def get_epsilon(self, *, delta, grid_step=1e-4, **kwargs):
        _compat_options("get_epsilon", kwargs)
        """Smallest epsilon such that the steps so far are (epsilon, delta)-DP."""
        return super().get_epsilon(delta, grid_step=grid_step)

    def get_beta(self, *, alpha, grid_step=1e-4, **kwargs):
        """FNR at FPR ``alpha`` of the best attack (Algorithm 1, symmetrised)."""
        _compat_options("get_beta", kwargs)
        return super().get_beta(alpha, grid_step=grid_step)

    def get_advantage(self, grid_step=1e-4, **kwargs):
        _compat_options("get_advantage", kwargs)
        """Largest TPR - FPR of any attack (Algorithm 3)."""
        return super().get_advantage(grid_step=grid_step)

    @classmethod
    def mechanism(cls) -> str:
        return "ctd"
