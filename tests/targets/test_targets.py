"""Every risk target, on the Gaussian mechanism, against its closed form (Kulynych, Gomez,
Kaissis, du Pin Calmon and Troncoso, "Attack-aware noise calibration for differential privacy",
NeurIPS 2024, App. B: Corollaries B.3 / B.4, the analytic Gaussian of Balle & Wang; Table 1 for
accuracy and PPV; Dong et al. for GDP), and tightness at the requested grid both ways: the
returned noise meets the target, 0.5% less noise does not. Closed forms are computed here with
scipy alone."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

import dpax
from dpax.targets import GDP, PPV, Accuracy, Advantage, All, Epsilon, ErrRates, Reconstruction
from exact_refs import gdp_beta, gdp_delta

STEP = 1e-3
RTOL = 1e-4


def _gauss(s):
    return dpax.gaussian(s, grid_step=STEP)


def _exact_mu(target):
    """mu* of the Gaussian mechanism that just meets ``target`` (independent of dpax)."""
    if isinstance(target, Advantage):  # Corollary B.3
        return 2 * norm.ppf((1 + float(target.advantage)) / 2)
    if isinstance(target, Accuracy):  # Table 1: beta* = 2 (1 - acc) - alpha
        a = float(target.alpha)
        return norm.isf(a) - norm.ppf(2 * (1 - float(target.accuracy)) - a)
    if isinstance(target, PPV):  # ppv = (1 - b) / (1 - b + a) <= ppv*  <=>  b >= 1 - a ppv / (1 - ppv)
        a, v = float(target.alpha), float(target.ppv)
        return norm.isf(a) - norm.ppf(1 - a * v / (1 - v))
    if isinstance(target, Reconstruction):  # success <= 1 - f(kappa)
        return norm.isf(float(target.baseline)) - norm.ppf(1 - float(target.success))
    if isinstance(target, ErrRates):  # Corollary B.4
        return norm.isf(float(target.alpha)) - norm.ppf(float(target.beta))
    if isinstance(target, Epsilon):  # analytic Gaussian mechanism, Eq. 22
        e, d = float(target.epsilon), float(target.delta)
        return brentq(lambda m: gdp_delta(e, m) - d, 1e-3, 50, xtol=1e-15, rtol=1e-15)
    if isinstance(target, GDP):
        return float(target.mu)
    raise AssertionError(target)


def _risk_ok(target, sigma):
    """Does the Gaussian mechanism with noise sigma meet the target, by dpax at STEP?"""
    pl = _gauss(sigma)
    if isinstance(target, Advantage):
        return pl.advantage() <= float(target.advantage)
    if isinstance(target, Accuracy):
        a = float(target.alpha)
        return 0.5 * ((1 - a) + (1 - pl.beta(a))) <= float(target.accuracy)
    if isinstance(target, PPV):
        a = float(target.alpha)
        tpr = 1 - pl.beta(a)
        return tpr / (tpr + a) <= float(target.ppv)
    if isinstance(target, Reconstruction):
        return 1 - pl.beta(float(target.baseline)) <= float(target.success)
    if isinstance(target, ErrRates):
        return pl.beta(float(target.alpha)) >= float(target.beta)
    if isinstance(target, Epsilon):
        return pl.epsilon(float(target.delta)) <= float(target.epsilon)
    if isinstance(target, GDP):  # check on a dense alpha grid against G_mu
        alphas = np.concatenate([np.logspace(-12, -1, 200), np.linspace(0.1, 0.999, 300)])
        return bool(np.all(pl.beta(alphas) >= gdp_beta(alphas, float(target.mu)) - 1e-12))
    raise AssertionError(target)


#: every target's exact answer is noise 1.00 +- 0.5% (mu* 0.996..1.005): the mechanisms the checks
#: evaluate share their kernel shapes
TARGETS = [
    Advantage(0.383),  # mu* 1.0002
    ErrRates(alpha=0.1, beta=0.61),  # 1.0023
    ErrRates.from_tpr(alpha=0.01, tpr=0.092),  # 0.9978
    Accuracy(alpha=0.05, accuracy=0.605),  # 1.0015
    PPV(alpha=0.1, ppv=0.795),  # 0.9965
    Reconstruction(baseline=0.01, success=0.092),  # 0.9978
    Epsilon(epsilon=4.4, delta=1e-5),  # 1.0045
    GDP(mu=1.0),
]
IDS = ["adv", "err", "tpr", "acc", "ppv", "recon", "eps", "gdp"]


@pytest.mark.parametrize("target", TARGETS, ids=IDS)
def test_target_on_gaussian_matches_closed_form_and_is_tight(target):
    exact = 1.0 / _exact_mu(target)
    # the closed form dpax itself exposes (App. B) agrees with scipy to round-off
    assert dpax.calibrate_gaussian(target) == pytest.approx(exact, rel=1e-9)
    got = dpax.calibrate(_gauss, target, param_bounds=(0.05, 50), rtol=RTOL)
    assert isinstance(got, float)
    # the grid is pessimistic, so never less noise than the exact answer; and close to it
    assert got >= exact * (1 - 1e-9)
    assert got <= exact * (1 + 2e-3)
    # tight at the requested grid: meets the target, 0.5% less noise does not
    assert _risk_ok(target, got)
    assert not _risk_ok(target, 0.995 * got)


def test_derived_targets_are_err_rates():
    """Table 1 conversions: the derived beta* and the attack measures at it."""
    acc = Accuracy(alpha=0.05, accuracy=0.6)
    assert float(acc.beta) == pytest.approx(2 * 0.4 - 0.05)
    assert 0.5 * ((1 - 0.05) + (1 - float(acc.beta))) == pytest.approx(0.6)
    ppv = PPV(alpha=0.1, ppv=0.7)
    tpr = 1 - float(ppv.beta)
    assert tpr / (tpr + 0.1) == pytest.approx(0.7)
    rec = Reconstruction(baseline=0.01, success=0.1)
    assert float(rec.alpha) == 0.01 and float(rec.beta) == pytest.approx(0.9)


def test_all_targets_meets_every_one():
    """Several targets on one row (a list or All): the answer is the largest single answer."""
    # the first binds, at TARGETS' noise (1/1.0002); the others need 0.2% and 0.5% less (TARGETS' ErrRates, and GDP
    # just above TARGETS' mu): every search and check on TARGETS' kernels
    parts = [Advantage(0.383), ErrRates(alpha=0.1, beta=0.61), GDP(mu=1.005)]
    singles = [dpax.calibrate(_gauss, t, param_bounds=(0.05, 50)) for t in parts]
    both = dpax.calibrate(_gauss, parts, param_bounds=(0.05, 50))
    assert both == pytest.approx(max(singles), rel=2 * RTOL)
    assert dpax.calibrate(_gauss, All(*parts), param_bounds=(0.05, 50)) == both
    assert all(_risk_ok(t, both) for t in parts)
    assert not all(_risk_ok(t, 0.995 * both) for t in parts)
    exact = max(1.0 / _exact_mu(t) for t in parts)
    assert dpax.calibrate_gaussian(parts) == pytest.approx(exact, rel=1e-9)


def test_batched_targets_and_configuration_args():
    """Arrays in target fields and in args broadcast; one search for the whole batch."""
    adv = np.array([0.37, 0.383, 0.4])  # mu* 0.96, 1.00, 1.05: about TARGETS' noise, whose kernels serve
    sens = np.array([[1.0], [2.0]])
    # bounds (0.05, 50), the closed-form tests' (answers 0.95..2.08): at (0.05, 100) the search's
    # first rounds took 3 kernel shapes more
    got = dpax.calibrate(lambda s, c: dpax.gaussian(s, sensitivity=c, grid_step=STEP), Advantage(adv), args=(sens,),
                         param_bounds=(0.05, 50))
    assert got.shape == (2, 3)
    exact = sens / (2 * norm.ppf((1 + adv) / 2))
    assert np.all(got >= exact * (1 - 1e-9)) and np.all(got <= exact * (1 + 2e-3))
    for (i, j), s in np.ndenumerate(got):
        assert dpax.gaussian(s, sensitivity=sens[i, 0], grid_step=STEP).advantage() <= adv[j]
        assert dpax.gaussian(0.995 * s, sensitivity=sens[i, 0], grid_step=STEP).advantage() > adv[j]


def test_decreasing_family_randomised_parameter():
    """A family less private in its parameter (privacy='decreasing'): the largest sensitivity
    a unit-noise Gaussian can take for advantage 0.383 (TARGETS' advantage: the same mechanisms)
    is mu* = 2 Phi^-1(1.383 / 2)."""
    fam = lambda c: dpax.gaussian(1.0, sensitivity=c, grid_step=STEP)
    # sensitivity c at unit noise is noise 1 / c: bounds (0.02, 20) search the noises (0.05, 50) of
    # the closed-form tests, with their kernels
    res = dpax.calibrate(fam, Advantage(0.383), param_bounds=(0.02, 20), privacy="decreasing", full_output=True)
    c = res.noise_multiplier
    assert res.status == "calibrated"
    exact = 2 * norm.ppf(1.383 / 2)
    assert exact * (1 - 2e-3) <= c <= exact * (1 + 1e-9)
    assert fam(c).advantage() <= 0.383 < fam(1.005 * c).advantage()
    assert res.achieved["advantage"] == pytest.approx(fam(c).advantage(), abs=1e-12)


def test_infeasible_rows_marked_in_batch_and_raised_alone():
    # TARGETS' advantage and the closed-form tests' bounds: their kernels serve
    fam = lambda s: dpax.gaussian(s, grid_step=STEP)
    res = dpax.calibrate(fam, Advantage([0.383, 0.001]), param_bounds=(0.05, 50), full_output=True)
    assert list(res.status) == ["calibrated", "infeasible"]
    assert np.isnan(res.noise_multiplier[1]) and "not met" in res.reason[1] and "50" in res.reason[1]
    assert res.noise_multiplier[0] == pytest.approx(1 / (2 * norm.ppf(1.383 / 2)), rel=2e-3)
    with pytest.raises(ValueError, match=r"row \[1\].*not met even at"):
        dpax.calibrate(fam, Advantage([0.383, 0.001]), param_bounds=(0.05, 50), on_infeasible="raise")
    # bounds (1, 2.5): the closed-form tests' first guess (their geometric mean, 1.58) and TARGETS' noise 1 at the
    # least private end, so the searches below walk on their kernels (bounds (0.05, 50) and (0.5, 10): 12 compilations)
    with pytest.raises(ValueError, match="calibrate: the target: the target is not met"):
        dpax.calibrate(fam, Advantage(0.001), param_bounds=(1.0, 2.5))
    # the least private end of the bounds already meets it: an answer, with a flag
    res = dpax.calibrate(fam, Advantage(0.9), param_bounds=(1.0, 2.5), full_output=True)
    assert res.status == "met_at_bound" and res.noise_multiplier == 1.0


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Accuracy(alpha=0.1, accuracy=0.5), "accuracy"),
        (lambda: Accuracy(alpha=0.1, accuracy=0.96), "accuracy"),
        (lambda: PPV(alpha=0.1, ppv=0.4), "ppv"),
        (lambda: PPV(alpha=0.1, ppv=0.95), "ppv"),
        (lambda: Reconstruction(baseline=0.2, success=0.1), "success"),
        (lambda: GDP(mu=0.0), "mu"),
        (lambda: ErrRates(alpha=[0.1, 0.6], beta=0.5), r"alpha \+ beta.*row \[1\]"),
        (lambda: All(), "at least one"),
        (lambda: All(Advantage(0.1), 0.5), "targets"),
    ],
)
def test_target_validation(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_calibrate_rejects_non_target():
    with pytest.raises(TypeError, match="target"):
        dpax.calibrate(_gauss, 0.5)


# --------------------------------------------------------------------------------------
# black-box calibration (Appendix A) from an epsilon(delta) / delta(epsilon) accountant
# --------------------------------------------------------------------------------------


def _delta_acct(s, eps):  # the Gaussian mechanism's exact privacy profile (Eq. 22)
    return gdp_delta(np.asarray(eps), 1.0 / s)


def _eps_acct(s, deltas):
    mu = 1.0 / s
    return np.array([brentq(lambda e, d=d: gdp_delta(e, mu) - d, 0.0, 200.0) if gdp_delta(0.0, mu) > d else 0.0
                     for d in deltas])


def test_blackbox_advantage_is_exact_from_delta_at_zero():
    """Eq. 19: delta_w(0) <= eta*; exact for the Gaussian (Corollary B.3)."""
    got = dpax.calibrate_blackbox(Advantage(0.2), delta=_delta_acct, rtol=1e-5)
    exact = 1 / (2 * norm.ppf(0.6))
    assert exact * (1 - 1e-9) <= got <= exact * (1 + 2e-5)


@pytest.mark.parametrize("kind", ["delta", "epsilon"])
def test_blackbox_err_rates_is_safe_and_close(kind):
    """Eq. 20 lower-bounds the curve, so the noise is never below the exact answer."""
    kw = {"delta": _delta_acct} if kind == "delta" else {"epsilon": _eps_acct, "deltas": np.geomspace(1e-8, 0.9, 60)}
    got = dpax.calibrate_blackbox(ErrRates(alpha=0.1, beta=0.5), rtol=1e-4, **kw)
    exact = 1 / (norm.isf(0.1) - norm.ppf(0.5))
    assert exact * (1 - 1e-9) <= got <= exact * 1.02
    assert gdp_beta(0.1, 1 / got) >= 0.5


def test_blackbox_epsilon_and_infeasible():
    got = dpax.calibrate_blackbox(Epsilon(1.0, 1e-5), delta=_delta_acct, rtol=1e-6)
    assert got == pytest.approx(1.0 / _exact_mu(Epsilon(1.0, 1e-5)), rel=2e-6)
    out = dpax.calibrate_blackbox(Advantage([0.2, 1e-4]), delta=_delta_acct, noise_bounds=(0.1, 10))
    assert np.isfinite(out[0]) and np.isnan(out[1])
    with pytest.raises(TypeError, match="exactly one"):
        dpax.calibrate_blackbox(Advantage(0.2))


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


@pytest.mark.parametrize("index", [[], np.array([], int), slice(1, 1), np.zeros(2, bool)])
def test_take_of_no_rows_says_so(index):
    """An index that selects no row was refused as "advantage must not be empty" (the rebuilt
    target's own check): the message now names the index and the rows it could select."""
    for target in (Advantage([0.1, 0.2]), All(Advantage([0.1, 0.2]), GDP(1.0)).flat((2,))):
        with pytest.raises(ValueError, match=r"index .* selects none of the 2 rows of the target; select at least one"):
            target.take(index)
    with pytest.raises(IndexError, match=r"index .* is not an index into a batch of shape \(2,\)"):
        Advantage([0.1, 0.2]).take([5])
    assert Advantage([0.1, 0.2]).take(np.array([True, False])).advantage.tolist() == [0.1]
    assert ErrRates([0.01, 0.1], 0.5).take([1]).alpha.tolist() == [0.1]  # beta broadcast to the rows
