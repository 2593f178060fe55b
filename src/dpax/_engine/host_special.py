"""SciPy's special functions for host-side (NumPy) code, with ``scipy.special`` imported on
the first call instead of by ``import dpax`` (~0.08 s that a first epsilon, beta or mu of
DP-SGD does not need). Each name forwards to the function of the same name in
``scipy.special``.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Any


@functools.cache
def _special() -> ModuleType:
    return importlib.import_module("scipy.special")


def bdtrc(*args: Any, **kwargs: Any) -> Any:
    return _special().bdtrc(*args, **kwargs)


def erf(*args: Any, **kwargs: Any) -> Any:
    return _special().erf(*args, **kwargs)


def erfcx(*args: Any, **kwargs: Any) -> Any:
    return _special().erfcx(*args, **kwargs)


def erfinv(*args: Any, **kwargs: Any) -> Any:
    return _special().erfinv(*args, **kwargs)


def expit(*args: Any, **kwargs: Any) -> Any:
    return _special().expit(*args, **kwargs)


def log_ndtr(*args: Any, **kwargs: Any) -> Any:
    return _special().log_ndtr(*args, **kwargs)


def logsumexp(*args: Any, **kwargs: Any) -> Any:
    return _special().logsumexp(*args, **kwargs)


def ndtr(*args: Any, **kwargs: Any) -> Any:
    return _special().ndtr(*args, **kwargs)


def ndtri(*args: Any, **kwargs: Any) -> Any:
    return _special().ndtri(*args, **kwargs)
