# Adapted from gdpnum 0.1.2, tests/test_converter.py (https://github.com/Felipe-Gomez/gdp-numeric),
# MIT License, Copyright (c) 2025 Felipe-Gomez. Only the import lines are changed, and slow marks
# added: the suite runs against dpax.compat.gdpnum exactly as gdpnum's users would call it. Each
# test function keeps one default case (mu = 1 / b = 1 / eps = 1, whose kernels the cases share);
# the upstream test suite's other parameters run with `-m slow` (test_get_beta's are all mu = 1:
# the upstream test suite overwrites it).
import numpy as np
import pytest
from dp_accounting.pld.privacy_loss_distribution import (
    from_gaussian_mechanism,
    from_laplace_mechanism,
    from_randomized_response,
)
from scipy import stats

from dpax.compat.gdpnum import PLDConverter

SLOW = pytest.mark.slow
TOL = 1e-4


@pytest.mark.parametrize("mu", [pytest.param(0.5, marks=SLOW), 1.0, pytest.param(2.0, marks=SLOW),
                                pytest.param(2.5, marks=SLOW)])
def test_gaussian_converter_has_no_regret(mu):
    pld = from_gaussian_mechanism(1 / mu)
    converter = PLDConverter(pld)

    assert mu == pytest.approx(converter.get_mu(), abs=TOL)
    mu_prime, regret = converter.get_mu_and_regret()
    assert mu == pytest.approx(mu_prime, abs=TOL)
    assert regret < TOL


@pytest.mark.parametrize("b", [1.0, pytest.param(1.25, marks=SLOW), pytest.param(1.5, marks=SLOW),
                               pytest.param(2, marks=SLOW)])
def test_laplace_has_nonzero_regret(b):
    pld = from_laplace_mechanism(b)
    converter = PLDConverter(pld)
    mu, regret = converter.get_mu_and_regret()
    assert regret > 0.01


@pytest.mark.parametrize("eps", [pytest.param(0.75, marks=SLOW), 1.0, pytest.param(1.5, marks=SLOW),
                                 pytest.param(2.0, marks=SLOW)])
def test_rr_has_nonzero_regret(eps):
    p = 2 / (1 + np.exp(eps))
    pld = from_randomized_response(p, num_buckets=2)
    converter = PLDConverter(pld)
    mu, regret = converter.get_mu_and_regret()

    # Proposition 6.1 in the paper.
    assert mu == pytest.approx(-2 * stats.norm.ppf(1 / (np.exp(eps) + 1)))
    assert regret > 0.01


@pytest.mark.parametrize("mu", [pytest.param(0.5, marks=SLOW), 1.0, pytest.param(2.0, marks=SLOW),
                                pytest.param(2.5, marks=SLOW)])
def test_get_beta(mu):
    mu = 1.0
    pld = from_gaussian_mechanism(1 / mu)
    converter = PLDConverter(pld)

    # Default beta values.
    beta = converter.get_beta()
    assert 1 - 2 * beta[-1] == pytest.approx(converter.get_advantage())
    assert len(beta) == 8

    # Custom beta values.
    k = 10
    alpha = np.linspace(0, 1, k)
    beta = converter.get_beta(alpha)
    assert np.all(1 - alpha - converter.get_advantage() <= beta)
    assert np.all(beta <= 1 - alpha)
    assert beta[0] == pytest.approx(1.0)
    assert beta[-1] == pytest.approx(0.0)
    for i in range(1, k - 1):
        assert beta[i] != 0
