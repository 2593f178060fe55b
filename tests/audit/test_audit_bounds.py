"""dpax.audit.bounds: the deprecated alias of dpax.audit.confidence, kept for one release (its
import warns, and it holds confidence's functions)."""

from __future__ import annotations


def test_the_old_module_name_is_a_deprecated_alias():
    """dpax.audit.bounds (this module's name until it became dpax.audit.confidence) still
    imports, for one release, with a DeprecationWarning, and holds the same functions."""
    import importlib
    import sys
    import warnings

    from dpax.audit import confidence

    sys.modules.pop("dpax.audit.bounds", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = importlib.import_module("dpax.audit.bounds")
    assert any(issubclass(w.category, DeprecationWarning) and "dpax.audit.bounds" in str(w.message) for w in caught)
    assert old.audit is confidence.audit
