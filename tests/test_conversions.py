"""dpax.conversions: Table 3, Proposition 6.1, the curves each notion implies, Delta-divergence."""

from __future__ import annotations

import numpy as np
import pytest

from dpax import conversions as cv
from dpax import gdp
from exact_refs import gdp_beta

#: Table 3 of the paper: mu for (epsilon, delta), rows epsilon, columns delta 1e-5, 1e-6, 1e-9.
TABLE3_EPS = [0.1, 0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0]
TABLE3_DELTA = [1e-5, 1e-6, 1e-9]
TABLE3 = [
    [0.03, 0.03, 0.02],
    [0.14, 0.12, 0.09],
    [0.27, 0.24, 0.18],
    [0.50, 0.45, 0.35],
    [0.92, 0.84, 0.67],
    [1.31, 1.20, 0.97],
    [1.67, 1.53, 1.26],
    [2.00, 1.85, 1.54],
]


def test_table_3_reproduced():
    mu = cv.mu_from_epsilon_delta(np.array(TABLE3_EPS)[:, None], np.array(TABLE3_DELTA))
    assert np.max(np.abs(mu - np.array(TABLE3))) <= 0.005
    # and it is the inverse of mu-GDP's delta(epsilon)
    np.testing.assert_allclose(gdp.delta(np.array(TABLE3_EPS)[:, None], mu), np.broadcast_to(TABLE3_DELTA, mu.shape),
                               rtol=1e-8)


def test_proposition_6_1():
    for eps in (0.1, 1.0, 3.0):
        mu = cv.mu_from_epsilon_dp(eps)
        p = 1.0 / (1.0 + np.exp(eps))
        assert gdp_beta(p, mu) == pytest.approx(p, rel=1e-12)  # tight at FPR = FNR
        alpha = np.linspace(0, 1, 2001)
        assert np.all(gdp_beta(alpha, mu) <= cv.epsilon_delta_tradeoff(eps, 0.0, alpha) + 1e-15)
        assert cv.mu_from_epsilon_dp(eps) > cv.mu_from_epsilon_dp(eps * 0.99)



def test_mu_of_pure_dp_is_never_below_the_exact_value():
    """-2 Phi^-1(1 / (e^eps + 1)) = 2 sqrt(2) erfinv(tanh(eps / 2)), at 60 digits (mpmath, with the digits it needs),
    from epsilon 1e-300 to 700: the reported mu lies at or above it, within 2e-15 relative
    (forming 1 / (e^eps + 1) next to 1/2 loses ~1e-16 / eps relative: 1e-6 at 1e-10)."""
    mpmath = pytest.importorskip("mpmath")
    eps = np.concatenate([np.geomspace(1e-300, 1e-20, 9), np.geomspace(1e-12, 0.999, 25), np.geomspace(1.0, 700.0, 20)])
    got = cv.mu_from_epsilon_dp(eps)
    def exact_mu(e):  # tanh(e / 2) is 1 - 2 e^-e: digits enough to hold e^-e
        with mpmath.workdps(60 + int(e / 2.3)):
            return float(2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.tanh(mpmath.mpf(float(e)) / 2)))

    exact = np.array([exact_mu(e) for e in eps])
    assert np.all(got >= exact)
    np.testing.assert_allclose(got, exact, rtol=2e-15, atol=0)

def test_epsilon_delta_curve():
    eps, delta = 1.0, 1e-3
    alpha = np.linspace(0, 1, 1001)
    expect = np.maximum(0, np.maximum(1 - delta - np.e * alpha, (1 - delta - alpha) / np.e))
    np.testing.assert_allclose(cv.epsilon_delta_tradeoff(eps, delta, alpha), expect, atol=1e-15)
    np.testing.assert_allclose(cv.epsilon_delta_curve(eps, delta).beta(alpha), expect, atol=1e-15)
    assert cv.epsilon_delta_curve(eps, delta).advantage() == pytest.approx((np.e - 1 + 2 * delta) / (np.e + 1))


def test_rdp_and_zcdp_curves_of_the_gaussian():
    """The Gaussian mechanism with noise sigma is (t, t / (2 sigma^2))-RDP for every t and
    1/(2 sigma^2)-zCDP: the implied curves lie below its exact curve f_{1/sigma}, zCDP's above
    each single order's, and not far below (Zhu et al.: RDP conversions are loose)."""
    sigma = 1.0
    mu, rho = 1.0 / sigma, 1.0 / (2 * sigma**2)
    alpha = np.array([1e-6, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.8])
    exact = gdp_beta(alpha, mu)
    z = cv.zcdp_tradeoff(rho, alpha)
    assert np.all(z <= exact + 1e-12)
    for t in (1.0, 2.0, 8.0):
        r = cv.rdp_tradeoff(t, rho * t, alpha)
        assert np.all(r <= exact + 1e-12)
        assert np.all(r <= z + 1e-12)
    assert np.all(exact - z < 0.12)
    # KL (t = 1) of N(0,1) vs N(mu,1) is mu^2/2; a binary test that meets it with equality
    a = 0.2
    b = cv.rdp_tradeoff(1.0, 0.5, a)
    kl = a * np.log(a / (1 - b)) + (1 - a) * np.log((1 - a) / b)
    kl2 = b * np.log(b / (1 - a)) + (1 - b) * np.log((1 - b) / a)
    assert max(kl, kl2) == pytest.approx(0.5, rel=1e-6)
    # the zCDP curve object is tabulated pessimistically (lower hull of the points)
    zc = cv.zcdp_curve(rho)
    assert np.all(zc.beta(alpha) <= z + 1e-12)


