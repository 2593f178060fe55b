"""dpax.calibration.search: the generic calibrate() on the Gaussian family against the GDP closed
forms (within rtol, on the safe side) and on the DP-SGD family against calibrate_dpsgd, a target
out of the search range refused, the bracketing search the calibrations share (dpax's
bracket_search on a smooth margin), and the deprecated name of the search range."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtri
from scipy.stats import norm

import dpax
from dpax.targets import Advantage, Epsilon, ErrRates
from exact_refs import gdp_advantage, gdp_beta, gdp_epsilon

STEP = 1e-2


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



@pytest.mark.slow  # 22 s; generic calibrate is also tested in tests/targets/test_calibrating_to_targets.py
def test_generic_calibrate_matches_calibrate_dpsgd():
    """calibrate() with configuration args on the DP-SGD family gives calibrate_dpsgd's answer."""
    p = np.array([0.01, 0.003])
    t = np.array([300, 2000])
    fam = lambda s, p_, t_: dpax.dpsgd(s, p_, t_, grid_step=STEP)
    got = dpax.calibrate(fam, ErrRates(0.05, 0.6), args=(p, t), param_bounds=(0.05, 100))
    ref = dpax.calibrate_dpsgd(sample_rate=p, num_steps=t, target=ErrRates(0.05, 0.6), grid_step=STEP,
                               compare_standard=False)
    np.testing.assert_allclose(got, ref.noise_multiplier, rtol=2e-4)
    # the number of steps as the calibrated parameter (less private as it grows)
    steps = dpax.calibrate(lambda T: dpax.dpsgd(1.0, 0.01, np.floor(T), grid_step=STEP), ErrRates(0.1, 0.6),
                           param_bounds=(1, 1e5), privacy="decreasing", rtol=1e-4)
    T = int(np.floor(steps))
    assert (dpax.dpsgd(1.0, 0.01, T, grid_step=STEP).beta(0.1) >= 0.6
            > dpax.dpsgd(1.0, 0.01, T + 2, grid_step=STEP).beta(0.1))


def test_a_search_evaluates_at_most_sixteen_rows_per_call(monkeypatch):
    """A search's kernel calls hold at most SEARCH_CALL_ROWS rows (a first call pads a larger
    group to whole calls of that many); the chunking changes no answer."""
    from dpax._engine import batching

    sizes = []

    def family(scale, sensitivity):
        sizes.append(int(np.size(scale)))
        return dpax.laplace(scale=scale, sensitivity=sensitivity, grid_step=1e-2)

    sens = np.linspace(1.0, 2.0, 10)  # 10 rows x 4 candidates: 40 parameters a round at first
    run = lambda: dpax.calibrate(family, Advantage(0.2), args=(sens,), candidates=4, param_bounds=(0.1, 100.0))
    capped = run()
    assert max(sizes) == 16 and set(sizes[:3]) == {16}  # 40 -> 48 rows: three calls of 16
    sizes.clear()
    monkeypatch.setattr(batching, "SEARCH_CALL_ROWS", 1024)
    whole = run()
    assert max(sizes) > 16
    np.testing.assert_array_equal(capped, whole)
    # Laplace's advantage is 1 - exp(-sensitivity / (2 scale)) at its best threshold: the
    # answer is the scale where that is 0.2, within the search's tolerance and the grid's pessimism
    np.testing.assert_allclose(capped, sens / (-2 * np.log(0.8)), rtol=2e-2)
