"""Bad input and NaN for valid input: every case the fuzz of the public API found, one test
each.

* scalar-only arguments say that they must be a single number, where they do not broadcast
  (curve objects, the tail of mu); the elementwise conversions broadcast instead;
* shape mismatches name both arguments and their shapes;
* booleans, strings (numeric ones too), complex numbers and object arrays are refused with a
  TypeError naming the argument;
* messages quote a short repr, never a whole array;
* valid but extreme input gives numbers, not NaN: epsilon beyond exp's range, noise beyond
  1.3e154, a noise so small that its loss bound overflows (an error, as under add/remove),
  the GDP report (and ``dpax gdp``) of such a noise; a loss file NumPy refuses is named.

Grids are coarse (1e-2 .. 0.5): nothing here compiles a large kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpax
from dpax import conversions, gdp, targets
from dpax._engine import validation as v

MAX_MESSAGE = 300


@pytest.fixture(scope="module")
def pl():
    return dpax.gaussian(1.0, grid_step=1e-2)


def raises(exc, call, *names):
    """``call()`` raises ``exc`` whose message names every one of ``names`` and is short."""
    with pytest.raises(exc) as err:
        call()
    msg = str(err.value)
    for name in names:
        assert name in msg, (name, msg)
    assert len(msg) <= MAX_MESSAGE, msg
    return msg


# -- 1. scalar-only arguments; broadcasting conversions ------------------------------------


@pytest.mark.parametrize("name, call", [
    ("mu", lambda: conversions.gdp_curve([1.0, 2.0])),
    ("order", lambda: conversions.rdp_curve([2.0, 3.0], 0.5)),
    ("epsilon", lambda: conversions.rdp_curve(2.0, [0.5, 0.6])),
    ("rho", lambda: conversions.zcdp_curve([0.1, 0.2])),
    ("epsilon", lambda: conversions.epsilon_delta_curve([1.0, 2.0], 1e-5)),
    ("delta", lambda: conversions.epsilon_delta_curve(1.0, [1e-5, 1e-6])),
    ("mu", lambda: conversions.GDPCurve(np.ones((2, 2)))),
])
def test_scalar_only_arguments_say_so(name, call):
    msg = raises(ValueError, call, name, "single number")
    assert "only 0-dimensional" not in msg


def test_tail_of_mu_is_one_number(pl):
    raises(ValueError, lambda: gdp.mu_and_regret(pl, tail=[1e-10, 1e-9]), "tail", "single number")
    raises(ValueError, lambda: gdp.report(pl, tail=np.array([1e-10])), "tail", "single number")


def test_rdp_and_zcdp_tradeoffs_broadcast():
    alpha = np.array([0.01, 0.1, 0.5])
    orders, eps = np.array([1.0, 2.0, 8.0]), np.array([0.1, 0.5])
    out = conversions.rdp_tradeoff(orders[:, None, None], eps[:, None], alpha)
    assert out.shape == (3, 2, 3)
    for i, t in enumerate(orders):
        for j, e in enumerate(eps):
            np.testing.assert_allclose(out[i, j], conversions.rdp_tradeoff(t, e, alpha), rtol=0, atol=1e-13)
    rho = np.array([0.05, 0.5])
    out = conversions.zcdp_tradeoff(rho[:, None], alpha, orders=[1.0, 2.0, 4.0])
    for i, r in enumerate(rho):
        np.testing.assert_allclose(out[i], conversions.zcdp_tradeoff(r, alpha, orders=[1.0, 2.0, 4.0]), atol=1e-13)
    raises(ValueError, lambda: conversions.rdp_tradeoff([1.0, 2.0], [0.1, 0.2, 0.3], 0.1),
           "order", "epsilon", "(2,)", "(3,)")


# -- 1. shape mismatches name both arguments -----------------------------------------------


@pytest.mark.parametrize("names, call", [
    (("noise_multiplier", "sample_rate"), lambda: dpax.dpsgd([1, 2], [0.1, 0.2, 0.3], 10, grid_step=1e-2)),
    (("sample_rate", "num_steps"), lambda: dpax.dpsgd(1.0, [0.1, 0.2], [1, 2, 3], grid_step=1e-2)),
    (("noise_multiplier", "sensitivity"), lambda: dpax.gaussian([1, 2], [1, 2, 3], grid_step=1e-2)),
    (("noise_multiplier", "sample_rate"), lambda: dpax.subsampled_gaussian([1, 2], [0.1, 0.2, 0.3], grid_step=1e-2)),
    (("scale", "sensitivity"), lambda: dpax.laplace([1, 2], [1, 2, 3], grid_step=1e-2)),
    (("epsilon", "delta"), lambda: dpax.approximate_dp([1, 2], [0.1, 0.2, 0.3], grid_step=1e-2)),
    (("epsilon", "k"), lambda: dpax.randomized_response([1, 2], [2, 3, 4], grid_step=1e-2)),
    (("mu", "alpha"), lambda: gdp.tradeoff([1, 2], [0.1, 0.2, 0.3])),
    (("delta", "mu"), lambda: gdp.epsilon([1e-5, 1e-6], [1, 2, 3])),
    (("noise_multiplier", "num_steps"), lambda: gdp.gaussian_mu([1, 2], num_steps=[1, 2, 3])),
    (("epsilon", "alpha"), lambda: conversions.epsilon_delta_tradeoff([1, 2], 0.0, [0.1, 0.2, 0.3])),
    (("epsilon", "delta"), lambda: conversions.mu_from_epsilon_delta([1, 2], [1e-5, 1e-6, 1e-7])),
    (("alpha", "beta"), lambda: targets.ErrRates([0.1, 0.2], [0.3, 0.4, 0.5])),
    (("epsilon", "delta"), lambda: targets.Epsilon([1, 2], [1e-5, 1e-6, 1e-7])),
    (("alpha", "accuracy"), lambda: targets.Accuracy([0.1, 0.2], [0.6, 0.6, 0.6])),
    (("sample_rate", "num_steps"), lambda: dpax.calibrate_dpsgd(
        sample_rate=[0.1, 0.2], num_steps=[1, 2, 3], target=targets.Advantage(0.2), grid_step=1e-2)),
    (("successes", "trials"), lambda: dpax.audit.clopper_pearson([1, 2], [10, 10, 10])),
    (("false_positives", "false_negatives"), lambda: dpax.audit.epsilon_lower_bound([1, 2], 10, [1, 2, 3], 10)),
])
def test_shape_mismatch_names_the_arguments(names, call):
    msg = raises(ValueError, call, *names, "broadcast")
    assert "arg 0" not in msg


def test_shape_mismatch_against_a_batch(pl):
    batch = pl.broadcast_to((2,))  # a batch of two rows on the fixture's arrays: no construction kernels
    assert batch.batch_shape == (2,)
    raises(ValueError, lambda: batch.self_compose([1, 2, 3]), "num_steps", "(3,)", "(2,)")
    raises(ValueError, lambda: dpax.compose((batch, [1, 2, 3])), "count of compose argument 0", "(3,)")
    raises(ValueError, lambda: batch.broadcast_to((3,)), "shape", "(2,)")


# -- 1. strings, format codes, compose's grid_step -----------------------------------------


def test_numeric_string_noise():
    msg = raises(TypeError, lambda: dpax.gaussian("0.5"), "noise_multiplier", "string")
    assert "format code" not in msg


def test_compose_blames_grid_step(pl):
    raises(TypeError, lambda: dpax.compose(pl, pl, grid_step=True), "grid_step")
    raises((TypeError, ValueError), lambda: dpax.compose(pl, pl, grid_step="0.5"), "grid_step")
    raises(TypeError, lambda: dpax.compose(pl, pl, grid_step=[0.1, 0.2]), "grid_step")
    raises(ValueError, lambda: dpax.compose(pl, pl, grid_step=-1), "grid_step")
    # a grid too fine for memory: the message says it was grid_step, not the mechanism
    msg = raises(ValueError, lambda: dpax.compose(pl, pl, grid_step=1e-7), "grid_step=1e-07")
    assert msg.startswith("grid_step")
    # grid_step passed positionally
    raises(TypeError, lambda: dpax.compose(pl, 0.5), "compose argument 1", "grid_step")


# -- 1. short messages ----------------------------------------------------------------------


def test_messages_quote_a_capped_repr():
    big = np.concatenate([np.ones(10_000), [np.nan]])
    msg = raises(ValueError, lambda: dpax.gaussian(big, grid_step=1e-2), "noise_multiplier", "nan", "(10001,)")
    assert "\n" not in msg
    raises(ValueError, lambda: targets.ErrRates(np.full(1000, 0.6), np.full(1000, 0.6)), "alpha + beta", "row [0]")
    raises(ValueError, lambda: v.positive_int_array("num_steps", np.full(1000, 2.5)), "num_steps", "2.5")
    raises(TypeError, lambda: v.grid_step(list(range(1000))), "grid_step")
    raises(TypeError, lambda: v.real_array("x", [[1.0] * 500, [1.0]]), "x", "ragged")
    raises(ValueError, lambda: dpax.gaussian(1.0, neighbouring="x" * 10_000), "neighbouring")
    raises(TypeError, lambda: targets.as_target(list(range(1000)) + ["x"]), "target")
    assert len(v.brief("x" * 10_000)) <= v.BRIEF_CHARS


# -- 2. invalid input accepted silently before -----------------------------------------------


@pytest.mark.parametrize("name, call", [
    ("scale", lambda: dpax.laplace(True, grid_step=1e-2)),
    ("grid_step", lambda: dpax.gaussian(1.0, grid_step=True)),
    ("grid_step", lambda: dpax.gaussian(1.0, grid_step="0.5")),
    ("grid_step", lambda: dpax.gaussian(1.0, grid_step=np.array("0.5"))),
    ("noise_multiplier", lambda: dpax.gaussian(np.array([1.0 + 0j]), grid_step=1e-2)),
    ("noise_multiplier", lambda: dpax.gaussian(np.array([1.0], dtype=object), grid_step=1e-2)),
    ("noise_multiplier", lambda: dpax.gaussian(np.array(["0.5"], dtype=object), grid_step=1e-2)),
    ("sample_rate", lambda: dpax.dpsgd(1.0, np.array([True, True]), 3, grid_step=1e-2)),
    ("noise_multiplier", lambda: dpax.dpsgd(["1.0", "2.0"], 0.1, 3, grid_step=1e-2)),
    ("alpha", lambda: targets.ErrRates(True, 0.5)),
    ("mu", lambda: gdp.tradeoff(np.bool_(True), 0.1)),
    ("epsilon", lambda: conversions.mu_from_epsilon_dp("1")),
    ("tail", lambda: gdp.mu_and_regret(dpax.gaussian(1.0, grid_step=1e-2), tail=False)),
    ("delta", lambda: dpax.audit.epsilon_star_from_rates([0.1], [0.2], delta="0")),
    ("compare_standard", lambda: dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=3, target=targets.Advantage(0.2),
                                                       grid_step=1e-2, compare_standard="no")),
    ("candidates", lambda: dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=3, target=targets.Advantage(0.2),
                                                 grid_step=1e-2, candidates=True)),
])
def test_refused_with_type_error(name, call):
    raises(TypeError, call, name)


def test_methods_refuse_booleans_and_strings(pl):
    raises(TypeError, lambda: pl.beta(True), "alpha")
    raises(TypeError, lambda: pl.epsilon("1e-5"), "delta")
    raises(TypeError, lambda: pl.delta(1.0 + 2j), "epsilon")
    raises(TypeError, lambda: pl.self_compose(True), "num_steps")
    raises(TypeError, lambda: pl.regrid("0.1"), "grid_step")


@pytest.mark.parametrize("value", ["no", "False", 0, 1, None, np.array([True]), [True], 1.0])
@pytest.mark.parametrize("name, call", [
    ("symmetric", lambda pl, x: pl.tradeoff_points(symmetric=x)),
    ("bounds", lambda pl, x: pl.beta(0.1, bounds=x)),
    ("bounds", lambda pl, x: pl.delta(1.0, bounds=x)),
    ("bounds", lambda pl, x: pl.epsilon(1e-5, bounds=x)),
    ("bounds", lambda pl, x: pl.advantage(bounds=x)),
    ("exact_ratio", lambda pl, x: dpax.PrivacyLoss([0.5, 0.5], [0.5, 0.5], 0, 0.0, 0.0, 0.1, exact_ratio=x)),
    ("optimistic", lambda pl, x: dpax.PrivacyLoss([0.5, 0.5], [0.5, 0.5], 0, 0.0, 0.0, 0.1, optimistic=x)),
    ("exact_ratio", lambda pl, x: dpax.PrivacyLoss.from_pair(pl.pair, pl.grid_step, "copy", (), exact_ratio=x)),
])
def test_boolean_flags_of_privacy_loss_take_booleans_only(pl, name, call, value):
    """A string such as "no" (or 0, None, a one-element array) would have counted as a
    boolean: ``symmetric="no"`` gave the symmetrised curve."""
    msg = raises(TypeError, lambda: call(pl, value), name, "True or False")
    assert "got" in msg


def test_boolean_flags_of_privacy_loss_take_numpy_booleans(pl):
    a, b = pl.tradeoff_points(symmetric=np.bool_(False))
    np.testing.assert_array_equal(a, pl.tradeoff_points(symmetric=False)[0])
    assert pl.tradeoff_points(symmetric=np.True_)[0].shape[-1] == 2 * pl.support_length + 2
    assert pl.beta(0.1, bounds=np.False_) == pl.beta(0.1)
    user = dpax.PrivacyLoss([0.5, 0.5], [0.5, 0.5], 0, 0.0, 0.0, 0.1, exact_ratio=np.True_, optimistic=np.False_)
    assert user.exact_ratio is True and user.optimistic is False


def test_huge_integers_are_named():
    raises(ValueError, lambda: v.real_array("noise_multiplier", 10**400), "noise_multiplier", "too large")
    raises(ValueError, lambda: v.positive_int_array("num_steps", 2**70), "num_steps", "2**53")


# -- 3. NaN for valid input --------------------------------------------------------------------


def test_delta_at_huge_epsilon_is_a_number(pl):
    at = pl.delta([0.0, 709.0, 710.0, 1e4, 1e300])
    assert np.all(np.isfinite(at)) and np.all(np.diff(at) <= 0)
    assert at[2] == at[1] and at[-1] == at[1]  # the +inf atom alone: nothing lies beyond the grid
    rr = dpax.randomized_response(1.0, grid_step=1e-2)
    assert rr.delta(710.0) == 0.0  # a pure epsilon-DP mechanism: delta 0
    approx = dpax.approximate_dp(1.0, 1e-5, grid_step=1e-2)
    assert approx.delta(1e6) == pytest.approx(1e-5)


def test_epsilon_delta_tradeoff_at_huge_epsilon():
    assert conversions.epsilon_delta_tradeoff(710, 0, 0) == 1.0
    np.testing.assert_array_equal(conversions.epsilon_delta_tradeoff(1e300, 0.1, [0.0, 0.5]), [0.9, 0.0])
    assert dpax.audit.epsilon_delta_tradeoff(0.0, 800.0) == 1.0
    alpha = np.array([0.0, 1e-300, 0.3, 1.0])
    curve = conversions.epsilon_delta_curve(800.0, 0.0).beta(alpha)  # c = 1 / (1 + e^800) underflows to 0
    assert np.all(np.isfinite(curve)) and np.all(curve <= conversions.epsilon_delta_tradeoff(800.0, 0.0, alpha))
    assert np.isfinite(conversions.mu_from_epsilon_dp(705.0))


@pytest.mark.parametrize("noise", [1.35e154, 1e200, 1e300, 1.7e308])
def test_huge_noise(noise):
    pl = dpax.gaussian(noise, grid_step=1e-2)
    ref = dpax.gaussian(1e154, grid_step=1e-2)
    for a, b in zip(pl.pair, ref.pair):  # built as 1e154: the pair of every noise from 1e154 to 1.34e154
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # as many deltas and alphas as gdp.report's (REPORT_DELTAS, TIER2_ALPHAS): the epsilon and
    # beta kernels of test_gdp_report_of_huge_noise, whose pair has this one's length
    # the advantages: above the truth (~1e-155 and below, but not 0) by the few ulps that the
    # construction adds per pair for the rounding of its cells (4 eps each here)
    assert 0.0 < pl.advantage() <= 1e-14 and np.all(pl.epsilon([1e-5, 1e-6, 1e-9]) == 0.0)
    assert np.all(np.isfinite(pl.beta([0.0, 1e-10, 1e-6, 1e-3, 0.1, 0.5, 1.0])))
    dp = dpax.dpsgd(noise, 0.1, 5, grid_step=1e-2)
    # composed: plus the FFT's certified round-off, 4 x 2^-53 x (T + log2 L) of the largest mass
    assert 0.0 < dp.advantage() <= 3e-14
    assert 0.0 < dpax.gaussian(1.0, sensitivity=1e-300, grid_step=1e-2).advantage() <= 1e-14


def test_huge_noise_pairs_unchanged_below_the_cap():
    # the pairs from 1e154 to 1.34e154 were already equal, bit for bit (the cap changes none)
    a = dpax.subsampled_gaussian(1.3e154, 0.5, grid_step=0.1, neighbouring="substitution")
    b = dpax.subsampled_gaussian(1e154, 0.5, grid_step=0.1, neighbouring="substitution")
    for x, y in zip(a.pair, b.pair):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("neighbouring", ["add_remove", "substitution"])
@pytest.mark.parametrize("noise", [1e-300, 1e-160, 1e-3])
def test_tiny_noise_is_too_small_under_both_relations(noise, neighbouring):
    raises(ValueError, lambda: dpax.subsampled_gaussian(noise, 0.5, grid_step=0.5, neighbouring=neighbouring),
           "noise_multiplier", "too small")


def test_gdp_report_of_huge_noise():
    r = gdp.report(dpax.dpsgd(1e300, 0.1, 5, grid_step=1e-2))
    # the construction's rounding bound (~4e-15 of mass where X = -inf, test_huge_noise) and the
    # composition's certified round-off (~1e-14) are all there is to see: mu 2.5e-5 covers them at
    # the FPR 1e-10 of the tail
    assert r.mu < 1e-4 and 0.0 < r.advantage <= 3e-14 and np.all(np.isfinite(r.beta)) and np.isfinite(r.regret)
    # no cell printed as "-" (NaN); "1 - q" is a probability near 1
    assert "-" not in r.table().replace("1 - ", "").split()


# default siblings: test_gdp_report_of_huge_noise (the same mechanism's gdp.report, which `dpax gdp`
# prints) and tests/gdp/test_gdp_cli.py's `dpax gdp` command-line test
@pytest.mark.slow
def test_cli_gdp_huge_noise(capsys):
    from dpax.cli import main

    code = main(["gdp", "--noise-multiplier", "1e300", "--sample-rate", "0.1", "--num-steps", "5",
                 "--grid-step", "1e-2", "--no-cache"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "mu" in out and "error" not in err


def test_read_losses_names_the_file_numpy_refuses(tmp_path):
    obj = tmp_path / "objects.npy"
    np.save(obj, np.array([1.0, None], dtype=object), allow_pickle=True)
    msg = raises(ValueError, lambda: dpax.audit.read_losses(obj), str(obj))
    assert msg.startswith(str(obj))
    bad = tmp_path / "corrupt.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }" + b" " * 60)
    raises(ValueError, lambda: dpax.audit.read_losses(bad), str(bad))
    raises(TypeError, lambda: dpax.audit.read_losses(12), "path")


def test_arguments_checked_by_their_own_functions_are_named(pl):
    """Arguments that reached NumPy or int() unchecked (found reading their docstrings): each
    refusal names the argument, and a valid call still answers."""
    from dp_accounting import dp_event

    from dpax.events import tally
    from dpax.gdp import mu_regret

    event = dp_event.GaussianDpEvent(1.0)
    raises(ValueError, lambda: tally(event, count=-1), "count")
    raises(ValueError, lambda: tally(event, count=1.5), "count")
    assert sum(tally(event, count=3).counts.values()) == 3
    from dpax.events import from_tallies

    two = [tally(event), tally(event, count=2)]
    raises(ValueError, lambda: from_tallies(two, 1e-2, shape=(1, 2)), "shape", "(2,)")
    raises(ValueError, lambda: from_tallies(two, 1e-2, shape=()), "shape", "exactly one")
    raises(TypeError, lambda: from_tallies(two, 1e-2, shape="2"), "shape")
    from dpax.events import mixture

    raises(ValueError, lambda: mixture(pl, pl, [0.1, 0.2, 0.3]), "weight", "(3,)", "()")
    raises(ValueError, lambda: targets.ErrRates([0.1, 0.2], 0.5).broadcast((3,)), "ErrRates", "(3,)", "alpha (2,)")
    raises(ValueError, lambda: targets.Advantage([0.1, 0.2]).flat((2, 3)), "Advantage", "(2, 3)")
    raises(TypeError, lambda: targets.Advantage(0.1).flat("2"), "shape")
    assert targets.ErrRates([0.1, 0.2], 0.5).flat((3, 2)).alpha.shape == (6,)
    raises(ValueError, lambda: mu_regret.mu_regret_rows(pl, 1e-10, at_mu=[1.0, 2.0]), "at_mu", "1")
    raises(TypeError, lambda: dpax.distributed.calibrate(lambda s: dpax.gaussian(s, grid_step=1e-2),
                                                          targets.Advantage(0.3), full_output="yes"), "full_output")


def test_a_refused_number_is_shown_with_the_digits_that_refuse_it():
    """A value just outside a range was shown rounded into it ("epsilon must lie in [0, 600],
    got 600"); every digit is printed where {:g} would hide the reason."""
    with pytest.raises(ValueError, match=r"epsilon must lie in \[0, 600\], got 600\.0001$"):
        dpax.approximate_dp(600.0001, 0.0)
    with pytest.raises(ValueError, match=r"delta must lie in \[0, 1\], got 1\.000000000000001$"):
        dpax.approximate_dp(1.0, 1.000000000000001)
    with pytest.raises(ValueError, match=r"grid_step must be >= 1e-7 .*got 9\.99999999e-08$"):
        dpax.gaussian(1.0, grid_step=9.99999999e-8)
    with pytest.raises(ValueError, match=r"noise_multiplier must lie in \(0, inf\), got 0$"):  # as short as before
        dpax.gaussian(0.0)