def _dpsgd_batch():
    """DP-SGD with noise 1 and 2 (rate 0.1, 100 steps) at grid 0.05, where both rows' steps have
    the shortest support (grid 1e-3 until 2026-11-27); row 0 stands in the tests below for the
    standalone dpsgd(1.0, 0.1, 100) they used (no construction kernels of its own)."""
    import dpax

    return dpax.dpsgd([1.0, 2.0], 0.1, 100, grid_step=0.05)


def _dpsgd_row():
    return _dpsgd_batch()[0]


def _brute_delta(f_beta, g_beta, n=200_001):
    """Eq. 8 by bisection on kappa over a dense alpha grid (a lower bound of Delta)."""
    alpha = np.linspace(0, 1, n)
    g = g_beta(alpha)
    lo, hi = 0.0, 1.0
    for _ in range(36):  # kappa to 2^-36 ~ 1.5e-11, below the 1e-9 the comparison allows
        k = 0.5 * (lo + hi)
        if np.all(f_beta(np.clip(alpha + k, 0, 1)) - k <= g + 1e-15):
            hi = k
        else:
            lo = k
    return lo


@pytest.mark.slow  # ~5s; default siblings: test_lemma_c1_perfect_privacy (the divergence against a closed form, a
# PrivacyLoss included), tests/compat/test_compat.py::test_worst_case_regret (delta_divergence to f_mu against gdpnum)
# and dpax.gdp.divergence's examples in tests/test_docs.py (Delta = 0 where f is already below g)
def test_delta_divergence_against_definition():
    pairs = [
        (cv.epsilon_delta_curve(1.0, 0.0), cv.gdp_curve(cv.mu_from_epsilon_dp(1.0))),
        (cv.gdp_curve(1.5), cv.gdp_curve(1.0)),
        (cv.gdp_curve(1.0), cv.epsilon_delta_curve(2.0, 1e-3)),
        (cv.epsilon_delta_curve(2.0, 1e-3), cv.epsilon_delta_curve(1.0, 1e-2)),
        (_dpsgd_row(), cv.gdp_curve(1.0)),
    ]
    for f, g in pairs:
        d = cv.delta_divergence(f, g)
        ref = _brute_delta(f.beta, g.beta)
        assert ref - 1e-9 <= d <= ref + 1e-5, (f, g, d, ref)
    # identities: Delta(f, f) = 0; f already below g (less private) needs no shift
    g = cv.gdp_curve(1.0)
    assert cv.delta_divergence(g, g) == pytest.approx(0.0, abs=1e-12)
    assert cv.delta_divergence(cv.gdp_curve(1.5), g) == 0.0
    assert cv.delta_divergence(g, cv.gdp_curve(1.5)) > 0.05


def test_lemma_c1_perfect_privacy():
    """Delta<->(f_pp, f) = advantage(f) / 2 (Kaissis et al., Lemma C.1)."""
    perfect = cv.tabulated_curve([0.0, 1.0], [1.0, 0.0], "perfect privacy")
    for f in (cv.gdp_curve(1.3), cv.epsilon_delta_curve(1.0, 1e-3), _dpsgd_row()):
        assert cv.symmetric_delta_divergence(perfect, f) == pytest.approx(float(f.advantage()) / 2, abs=1e-9)


def test_batched_divergence_and_errors():
    pl = _dpsgd_batch()
    d = cv.delta_divergence(pl, cv.gdp_curve(3.0))
    assert d.shape == (2,) and 0 < d[0] < d[1]
    with pytest.raises(TypeError, match="trade-off curve"):
        cv.delta_divergence(1.0, cv.gdp_curve(1.0))
    with pytest.raises(ValueError, match="epsilon"):
        cv.mu_from_epsilon_dp(-1.0)
    with pytest.raises(ValueError, match="delta"):
        cv.mu_from_epsilon_delta(1.0, 0.0)


# default sibling: tests/gdp/test_gdp_mu_regret.py::test_randomized_response_gets_proposition_6_1_and_large_regret
# (the regret is delta_divergence(f, f_mu)); the batched divergence and the errors stay in the test above
@pytest.mark.slow
def test_batched_regret_is_the_divergence_to_f_mu():
    import dpax

    pl = dpax.dpsgd([1.0, 2.0], 0.1, 100, grid_step=1e-3)
    _, regret = gdp.mu_and_regret(pl)
    mu, _ = gdp.mu_and_regret(pl)
    for i in range(2):
        row = cv.delta_divergence(dpax.dpsgd([1.0, 2.0][i], 0.1, 100, grid_step=1e-3), cv.gdp_curve(mu[i]))
        assert row == pytest.approx(regret[i], abs=1e-9)  # the regret is Delta(h, f_mu)
