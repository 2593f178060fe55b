"""riskcal's ``riskcal.accountants``: :class:`CTDAccountant` on dpax's PLD accountant."""

from . import ctd
from .ctd import CTDAccountant

__all__ = ["CTDAccountant"]
