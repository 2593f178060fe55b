"""What riskcal's and gdpnum's ``CTDAccountant`` share on dpax: the Opacus-style
:class:`~dpax.accountants.PLDAccountant` under mechanism ``'ctd'``, ``get_pld``, and the
check of the keyword arguments the originals take and dpax does not need."""

from __future__ import annotations

from .._engine import validation as _v
from ..accountants import PLDAccountant


def compat_options(method, options):
    """The keyword arguments the original accountant's ``method`` takes and dpax does not
    need (``use_connect_dots``: dpax builds DP-SGD from the exact loss CDFs), checked; any
    other is refused by name."""
    for name, value in options.items():
        if name != "use_connect_dots":
            raise TypeError(f"{method}() got an unexpected keyword argument {name!r} (besides grid_step, it takes "
                            "use_connect_dots)")
        _v.flag(name, value)


class CTDBase(PLDAccountant):
    """:class:`~dpax.accountants.PLDAccountant` as the originals' ``CTDAccountant``: state
    saved under mechanism ``'ctd'`` and ``get_pld`` (the composed loss as a dp-accounting
    ``PrivacyLossDistribution``)."""

    def get_pld(self, grid_step=1e-4, use_connect_dots=True):
        """The composed privacy loss as a dp-accounting ``PrivacyLossDistribution``."""
        _v.flag("use_connect_dots", use_connect_dots)  # dpax needs no choice here, but the flag is checked
        return self._recorded("get_pld", grid_step).to_dp_accounting()

    @classmethod
    def mechanism(cls) -> str:
        return "ctd"
