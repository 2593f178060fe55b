"""dpax.compat.riskcal.plrv, riskcal's deprecated ``riskcal.plrv``: importing it warns, as
riskcal's does, and it exposes the objects of dpax.compat.riskcal.analysis themselves."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

import dpax.compat.riskcal as riskcal
from dpax.compat.riskcal._core import DEPRECATED_MODULES
from dpax.compat.riskcal.analysis import _plrv

NAME = "dpax.compat.riskcal.plrv"


def _fresh_import():
    """The module imported anew (its warning is given once per import)."""
    sys.modules.pop(NAME, None)
    vars(riskcal).pop("plrv", None)
    return importlib.import_module(NAME)


def test_import_warns_with_riskcals_message():
    with pytest.warns(DeprecationWarning) as record:
        module = _fresh_import()
    messages = [str(w.message) for w in record if issubclass(w.category, DeprecationWarning)]
    assert messages == [DEPRECATED_MODULES["plrv"]]
    assert "'riskcal.plrv' module is deprecated" in messages[0] and "dpax.compat.riskcal.analysis" in messages[0]
    assert sys.modules[NAME] is module


def test_exposes_the_same_objects_as_the_analysis_package():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = _fresh_import()
    assert module.__all__ == ["PLRVs", "get_beta"]
    assert module.PLRVs is riskcal.analysis.PLRVs is _plrv.PLRVs
    assert module.get_beta is riskcal.analysis.get_beta_from_plrvs is _plrv.get_beta
    # and riskcal's module has these names
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        rc_plrv = pytest.importorskip("riskcal.plrv")
    assert sorted(module.__all__) == sorted(rc_plrv.__all__)


def test_reached_as_an_attribute_it_warns_once():
    sys.modules.pop(NAME, None)
    vars(riskcal).pop("plrv", None)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        module = riskcal.plrv
    deprecations = [w for w in record if issubclass(w.category, DeprecationWarning)]
    assert [str(w.message) for w in deprecations] == [DEPRECATED_MODULES["plrv"]]
    assert deprecations[0].filename == __file__  # attributed to the caller
    assert module.get_beta is _plrv.get_beta
