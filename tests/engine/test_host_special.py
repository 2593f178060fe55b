"""SciPy's special functions for host code (dpax._engine.host_special), loaded on first use:
each name gives scipy.special's values bit for bit, and the Gaussian family's tail quantile
is the constant SciPy computes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from dpax._engine import host_special
from dpax.mechanisms import _common

NAMES = ("bdtrc", "erf", "erfcx", "erfinv", "expit", "log_ndtr", "logsumexp", "ndtr", "ndtri")


def _arguments(name):
    x = np.linspace(-0.999, 0.999, 41)
    if name == "bdtrc":
        return (np.arange(5.0), 7, 0.3), {}
    if name == "ndtri":
        return ((x + 1.0) / 2.0,), {}
    if name == "logsumexp":
        return (np.outer(x, x),), {"axis": -1, "keepdims": True}
    return (40.0 * x if name in ("erfcx", "expit", "log_ndtr", "ndtr") else x,), {}


@pytest.mark.parametrize("name", NAMES)
def test_each_name_gives_scipys_values(name):
    args, kwargs = _arguments(name)
    np.testing.assert_array_equal(getattr(host_special, name)(*args, **kwargs),
                                  getattr(special, name)(*args, **kwargs))


def test_the_module_forwards_every_name_it_defines():
    defined = {n for n, v in vars(host_special).items() if callable(v) and not n.startswith("_")
               and getattr(v, "__module__", "") == host_special.__name__}
    assert defined == set(NAMES)


def test_single_step_quantile_is_scipys():
    assert _common.SINGLE_STEP_Z == -special.ndtri(_common.SINGLE_STEP_TAIL)
    # the least noise quoted in the docs follows from it
    assert _common._LEAST_NOISE_RATIO == 0.03760022275147539
