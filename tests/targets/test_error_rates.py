"""dpax.targets.error_rates: ErrRates, Advantage and Epsilon. Their Gaussian-DP mu keeps its
precision at the ends of their ranges (an advantage next to 1 or to 0, (alpha, beta) next to the
coin flip alpha + beta = 1), and an ErrRates row beyond the coin flip is refused by its row."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

import dpax
from dpax.targets import Advantage, ErrRates


def test_gdp_mu_keeps_its_precision_at_the_ends_of_the_targets_ranges():
    """mu* of an advantage near 1 (1 + a rounded to 2: mu* was inf, calibrate_gaussian's noise 0),
    of a tiny advantage (mu* was 0: noise inf) and of (alpha, beta) next to the coin flip
    alpha + beta = 1, where the two quantiles cancel (mu* was 16% high: too little noise)."""
    near_one = Advantage(1 - 2**-53)
    assert float(near_one.gdp_mu()) == pytest.approx(-2 * norm.ppf(2**-54), rel=1e-14)  # (1 - a) / 2 exact
    assert dpax.calibrate_gaussian(near_one) == pytest.approx(-0.5 / norm.ppf(2**-54), rel=1e-14)
    assert float(Advantage(1e-300).gdp_mu()) == pytest.approx(1e-300 * np.sqrt(2 * np.pi), rel=1e-14)
    from fractions import Fraction

    for alpha in (0.3, 0.1, 0.5, 0.95):
        beta = np.nextafter(1 - alpha, 0.0)
        while alpha + beta >= 1:
            beta = np.nextafter(beta, 0.0)
        width = float(1 - Fraction(alpha) - Fraction(float(beta)))  # exact: 1 - alpha - beta ~ 1e-16
        exact = width / norm.pdf(norm.ppf(beta))  # Phi^-1(beta + width) - Phi^-1(beta) to first order
        assert float(ErrRates(alpha, beta).gdp_mu()) == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: ErrRates(alpha=[0.1, 0.6], beta=0.5), r"alpha \+ beta.*row \[1\]"),
    ],
)
def test_target_validation(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()
