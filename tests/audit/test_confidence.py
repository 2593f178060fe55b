"""dpax.audit.confidence: audit bounds from attack counts. Clopper-Pearson against scipy, the
audit example of Tramèr et al. (2022), the epsilon / mu lower bounds against their definitions,
and their coverage."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

import dpax
from dpax import audit as A

CP_CASES = [(0, 10), (1, 10), (5, 10), (10, 10), (0, 1), (1, 1), (174, 100000), (95078, 100000),
            (3, 1000), (997, 1000), (12345, 54321), (0, 100000), (100000, 100000)]
CONFIDENCES = [0.5, 0.9, 0.95, 0.99, 1 - 1e-6]


@pytest.mark.parametrize("conf", CONFIDENCES)
def test_clopper_pearson_matches_scipy_exact_interval(conf):
    k = np.array([c[0] for c in CP_CASES])
    n = np.array([c[1] for c in CP_CASES])
    lo, hi = A.clopper_pearson(k, n, conf)
    assert lo.shape == hi.shape == k.shape
    for i, (kk, nn) in enumerate(CP_CASES):
        ref = stats.binomtest(int(kk), int(nn)).proportion_ci(conf, method="exact")
        assert abs(lo[i] - ref.low) <= 1e-10 and abs(hi[i] - ref.high) <= 1e-10, (kk, nn, lo[i], hi[i], ref)
        # one-sided limits are scipy's one-sided exact intervals
        up = stats.binomtest(int(kk), int(nn), alternative="less").proportion_ci(conf, method="exact")
        dn = stats.binomtest(int(kk), int(nn), alternative="greater").proportion_ci(conf, method="exact")
        assert abs(A.clopper_pearson(kk, nn, conf, alternative="upper")[1] - up.high) <= 1e-10
        assert abs(A.clopper_pearson(kk, nn, conf, alternative="lower")[0] - dn.low) <= 1e-10


def test_clopper_pearson_broadcasts_and_returns_floats():
    lo, hi = A.clopper_pearson(3, 10)
    assert isinstance(lo, float) and isinstance(hi, float)
    lo, hi = A.clopper_pearson([[1], [2]], [10, 20, 30], [0.9, 0.95, 0.99])
    assert lo.shape == hi.shape == (2, 3) and np.all(lo < hi)


def test_tramer_audit_example_is_contradicted():
    """The audit in Tramèr, Terzis, Steinke, Song, Jagielski and Carlini, "Debugging
    differential privacy: a case study for privacy auditing" (2022): claimed (0.21, 1e-5)-DP,
    TPR 4.922%, FPR 0.174% over 100k trials each. With the FNR 0.95078 as alpha and the FPR
    0.00174 as beta, the limits alpha+ <= 0.95509 and 0.00274 (the upper end of beta's
    interval) at p = 1e-10 are Clopper-Pearson limits at 1e-10 split over the two sides
    (5e-11 each), which is exactly what ``audit`` uses at joint confidence 1 - 1e-10 (union
    bound over the two rates)."""
    fp, n_neg, fn, n_pos = 174, 100_000, 100_000 - 4922, 100_000
    # the point-estimate bound: beta >= max(1 - d - e^eps a, (1 - d - a) / e^eps) at a = 0.95078
    assert A.epsilon_delta_tradeoff(0.95078, 0.21, 1e-5) == pytest.approx(0.03988885074, abs=1e-10)
    r = A.audit(fp, n_neg, fn, n_pos, confidence=1 - 1e-10, claim_epsilon=0.21, claim_delta=1e-5)
    assert r.fnr == pytest.approx(0.95078) and r.fpr == pytest.approx(0.00174)
    assert r.fnr_upper == pytest.approx(0.95508, abs=1e-5)   # alpha+ <= 0.95509
    assert r.fpr_upper == pytest.approx(0.00274, abs=1e-5)   # beta's upper end 0.00274
    # (0.21, 1e-5)-DP needs the other rate >= 0.036 at alpha+; the upper limit is 0.00274
    assert r.required_fpr == pytest.approx(np.exp(-0.21) * (1 - 1e-5 - r.fnr_upper), rel=1e-12)
    assert 0.036 < r.required_fpr < 0.037
    assert r.fpr_upper < r.required_fpr / 10
    assert r.contradicted is True
    assert r.epsilon_lower > 2.7  # what the counts do prove, at delta = 1e-5
    # strictly one-sided limits at p = 1e-10 each are a little tighter (not the union bound's)
    assert A.clopper_pearson(fn, n_pos, 1 - 1e-10, "upper")[1] == pytest.approx(0.9550138, abs=1e-7)
    assert A.clopper_pearson(fp, n_neg, 1 - 1e-10, "upper")[1] == pytest.approx(0.0027259, abs=1e-7)
    # a weaker claim survives the same counts
    assert A.audit(fp, n_neg, fn, n_pos, confidence=1 - 1e-10, claim_epsilon=3.0,
                   claim_delta=1e-5).contradicted is False


def _smallest_epsilon_not_contradicted(fpr_hi, fnr_hi, delta):
    """Bisection on the definition: the least epsilon whose curve is <= the point (both ways)."""
    def below(e):
        return (A.epsilon_delta_tradeoff(fpr_hi, e, delta) <= fnr_hi
                and A.epsilon_delta_tradeoff(fnr_hi, e, delta) <= fpr_hi)
    if below(0.0):
        return 0.0
    return optimize.bisect(lambda e: 1.0 if below(e) else -1.0, 0.0, 50.0, xtol=1e-13)


@pytest.mark.parametrize("counts", [(10, 1000, 300, 1000), (0, 500, 100, 500), (50, 2000, 1900, 2000),
                                    (400, 1000, 500, 1000), (3, 100000, 60000, 80000)])
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.01])
def test_epsilon_and_mu_lower_bounds_follow_their_definitions(counts, delta):
    fp, n, fn, m = counts
    fpr_hi, fnr_hi = A.rate_upper_limits(fp, n, fn, m, 0.95)
    # joint 95%: each one-sided limit at 97.5%
    assert fpr_hi == pytest.approx(A.clopper_pearson(fp, n, 0.975, "upper")[1], abs=1e-14)
    eps = A.epsilon_lower_bound(fp, n, fn, m, delta=delta, confidence=0.95)
    assert eps == pytest.approx(_smallest_epsilon_not_contradicted(fpr_hi, fnr_hi, delta), abs=1e-9)
    mu = A.mu_lower_bound(fp, n, fn, m, confidence=0.95)
    ref_mu = 0.0 if A.gdp_tradeoff(fpr_hi, 0.0) <= fnr_hi else optimize.brentq(
        lambda u: A.gdp_tradeoff(fpr_hi, u) - fnr_hi, 0.0, 40.0, xtol=1e-13)
    assert mu == pytest.approx(ref_mu, abs=1e-9)


def test_lower_bounds_are_vectorised():
    fp = np.array([10, 20, 30])
    eps = A.epsilon_lower_bound(fp, 1000, 300, 1000, delta=[[0.0], [1e-3]])
    assert eps.shape == (2, 3) and np.all(np.diff(eps, axis=1) < 0)
    for i, f in enumerate(fp):
        assert eps[1, i] == A.epsilon_lower_bound(int(f), 1000, 300, 1000, delta=1e-3)


def test_mu_lower_bound_covers_the_truth():
    """Coverage: the best attack on mu-GDP at a fixed threshold, 4000 simulated audits. The
    95% lower bound may exceed the true mu in at most 5% of them (here it does far less: the
    union bound and the discreteness make it conservative); point estimates would exceed it
    about half the time."""
    mu, n = 1.0, 2000
    rng = np.random.default_rng(7)
    thr = 1.2  # attack says "member" when the output exceeds thr; outputs N(0,1) vs N(mu,1)
    fpr, fnr = stats.norm.sf(thr), stats.norm.cdf(thr - mu)
    fp = rng.binomial(n, fpr, size=4000)
    fn = rng.binomial(n, fnr, size=4000)
    lo = A.mu_lower_bound(fp, n, fn, n, confidence=0.95)
    assert np.mean(lo > mu) <= 0.05
    assert np.mean(lo) > 0.6 * mu  # and it is not vacuous
    naive = stats.norm.isf(fp / n) - stats.norm.ppf(fn / n)
    assert 0.3 < np.mean(naive > mu) < 0.7
    eps_lo = A.epsilon_lower_bound(fp, n, fn, n, delta=1e-3, confidence=0.95)
    true_eps = dpax.audit.epsilon_star_from_rates(  # epsilon(1e-3) of 1-GDP, exactly
        stats.norm.cdf(np.linspace(-30, 30, 600001) - mu), stats.norm.sf(np.linspace(-30, 30, 600001)), 1e-3).value
    assert np.mean(eps_lo > true_eps) <= 0.05


def test_claims_as_mu_and_as_privacy_loss_agree():
    """A claimed dpax.PrivacyLoss is checked with its beta; for the Gaussian mechanism
    (sigma = 1, i.e. 1-GDP) the verdicts equal those of claim_mu = 1 and the required rates
    agree to the grid's pessimism (the engine's beta is never above the true curve)."""
    pl = dpax.gaussian(1.0, grid_step=1e-4)
    n = 100_000
    for true_mu, expect in ((1.0, False), (1.3, True), (0.5, False)):
        thr = true_mu / 2  # the equal-error attack
        fp = int(round(n * stats.norm.sf(thr)))
        fn = int(round(n * stats.norm.cdf(thr - true_mu)))
        r_mu = A.audit(fp, n, fn, n, claim_mu=1.0)
        r_pl = A.audit(fp, n, fn, n, claim=pl)
        assert r_mu.contradicted is expect and r_pl.contradicted is expect
        assert r_pl.required_fnr <= r_mu.required_fnr + 1e-12
        assert r_pl.required_fnr == pytest.approx(r_mu.required_fnr, abs=2e-4)
    # mu lower bound of the 1.3 audit sits just below 1.3
    r = A.audit(int(round(n * stats.norm.sf(0.65))), n, int(round(n * stats.norm.cdf(-0.65))), n)
    assert 1.2 < r.mu_lower < 1.3


@pytest.mark.parametrize("kwargs, match", [
    (dict(false_positives=11, negatives=10, false_negatives=1, positives=10), "false_positives"),
    (dict(false_positives=-1, negatives=10, false_negatives=1, positives=10), "false_positives"),
    (dict(false_positives=1, negatives=0, false_negatives=1, positives=10), "negatives"),
    (dict(false_positives=1.5, negatives=10, false_negatives=1, positives=10), "false_positives"),
    (dict(false_positives=1, negatives=10, false_negatives=1, positives=10, confidence=1.0), "confidence"),
    (dict(false_positives=1, negatives=10, false_negatives=1, positives=10, claim_delta=0.1), "claim_delta"),
    (dict(false_positives=0, negatives=10, false_negatives=0, positives=10, claim_epsilon=1.0, claim_delta=1.5),
     "claim_delta"),
    (dict(false_positives=0, negatives=10, false_negatives=0, positives=10, claim_epsilon=float("nan")),
     "claim_epsilon"),
    (dict(false_positives=0, negatives=10, false_negatives=0, positives=10, claim_epsilon=-1.0, claim_delta=0.1),
     "claim_epsilon"),
    (dict(false_positives=1, negatives=10, false_negatives=1, positives=10, claim_mu=1.0, claim_epsilon=1.0,
          claim_delta=0.0), "at most one"),
    (dict(false_positives=1, negatives=10, false_negatives=1, positives=10, claim_mu=-1.0), "claim_mu"),
    (dict(false_positives=1, negatives=10, false_negatives=1, positives=10, delta=float("nan")), "delta"),
])
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        A.audit(**kwargs)


def test_an_epsilon_claim_alone_is_epsilon_dp():
    """claim_epsilon without claim_delta claims (epsilon, 0)-DP (the CLI's --claim-delta
    default), and the epsilon lower bound is then taken at delta 0."""
    alone = A.audit(5, 100, 5, 100, claim_epsilon=1.0)
    assert alone == A.audit(5, 100, 5, 100, claim_epsilon=1.0, claim_delta=0.0)


def test_bad_claim_type_and_alternative():
    with pytest.raises(TypeError, match="claim"):
        A.audit(1, 10, 1, 10, claim=0.5)
    with pytest.raises(ValueError, match="alternative"):
        A.clopper_pearson(1, 10, alternative="both")


@pytest.mark.slow
@pytest.mark.parametrize("mu, thr, n, delta", [(0.5, 0.25, 500, 0.0), (1.0, 2.0, 5000, 1e-5), (2.0, 3.0, 20000, 1e-3),
                                               (3.0, 1.5, 1000, 1e-2)])
def test_epsilon_and_mu_bounds_cover_the_truth_widely(mu, thr, n, delta):
    """Coverage at several attacks, sample sizes and deltas, 20000 simulated audits each: the
    90% lower bounds on epsilon(delta) and mu exceed the truth in at most 10% of them (plus
    three binomial standard errors)."""
    rng = np.random.default_rng(int(1000 * mu + n))
    fp = rng.binomial(n, stats.norm.sf(thr), size=20_000)
    fn = rng.binomial(n, stats.norm.cdf(thr - mu), size=20_000)
    tau = np.linspace(-40, 40, 800_001)
    true_eps = A.epsilon_star_from_rates(stats.norm.cdf(tau - mu), stats.norm.sf(tau), delta).value
    slack = 0.1 + 3 * np.sqrt(0.1 * 0.9 / 20_000)
    assert np.mean(A.epsilon_lower_bound(fp, n, fn, n, delta=delta, confidence=0.9) > true_eps) <= slack
    assert np.mean(A.mu_lower_bound(fp, n, fn, n, confidence=0.9) > mu) <= slack
