"""Deprecated alias of :mod:`dpax.audit.confidence` (the audit's confidence limits and the
lower bounds on epsilon and mu they give), kept for one release; importing it warns with a
DeprecationWarning. The functions are also :mod:`dpax.audit`'s own names.
"""

from __future__ import annotations

import warnings

from .confidence import *  # noqa: F403  (the whole old namespace, for one release)

warnings.warn("dpax.audit.bounds is deprecated and will be removed in the next release: it is now "
              "dpax.audit.confidence (the same functions are in dpax.audit)", DeprecationWarning, stacklevel=2)
