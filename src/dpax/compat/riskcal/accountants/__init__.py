"""riskcal's ``riskcal.accountants``: :class:`CTDAccountant` on dpax's PLD accountant."""

from . import ctd  # noqa: F401 (the submodule as an attribute, as in riskcal)
from .ctd import CTDAccountant

__all__ = ["CTDAccountant"]
