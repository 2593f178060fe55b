"""dpax.compat.riskcal.analysis.conversions: what it documents beyond the comparisons of
tests/compat/test_compat.py: a batch of privacy losses gives results with its batch shape in
front (each row its mechanism's: randomized response's closed forms), the
PLRVs of a PLD, the closed forms at their edges, riskcal's scalar / array returns, ValueError
naming the argument where riskcal returns NaN, and the deprecated aliases and approximations.
Hand-made privacy losses (three grid points) and closed forms: few, small kernels."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dpax
from dpax.compat.riskcal.analysis import conversions as conv
from dpax.privacy_loss import PrivacyLoss

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    rc = pytest.importorskip("riskcal.analysis")

EPS = np.array([0.5, 1.0])
#: randomized response with budget eps on the grid of step 0.5: losses -eps, 0, eps
STEP = 0.5
ALPHAS = np.array([0.0, 0.05, 0.2, 0.5, 0.9])
PRIORS = np.array([0.0, 0.1, 0.5, 0.8, 1.0])


def _rr_pmfs(eps):
    k = int(round(eps / STEP))
    x, y = np.zeros(5), np.zeros(5)  # indices -2 .. 2
    x[2 - k], x[2 + k] = math.exp(eps) / (1 + math.exp(eps)), 1 / (1 + math.exp(eps))
    y[2 - k], y[2 + k] = x[2 + k], x[2 - k]
    return x, y


def _rr(eps):
    x, y = _rr_pmfs(eps)
    return PrivacyLoss(x, y, np.int64(-2), 0.0, 0.0, STEP, f"randomized response {eps:g}")


def _rr_batch():
    pmfs = [_rr_pmfs(e) for e in EPS]
    return PrivacyLoss(np.stack([p[0] for p in pmfs]), np.stack([p[1] for p in pmfs]), np.full(2, -2),
                       np.zeros(2), np.zeros(2), STEP, "randomized response", batch_shape=(2,))


def _rr_beta(eps, a):
    """(eps, 0)-DP's curve: max(0, 1 - e^eps a, e^-eps (1 - a))."""
    return np.maximum.reduce([np.zeros_like(a), 1 - np.exp(eps) * a, np.exp(-eps) * (1 - a)])


def test_a_batch_gives_results_with_its_batch_shape_in_front():
    batch = _rr_batch()
    beta = conv.get_beta_from_pld(batch, alpha=ALPHAS)
    adv = conv.get_advantage_from_pld(batch)
    risk = conv.get_bayes_risk_from_pld(batch, PRIORS)
    assert beta.shape == (2, ALPHAS.size) and adv.shape == (2,) and risk.shape == (2, PRIORS.size)
    assert conv.get_bayes_risk_from_pld(batch, 0.5).shape == (2,)
    for i, eps in enumerate(EPS):
        # each row randomized response's: the curve of (eps, 0)-DP, advantage (e^eps - 1) / (e^eps + 1), the Bayes risk
        # min over FPRs of q alpha + (1 - q) beta(alpha): min(q, 1 - q, the risk at the curve's kink)
        np.testing.assert_allclose(beta[i], _rr_beta(eps, ALPHAS), atol=1e-12)
        assert adv[i] == pytest.approx(math.tanh(eps / 2), abs=1e-12)
        kink = 1 / (1 + math.exp(eps))
        np.testing.assert_allclose(risk[i], np.minimum.reduce([PRIORS, 1 - PRIORS, np.full(PRIORS.shape, kink)]),
                                   atol=1e-12)
    # the ends of the prior and the prior 1/2: no risk at a known secret, (1 - advantage) / 2 at a fair coin
    assert np.all(risk[:, 0] == 0.0) and np.all(risk[:, -1] == 0.0)
    np.testing.assert_allclose(risk[:, 2], (1 - adv) / 2, atol=1e-12)


