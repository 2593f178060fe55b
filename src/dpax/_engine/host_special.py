"""SciPy's special functions for host-side (NumPy) code, with ``scipy.special`` imported on
the first call instead of by ``import dpax`` (~0.08 s that a first epsilon, beta or mu of
DP-SGD does not need). Each name forwards to the function of the same name in
``scipy.special``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any


@functools.cache
def _special() -> ModuleType:
    return importlib.import_module("scipy.special")


def _forward(name: str) -> Callable[..., Any]:
    """A function that calls ``scipy.special.<name>`` with its arguments."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(_special(), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``scipy.special.{name}``, imported on the first call."
    return call


bdtrc = _forward("bdtrc")
erf = _forward("erf")
erfcx = _forward("erfcx")
erfinv = _forward("erfinv")
expit = _forward("expit")
log_ndtr = _forward("log_ndtr")
logsumexp = _forward("logsumexp")
ndtr = _forward("ndtr")
ndtri = _forward("ndtri")
