"""Deprecated, as ``riskcal.plrv`` is: use :mod:`dpax.compat.riskcal.analysis` (``PLRVs``,
``get_beta_from_plrvs``). Importing it warns (DeprecationWarning)."""

import warnings

from ._core import DEPRECATED_MODULES

warnings.warn(DEPRECATED_MODULES["plrv"], DeprecationWarning, stacklevel=2)

from .analysis._plrv import PLRVs, get_beta  # noqa: E402

__all__ = [
    "PLRVs",
    "get_beta",
]
