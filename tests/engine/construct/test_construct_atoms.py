"""dpax._engine.construct.atoms: a loss law made of atoms is split atom by atom, an atom on a
grid point kept whole, every mass kept."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from dpax._engine import construct
from dpax._engine.grid import loss_grid


def test_pair_from_atoms_puts_grid_atoms_whole_and_splits_others():
    step = 0.5
    loss = np.array([[-1.0, 0.25, 1.0]])
    q = np.array([[0.2, 0.5, 0.3]])
    p = q * np.exp(-loss)
    p = p / p.sum() * (1 - 1e-3)  # leave 1e-3 of P at loss -inf (kept at the -inf atom)
    with jax.enable_x64(True):
        pair = construct.pair_from_atoms(loss, np.log(p), np.log(q), step, tail=0.0, exact_ratio=False, what="t")
        px, py, off, iy, nx = (np.asarray(a) for a in pair)
    x = loss_grid(off, px.shape[-1], step)[0]
    at = {float(v): (a, b) for v, a, b in zip(x, px[0], py[0])}
    assert at[-1.0][1] == pytest.approx(0.2, abs=1e-15)  # on a grid point: whole
    assert at[1.0][1] == pytest.approx(0.3, abs=1e-15)  # 0.25 is split between 0 and 0.5 only
    assert at[0.0][1] + at[0.5][1] == pytest.approx(0.5, abs=1e-12)
    assert py.sum() + iy[0] == pytest.approx(1.0, abs=1e-12)
    assert px.sum() + nx[0] == pytest.approx(1.0, abs=1e-12)
