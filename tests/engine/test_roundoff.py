"""dpax._engine.roundoff: one law of round-off bounds (meet) against a direct construction,
and the bound's guarantee on every head and tail sum."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dpax._engine import roundoff


def _direct(lower, upper, need, from_top):
    """meet by a running sum over every point (float64 numpy, one row)."""
    gap = np.maximum(upper - lower, 0.0)
    order = slice(None, None, -1) if from_top else slice(None)
    g = gap[order]
    run = np.cumsum(g)
    if run[-1] < need:
        return upper.copy(), need - run[-1]
    c = int(np.argmax(run >= need))
    taken = np.where(np.arange(g.size) < c, g, 0.0)
    taken[c] = need - (run[c] - g[c])
    return lower + taken[order], 0.0


def _meet(lower, upper, need, from_top):
    """roundoff.meet for the law of total sum(lower) + need (its excess over the upper
    bounds' sum: sum(upper - lower) - need)."""
    gap = upper - lower
    return roundoff.meet(jnp.asarray(upper[None]), jnp.asarray(gap[None]), jnp.asarray([np.sum(gap) - need]),
                         keep_top=from_top)


def _case(rng, n, scale):
    lower = rng.uniform(0.0, 1.0, n) ** 4 / n
    upper = lower + rng.uniform(0.0, scale, n) * (rng.uniform(size=n) < 0.8)
    return lower, upper


@pytest.mark.parametrize("from_top", [True, False])
def test_meet_matches_a_running_sum_over_every_point(from_top):
    rng = np.random.default_rng(7)
    rows = []
    for n, scale in ((256, 1e-18), (320, 1e-3), (1024, 1e-12)):
        lower, upper = _case(rng, n, scale)
        gaps = np.sum(upper - lower)
        for need in (0.0, 0.3 * gaps, 0.999 * gaps, gaps * (1 + 1e-9) + 1e-30):
            rows.append((lower, upper, need))
    with jax.enable_x64(True):
        for lower, upper, need in rows:
            got, left = _meet(lower, upper, need, from_top)
            want, _ = _direct(lower, upper, need, from_top)
            np.testing.assert_allclose(np.asarray(got)[0], want, rtol=1e-12, atol=1e-15 * np.sum(upper - lower))
            assert float(left[0]) == 0.0  # (a need above the gaps: the caller sees a negative excess)
            # the masses lie between the bounds and exceed the lower bounds by the need met
            g = np.asarray(got)[0]
            assert np.all(g >= lower - 4e-16 * upper) and np.all(g <= upper)  # (upper - gap rounds)


@pytest.mark.parametrize("keep_top", [True, False])
def test_meet_takes_every_lower_bound_when_they_sum_above_the_total(keep_top):
    rng = np.random.default_rng(3)
    lower, upper = _case(rng, 256, 1e-9)
    gap = upper - lower
    with jax.enable_x64(True):
        got, left = roundoff.meet(jnp.asarray(upper[None]), jnp.asarray(gap[None]), jnp.asarray([2 * np.sum(gap)]),
                                  keep_top=keep_top)
    np.testing.assert_allclose(np.asarray(got)[0], lower, rtol=1e-12, atol=4e-16 * np.max(upper))  # (upper - gap)
    assert float(left[0]) == pytest.approx(np.sum(gap), rel=1e-9)


def test_meet_bounds_every_head_and_tail_of_any_law_between_the_bounds():
    """Y-like (from the top): every tail sum at least, every head sum at most, those of any
    law between the bounds with the same total; random such laws as witnesses."""
    rng = np.random.default_rng(11)
    lower, upper = _case(rng, 512, 1e-6)
    with jax.enable_x64(True):
        for _ in range(20):
            law = lower + rng.uniform(size=lower.size) * (upper - lower)
            need = float(np.sum(law) - np.sum(lower))
            top = np.asarray(_meet(lower, upper, need, True)[0])[0]
            bottom = np.asarray(_meet(lower, upper, need, False)[0])[0]
            tails = lambda a: np.cumsum(a[::-1])[::-1]
            slack = 1e-14 * np.sum(upper)  # the float64 rounding of the running sums (the gaps are 1e-6)
            assert np.all(tails(top) >= tails(law) - slack) and np.all(np.cumsum(top) <= np.cumsum(law) + slack)
            assert np.all(np.cumsum(bottom) >= np.cumsum(law) - slack) and np.all(tails(bottom) <= tails(law) + slack)


def test_lattice_composition_safe_at_every_threshold():
    """10 steps of randomized response at epsilon 1 (grid 1e-2): eleven atoms 200 points
    apart and ~2000 points of round-off between them. delta(2) and epsilon(0.1) against the
    binomial law's exact values: the composition's far-tail atoms were added on one side
    only (X's mass without Y's), which put delta(2) 1.3e-14 below the truth."""
    import math

    import dpax

    pl = dpax.randomized_response(1.0, grid_step=1e-2).self_compose(10)
    p = math.e / (1.0 + math.e)

    def exact_delta(eps):  # Pr[Y > x] - e^eps Pr[X > x] at the best threshold, k of 10 steps +1
        best = 0.0
        for t in range(11):
            tail_y = sum(math.comb(10, k) * p**k * (1 - p) ** (10 - k) for k in range(t, 11))
            tail_x = sum(math.comb(10, k) * (1 - p) ** k * p ** (10 - k) for k in range(t, 11))
            best = max(best, tail_y - math.exp(eps) * tail_x)
        return best

    for eps in (0.0, 2.0, 4.0):
        assert float(pl.delta(eps)) >= exact_delta(eps) * (1 + 1e-15), eps
    # epsilon(0.1): the loss at which delta(eps) = 0.1, by bisection on the exact delta
    lo, hi = 0.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if exact_delta(mid) > 0.1 else (lo, mid)
    assert float(pl.epsilon(0.1)) >= lo
