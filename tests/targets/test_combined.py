"""dpax.targets.combined: several targets at once. A list or All is met where every part is: the
calibrated noise is the largest single answer, on the parts' own kernels, and the closed-form
answer the largest of the parts'; All refuses no target or a part that is not a target, and
what is neither a target nor a list of targets is refused as a target (as_target).
(TARGETS below: tests/targets/test_targets.py's.)"""

from __future__ import annotations

import pytest
from target_refs import RTOL, _exact_mu, _gauss, _risk_ok

import dpax
from dpax.targets import GDP, Advantage, All, ErrRates


# ~3 s; default siblings: tests/calibration/test_calibration_blackbox.py::
# test_rows_are_searched_together_and_a_list_of_targets_meets_all (a list is met where every part is: the largest
# part's answer), the dpax.targets.combined and dpax.calibration.gaussian docstring examples (a list is All;
# calibrate_gaussian of several targets takes the smallest mu*)
@pytest.mark.slow
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


def test_calibrate_rejects_non_target():
    with pytest.raises(TypeError, match="target"):
        dpax.calibrate(_gauss, 0.5)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: All(), "at least one"),
        (lambda: All(Advantage(0.1), 0.5), "targets"),
    ],
)
def test_target_validation(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()
