"""dpax.calibration.gaussian: calibrate_gaussian, the plain Gaussian mechanism's exact noise from
the closed forms of the target's mu-GDP (its closed forms per target are checked in
tests/targets/test_targets.py); a noise outside float64 is refused."""

from __future__ import annotations

import pytest

import dpax
from dpax.targets import Advantage


def test_calibrate_gaussian_refuses_a_noise_outside_float64():
    """sensitivity / mu* of 0 (underflow) or inf (overflow) is no calibrated noise: a ValueError
    naming it, where 0 and inf were returned."""
    with pytest.raises(ValueError, match="calibrate_gaussian: the noise sensitivity / mu.*outside float64"):
        dpax.calibrate_gaussian(Advantage(0.9), sensitivity=5e-324)  # mu* 3.29
    with pytest.raises(ValueError, match="outside float64"):
        dpax.calibrate_gaussian(dpax.targets.GDP(5e-324))
    assert dpax.calibrate_gaussian(dpax.targets.GDP(1e300)) == 1e-300  # tiny, but a positive float
