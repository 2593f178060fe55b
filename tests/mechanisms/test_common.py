"""dpax.mechanisms._common: what the mechanism families share -- the neighbouring relations
(substitution doubles an additive mechanism's sensitivity, randomized response is unchanged; an
unknown relation refused by name), the single step's tail and the Gaussian family's least noise
(where the loss at that tail reaches the float64 limit, and the message that quotes it), the
descriptions of PrivacyLoss values and the rounded-up figures of the messages."""

from __future__ import annotations

import numpy as np
import pytest
from mechanism_refs import ALPHAS, EPSILONS
from scipy.special import ndtri

import dpax
from dpax.mechanisms import _common


def test_substitution_laplace_and_discrete_double_sensitivity_rr_unchanged():
    h = 1e-3
    np.testing.assert_allclose(
        dpax.laplace(1.0, grid_step=h, neighbouring="substitution").beta(ALPHAS),
        dpax.laplace(0.5, grid_step=h).beta(ALPHAS), atol=1e-12
    )
    np.testing.assert_allclose(
        dpax.discrete_laplace(1.0, 1, grid_step=h, neighbouring="substitution").delta(EPSILONS),
        dpax.discrete_laplace(1.0, 2, grid_step=h).delta(EPSILONS),
        atol=1e-12,
    )
    np.testing.assert_array_equal(
        dpax.randomized_response(1.0, grid_step=h, neighbouring="substitution").beta(ALPHAS),
        dpax.randomized_response(1.0, grid_step=h).beta(ALPHAS),
    )


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: dpax.laplace(1.0, neighbouring="swap"), "neighbouring"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_the_sensitivity_factor_of_each_relation():
    assert _common.NEIGHBOURING == ("add_remove", "substitution")
    assert _common._substitution_factor("add_remove") == 1.0
    assert _common._substitution_factor("substitution") == 2.0
    for wrong in ("replace_one", "ADD_REMOVE", None, 1):
        with pytest.raises(ValueError, match=r"^neighbouring must be one of \('add_remove', 'substitution'\), got"):
            _common._substitution_factor(wrong)


def test_the_least_noise_is_where_the_single_steps_loss_reaches_the_limit():
    """The Gaussian's loss at the output leaving SINGLE_STEP_TAIL beyond is x^2 / 2 + z x
    (x = sensitivity / noise, z = -Phi^-1(SINGLE_STEP_TAIL)): at the least noise it is exactly
    dpax's largest privacy loss (MAX_LOSS, 600 nats), at twice the noise under substitution; the
    figures the docstrings quote are the least rounded up in the sixth decimal."""
    z = _common.SINGLE_STEP_Z
    assert z == -ndtri(_common.SINGLE_STEP_TAIL) and _common.SINGLE_STEP_TAIL == 1e-20
    x = 1.0 / _common.least_noise()
    assert x**2 / 2 + z * x == pytest.approx(_common._MAX_LOSS, rel=1e-14) and _common._MAX_LOSS == 600.0
    assert _common.least_noise(2.0) == 2.0 * _common.least_noise()
    for factor, text in _common.LEAST_NOISE_TEXT.items():
        least = _common.least_noise(factor)
        assert float(text) - 1e-6 < least <= float(text)


def test_a_noise_below_the_least_is_refused_with_the_figures():
    least = _common.least_noise()
    _common._check_noise(np.array([least, 1.0, np.inf]))  # the least itself is accepted
    _common._check_noise(np.array([2.0 * least]), 2.0)
    for noise, first in (([1.0, np.nextafter(least, 0.0), 0.01], "0.0376002"), ([np.nan], "nan")):
        with pytest.raises(ValueError) as err:
            _common._check_noise(np.array(noise))
        assert str(err.value) == (
            f"noise_multiplier={first} is too small: the least is 0.03760022275147539 (rounded up 0.037601, at "
            "every sample rate); below it the privacy loss can exceed 600 nats, beyond float64 range; use "
            "noise_multiplier >= 0.037601")
    with pytest.raises(ValueError, match=r"least is 0\.07520044550295078 \(rounded up 0\.075201,"):
        _common._check_noise(np.array([1.5 * least]), 2.0)
    message = _common.least_noise_message("standard_deviation", 0.01, per=" x sensitivity", shown="the noise")
    assert message.startswith("the noise = 0.01 is too small: the least is 0.03760022275147539 x sensitivity")
    assert message.endswith("use standard_deviation >= 0.037601 x sensitivity")


def test_descriptions_and_rounded_up_figures():
    """A description names the parameters (arrays by their shape) and a relation other than
    add/remove last; a figure 'X' of a message is the value rounded up to 3 significant digits."""
    assert _common._describe("laplace", scale=0.5, sensitivity=1) == "laplace(scale=0.5, sensitivity=1)"
    assert (_common._describe("gaussian", "substitution", noise_multiplier=2.0, sensitivity=np.ones(3))
            == "gaussian(noise_multiplier=2, sensitivity=<(3,) array>, neighbouring=substitution)")
    for value, text in ((0.0376002227514754, "0.0377"), (1 / 600, "0.00167"), (0.5, "0.500"), (123.4, "124"),
                        (1234.5, "1240")):
        assert _common._at_least(value) == text
        assert float(text) >= value
