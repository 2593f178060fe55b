"""dpax.targets.gdp: the Gaussian-DP target refuses a mu that is not > 0 by its name. (Its margin
on the Gaussian against the closed form: tests/targets/test_targets.py's [gdp] case.)"""

from __future__ import annotations

import pytest

from dpax.targets import GDP


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: GDP(mu=0.0), "mu"),
    ],
)
def test_target_validation(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()
