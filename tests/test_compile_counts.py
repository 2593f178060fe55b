"""How many XLA compilations each public operation costs in a fresh process with an empty
kernel cache: every compilation is a fraction of a second of a user's first call, so the
counts are pinned and a regression (a new kernel shape per round, an eager op per call)
fails here.

Counted with ``jax.monitoring`` (the backend-compile event, eager operations included), plus
the kernels dpax's cache loads instead of compiling: the subprocess shares the test run's
kernel cache, so a kernel another test compiled is loaded, not compiled again, and counts as
the compilation it replaces (the count is that of an empty cache; ``DPAX_CACHE=0`` gives the
same, tested by the slow accountant case).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

COUNT = """
import collections, json, sys
from jax import monitoring
n = collections.Counter()
monitoring.register_event_duration_secs_listener(
    lambda event, duration, **kw: n.update([event]) if event == "/jax/core/compile/backend_compile_duration" else None)
import dpax
from dpax._engine import cache
count = lambda: n["/jax/core/compile/backend_compile_duration"] + cache.stats["loaded"]
{setup}
before = count()
{first}
first = count() - before
{again}
again = count() - before - first
print("RESULT " + json.dumps([first, again]))
"""

#: operation -> (setup, the call, a second call, pinned compilations of the first call). The
#: second call asks again, at another delta / alpha where the operation takes one (a
#: different noise changes the support length and so the kernel shapes: the lengths follow a
#: ladder of 4 sizes per octave); it must compile nothing.
CASES = {
    "epsilon of DP-SGD": (
        "", "dpax.dpsgd(1.0, 1e-3, 1000, grid_step=1e-3).epsilon(1e-5)",
        "dpax.dpsgd(1.0, 1e-3, 1000, grid_step=1e-3).epsilon(1e-6)", 5),
    "beta at 3 alphas": (
        "", "dpax.dpsgd(1.0, 1e-3, 1000, grid_step=1e-3).beta([0.01, 0.05, 0.1])",
        "dpax.dpsgd(1.0, 1e-3, 1000, grid_step=1e-3).beta([0.02, 0.05, 0.2])", 5),
    # the configuration (and grid) of tests/compat/test_compat.py's mu and regret and of
    # tests/engine/test_work.py: in a full run its kernels are in the store, loaded (and counted) here
    "mu and regret": (
        "", "dpax.gdp.mu_and_regret(dpax.dpsgd(9.4, 16384 / 50000, 2000, grid_step=1e-3))",
        "dpax.gdp.mu_and_regret(dpax.dpsgd(9.4, 16384 / 50000, 2000, grid_step=1e-3))", 6),
    "accountant": (
        "from dpax.accountants import PLDAccountant\na = PLDAccountant(grid_step=1e-3)\n"
        "for _ in range(100): a.step(noise_multiplier=1.1, sample_rate=0.01)",
        "a.get_epsilon(1e-5)", "a.get_epsilon(1e-6)", 5),
    "calibration": (
        "", "dpax.calibrate_dpsgd(sample_rate=0.01, num_steps=300, target=dpax.targets.ErrRates(0.1, 0.5),"
            " grid_step=1e-3)",
        "dpax.calibrate_dpsgd(sample_rate=0.01, num_steps=300, target=dpax.targets.ErrRates(0.1, 0.5),"
            " grid_step=1e-3)", 17),
}


def _counts(setup, first, again, cache=True):
    code = COUNT.format(setup=setup, first=first, again=again)
    env = dict(os.environ) if cache else dict(os.environ, DPAX_CACHE="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads([ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")][-1][7:])


@pytest.mark.parametrize("name", [n if n in ("epsilon of DP-SGD", "mu and regret", "calibration")
                                  else pytest.param(n, marks=pytest.mark.slow) for n in CASES])
def test_compilations_per_public_operation(name):
    setup, first, again, pinned = CASES[name]
    n_first, n_again = _counts(setup, first, again, cache=name != "epsilon of DP-SGD")
    assert n_first <= pinned, f"{name}: {n_first} compilations, pinned at {pinned}"
    assert n_again == 0, f"{name}: {n_again} more on a second call"


@pytest.mark.slow
def test_compilations_of_the_readme_calibration():
    """The quick start's calibration (p 1e-3, T 1e4, grid 1e-3): 66 compilations before its
    rounds shared kernel shapes, 24 after; 22 since a search's compositions compile one
    placement variant; 17 since the standard comparison's rounds reuse the kernel shapes of
    the first round, however much shorter their supports (grid.SMALL_BATCH_POINTS)."""
    n_first, _ = _counts("", "dpax.calibrate_dpsgd(sample_rate=1e-3, num_steps=10_000,"
                             " target=dpax.targets.ErrRates(0.1, 0.5), grid_step=1e-3)", "")
    assert n_first <= 17
