"""Opacus' accountant registry: dpax's :class:`~dpax.accountants.PLDAccountant` as a subclass of
Opacus' ``IAccountant`` (:func:`opacus_accountant`), registered under a name
(:func:`register_with_opacus`). Opacus (and torch) are imported only here, after the arguments
are checked.
"""

from __future__ import annotations

from typing import Any

from .._engine import validation as _v
from .._engine.grid import DEFAULT_GRID_STEP
from .opacus_style import OPACUS_NAME, PLDAccountant

# -- Opacus' accountant registry ------------------------------------------------------------
_OPACUS_CLASSES: dict[tuple[str, float], type] = {}


def _opacus_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a str (an Opacus accounting mechanism name), got {type(name).__name__}")
    if not name.strip():
        raise ValueError("name must be a non-empty str (an Opacus accounting mechanism name)")
    return name


def opacus_accountant(name: str = OPACUS_NAME, *, grid_step: float = DEFAULT_GRID_STEP) -> type:
    """The :class:`PLDAccountant` subclass of Opacus' ``IAccountant`` for ``register_accountant``.

    Its ``mechanism()`` is ``name`` (register it under that name: Opacus'
    ``make_private_with_epsilon`` looks the accountant up again by ``mechanism()``) and
    ``OpacusPLDAccountant()`` uses ``grid_step``. One class per ``(name, grid_step)``.
    Imports opacus (and torch), after checking the arguments.

    Args:
        name: the Opacus registry name, a non-empty string (default ``"dpax"``).
        grid_step: the grid step of the class's accountants, in [1e-7, 1] (default 1e-4).

    Returns:
        The class (a subclass of :class:`PLDAccountant` and ``opacus.accountants.IAccountant``).

    Raises:
        TypeError: ``name`` is not a string, or ``grid_step`` not a number.
        ValueError: ``name`` is empty or ``grid_step`` outside its range.
        ImportError: opacus is not installed.

    With opacus installed::

        from opacus.accountants import register_accountant
        register_accountant("dpax-1e-3", opacus_accountant("dpax-1e-3", grid_step=1e-3))

    The arguments are checked before opacus is imported (so this runs without it):

    >>> from dpax.accountants import opacus_accountant
    >>> opacus_accountant(" ")
    Traceback (most recent call last):
        ...
    ValueError: name must be a non-empty str (an Opacus accounting mechanism name)
    """
    name = _opacus_name(name)
    step = float(_v.grid_step(grid_step))
    key = (name, step)
    if key not in _OPACUS_CLASSES:
        try:
            from opacus.accountants import IAccountant
        except ImportError as exc:
            raise ImportError("dpax.accountants.opacus_accountant needs opacus: pip install 'opacus>=1.6' "
                              "(dpax's opacus extra; for the CPU build of torch, first: pip install torch "
                              "--index-url https://download.pytorch.org/whl/cpu)") from exc
        _OPACUS_CLASSES[key] = _opacus_class(IAccountant, name, step)
    return _OPACUS_CLASSES[key]


def _opacus_class(base: type, name: str, step: float) -> type:
    class OpacusPLDAccountant(PLDAccountant, base):
        __doc__ = (f"dpax's :class:`PLDAccountant` as an Opacus ``IAccountant``, registered as {name!r} "
                   f"(grid step {step:g}).")

        def __init__(self, grid_step: float = step) -> None:
            PLDAccountant.__init__(self, grid_step)

        @classmethod
        def mechanism(cls) -> str:
            """The Opacus registry name this class was made for."""
            return name

        def __reduce__(self) -> tuple[Any, ...]:
            # the class is made at run time: pickle / deepcopy rebuild it from (name, grid step)
            state = {k: v for k, v in self.__dict__.items() if k != "_cache"}
            return (_new_opacus_accountant, (name, step), state)

    OpacusPLDAccountant.__module__ = __name__
    OpacusPLDAccountant.__qualname__ = "OpacusPLDAccountant"
    return OpacusPLDAccountant


def _new_opacus_accountant(name: str, grid_step: float) -> PLDAccountant:
    return opacus_accountant(name, grid_step=grid_step)()


def register_with_opacus(name: str = OPACUS_NAME, *, grid_step: float = DEFAULT_GRID_STEP,
                         force: bool = False) -> type:
    """Register dpax in Opacus' accountant registry under ``name``; return the class.

    Afterwards ``PrivacyEngine(accountant=name)``, ``make_private_with_epsilon`` and
    ``get_noise_multiplier(..., accountant=name)`` account with dpax. Registering the same
    ``(name, grid_step)`` again does nothing; a name Opacus already holds for another
    accountant (``"rdp"``, ``"prv"``, ...) is replaced only with ``force=True``. Needs
    opacus >= 1.6 (``opacus.accountants.register_accountant``), imported after the
    arguments are checked.

    Args:
        name: the Opacus registry name, a non-empty string (default ``"dpax"``).
        grid_step: the grid step of the registered accountants, in [1e-7, 1] (default 1e-4).
        force: replace an accountant Opacus already holds under ``name``.

    Returns:
        The registered class (:func:`opacus_accountant`'s).

    Raises:
        TypeError: ``name`` is not a string, ``grid_step`` not a number or ``force`` not a bool.
        ValueError: ``name`` is empty, ``grid_step`` outside its range, or ``name`` held by
            another accountant without ``force=True``.
        ImportError: opacus (>= 1.6) is not installed.

    With opacus installed::

        from opacus import PrivacyEngine
        register_with_opacus()
        engine = PrivacyEngine(accountant="dpax")

    The arguments are checked before opacus is imported (so this runs without it):

    >>> from dpax.accountants import register_with_opacus
    >>> register_with_opacus(force="yes")
    Traceback (most recent call last):
        ...
    TypeError: force must be True or False, got 'yes'
    """
    force = _v.flag("force", force)
    cls = opacus_accountant(name, grid_step=grid_step)
    try:
        from opacus.accountants import register_accountant
    except ImportError as exc:
        raise ImportError("dpax.accountants.register_with_opacus needs opacus >= 1.6 "
                          "(opacus.accountants.register_accountant); with an older Opacus assign "
                          "`engine.accountant = dpax.accountants.PLDAccountant()` before make_private instead") from exc
    from opacus.accountants import registry

    current = getattr(registry, "_ACCOUNTANTS", {}).get(name)
    if current is cls:
        return cls
    try:
        register_accountant(name, cls, force=bool(force))
    except ValueError:
        raise ValueError(f"name={name!r} is already registered with Opacus for {current!r}; pass force=True to "
                         f"replace it, or choose another name") from None
    return cls
