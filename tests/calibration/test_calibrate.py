"""Calibration: the smallest noise that meets a risk target, against riskcal, dp-accounting
and the Gaussian closed forms; tightness checked both ways (the answer meets the target,
0.5% less noise does not)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import ndtri
from scipy.stats import norm

import dpax
from dpax.targets import Advantage, Epsilon, ErrRates
from exact_refs import gdp_advantage, gdp_beta, gdp_epsilon, oracle_epsilon

P, T = 0.001, 10000


def _riskcal(fn, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(**kwargs)


# --------------------------------------------------------------------------------------
# ErrRates(alpha=0.1, beta=0.5), p=0.001, T=10000 (the running example of Kulynych, Gomez,
# Kaissis, du Pin Calmon and Troncoso, "Attack-aware noise calibration for differential
# privacy", NeurIPS 2024)
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def err_rates_1e3():
    return dpax.calibrate_dpsgd(
        sample_rate=P, num_steps=T, target=ErrRates(alpha=0.1, beta=0.5), grid_step=1e-3,
        compare_standard=True, standard_delta=1e-5,
    )


@pytest.mark.slow  # riskcal's search, 13 s; the answer is checked against riskcal's beta below
def test_err_rates_matches_riskcal(err_rates_1e3):
    """riskcal's find_noise_multiplier_for_err_rates at the same grid (0.40495 observed;
    dpax 0.40514): within 0.5%."""
    from riskcal.calibration.dpsgd import find_noise_multiplier_for_err_rates

    ref = _riskcal(find_noise_multiplier_for_err_rates, alpha=0.1, beta=0.5, sample_rate=P, num_steps=T, grid_step=1e-3)
    res = err_rates_1e3
    assert res.status == "calibrated"
    assert res.noise_multiplier == pytest.approx(ref, rel=5e-3)


def test_err_rates_answer_is_tight(err_rates_1e3):
    from riskcal.calibration.dpsgd import get_beta_for_dpsgd

    res = err_rates_1e3
    s = res.noise_multiplier
    assert isinstance(s, float) and 0.1 < s < 2.0
    # meets the target at the requested grid, by dpax itself ...
    beta = dpax.dpsgd(s, P, T, grid_step=1e-3).beta(0.1)
    assert beta >= 0.5
    assert res.achieved["beta"] == pytest.approx(beta, abs=1e-12)
    # ... and by the oracle (accurate at this grid to ~2e-6)
    assert _riskcal(get_beta_for_dpsgd, noise_multiplier=s, sample_rate=P, num_steps=T, alpha=0.1,
                    grid_step=1e-3) >= 0.5 - 1e-4
    # 0.5% less noise does not meet it
    assert dpax.dpsgd(0.995 * s, P, T, grid_step=1e-3).beta(0.1) < 0.5
    # the reported failing end of the bracket fails, within rtol
    lo = res.noise_multiplier_failing
    assert lo < s <= lo * (1 + res.rtol) * (1 + 1e-12)
    assert dpax.dpsgd(lo, P, T, grid_step=1e-3).beta(0.1) < 0.5


def test_err_rates_standard_comparison(err_rates_1e3):
    """Standard calibration to the epsilon that guarantees the same (alpha, beta) bound via
    (eps, delta)-DP needs more noise (the point of attack-aware calibration)."""
    res = err_rates_1e3
    delta = 1e-5
    expected_eps = max(np.log((1 - delta - 0.5) / 0.1), np.log((1 - delta - 0.1) / 0.5))
    assert res.standard_epsilon == pytest.approx(expected_eps, rel=1e-12)
    assert res.standard_noise_multiplier > res.noise_multiplier * 1.2
    # the standard noise really is (eps, delta)-DP calibrated
    s = res.standard_noise_multiplier
    assert dpax.dpsgd(s, P, T, grid_step=1e-3).epsilon(delta) <= expected_eps
    assert dpax.dpsgd(0.995 * s, P, T, grid_step=1e-3).epsilon(delta) > expected_eps
    assert 0 < res.noise_reduction < 1


@pytest.mark.slow
def test_err_rates_matches_riskcal_grid_1e4():
    """Same at grid 1e-4 (riskcal takes ~250 s here). riskcal's beta is optimistic at this
    grid (see test_oracles), so its noise can only be lower; still within 0.5%."""
    from riskcal.calibration.dpsgd import find_noise_multiplier_for_err_rates

    res = dpax.calibrate_dpsgd(sample_rate=P, num_steps=T, target=ErrRates(alpha=0.1, beta=0.5), grid_step=1e-4,
                               compare_standard=False)
    ref = _riskcal(find_noise_multiplier_for_err_rates, alpha=0.1, beta=0.5, sample_rate=P, num_steps=T, grid_step=1e-4)
    assert res.noise_multiplier == pytest.approx(ref, rel=5e-3)
    assert dpax.dpsgd(res.noise_multiplier, P, T, grid_step=1e-4).beta(0.1) >= 0.5
    assert dpax.dpsgd(0.995 * res.noise_multiplier, P, T, grid_step=1e-4).beta(0.1) < 0.5


# --------------------------------------------------------------------------------------
# Advantage and Epsilon targets
# --------------------------------------------------------------------------------------


#: an advantage (standard epsilon 1 by Proposition 2.6, delta 1e-5) whose noise (~0.39) is near the
#: ErrRates fixture's (0.405), so the fixture's kernels serve
ADV = (np.e - 1 + 2e-5) / (np.e + 1)


@pytest.mark.slow  # kernels of its own (10 compilations); default siblings: tests/targets/test_targets.py::
# test_target_on_gaussian_matches_closed_form_and_is_tight[adv] (an Advantage calibration meets the target, 0.5% less
# noise does not), tests/compat/riskcal/test_riskcal_dpax_checks.py::test_dpsgd_calibration_bounds_and_batches
# (calibrate_dpsgd's Advantage search against the closed form), test_err_rates_standard_comparison (the standard
# comparison) and test_met_without_noise (Proposition 2.6's standard epsilon of an Advantage target)
def test_advantage_target_is_tight():
    res = dpax.calibrate_dpsgd(sample_rate=P, num_steps=T, target=Advantage(ADV), grid_step=1e-3, compare_standard=True)
    s = res.noise_multiplier
    assert dpax.dpsgd(s, P, T, grid_step=1e-3).advantage() <= ADV
    assert res.achieved["advantage"] <= ADV
    assert dpax.dpsgd(0.995 * s, P, T, grid_step=1e-3).advantage() > ADV
    # Proposition 2.6: advantage <= (e^eps - 1 + 2 delta) / (e^eps + 1)
    assert res.standard_epsilon == pytest.approx(np.log((1 + ADV - 2e-5) / (1 - ADV)), rel=1e-12)
    assert res.standard_noise_multiplier > s


@pytest.mark.slow
def test_advantage_target_matches_riskcal():
    """Slow (riskcal's own search); the default run checks advantage calibration's tightness in
    test_advantage_target_is_tight, and dpax's advantage against riskcal's in
    tests/compat/test_compat.py::test_dpsgd_beta_and_advantage[cfg0]."""
    from riskcal.calibration.dpsgd import find_noise_multiplier_for_advantage

    s = dpax.calibrate_dpsgd(sample_rate=P, num_steps=T, target=Advantage(0.1), grid_step=1e-3,
                             compare_standard=False).noise_multiplier
    ref = _riskcal(find_noise_multiplier_for_advantage, advantage=0.1, sample_rate=P, num_steps=T, grid_step=1e-3)
    assert s == pytest.approx(ref, rel=5e-3)


@pytest.mark.slow  # kernels of its own (11 compilations); default siblings: test_err_rates_standard_comparison (the
# fixture's standard comparison is calibrate_dpsgd's Epsilon search: it meets epsilon, 0.5% less noise does not),
# tests/test_oracles.py::test_dpsgd_matches_dp_accounting_and_riskcal (dpax's DP-SGD epsilon against dp-accounting),
# test_met_without_noise (an Epsilon target's standard answer is the answer itself)
def test_epsilon_target_agrees_with_dp_accounting():
    """Standard calibration to (eps=12.3, delta=1e-5): dp-accounting's epsilon at the returned
    noise (same grid) meets the target to 1e-3, and at 0.5% less noise it does not. (Epsilon
    12.3 needs about the ErrRates fixture's noise, 0.405, epsilon 12.32 there: its kernels serve.)"""
    eps = 12.3
    target = Epsilon(epsilon=eps, delta=1e-5)
    res = dpax.calibrate_dpsgd(sample_rate=P, num_steps=T, target=target, grid_step=1e-3)
    s = res.noise_multiplier
    assert res.achieved["epsilon"] <= eps
    assert dpax.dpsgd(s, P, T, grid_step=1e-3).epsilon(1e-5) <= eps
    assert dpax.dpsgd(0.995 * s, P, T, grid_step=1e-3).epsilon(1e-5) > eps
    assert oracle_epsilon(s, P, T, 1e-3, 1e-5) <= eps * (1 + 1e-3)
    assert oracle_epsilon(0.995 * s, P, T, 1e-3, 1e-5) > eps
    # for an Epsilon target the "standard" answer is the answer itself
    assert res.standard_noise_multiplier == pytest.approx(s)
    assert res.standard_epsilon == pytest.approx(eps)


# --------------------------------------------------------------------------------------
# subsampling alone meets the target
# --------------------------------------------------------------------------------------


def test_met_without_noise():
    """p=1e-4, T=10: a record is used at all with probability q = 1 - (1 - p)^10 ~ 1e-3, so
    without noise beta(0.1) = (1 - q) * 0.9 > 0.5."""
    res = dpax.calibrate_dpsgd(sample_rate=1e-4, num_steps=10, target=ErrRates(alpha=0.1, beta=0.5), grid_step=1e-3,
                               compare_standard=False)
    assert res.status == "met_without_noise"
    assert res.noise_multiplier == 0.0
    q = 1 - (1 - 1e-4) ** 10
    assert res.achieved["beta"] == pytest.approx((1 - q) * 0.9, rel=1e-12)

    res = dpax.calibrate_dpsgd(sample_rate=1e-4, num_steps=10, target=Advantage(0.01), grid_step=1e-3,
                               compare_standard=False)
    assert res.status == "met_without_noise" and res.noise_multiplier == 0.0
    assert res.achieved["advantage"] == pytest.approx(q, rel=1e-12)
    # Proposition 2.6: the standard epsilon of an advantage target (at the default delta 1e-5)
    assert res.standard_epsilon == pytest.approx(np.log((1 + 0.01 - 2e-5) / (1 - 0.01)), rel=1e-12)

    # an Epsilon target (q <= delta): its standard answer is the answer itself
    res = dpax.calibrate_dpsgd(sample_rate=1e-4, num_steps=10, target=Epsilon(1.0, 0.01), grid_step=1e-3)
    assert res.status == "met_without_noise" and res.noise_multiplier == 0.0
    assert res.standard_noise_multiplier == res.noise_multiplier and res.standard_epsilon == 1.0


def test_batch_mixes_statuses():
    """A batch: row 0 needs no noise, row 1 is calibrated; the same answers as one at a time."""
    # row 1 is the running example (P, T): the kernels of err_rates_1e3 serve
    res = dpax.calibrate_dpsgd(
        sample_rate=[1e-4, P], num_steps=[10, T], target=ErrRates(alpha=0.1, beta=0.5),
        grid_step=1e-3, compare_standard=False,
    )
    assert list(res.status) == ["met_without_noise", "calibrated"]
    assert np.shape(res.noise_multiplier) == (2,)
    assert res.noise_multiplier[0] == 0.0
    single = dpax.calibrate_dpsgd(sample_rate=P, num_steps=T, target=ErrRates(alpha=0.1, beta=0.5), grid_step=1e-3,
                                  compare_standard=False)
    assert res.noise_multiplier[1] == pytest.approx(single.noise_multiplier, rel=2e-4)
    s = res.noise_multiplier[1]
    assert dpax.dpsgd(s, P, T, grid_step=1e-3).beta(0.1) >= 0.5
    assert dpax.dpsgd(0.995 * s, P, T, grid_step=1e-3).beta(0.1) < 0.5


# --------------------------------------------------------------------------------------
# generic calibrate() on the Gaussian family, against the GDP closed forms
# --------------------------------------------------------------------------------------


def _gauss(s):
    return dpax.gaussian(s, grid_step=1e-3)


#: search bounds whose first round of candidates (geometric guess sqrt(lo hi), halved and doubled) shares the kernel
#: shapes of tests/targets/test_targets.py's Gaussian checks (bounds (0.05, 50)): (0.05, 45) starts at 0.75..3.0,
#: holding the answers 0.78..1.97 (support length 28672 at the grid 1e-3); (1, 64) starts at 4..16, holding 7.97 (5120)
NEAR_ONE, LARGE = (0.05, 45), (1, 64)


@pytest.mark.parametrize(
    "target, mu, bounds",
    [
        (Advantage(0.2), 2 * ndtri((1 + 0.2) / 2), NEAR_ONE),
        (Advantage(0.05), 2 * ndtri((1 + 0.05) / 2), LARGE),
        (ErrRates(alpha=0.1, beta=0.5), norm.isf(0.1) - norm.ppf(0.5), NEAR_ONE),
        (ErrRates.from_tpr(alpha=0.01, tpr=0.15), norm.isf(0.01) - norm.ppf(0.85), NEAR_ONE),
        # an epsilon kernel of its own; default siblings: the cases above (calibrate within rtol of the closed form,
        # on the safe side) and
        # tests/targets/test_targets.py::test_target_on_gaussian_matches_closed_form_and_is_tight[eps]
        # (an Epsilon target on the Gaussian against the analytic Gaussian mechanism, tight both ways)
        pytest.param(Epsilon(1.0, 1e-5), None, (0.1, 100), marks=pytest.mark.slow),
    ],
    ids=["adv0.2", "adv0.05", "err0.1-0.5", "tpr0.15@0.01", "eps1"],
)
def test_calibrate_gaussian_closed_form(target, mu, bounds):
    if mu is None:  # the mu whose GDP epsilon at delta is the target epsilon
        from scipy.optimize import brentq

        mu = brentq(lambda m: gdp_epsilon(1e-5, m) - 1.0, 0.01, 10, xtol=1e-14)
    exact = 1.0 / mu
    rtol = 1e-4
    got = dpax.calibrate(_gauss, target, param_bounds=bounds, rtol=rtol)
    assert isinstance(got, float)
    # on the safe side (never less noise than the exact answer), and within rtol of it
    assert got >= exact * (1 - 1e-9)
    assert got <= exact * (1 + rtol) * (1 + 1e-6)
    # and the closed forms agree that it meets the target
    m = 1.0 / got
    if isinstance(target, Advantage):
        assert gdp_advantage(m) <= float(target.advantage)
    elif isinstance(target, ErrRates):
        assert gdp_beta(float(target.alpha), m) >= float(target.beta)


def test_calibrate_gaussian_refuses_a_noise_outside_float64():
    """sensitivity / mu* of 0 (underflow) or inf (overflow) is no calibrated noise: a ValueError
    naming it, where 0 and inf were returned."""
    with pytest.raises(ValueError, match="calibrate_gaussian: the noise sensitivity / mu.*outside float64"):
        dpax.calibrate_gaussian(Advantage(0.9), sensitivity=5e-324)  # mu* 3.29
    with pytest.raises(ValueError, match="outside float64"):
        dpax.calibrate_gaussian(dpax.targets.GDP(5e-324))
    assert dpax.calibrate_gaussian(dpax.targets.GDP(1e300)) == 1e-300  # tiny, but a positive float


def test_calibrate_rejects_target_out_of_range():
    # Advantage(0.2) needs noise 1.97; every candidate in (0.79, 1.9) has the support length (28672) of the cases above
    with pytest.raises(ValueError, match="upper search bound|bound"):
        dpax.calibrate(_gauss, Advantage(0.2), param_bounds=(0.79, 1.9))


@pytest.mark.parametrize("candidates, per_row", [(3, 9.0), (4, 6.5)])
def test_bracket_search_interpolates_the_root_and_closes_in_few_rounds(candidates, per_row):
    """A smooth monotone margin (a Gaussian CDF in log-parameter), 200 rows, the fine phase's
    kind of starting bracket (-3%, +4.5%): every answer meets, every lower end fails, hi / lo
    - 1 <= rtol, and the cubic interpolation with its tight pair needs few evaluations per
    row (observed 8.15 for 3 candidates, 6.0 for 4; the regula falsi search it replaced
    took 12.0 and 16.3)."""
    from dpax._engine.search import bracket_search

    roots = 10 ** np.random.default_rng(0).uniform(-1, 1, 200)

    def evaluate(params, rows):
        return norm.cdf(5 * np.log(params / roots[rows]) - 1.0) - norm.cdf(-1.0)

    hi, lo, evaluations, infeasible = bracket_search(
        evaluate, roots * 0.97, roots * 1.045, bounds=(1e-3, 1e3), rtol=1e-4, candidates=candidates, what="test")
    assert not infeasible.any()
    assert np.all(evaluate(hi, np.arange(200)) >= 0) and np.all(evaluate(lo, np.arange(200)) < 0)
    assert np.all(hi / lo - 1 <= 1e-4 * (1 + 1e-9))
    assert evaluations / roots.size <= per_row


def test_identical_rows_are_calibrated_once():
    """A batch that repeats a configuration searches for it once: every copy gets the answer
    the configuration has alone, and the work (evaluations) is that of the distinct rows.
    (The configuration of tests/engine/test_work.py's calibration: its kernels are shared.)"""
    kw = dict(num_steps=10_000, grid_step=1e-2, compare_standard=False)
    alone = dpax.calibrate_dpsgd(sample_rate=1e-3, target=dpax.targets.ErrRates(0.1, 0.5), **kw)
    batch = dpax.calibrate_dpsgd(sample_rate=[[1e-3, 1e-3], [1e-3, 1e-3]], target=dpax.targets.ErrRates(0.1, 0.5), **kw)
    assert batch.noise_multiplier.shape == (2, 2)
    np.testing.assert_array_equal(batch.noise_multiplier, alone.noise_multiplier)
    np.testing.assert_array_equal(batch.noise_multiplier_failing, alone.noise_multiplier_failing)
    for name, value in alone.achieved.items():
        np.testing.assert_array_equal(batch.achieved[name], value)
    assert batch.evaluations == alone.evaluations
    assert (batch.status == "calibrated").all()


def test_bounds_is_the_deprecated_name_of_the_search_range():
    """calibrate's search range is param_bounds (calibrate_blackbox's noise_bounds); bounds=,
    the name bounds=True keeps for certified brackets, still works for one release, with a
    DeprecationWarning, and passing both is refused."""
    fam = lambda s: dpax.gaussian(s, grid_step=1e-2)
    new = dpax.calibrate(fam, dpax.targets.Advantage(0.2), param_bounds=(0.5, 5.0))
    with pytest.warns(DeprecationWarning, match="param_bounds"):
        old = dpax.calibrate(fam, dpax.targets.Advantage(0.2), bounds=(0.5, 5.0))
    assert old == new
    with pytest.raises(TypeError, match="param_bounds"):
        dpax.calibrate(fam, dpax.targets.Advantage(0.2), param_bounds=(0.5, 5.0), bounds=(0.5, 5.0))
    eps = lambda w, deltas: dpax.gdp.epsilon(deltas, 1.0 / w)
    with pytest.warns(DeprecationWarning, match="noise_bounds"):
        old = dpax.calibrate_blackbox(dpax.targets.Advantage(0.2), epsilon=eps, bounds=(0.5, 5.0))
    assert old == dpax.calibrate_blackbox(dpax.targets.Advantage(0.2), epsilon=eps, noise_bounds=(0.5, 5.0))


# slow (~5 s: a search at a support of its own); default sibling:
# tests/mechanisms/test_mechanisms.py::test_the_least_noise_stays_exact_on_a_grid_padded_past_709_nats
@pytest.mark.slow
def test_a_calibration_at_the_least_noise_meets_its_target():
    """The search's lower end at the least Gaussian noise (a padded grid past 709 nats): the
    noise it returns meets the target (it returned 0.0377, whose epsilon is 464 > 450, as
    already met) and is within rtol of the closed form."""
    r = dpax.calibrate_dpsgd(sample_rate=1.0, num_steps=1, target=dpax.targets.Epsilon(450, 1e-5), grid_step=1e-2,
                             noise_bounds=(0.0377, 10), compare_standard=False)
    exact = dpax.calibrate_gaussian(dpax.targets.Epsilon(450, 1e-5))
    assert r.status == "calibrated" and exact <= r.noise_multiplier <= exact * (1 + 1e-3)
    assert r.achieved["epsilon"] <= 450
