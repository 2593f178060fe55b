"""float64 without touching the user's JAX configuration (dpax._engine.x64): the decorator
computes in 64 bits and restores the setting, also after an error; as_result gives NumPy
float64 values, a Python scalar for shape ()."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpax._engine import x64


@x64.float64
def _third():
    return jnp.asarray(1.0) / 3.0


@x64.float64
def _fails():
    raise RuntimeError("inside")


def test_float64_computes_in_64_bits_and_restores_the_setting():
    before = jax.config.jax_enable_x64
    value = _third()
    assert value.dtype == jnp.float64 and float(value) == 1.0 / 3.0
    assert jax.config.jax_enable_x64 == before
    with pytest.raises(RuntimeError, match="inside"):
        _fails()
    assert jax.config.jax_enable_x64 == before
    assert _third.__name__ == "_third"  # functools.wraps


def test_as_result_shapes_and_types():
    assert x64.as_result(np.float32([0.5]), ()) == 0.5 and isinstance(x64.as_result([0.5], ()), float)
    out = x64.as_result(jnp.asarray([1, 2], jnp.int32), (2, 1))
    assert out.dtype == np.float64 and out.shape == (2, 1)
    assert x64.as_result(np.array(["met", "infeasible"]), (2,), dtype=None).tolist() == ["met", "infeasible"]
    with pytest.raises(ValueError):
        x64.as_result([1.0, 2.0], ())