def test_scalar_in_float_out_as_riskcal():
    one = _rr(1.0)
    for value in (conv.get_beta_from_pld(one, 0.2), conv.get_advantage_from_pld(one),
                  conv.get_bayes_risk_from_pld(one, 0.3), conv.get_beta_from_zcdp(0.5, 0.1),
                  conv.get_beta_from_zcdp(0.5, np.array(0.1)), conv.get_advantage_from_adp(1.0, 1e-3),
                  conv.get_epsilon_from_err_rates(1e-3, 0.1, 0.3), conv.get_beta_from_rdp(1.0, 0.1, 2.0)):
        assert type(value) is float
    assert conv.get_beta_from_pld(one, [0.2]).shape == (1,) and conv.get_bayes_risk_from_pld(one, [0.3]).shape == (1,)
    assert conv.get_beta_from_zcdp(0.5, [0.1]).shape == (1,)


def test_pld_to_plrvs_reads_the_pld_and_its_symmetry_flag():
    pld_module = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    one = _rr(1.0)
    plrvs = conv.pld_to_plrvs(one)
    assert plrvs.is_symmetric is False  # a PrivacyLoss: its curve is symmetrised
    assert plrvs.x0 == plrvs.y0 == -2
    np.testing.assert_array_equal(plrvs.pmf_X, _rr_pmfs(1.0)[0])
    np.testing.assert_array_equal(plrvs.pmf_Y, _rr_pmfs(1.0)[1])
    # dp-accounting's flag: a Gaussian PLD is symmetric, a subsampled one is not; riskcal reads the same
    for sampling, symmetric in ((1.0, True), (0.5, False)):
        pld = pld_module.from_gaussian_mechanism(1.0, sampling_prob=sampling, value_discretization_interval=0.1)
        ours, ref = conv.pld_to_plrvs(pld), rc.conversions.plrvs_from_pld(pld)
        assert ours.is_symmetric is ref.is_symmetric is symmetric
        for mass in ("infinity_mass_Y", "minus_infinity_mass_X"):
            assert getattr(ours, mass) == pytest.approx(getattr(ref, mass), abs=1e-12)
        np.testing.assert_allclose(rc.get_beta_from_plrvs(ref, alpha=ALPHAS), conv.get_beta_from_pld(pld, ALPHAS),
                                   atol=1e-6)


def test_closed_forms_at_their_edges():
    # advantage of (eps, delta)-DP: (e^eps + 2 delta - 1) / (e^eps + 1), finite at any epsilon
    eps, delta = np.array([0.0, 0.3, 2.0, 50.0, 800.0]), 1e-3
    exact = (np.expm1(eps[:3]) + 2 * delta) / (np.exp(eps[:3]) + 1)
    got = conv.get_advantage_from_adp(eps, delta)
    np.testing.assert_allclose(got[:3], exact, rtol=1e-13)
    assert got[-1] == 1.0 and np.all(np.isfinite(got))
    np.testing.assert_allclose(got[:4], rc.get_advantage_from_adp(eps[:4], delta), rtol=1e-12)
    # epsilon from error rates: riskcal's values; inf where one rate is 0 and the other below 1 - delta, 0 where
    # the rates are reachable with no privacy loss (alpha + beta >= 1 - delta)
    a = np.array([0.0, 0.5, 0.6, 0.1, 0.01])
    b = np.array([0.5, 0.0, 0.5, 0.2, 0.9])
    got = conv.get_epsilon_from_err_rates(0.0, a, b)
    np.testing.assert_array_equal(got[:3], [np.inf, np.inf, 0.0])
    with np.errstate(divide="ignore"):
        ref = rc.get_epsilon_from_err_rates(0.0, a, b)
    np.testing.assert_allclose(got, ref, rtol=1e-13)
    # order < 1/2 of RDP: order 1 - t with budget (1 - t) eps / t (D_t(P||Q) = t / (1 - t) D_(1-t)(Q||P))
    alpha = np.array([0.01, 0.1, 0.3])
    np.testing.assert_allclose(conv.get_beta_from_rdp(1.0, alpha, order=0.3),
                               dpax.conversions.rdp_tradeoff(0.7, 0.7 / 0.3, alpha), atol=1e-12)
    assert conv.get_advantage_from_zcdp(0.0) == 0.0


