"""dpax.compat.riskcal / dpax.compat.gdpnum: the same calls through the real package and the
drop-in, on the same inputs and grid. Grids are coarse (1e-3) or step counts small, where the
oracles' own discretisation is accurate (see tests/test_oracles.py): beta within 5e-5 (dpax
never above), advantage within 1e-5, closed forms within 1e-12."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpax
from dpax.compat import gdpnum as dg
from dpax.compat import riskcal as dr

warnings.filterwarnings("ignore", category=DeprecationWarning)
rc_analysis = pytest.importorskip("riskcal.analysis")
rc_dpsgd = pytest.importorskip("riskcal.calibration.dpsgd")
gdpnum = pytest.importorskip("gdpnum")
pld_module = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")

STEP = 1e-3
ALPHAS = np.array([1e-3, 0.01, 0.05, 0.1, 0.3, 0.5])
#: cfg0 is the De et al. CIFAR-10 configuration of the gdpnum tests below (GDP_CONFIGS[0]): the
#: default riskcal tests run on its curve, so that its kernel shapes are compiled once for the
#: file (riskcal agrees with dpax there to ~2e-9); cfg1 (the default one before) is slow
CONFIGS = [(9.4, 16384 / 50000, 2000), (1.0, 0.01, 100), (2.0, 0.05, 300), (0.8, 0.2, 20)]


def _pld(s, p, t, step=STEP):
    return pld_module.from_gaussian_mechanism(
        standard_deviation=s, sampling_prob=p, use_connect_dots=True, value_discretization_interval=step
    ).self_compose(t)


# cfg1 to cfg3 (kernels of their own) are slow; default sibling: cfg0 (and the same
# drop-in functions on a PLD of their own in test_pld_functions_on_the_same_pld)
@pytest.mark.parametrize("cfg", [CONFIGS[0]] + [pytest.param(c, marks=pytest.mark.slow) for c in CONFIGS[1:]],
                         ids=["cfg0", "cfg1", "cfg2", "cfg3"])
def test_dpsgd_beta_and_advantage(cfg):
    s, p, t = cfg
    beta = dr.get_beta_for_dpsgd(s, p, t, ALPHAS, grid_step=STEP)
    ref = rc_dpsgd.get_beta_for_dpsgd(s, p, t, ALPHAS, grid_step=STEP)
    np.testing.assert_allclose(beta, ref, atol=5e-5, rtol=0)
    assert np.all(beta <= ref + 1e-7)
    adv = dr.get_advantage_for_dpsgd(s, p, t, grid_step=STEP)
    assert adv == pytest.approx(rc_dpsgd.get_advantage_for_dpsgd(s, p, t, grid_step=STEP), abs=1e-5)
    assert isinstance(adv, float)


def test_pld_functions_on_the_same_pld():
    # (0.9, 0.25, 15): its PLD has the support length of test_pld_converter_on_the_same_pld's (28672
    # points: the same beta and advantage kernels), and dpax and riskcal agree on it within the
    # tolerances below (observed: beta 6.7e-8, advantage 3e-13, Bayes risk 2e-13; on that test's
    # PLD, cfg0's, the advantages differ by 6e-9)
    pld = _pld(0.9, 0.25, 15)
    # the same PMFs: dpax and riskcal evaluate Algorithm 1 / 3 on identical input
    np.testing.assert_allclose(dr.get_beta_from_pld(pld, alpha=ALPHAS),
                               rc_analysis.get_beta_from_pld(pld, alpha=ALPHAS), atol=1e-7)
    assert dr.get_beta_from_pld(pld, 0.1) == pytest.approx(rc_analysis.get_beta_from_pld(pld, 0.1), abs=1e-7)
    assert dr.get_advantage_from_pld(pld) == pytest.approx(rc_analysis.get_advantage_from_pld(pld), abs=1e-9)
    prior = np.array([0.1, 0.3, 0.5, 0.8])
    np.testing.assert_allclose(dr.get_bayes_risk_from_pld(pld, prior), rc_analysis.get_bayes_risk_from_pld(pld, prior),
                               atol=1e-9)
    # a dpax PrivacyLoss is accepted in place of the PLD (cfg0's curve: the kernels of the test above)
    pl = dpax.dpsgd(*CONFIGS[0], grid_step=STEP)
    np.testing.assert_array_equal(dr.get_beta_from_pld(pl, alpha=ALPHAS), pl.beta(ALPHAS))
    with pytest.raises(ValueError, match="alpha"):
        dr.get_beta_from_pld(pld)
    with pytest.warns(DeprecationWarning):
        dr.get_beta_from_pld(pld, alphas=0.1)


def test_closed_forms():
    mu = 1.3
    np.testing.assert_allclose(dr.get_beta_from_gdp(mu, ALPHAS), rc_analysis.get_beta_from_gdp(mu, ALPHAS), atol=1e-12)
    assert dr.get_advantage_from_gdp(mu) == pytest.approx(rc_analysis.get_advantage_from_gdp(mu), abs=1e-12)
    prior = np.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(dr.get_bayes_risk_from_gdp(mu, prior), rc_analysis.get_bayes_risk_from_gdp(mu, prior),
                               atol=1e-12)
    np.testing.assert_allclose(dr.get_beta_from_adp(1.0, 1e-3, ALPHAS),
                               rc_analysis.get_beta_from_adp(1.0, 1e-3, ALPHAS), atol=1e-12)
    assert dr.get_advantage_from_adp(0.5, 1e-3) == pytest.approx(rc_analysis.get_advantage_from_adp(0.5, 1e-3),
                                                                 abs=1e-12)
    for d, a, b in [(1e-3, 1e-3, 0.8), (1e-5, 0.1, 0.5), (0.0, 0.3, 0.3)]:
        assert dr.get_epsilon_from_err_rates(d, a, b) == pytest.approx(rc_analysis.get_epsilon_from_err_rates(d, a, b),
                                                                       abs=1e-12)


def test_rdp_and_zcdp_curves():
    a = np.array([0.01, 0.1, 0.3, 0.6])
    # both are numerical optimisations of the same bound; dpax errs low (pessimistic)
    ours = dr.get_beta_from_rdp(1.0, a, order=4.0)
    ref = rc_analysis.get_beta_from_rdp(1.0, a, order=4.0)
    np.testing.assert_allclose(ours, ref, atol=1e-6)
    ours = dr.get_beta_from_zcdp(0.5, a)
    ref = rc_analysis.get_beta_from_zcdp(0.5, a)
    np.testing.assert_allclose(ours, ref, atol=1e-4)
    assert np.all(ours <= ref + 1e-9)


@pytest.mark.slow  # ~100 s on 2 shared cores (riskcal's bisection + dpax's compilation)
def test_calibration_to_advantage_and_err_rates():
    p, t = 0.01, 100
    ours = dr.find_noise_multiplier_for_advantage(0.1, p, t, grid_step=STEP)
    ref = rc_dpsgd.find_noise_multiplier_for_advantage(0.1, p, t, grid_step=STEP)
    assert ours == pytest.approx(ref, rel=1e-2)
    # dpax's answer meets the target and a 1% smaller noise does not (riskcal's evaluator)
    assert rc_dpsgd.get_advantage_for_dpsgd(ours, p, t, grid_step=STEP) <= 0.1 + 1e-5
    assert rc_dpsgd.get_advantage_for_dpsgd(ours * 0.99, p, t, grid_step=STEP) > 0.1
    ours = dr.find_noise_multiplier_for_err_rates(0.1, 0.5, p, t, grid_step=STEP)
    ref = rc_dpsgd.find_noise_multiplier_for_err_rates(0.1, 0.5, p, t, grid_step=STEP)
    assert ours == pytest.approx(ref, rel=1e-2)
    assert rc_dpsgd.get_beta_for_dpsgd(ours, p, t, 0.1, grid_step=STEP) >= 0.5 - 5e-5
    with pytest.raises(ValueError, match="infeasible|not met"):
        dr.find_noise_multiplier_for_err_rates(0.1, 0.899, p, t, grid_step=STEP, noise_max=2.0)


def test_riskcal_ctd_accountant():
    from riskcal.accountants import CTDAccountant

    ours, ref = dr.CTDAccountant(), CTDAccountant()
    for acct in (ours, ref):
        for _ in range(2000):  # CONFIGS[0], the kernels of the tests above and below
            acct.step(noise_multiplier=9.4, sample_rate=16384 / 50000)
    assert ours.history == ref.history and len(ours) == len(ref) == 2000
    # at ALPHAS (0.1 among them): the beta kernel of test_dpsgd_beta_and_advantage[cfg0]
    assert ours.get_beta(alpha=ALPHAS, grid_step=STEP) == pytest.approx(ref.get_beta(alpha=ALPHAS, grid_step=STEP),
                                                                        abs=5e-5)
    assert ours.get_epsilon(delta=1e-5, grid_step=STEP) == pytest.approx(ref.get_epsilon(delta=1e-5, grid_step=STEP),
                                                                         rel=1e-3)
    assert ours.get_advantage(grid_step=STEP) == pytest.approx(ref.get_advantage(grid_step=STEP), abs=1e-5)
    pld = ours.get_pld(grid_step=STEP)
    assert rc_analysis.get_advantage_from_pld(pld) == pytest.approx(ours.get_advantage(grid_step=STEP), abs=1e-9)
    assert ours.state_dict()["mechanism"] == ref.state_dict()["mechanism"] == "ctd"


#: (sigma, p, T): configurations with T large enough that the curve's far tail (FPR ~ 1e-10,
#: which sets mu) is resolved the same way by both constructions.
GDP_CONFIGS = [(9.4, 16384 / 50000, 2000), pytest.param((2.0, 0.01, 1000), marks=pytest.mark.slow)]
#: How far gdpnum's mu moves with the last bits of its input. It is set by the curve point
#: whose FPR is just above err = 1e-10: a tail sum of dp-accounting's FFT-composed masses,
#: whose absolute round-off (~6e-14 at every FPR on cfg0's curve) is ~6e-4 of it, and
#: d mu / d log FPR there is -1 / isf(1e-10) = -0.16, so mu moves by ~1e-4. On cfg0 gdpnum
#: gives 1.567104 with SciPy 1.13 to 1.15 and 1.567011 with 1.16 and 1.17 (its single-step
#: PMF differs in the last bits of SciPy's logsumexp and norm.logcdf), dpax 1.5670535 with
#: both; dpax's certified bracket at grid 2.5e-4 puts the true mu in [1.566941, 1.566954].
GDPNUM_MU_ROUNDOFF = 2e-4


@pytest.mark.parametrize("cfg", GDP_CONFIGS)
def test_mu_and_regret_for_dpsgd(cfg):
    s, p, t = cfg
    mu, regret = dg.get_mu_and_regret_for_dpsgd(s, p, t, grid_step=STEP)
    ref_mu, ref_regret = gdpnum.dpsgd.get_mu_and_regret_for_dpsgd(s, p, t, grid_step=STEP)
    assert mu == pytest.approx(ref_mu, rel=2.5e-2)
    assert mu >= ref_mu - GDPNUM_MU_ROUNDOFF  # pessimistic: never a smaller mu, up to gdpnum's round-off
    assert regret == pytest.approx(ref_regret, abs=1e-3)


def test_pld_converter_on_the_same_pld():
    pld = _pld(9.4, 16384 / 50000, 2000)
    ours, ref = dg.PLDConverter(pld), gdpnum.PLDConverter(pld)
    a = np.array([1e-4, 1e-3, 0.01, 0.1, 0.4])
    np.testing.assert_allclose(ours.get_beta(a), ref.get_beta(a), atol=1e-6)
    np.testing.assert_allclose(ours.tradeoff_function(a), ref.tradeoff_function(a), atol=1e-6)
    np.testing.assert_allclose(ours.inverse_tradeoff_function(a), ref.inverse_tradeoff_function(a), atol=1e-6)
    assert ours.get_advantage() == pytest.approx(ref.get_advantage(), abs=1e-7)
    assert len(ours.get_beta()) == len(ref.get_beta()) == 8
    mu, regret = ours.get_mu_and_regret()
    ref_mu, ref_regret = ref.get_mu_and_regret()
    # same PMFs; the two differ in how the far tail of the symmetrised curve is joined
    # (observed: mu 1.56646 vs 1.56701, regret 0.94e-3 vs 1.02e-3, far below Tier I 1e-2)
    assert mu == pytest.approx(ref_mu, rel=1e-3)
    assert regret == pytest.approx(ref_regret, abs=1.5e-4)  # gdpnum bisects on 10,000 fixed FPRs
    assert ours.get_mu() == mu
    # the symmetrised breakpoints describe the curve dpax reports
    np.testing.assert_allclose(np.interp(a, ours.alphas_symm, ours.betas_symm), ours.get_beta(a), atol=1e-9)


def test_worst_case_regret():
    a = np.linspace(0, 1, 201)
    b = dpax.gdp.tradeoff(1.0, a)  # a piecewise-linear curve through 1-GDP points
    for mu in (0.5, 0.8):
        ours = dg.get_worst_case_regret(a, b, mu)
        ref = gdpnum.get_worst_case_regret(a, b, mu)
        assert ours == pytest.approx(ref, abs=1e-4)
        assert ours >= ref - 1e-9  # gdpnum returns the lower end of its bisection


def test_gdpnum_ctd_accountant():
    ours, ref = dg.CTDAccountant(), gdpnum.CTDAccountant()
    for acct in (ours, ref):
        for _ in range(2000):
            acct.step(noise_multiplier=9.4, sample_rate=16384 / 50000)
    mu, regret = ours.get_mu_and_regret(grid_step=STEP)
    ref_mu, ref_regret = ref.get_mu_and_regret(grid_step=STEP)
    assert mu == pytest.approx(ref_mu, rel=1e-3) and regret == pytest.approx(ref_regret, abs=1e-4)
    np.testing.assert_allclose(ours.get_beta(grid_step=STEP), ref.get_beta(grid_step=STEP), atol=1e-4)
    assert ours.get_epsilon(delta=1e-5, grid_step=STEP) == pytest.approx(ref.get_epsilon(delta=1e-5, grid_step=STEP),
                                                                         rel=1e-3)
