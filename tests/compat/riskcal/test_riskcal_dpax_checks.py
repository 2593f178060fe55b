"""dpax's own checks of dpax.compat.riskcal (not from riskcal's suite): the numerical code
written for the compat layer against closed forms and dpax's engine, the error class, the
safe side of every calibration, and riskcal's deprecation behaviour. Comparisons with the
real riskcal 1.5.1 are skipped where it is not installed."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from scipy.stats import norm

import dpax
import dpax.compat.riskcal as riskcal
from dpax.compat.riskcal import CalibrationError
from dpax.compat.riskcal.analysis import _rdp


def _riskcal(module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pytest.importorskip(module)


# -- the error class ---------------------------------------------------------------------------


def test_calibration_error_is_runtime_and_value_error():
    assert issubclass(CalibrationError, RuntimeError) and issubclass(CalibrationError, ValueError)
    # DP-SGD: not met even at noise_max
    # (grid 1e-1: a coarse grid, few and small kernels)
    for kind in (RuntimeError, ValueError):
        with pytest.raises(kind, match="not met"):
            riskcal.calibration.dpsgd.find_noise_multiplier_for_err_rates(
                0.1, 0.89, 1.0, 1, grid_step=1e-1, noise_max=2.0)
    # generic calibration: the target is reached nowhere in the bounds
    evaluator = lambda s: riskcal.calibration.PrivacyMetrics(advantage=float(dpax.gdp.advantage(1.0 / s)))
    target = riskcal.calibration.CalibrationTarget(kind="advantage", advantage=0.01)
    config = riskcal.calibration.CalibrationConfig(param_min=0.1, param_max=2.0, increasing=False)
    with pytest.raises(CalibrationError, match="not met even at 2"):
        riskcal.calibration.calibrate_parameter(evaluator, target, config)
    # ... or met already at the least private end, beyond the tolerance (riskcal: RuntimeError)
    config = riskcal.calibration.CalibrationConfig(param_min=50.0, param_max=100.0, increasing=False)
    with pytest.raises(RuntimeError, match="already be met at the lower bound"):
        riskcal.calibration.calibrate_parameter(evaluator, target, config)
    with pytest.raises(ValueError, match="could not reach"):
        riskcal.utils.inverse_monotone_function(lambda x: x, 5.0, (0.0, 1.0), increasing=True)
    # bad input stays a plain ValueError naming the argument
    with pytest.raises(ValueError, match="noise_min"):
        riskcal.calibration.dpsgd.find_noise_multiplier_for_advantage(0.1, 0.01, 10, noise_min=-1.0)
    with pytest.raises(ValueError, match="alpha"):
        riskcal.analysis.get_beta_from_gdp(1.0, 1.5)


# -- generic calibration: the answer meets the target ------------------------------------------


def _gdp_evaluator(noise):
    """The Gaussian mechanism with noise ``noise`` is (1 / noise)-GDP; noise 0 is not valid."""
    if noise <= 0:
        raise AssertionError("the evaluator was called at noise 0")
    mu = 1.0 / noise
    return riskcal.calibration.PrivacyMetrics(advantage=float(dpax.gdp.advantage(mu)), alpha=0.1,
                                              beta=float(dpax.gdp.tradeoff(mu, 0.1)))


@pytest.mark.parametrize("beta", [0.3, 0.6])
def test_calibrate_parameter_err_rates_meets_target(beta):
    exact = 1.0 / (norm.ppf(0.9) - norm.ppf(beta))  # Kulynych et al. 2024, Corollary B.4
    target = riskcal.calibration.CalibrationTarget(kind="err_rates", alpha=0.1, beta=beta)
    # riskcal's default bounds start at 0, where this evaluator must not be called
    res = riskcal.calibration.calibrate_parameter(_gdp_evaluator, target, riskcal.calibration.CalibrationConfig())
    assert exact <= res.parameter_value <= exact + 1e-3
    assert res.achieved_beta >= beta and res.achieved_beta == pytest.approx(beta, abs=1e-3)
    assert res.noise_multiplier == res.parameter_value and res.iterations > 0


def test_calibrate_parameter_advantage_and_inverse_function():
    exact = 1.0 / (2 * norm.ppf(0.6))  # advantage 0.2: mu = 2 Phi^-1(0.6) (Corollary B.3)
    target = riskcal.calibration.CalibrationTarget(kind="advantage", advantage=0.2)
    config = riskcal.calibration.CalibrationConfig(param_min=0.0, param_max=50.0, increasing=False,
                                                   target_tol=1e-6, param_tol=1e-6)
    res = riskcal.calibration.calibrate_parameter(_gdp_evaluator, target, config)
    assert exact <= res.parameter_value <= exact + 1e-6 and res.achieved_advantage <= 0.2
    # riskcal's inverse_monotone_function: the side where f <= target, both directions
    x = riskcal.utils.inverse_monotone_function(lambda v: v**2, 2.0, (0.0, 4.0), 1e-9, 1e-9, increasing=True)
    assert np.sqrt(2) - 1e-9 <= x <= np.sqrt(2)
    x = riskcal.utils.inverse_monotone_function(lambda v: 1 / v, 0.5, (0.1, 10.0), 1e-9, 1e-9)
    assert 2.0 <= x <= 2.0 + 1e-9


# -- DP-SGD calibration ------------------------------------------------------------------------


def test_dpsgd_calibration_bounds_and_batches():
    cal = riskcal.calibration.dpsgd
    # advantage 0.5 at p = 1, T = 1, grid 1e-2: test_backward_compatibility.py's calls (the single search here is
    # test_legacy_dpsgd_find_noise_multiplier_for_advantage_works' own), whose kernels serve
    # a batch is searched at once and equals the calls one by one
    # (p = 0.8: a row that needs noise too; p = 0.5 would be met without noise, the subsampling alone bounding the
    # advantage by 0.5)
    noise = cal.find_noise_multiplier_for_advantage(0.5, np.array([1.0, 0.8]), 1, grid_step=1e-2)
    assert noise.shape == (2,)
    assert noise[0] == pytest.approx(cal.find_noise_multiplier_for_advantage(0.5, 1.0, 1, grid_step=1e-2), rel=1e-9)
    # the Gaussian mechanism (p = 1, T = 1): mu = 2 Phi^-1(0.75), sigma = 1 / mu
    assert noise[0] == pytest.approx(1 / (2 * norm.ppf(0.75)), rel=2e-3)
    # the target met at noise_min within the tolerance: noise_min, as riskcal converges to it
    # noise_min 0.75, near the answer above (0.741)
    adv_at_min = cal.get_advantage_for_dpsgd(0.75, 1.0, 1, grid_step=1e-2)
    assert cal.find_noise_multiplier_for_advantage(adv_at_min + 5e-4, 1.0, 1, grid_step=1e-2, noise_min=0.75) == 0.75
    with pytest.raises(CalibrationError, match="met already at noise_min"):
        cal.find_noise_multiplier_for_advantage(adv_at_min + 0.05, 1.0, 1, grid_step=1e-2, noise_min=0.75)


# -- Rényi DP and zCDP -------------------------------------------------------------------------

ALPHAS = np.array([0.0, 1e-8, 1e-4, 0.01, 0.1, 0.3, 0.5, 0.8, 1.0])


@pytest.mark.parametrize("order,eps", [(0.3, 0.2), (0.7, 1.0), (1.0, 0.5), (2.0, 1.0), (64.0, 8.0)])
def test_rdp_curve_is_the_boundary_of_the_divergence_constraints(order, eps):
    beta = riskcal.analysis.get_beta_from_rdp(eps, ALPHAS, order)
    inner = (ALPHAS > 0) & (ALPHAS < 1) & (beta > 0)
    a, b = ALPHAS[inner], beta[inner]

    def worst(bb):  # the larger of the two binary Rényi divergences at (alpha, 1 - b)
        return np.maximum(_rdp.renyi_bernoulli(order, a, 1 - bb), _rdp.renyi_bernoulli(order, 1 - bb, a))

    assert np.all(worst(b) >= eps - 1e-9)  # beta errs low: at most on the boundary
    assert np.all(worst(b + 1e-8) <= eps + 1e-6)  # and just above it the constraints hold
    if order >= 0.5:  # dpax's engine conversion
        np.testing.assert_allclose(beta, dpax.conversions.rdp_tradeoff(order, eps, ALPHAS), atol=1e-12)


@pytest.mark.slow  # ~2 s (240 orders one by one); default siblings: test_zcdp_against_riskcal (the curve and advantage
# against riskcal's), analysis/test_rdp.py::test_max_rdp_tradeoff_is_the_maximum_of_the_one_order_curves (the pruned
# maximum is the plain one) and ::test_zcdp_fixed_point, analysis/test_analysis_conversions.py::
# test_zcdp_approximations_warn_and_are_the_exact_functions and ::test_closed_forms_at_their_edges (rho 0)
def test_zcdp_against_dpax_engine_and_gdp():
    ours = riskcal.analysis.get_beta_from_zcdp(0.5, ALPHAS)
    # the pruned maximum equals the plain maximum over every order (dpax's engine, one by one)
    orders = _rdp.zcdp_orders(1.0, 1024.0, 240)
    full = np.max([dpax.conversions.rdp_tradeoff(t, 0.5 * t, ALPHAS) for t in orders], axis=0)
    np.testing.assert_allclose(riskcal.analysis.get_beta_from_zcdp(0.5, ALPHAS, grid_size=240), full, atol=1e-9)
    np.testing.assert_allclose(ours, full, atol=1e-4)  # other orders: close
    # mu-GDP is (mu^2 / 2)-zCDP: the zCDP curve lies below f_mu and its advantage above
    assert np.all(ours <= dpax.gdp.tradeoff(1.0, ALPHAS) + 1e-12)
    adv = riskcal.analysis.get_advantage_from_zcdp(0.5)
    assert adv >= dpax.gdp.advantage(1.0)
    # the advantage is the largest 1 - alpha - beta(alpha), attained at the fixed point
    a = np.linspace(0.2, 0.35, 3001)
    best = np.max(1 - a - riskcal.analysis.get_beta_from_zcdp(0.5, a))
    assert best <= adv <= best + 1e-6
    with pytest.warns(DeprecationWarning, match="get_mu_from_zcdp_approx"):
        mu = riskcal.analysis.get_mu_from_zcdp_approx(0.5)
    assert dpax.gdp.advantage(mu) == pytest.approx(adv, abs=1e-12)
    a = np.concatenate([np.logspace(-10, -1, 91), np.linspace(0.1, 0.99, 90)])
    assert np.all(riskcal.analysis.get_beta_from_zcdp(0.5, a) >= dpax.gdp.tradeoff(mu, a) - 1e-9)
    assert riskcal.analysis.get_advantage_from_zcdp(0.0) == 0.0


def test_zcdp_against_riskcal():
    rc = _riskcal("riskcal.analysis")
    a = ALPHAS[(ALPHAS > 1e-9) & (ALPHAS < 1 - 1e-9)]  # riskcal rounds alpha <= tol to beta = 1
    for rho in (0.1, 2.0):
        ours, ref = riskcal.analysis.get_beta_from_zcdp(rho, a), rc.get_beta_from_zcdp(rho, a)
        assert np.all(ours <= ref + 1e-9) and np.all(ours >= ref - 1e-6)
        adv, ref_adv = riskcal.analysis.get_advantage_from_zcdp(rho), rc.get_advantage_from_zcdp(rho)
        assert ref_adv <= adv <= ref_adv + 1e-8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        # riskcal's fitted mu agrees where its fit is good (rho = 0.1)
        assert riskcal.analysis.get_mu_from_zcdp_approx(0.1) == pytest.approx(rc.get_mu_from_zcdp_approx(0.1), abs=1e-3)


# -- PLRVs -------------------------------------------------------------------------------------


def _randomized_response(eps):
    """Randomized response with budget eps on the grid of step eps: losses -1, 0, 1."""
    e = np.exp(eps)
    return riskcal.analysis.PLRVs(y0=-1, pmf_Y=np.array([1 / (1 + e), 0.0, e / (1 + e)]), infinity_mass_Y=0.0,
                                  x0=-1, pmf_X=np.array([e / (1 + e), 0.0, 1 / (1 + e)]), minus_infinity_mass_X=0.0,
                                  is_symmetric=True)


@pytest.mark.slow  # ~2 s; default siblings: analysis/test_analysis_plrv.py (get_beta on a hand-made pair against its
# closed form and riskcal, symmetric and symmetrised; to and from a PrivacyLoss),
# analysis/test_analysis_conversions.py::test_pld_to_plrvs_reads_the_pld_and_its_symmetry_flag (a PLD's PLRVs give
# its curve), test_plrvs_marked_symmetric_use_one_direction_as_riskcal (PLRVs built in riskcal's field order)
def test_plrvs_closed_form_and_round_trip():
    a = np.linspace(0, 1, 41)
    exact = np.maximum.reduce([np.zeros_like(a), 1 - np.e * a, np.exp(-1) * (1 - a)])  # (1, 0)-DP
    rr = _randomized_response(1.0)
    np.testing.assert_allclose(riskcal.analysis.get_beta_from_plrvs(rr, alpha=a), exact, atol=1e-12)
    rr.is_symmetric = False  # symmetrising a symmetric pair changes nothing
    np.testing.assert_allclose(riskcal.analysis.get_beta_from_plrvs(rr, alpha=a), exact, atol=1e-12)
    assert isinstance(riskcal.analysis.get_beta_from_plrvs(rr, alpha=0.1), float)
    # a PLD and its PLRVs give the same curve; positional construction in riskcal's field order (an asymmetric
    # pair: the subsampled step of test_plrvs_marked_symmetric_use_one_direction_as_riskcal, whose kernels serve)
    pl = dpax.subsampled_gaussian(0.8, 0.3, grid_step=1e-2)
    plrvs = riskcal.analysis.pld_to_plrvs(pl.to_dp_accounting())
    again = riskcal.analysis.PLRVs(plrvs.y0, plrvs.pmf_Y, plrvs.infinity_mass_Y, plrvs.x0, plrvs.pmf_X,
                                   plrvs.minus_infinity_mass_X, False)
    np.testing.assert_allclose(riskcal.analysis.get_beta_from_plrvs(again, alpha=a), pl.beta(a), atol=1e-12)
    with pytest.raises(ValueError, match="Must specify alpha"):
        riskcal.analysis.get_beta_from_plrvs(again)


def test_plrvs_marked_symmetric_use_one_direction_as_riskcal():
    plrv = _riskcal("riskcal.analysis._plrv")
    # an asymmetric pair (a subsampled step) marked symmetric: riskcal evaluates f = T(P, Q) only
    plrvs = riskcal.analysis.pld_to_plrvs(dpax.subsampled_gaussian(0.8, 0.3, grid_step=1e-2))
    plrvs.is_symmetric = True
    ref = plrv.PLRVs(plrvs.y0, plrvs.pmf_Y, plrvs.infinity_mass_Y, plrvs.x0, plrvs.pmf_X,
                     plrvs.minus_infinity_mass_X, True)
    a = np.linspace(0, 1, 101)
    np.testing.assert_allclose(riskcal.analysis.get_beta_from_plrvs(plrvs, alpha=a), plrv.get_beta(ref, alpha=a),
                               atol=1e-12)


# -- deprecations, as riskcal's ------------------------------------------------------------------


def test_deprecations_match_riskcal():
    name = "dpax.compat.riskcal.plrv"
    sys.modules.pop(name, None)
    vars(riskcal).pop("plrv", None)
    with pytest.warns(DeprecationWarning, match=r"riskcal\.plrv.*deprecated"):
        riskcal.plrv.get_beta  # noqa: B018  (reached as an attribute, as `riskcal.plrv.get_beta`)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # riskcal 1.5.1 marks these aliases but does not warn
        assert riskcal.analysis.get_beta_for_mu(1.0, 0.1) == riskcal.analysis.get_beta_from_gdp(1.0, 0.1)
        assert riskcal.analysis.get_epsilon_for_err_rates(1e-3, 0.01, 0.1) == pytest.approx(
            riskcal.analysis.get_epsilon_from_err_rates(1e-3, 0.01, 0.1), abs=0)
    for alias in ("get_beta_for_mu", "get_advantage_for_mu", "get_bayes_risk_for_mu", "get_beta_for_epsilon_delta",
                  "get_advantage_for_epsilon_delta", "get_epsilon_for_err_rates", "plrvs_from_pld"):
        assert getattr(riskcal.analysis, alias).__deprecated__ == "2.0.0"
    assert not hasattr(riskcal.analysis.get_beta_from_gdp, "__deprecated__")
    with pytest.warns(DeprecationWarning, match="get_beta_from_zcdp_approx"):
        riskcal.analysis.get_beta_from_zcdp_approx(0.5, 0.1)
    with pytest.warns(DeprecationWarning, match="'alphas'"):
        riskcal.analysis.get_beta_from_plrvs(_randomized_response(1.0), alphas=0.1)
    with pytest.raises(AttributeError):
        riskcal.no_such_name  # noqa: B018


def test_closed_forms_and_edges():
    a = riskcal.analysis
    # Bayes risk at the ends of the prior, and of the identity mechanism (mu = 0)
    assert a.get_bayes_risk_from_gdp(1.0, 0.0) == 0.0 and a.get_bayes_risk_from_gdp(1.0, 1.0) == 0.0
    np.testing.assert_allclose(a.get_bayes_risk_from_gdp(0.0, np.array([0.2, 0.7])), [0.2, 0.3])
    assert isinstance(a.get_bayes_risk_from_gdp(1.0, 0.5), float)
    # prior 1/2: (1 - advantage) / 2, up to the closed forms' one-sided margins (gdp.delta is an
    # upper bound within ~1e-11 relative, gdp.advantage within 3 ulps)
    assert a.get_bayes_risk_from_gdp(1.3, 0.5) == pytest.approx((1 - dpax.gdp.advantage(1.3)) / 2, abs=1e-12)
    assert a.get_epsilon_from_err_rates(0.0, 0.0, 0.5) == np.inf
    assert a.get_advantage_from_adp(0.0, 1e-3) == pytest.approx(1e-3, abs=1e-15)
