"""Targets defined through an error-rate bound (dpax.targets.derived): each one's equivalent
ErrRates satisfies its own definition exactly at the bound (Table 1's conversions), and a value
out of its range is refused with the argument's name, its range and the row."""

from __future__ import annotations

import numpy as np
import pytest

from dpax.targets import PPV, Accuracy, ErrRates, Reconstruction

ALPHA = np.array([0.01, 0.1, 0.3])


def test_accuracy_bound_is_the_error_rates_at_which_the_accuracy_is_met():
    acc = np.array([0.51, 0.6, 0.8])
    er = Accuracy(ALPHA, acc).err_rates()
    assert isinstance(er, ErrRates)
    np.testing.assert_allclose(0.5 * ((1 - er.alpha) + (1 - er.beta)), acc, rtol=1e-15)


def test_ppv_bound_is_the_error_rates_at_which_the_precision_is_met():
    ppv = np.array([0.55, 0.7, 0.75])
    er = PPV(ALPHA, ppv).err_rates()
    np.testing.assert_allclose((1 - er.beta) / (1 - er.beta + er.alpha), ppv, rtol=1e-14)


def test_reconstruction_bound_is_the_trade_off_at_the_baseline():
    baseline, success = np.array([0.01, 0.1, 0.5]), np.array([0.05, 0.3, 0.9])
    target = Reconstruction(baseline, success)
    er = target.err_rates()
    np.testing.assert_array_equal(er.alpha, baseline)
    np.testing.assert_allclose(er.beta, 1 - success, rtol=1e-15)
    np.testing.assert_array_equal(target.alpha, baseline)


@pytest.mark.parametrize("make, text", [
    (lambda: Accuracy(0.1, [0.6, 0.99]), r"^accuracy must lie in \(0.5, 0.95\) .* \(row \[1\]\), got 0.99$"),
    (lambda: Accuracy(0.1, 0.5), r"^accuracy must lie in \(0.5, 0.95\)"),
    (lambda: PPV(0.1, 0.95), r"^ppv must lie in \(0.5, 0.9090909090909091\)"),
    (lambda: Reconstruction(0.3, 0.2), r"^success must lie in \(0.3, 1\) \(above the baseline success"),
    (lambda: Accuracy([0.1, 0.2], [0.6, 0.6, 0.6]), r"alpha .* and accuracy .* do not broadcast"),
])
def test_out_of_range_values_are_refused_by_name(make, text):
    with pytest.raises(ValueError, match=text):
        make()


def test_non_numbers_are_refused_by_name():
    with pytest.raises(TypeError, match="^accuracy must be a real number"):
        Accuracy(0.1, "a")
    with pytest.raises(TypeError, match="^baseline must be a real number"):
        Reconstruction(True, 0.5)


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


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Accuracy(alpha=0.1, accuracy=0.5), "accuracy"),
        (lambda: Accuracy(alpha=0.1, accuracy=0.96), "accuracy"),
        (lambda: PPV(alpha=0.1, ppv=0.4), "ppv"),
        (lambda: PPV(alpha=0.1, ppv=0.95), "ppv"),
        (lambda: Reconstruction(baseline=0.2, success=0.1), "success"),
    ],
)
def test_target_validation(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_messages_show_the_digits_that_refuse_a_value():
    """PPV(0.1, 0.90909091) said 'must lie in (0.5, 0.909091) ..., got 0.909091'."""
    with pytest.raises(ValueError, match=r"\(0\.5, 0\.9090909090909091\) .*got 0\.90909091$"):
        PPV(0.1, 0.90909091)
    with pytest.raises(ValueError, match=r"got 0\.95000000001$"):
        Accuracy(0.1, 0.95000000001)
    with pytest.raises(ValueError, match=r"beta=0\.90000000001$"):
        ErrRates(0.1, 0.90000000001)
