"""Optimistic companions moved onto a grid (dpax._engine.optimistic.regrid): every atom's
masses kept (a post-processing loses nothing), clamped atoms booked as irregular slack,
and a regrid moving each point by at most half the new step."""

from __future__ import annotations

import numpy as np

from dpax._engine.optimistic import merge_to_grid, regrid
from dpax._engine.x64 import float64


@float64
def test_merge_to_grid_keeps_every_mass_and_books_clamped_atoms():
    loss = np.array([[-5.0, -0.004, 0.3, 7.0]])  # -5 and 7 lie outside the grid [-1, 1.55]
    p = np.array([[0.1, 0.2, 0.3, 0.4]])
    q = np.array([[0.4, 0.3, 0.2, 0.1]])
    pair, slack = merge_to_grid(loss, np.log(p), np.log(q), np.array([-100]), 0.01, 256)
    px, py = np.asarray(pair.pmf_x)[0], np.asarray(pair.pmf_y)[0]
    np.testing.assert_allclose([px.sum(), py.sum()], [1.0, 1.0], rtol=1e-15)
    np.testing.assert_allclose([px[0], py[-1]], [0.1, 0.1], rtol=1e-15)  # clamped to the ends
    np.testing.assert_allclose([px[100], px[130]], [0.2, 0.3], rtol=1e-15)  # -0.004 to 0, 0.3 to its point
    assert np.count_nonzero(px) == 4
    np.testing.assert_allclose(slack.tilted_p, [np.exp(-1.0) * 0.1], rtol=1e-15)
    np.testing.assert_allclose(slack.tilted_q, [np.exp(-1.55) * 0.1], rtol=1e-15)
    np.testing.assert_allclose(slack.ratio, [0.005])


@float64
def test_regrid_moves_masses_to_the_nearest_point_and_widens_the_slack():
    pair, slack = merge_to_grid(np.array([[-0.5, 0.24, 0.26]]), np.log([[0.5, 0.25, 0.25]]),
                                np.log([[0.25, 0.25, 0.5]]), np.array([-100]), 0.01, 256)
    new, wide = regrid(pair, slack, 0.01, 0.1, lambda n: n)
    px = np.asarray(new.pmf_x)[0]
    offset = int(np.asarray(new.offset)[0])
    at = lambda loss: round(loss / 0.1) - offset
    np.testing.assert_allclose(px.sum(), 1.0, rtol=1e-15)
    np.testing.assert_allclose([px[at(-0.5)], px[at(0.2)], px[at(0.3)]], [0.5, 0.25, 0.25], rtol=1e-15)
    assert np.count_nonzero(px) == 3
    np.testing.assert_allclose(wide.ratio, slack.ratio + 0.05)
