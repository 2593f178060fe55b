"""dpax.gdp.bounds: the deprecated alias of dpax._engine.branch_and_bound, kept for one release.

Importing it warns with a DeprecationWarning that names the private module and the public
constant to use instead; the alias holds the private module's whole public namespace (the very
same objects), and its MU_ROUNDING is dpax.gdp.MU_ROUNDING. Each test imports the alias anew (a
module already imported does not warn again) and leaves dpax.gdp and sys.modules as they were.
"""

from __future__ import annotations

import importlib
import sys

import pytest

import dpax.gdp
from dpax._engine import branch_and_bound

ALIAS = "dpax.gdp.bounds"


@pytest.fixture
def fresh_alias():
    """A function importing the alias as for the first time; the previous state is restored after."""
    module, attribute = sys.modules.pop(ALIAS, None), vars(dpax.gdp).pop("bounds", None)
    yield lambda: importlib.import_module(ALIAS)
    sys.modules.pop(ALIAS, None)
    vars(dpax.gdp).pop("bounds", None)
    if module is not None:
        sys.modules[ALIAS] = module
    if attribute is not None:
        dpax.gdp.bounds = attribute


def test_importing_the_alias_warns_and_names_the_replacements(fresh_alias):
    with pytest.warns(DeprecationWarning, match=r"^dpax\.gdp\.bounds is deprecated") as caught:
        fresh_alias()
    message = str(caught[0].message)
    assert "dpax._engine.branch_and_bound" in message and "dpax.gdp.MU_ROUNDING" in message


def test_the_alias_holds_the_private_modules_names(fresh_alias):
    with pytest.warns(DeprecationWarning):
        old = fresh_alias()
    public = [name for name in vars(branch_and_bound) if not name.startswith("_")]
    assert {"eq29_max", "kappa_block_bounds", "MU_ROUNDING"} <= set(public)
    missing = [name for name in public if getattr(old, name, None) is not getattr(branch_and_bound, name)]
    assert not missing
    assert old.MU_ROUNDING == dpax.gdp.MU_ROUNDING == branch_and_bound.MU_ROUNDING