@pytest.mark.parametrize("call,name", [
    (lambda: conv.get_beta_from_gdp(1.0, 1.5), "alpha"),
    (lambda: conv.get_beta_from_gdp(-1.0, 0.1), "mu"),
    (lambda: conv.get_bayes_risk_from_gdp(1.0, -0.1), "prior"),
    (lambda: conv.get_advantage_from_adp(-1.0, 0.0), "epsilon"),
    (lambda: conv.get_epsilon_from_err_rates(2.0, 0.1, 0.1), "delta"),
    (lambda: conv.get_beta_from_rdp(1.0, 0.1, 0.0), "order"),
    (lambda: conv.get_beta_from_rdp(1.0, 0.1, 2.0, tol=0.0), "tol"),
    (lambda: conv.get_beta_from_zcdp(-1.0, 0.1), "rho"),
    (lambda: conv.get_beta_from_zcdp(0.5, 0.1, grid_size=5), "grid_size"),
    (lambda: conv.get_advantage_from_zcdp(0.5, min_order=0.5), "min_order"),
    (lambda: conv.get_bayes_risk_from_pld(_rr(1.0), 1.5), "prior"),
])
def test_bad_input_is_a_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()


def test_riskcal_returns_nan_where_dpax_refuses():
    assert math.isnan(rc.get_beta_from_gdp(1.0, 1.5))


ALIASES = {
    "get_beta_for_mu": ("get_beta_from_gdp", (1.3, ALPHAS)),
    "get_advantage_for_mu": ("get_advantage_from_gdp", (1.3,)),
    "get_bayes_risk_for_mu": ("get_bayes_risk_from_gdp", (1.3, PRIORS)),
    "get_beta_for_epsilon_delta": ("get_beta_from_adp", (1.0, 1e-3, ALPHAS)),
    "get_advantage_for_epsilon_delta": ("get_advantage_from_adp", (1.0, 1e-3)),
    "get_epsilon_for_err_rates": ("get_epsilon_from_err_rates", (1e-3, 0.01, 0.5)),
}


def test_deprecated_aliases_call_their_functions():
    for alias, (name, args) in ALIASES.items():
        fn = getattr(conv, alias)
        assert fn.__name__ == alias and fn.__wrapped__ is getattr(conv, name) and fn.__deprecated__ == "2.0.0"
        assert name in fn.__doc__
        np.testing.assert_array_equal(fn(*args), getattr(conv, name)(*args))
    assert conv.plrvs_from_pld.__wrapped__ is conv.pld_to_plrvs
    old, new = conv.plrvs_from_pld(_rr(1.0)), conv.pld_to_plrvs(_rr(1.0))
    assert (old.x0, old.y0, old.is_symmetric) == (new.x0, new.y0, new.is_symmetric)
    np.testing.assert_array_equal(old.pmf_Y, new.pmf_Y)


def test_zcdp_approximations_warn_and_are_the_exact_functions():
    with pytest.warns(DeprecationWarning, match="get_beta_from_zcdp_approx is deprecated"):
        beta = conv.get_beta_from_zcdp_approx(0.5, ALPHAS)
    np.testing.assert_array_equal(beta, conv.get_beta_from_zcdp(0.5, ALPHAS))
    with pytest.warns(DeprecationWarning, match="get_advantage_from_zcdp_approx is deprecated"):
        adv = conv.get_advantage_from_zcdp_approx(0.5)
    assert adv == conv.get_advantage_from_zcdp(0.5)
    # the mu whose advantage is zCDP's: 2 Phi^-1((1 + advantage) / 2)
    with pytest.warns(DeprecationWarning, match="get_mu_from_zcdp_approx is deprecated"):
        mu = conv.get_mu_from_zcdp_approx(0.5)
    assert dpax.gdp.advantage(mu) == pytest.approx(adv, abs=1e-12)
