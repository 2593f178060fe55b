"""A composed PrivacyLoss's far tails tightened (dpax.privacy_loss.tails): built once per
value on first use, the value itself where there is no recipe, and views of a composition
(rows, broadcast, another grid) tightened as the composition is."""

from __future__ import annotations

import numpy as np
import pytest

import dpax
from dpax.privacy_loss import tails
from dpax.privacy_loss.tails import tight_tails


def test_built_once_and_only_for_compositions():
    """The recipe runs on first use only, the result memoised beside the value; a single
    step, a pair from arrays and an optimistic companion are their own."""
    pl = dpax.dpsgd(1.0, 1e-2, 20, grid_step=1e-2)
    assert pl not in tails._MEMO
    tight = tight_tails(pl)
    assert tight is tight_tails(pl) and pl in tails._MEMO and tight_tails(tight) is tight
    step = dpax.subsampled_gaussian(1.0, 1e-2, grid_step=1e-2)
    rebuilt = dpax.PrivacyLoss.from_pair(pl.pair, pl.grid_step, "arrays", pl.batch_shape, exact_ratio=True)
    companion = pl.optimistic_companion()
    assert tight_tails(step) is step and tight_tails(rebuilt) is rebuilt and tight_tails(companion) is companion
    with pytest.raises(TypeError, match="pl must be a dpax.PrivacyLoss, got float"):
        tight_tails(1.0)


def test_views_are_tightened_as_the_composition():
    """A row of a batch, the batch broadcast and the composition on a coarser grid get their
    tightened tails from the composition's: the row's masses are the batch's row's, and each
    row's the one it has alone, to 1e-12."""
    batch = dpax.dpsgd([1.0, 2.0], 1e-2, [20, 50], grid_step=1e-2)
    alone = dpax.dpsgd(2.0, 1e-2, 50, grid_step=1e-2)
    row = tight_tails(batch[1])
    whole = tight_tails(batch)
    for a, b in ((row.pmf_y, np.asarray(whole.pmf_y)[1]), (row.pmf_x, np.asarray(whole.pmf_x)[1])):
        np.testing.assert_array_equal(np.asarray(a)[0] if np.ndim(a) == 2 else np.asarray(a), b)
    n = tight_tails(alone).support_length
    np.testing.assert_allclose(np.asarray(row.pmf_y)[..., :n].reshape(-1), np.asarray(tight_tails(alone).pmf_y)
                               .reshape(-1), rtol=1e-12, atol=1e-300)
    wide = tight_tails(batch.broadcast_to((3, 2)))
    assert wide.batch_shape == (3, 2)
    coarse = tight_tails(batch.regrid(2e-2))
    assert coarse.grid_step == 2e-2 and coarse.batch_shape == (2,)
    np.testing.assert_array_equal(np.asarray(coarse.pmf_y), np.asarray(whole.regrid(2e-2).pmf_y))


def test_booked_roundoff_is_the_same_in_numpy_and_compiled():
    """The gate's booked round-off, read on the CPU with NumPy (a few rows at a time) and off
    it as one compiled call, is the same number; and it is (eta_x + eta_y) x the window's
    points: a composition's first X-mass and last Y-mass are its booking."""
    import jax

    pl = dpax.dpsgd([1.0, 2.0, 4.0], 1e-2, 100, grid_step=1e-2)
    pair = pl.pair
    on_cpu = tails.booked_roundoff(pair)
    with jax.enable_x64(True):
        compiled = np.asarray(tails._booked_on_device(pair.pmf_x, pair.pmf_y))
    np.testing.assert_array_equal(on_cpu, compiled)
    x, y = np.asarray(pair.pmf_x), np.asarray(pair.pmf_y)
    for r in range(3):
        first, last = np.flatnonzero(x[r])[0], np.flatnonzero(y[r])[-1]
        assert on_cpu[r] == (last - first + 1) * (x[r, first + 1] + y[r, last - 1])
        assert 0.0 < on_cpu[r] < 1e-9
