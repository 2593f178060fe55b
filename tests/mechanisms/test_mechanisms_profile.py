"""dpax.mechanisms.profile: any mechanism from its privacy profile (Algorithm 2, generic path),
on the Laplace profile: within the documented accuracy of the closed-form Laplace curve and
never above it."""

from __future__ import annotations

import numpy as np
from mechanism_refs import ALPHAS, laplace_beta, laplace_delta

import dpax


def test_from_privacy_profile_with_the_laplace_profile():
    """The generic path (Algorithm 2 from a user's delta(epsilon)) on the Laplace profile:
    within its documented second-difference accuracy of the CDF-built Laplace pair."""
    e0 = 1.0
    # grid 2e-3 and the default epsilon_max (1 here; 1e-3 and 2.0 until 2026-11-27): the
    # connect-the-dots kernel (512 points) of tests/gdp/test_gdp_mu_regret.py's randomized response
    # (observed: within 1.1e-7; an explicit epsilon_max: tests/test_fuzz.py::test_fuzz_dpax_from_privacy_profile)
    pl = dpax.from_privacy_profile(lambda e: laplace_delta(e, e0), grid_step=2e-3)
    exact = laplace_beta(ALPHAS, e0)
    assert np.max(np.abs(pl.beta(ALPHAS) - exact)) <= 1e-4
    assert np.all(pl.beta(ALPHAS) <= exact + 1e-9)
