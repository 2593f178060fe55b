"""dpax.accountants.opacus_registry: dpax in Opacus' accountant registry, checked without opacus
(the tests with Opacus itself are tests/test_opacus.py, skipped where it is missing). The
arguments are checked before opacus is imported, a missing or pre-1.6 Opacus gets an ImportError
saying what to do, and against a stand-in for ``opacus.accountants`` (its ``IAccountant``,
``register_accountant`` with ``force`` and the registry's ``_ACCOUNTANTS``) the class is a
PLDAccountant and an IAccountant named for its registry entry, one per (name, grid step), that
pickles, and registering it keeps other accountants' names unless forced. Importing
dpax.accountants loads neither torch nor opacus."""

from __future__ import annotations

import copy
import pickle
import sys
import types

import pytest

from dpax.accountants import PLDAccountant, opacus_accountant, opacus_registry, register_with_opacus


class _Held:
    """An accountant class Opacus already holds under a name (its "rdp")."""


def _stand_in_opacus(monkeypatch, *, with_registry=True):
    """Install a stand-in ``opacus.accountants`` (and an empty class cache); return its registry dict."""
    opacus = types.ModuleType("opacus")
    acc = types.ModuleType("opacus.accountants")
    acc.IAccountant = type("IAccountant", (), {})
    registered = {"rdp": _Held}
    if with_registry:  # opacus >= 1.6
        registry = types.ModuleType("opacus.accountants.registry")
        registry._ACCOUNTANTS = registered

        def register_accountant(mechanism, accountant, force=False):
            if mechanism in registered and not force:
                raise ValueError(f"accountant {mechanism} is already registered")
            registered[mechanism] = accountant

        acc.register_accountant = register_accountant
        acc.registry = registry
        monkeypatch.setitem(sys.modules, "opacus.accountants.registry", registry)
    opacus.accountants = acc
    monkeypatch.setitem(sys.modules, "opacus", opacus)
    monkeypatch.setitem(sys.modules, "opacus.accountants", acc)
    monkeypatch.setattr(opacus_registry, "_OPACUS_CLASSES", {})
    return acc, registered


def test_does_not_import_torch():
    import subprocess
    import sys

    # neither torch nor opacus (tests/test_opacus.py's slow import test checks dpax, dpax.accountants)
    code = ("import sys, dpax, dpax.accountants, dpax.compat; "
            "print([m for m in ('torch', 'opacus') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_arguments_are_checked_before_opacus_is_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "opacus.accountants", None)  # any import of it fails
    monkeypatch.setattr(opacus_registry, "_OPACUS_CLASSES", {})  # no class made earlier in this process
    with pytest.raises(TypeError, match="name must be a str"):
        opacus_accountant(3)
    with pytest.raises(ValueError, match="name must be a non-empty str"):
        register_with_opacus(" ")
    with pytest.raises(ValueError, match="grid_step"):
        opacus_accountant("dpax", grid_step=0.0)
    with pytest.raises(TypeError, match="force must be True or False"):
        register_with_opacus(force="yes")
    # valid arguments reach the import, whose error says what to install
    with pytest.raises(ImportError, match="opacus_accountant needs opacus: pip install 'opacus>=1.6'"):
        opacus_accountant("dpax")
    with pytest.raises(ImportError, match="opacus>=1.6"):
        register_with_opacus("dpax")


def test_an_opacus_without_the_registry_says_to_assign_the_accountant(monkeypatch):
    _stand_in_opacus(monkeypatch, with_registry=False)  # Opacus < 1.6: IAccountant, no register_accountant
    assert issubclass(opacus_accountant("dpax"), PLDAccountant)
    with pytest.raises(ImportError, match=r"opacus >= 1\.6.*engine\.accountant = dpax\.accountants\.PLDAccountant"):
        register_with_opacus("dpax")


def test_the_class_is_a_pld_accountant_and_an_iaccountant_named_for_its_entry(monkeypatch):
    acc, _ = _stand_in_opacus(monkeypatch)
    cls = opacus_accountant("dpax-test", grid_step=1e-3)
    assert issubclass(cls, PLDAccountant) and issubclass(cls, acc.IAccountant)
    assert cls.__name__ == "OpacusPLDAccountant" and cls.mechanism() == "dpax-test"
    assert PLDAccountant.mechanism() == "dpax_pld"  # the base class keeps its own name
    a = cls()
    assert a.grid_step == 1e-3 and a.history == [] and a.mechanism() == "dpax-test"
    assert cls(grid_step=1e-2).grid_step == 1e-2
    # one class per (name, grid step)
    assert opacus_accountant("dpax-test", grid_step=1e-3) is cls
    assert opacus_accountant("dpax-test", grid_step=1e-2) is not cls
    assert opacus_accountant("other", grid_step=1e-3) is not cls
    assert opacus_accountant().mechanism() == "dpax"  # the default name
    # made at run time, yet pickle and deepcopy rebuild it with its history
    a.step(noise_multiplier=1.0, sample_rate=0.01)
    a.step(noise_multiplier=1.0, sample_rate=0.01)
    for clone in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert type(clone) is cls and clone.history == [(1.0, 0.01, 2)] and clone.grid_step == 1e-3


def test_register_with_opacus_keeps_names_opacus_holds_unless_forced(monkeypatch):
    _, registered = _stand_in_opacus(monkeypatch)
    cls = register_with_opacus("dpax-test", grid_step=1e-3)
    assert registered["dpax-test"] is cls and cls is opacus_accountant("dpax-test", grid_step=1e-3)
    assert register_with_opacus("dpax-test", grid_step=1e-3) is cls  # again: nothing changes
    with pytest.raises(ValueError, match=r"name='rdp' is already registered with Opacus for .*_Held.*force=True"):
        register_with_opacus("rdp")
    assert registered["rdp"] is _Held
    with pytest.raises(ValueError, match="name='dpax-test'.*force=True"):
        register_with_opacus("dpax-test", grid_step=1e-2)  # the name is held by the grid-1e-3 class
    other = register_with_opacus("dpax-test", grid_step=1e-2, force=True)
    assert registered["dpax-test"] is other is not cls and other().grid_step == 1e-2
    assert register_with_opacus("rdp", force=True) is registered["rdp"] is not _Held
