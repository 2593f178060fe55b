"""Deprecated alias of :mod:`dpax._engine.branch_and_bound` (the block bounds and branch and
bound behind the mu/regret kernel, private machinery of :mod:`dpax.gdp`), kept for one release.

Importing it warns with a DeprecationWarning; ``dpax.gdp.MU_ROUNDING`` is the public name of
the one constant users read from it.
"""

from __future__ import annotations

import warnings

from .._engine.branch_and_bound import *  # noqa: F403  (the whole old namespace, for one release)
from .._engine.branch_and_bound import MU_ROUNDING  # noqa: F401

warnings.warn("dpax.gdp.bounds is deprecated and will be removed in the next release: its branch and bound is "
              "private (dpax._engine.branch_and_bound); use dpax.gdp.MU_ROUNDING for the constant",
              DeprecationWarning, stacklevel=2)
