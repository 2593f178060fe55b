"""Vectorised bracketing (dpax._engine.search.bracket_search) on monotone margins with known
roots: every answer is a verified hi with hi / lo - 1 <= rtol around the root, rows are
independent, and rows met at the lower bound or infeasible at the upper are marked."""

from __future__ import annotations

import numpy as np

from dpax._engine import search


def _search(margin, roots, lo, hi, bounds=(1e-3, 1e3), rtol=1e-6, candidates=3):
    calls = []

    def evaluate(params, rows):
        calls.append(rows.copy())
        return margin(params, roots[rows])

    return (*search.bracket_search(evaluate, lo, hi, bounds=bounds, rtol=rtol, candidates=candidates, what="t"),
            calls)


def test_every_row_brackets_its_root_within_rtol_whatever_its_start():
    rng = np.random.default_rng(5)
    roots = np.exp(rng.uniform(np.log(0.01), np.log(100), 40))
    # monotone margins of different shapes: linear in log, saturating, steep
    for margin in (lambda x, r: np.log(x / r), lambda x, r: np.tanh(x - r), lambda x, r: (x / r) ** 7 - 1):
        hi, lo, evaluations, bad = _search(margin, roots, np.full(40, 1.0), np.full(40, 2.0))[:4]
        assert not bad.any()
        assert np.all(margin(hi, roots) >= 0) and np.all(margin(lo, roots) < 0)  # verified sides
        assert np.all(hi / lo - 1 <= 1e-6) and np.all((lo < roots * (1 + 1e-12)) & (roots <= hi * (1 + 1e-12)))
        assert evaluations <= 40 * 60


def test_a_row_answers_as_it_does_alone():
    roots = np.array([0.5, 3.0, 40.0])
    margin = lambda x, r: np.log(x / r)  # noqa: E731
    together = _search(margin, roots, np.ones(3), np.full(3, 2.0))[0]
    for i in range(3):
        alone = _search(margin, roots[i:i + 1], np.ones(1), np.full(1, 2.0))[0]
        assert alone[0] == together[i]


def test_rows_met_at_the_lower_bound_and_infeasible_at_the_upper_are_marked():
    roots = np.array([1e-6, 5.0, 1e6])  # below bounds[0], inside, above bounds[1]
    hi, lo, evaluations, bad, calls = _search(lambda x, r: np.log(x / r), roots, np.ones(3), np.full(3, 2.0))
    assert bad.tolist() == [False, False, True] and np.isnan(hi[2])
    assert hi[0] == 1e-3 and np.isnan(lo[0])  # meets even at the smallest parameter allowed
    assert 5.0 <= hi[1] <= 5.0 * (1 + 1e-6)
    assert evaluations == sum(c.size for c in calls)  # every parameter evaluated is counted
