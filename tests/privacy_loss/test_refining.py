"""dpax.privacy_loss.refining: the next grid step of a refinement, and what refine refuses."""

from __future__ import annotations

import pytest

import dpax
from dpax.privacy_loss.refining import REFINE_MIN_STEP, refine, refine_step


def test_refine_step_follows_the_quadratic_width():
    # 0.7 sqrt(1e-4 / 4e-4) = 0.35 of the step, rounded down to one digit
    assert refine_step(1e-2, 4e-4, 1e-4) == 3e-3
    assert refine_step(1e-2, 1.0, 1e-12) == pytest.approx(3e-4)  # at most 1/30 less: 3.3e-4 -> 3e-4
    assert refine_step(1e-2, 0.0, 1e-4) == 5e-3  # no width measured: half
    assert refine_step(2e-6, 1.0, 1e-12) == REFINE_MIN_STEP


def test_refine_refuses_a_companion_and_a_wrong_grid():
    with pytest.raises(ValueError, match="build returned an optimistic companion"):
        refine(lambda h: dpax.gaussian(1.0, grid_step=h).optimistic_companion(), lambda pl: pl.beta(0.1, bounds=True),
               1e-3)
    with pytest.raises(ValueError, match="returned a PrivacyLoss on grid_step"):
        refine(lambda h: dpax.gaussian(1.0, grid_step=1e-2), lambda pl: pl.beta(0.1, bounds=True), 1e-9,
               grid_step=2e-2)
    with pytest.raises(TypeError, match="evaluate must return an Interval"):
        refine(lambda h: dpax.gaussian(1.0, grid_step=h), lambda pl: pl.beta(0.1), 1e-3, grid_step=1e-2)
