"""A row's answer does not depend on the other rows of its batch: each row is built on its
own support length, composed on its own Chernoff window, FFT length and placement, so that
beta, advantage, epsilon, delta and mu / regret of a row in a batch beside rows of very
different width equal its answers alone to 1e-12 relative (observed: identical, or within an
ulp). A narrow row that took a wide batch's support, Chernoff parameters and FFT length would
move epsilon by ~2e-9, delta at large epsilon (FFT round-off booked on the +inf atom) by 100%
and mu by 7e-6."""

from __future__ import annotations

import numpy as np
import pytest

import dpax

ALPHAS = [1e-3, 0.01, 0.1, 0.5]
DELTAS = [1e-5, 1e-8]
EPSILONS = [0.5, 1.0]
#: A probability that is itself round-off (delta of randomized response at its own epsilon,
#: 6e-17 alone, 1.1e-16 in a batch: the breakpoint tables of a longer array are summed in
#: other blocks) may differ by this much; everything else to 1e-12 relative.
PROBABILITY_ROUND_OFF = 2.3e-16


def _answers(pl, mu=True):
    out = {"beta": pl.beta(ALPHAS), "advantage": pl.advantage(), "epsilon": pl.epsilon(DELTAS),
           "delta": pl.delta(EPSILONS)}
    if mu:
        out["mu"], out["regret"] = dpax.gdp.mu_and_regret(pl)
    return {k: np.asarray(v, float) for k, v in out.items()}


def _assert_rows_as_alone(batch, alone_rows, mu=True):
    rows = int(np.prod(batch.batch_shape))
    together = {k: v.reshape((rows,) + v.shape[len(batch.batch_shape):]) for k, v in _answers(batch, mu).items()}
    for i, alone in enumerate(alone_rows):
        for key, value in _answers(alone, mu).items():
            atol = PROBABILITY_ROUND_OFF if key in ("beta", "advantage", "delta") else 0.0
            np.testing.assert_allclose(together[key][i], value, rtol=1e-12, atol=atol, err_msg=f"row {i}: {key}")


# slow (~9 s): a DP-SGD row beside a much wider one keeps its own mu, regret and
# epsilon to 1e-12 in the default run by
# tests/engine/test_composition.py::test_a_narrow_row_in_a_wide_batch_keeps_its_own_far_tails,
# and beta, advantage, epsilon and delta of rows of very different width by
# test_constructions_answer_as_alone below
@pytest.mark.slow
def test_dpsgd_rows_of_very_different_width_answer_as_alone():
    """A narrow row (1.685, 0.01, 20) beside rows up to 20 times wider; at grid 1e-3 the
    same holds in test_composition's narrow-row test. (Three rows: a fourth of middle width
    would only add kernels of its own.)"""
    noise, rate, steps = [1.685, 4.0, 0.8], [0.01, 0.001, 0.5], [20, 200, 50]
    batch = dpax.dpsgd(noise, rate, steps, grid_step=1e-2)
    alone = [dpax.dpsgd(s, p, t, grid_step=1e-2) for s, p, t in zip(noise, rate, steps)]
    assert batch.support_length > 8 * min(a.support_length for a in alone)  # really different widths
    _assert_rows_as_alone(batch, alone)


@pytest.mark.slow  # ~9 s; the construction tests below and test_composition's narrow-row test keep the guarantee
# in the default run
def test_heterogeneous_composition_and_constructions_answer_as_alone():
    g = dpax.gaussian([1.0, 8.0], grid_step=1e-2)
    lap = dpax.laplace(2.0, grid_step=1e-2)
    batch = dpax.compose((g, [[3], [40]]), (lap, 2))  # batch (2, 2): four rows of different width
    alone = [dpax.compose((dpax.gaussian(s, grid_step=1e-2), t), (lap, 2)) for t in (3, 40) for s in (1.0, 8.0)]
    assert batch.batch_shape == (2, 2)
    _assert_rows_as_alone(batch, alone, mu=False)


#: Each construction's two rows are 1280 and 256 points long (a wide and a narrow row, the
#: narrow one as long as the narrow DP-SGD row of the slow test above), so the three cases share their analysis
#: kernels (12 of them) instead of compiling their own for lengths 448, 4096 and 1280
@pytest.mark.parametrize("make, values", [
    (lambda v: dpax.laplace(v, grid_step=1e-2), [0.17, 6.0]),
    (lambda v: dpax.subsampled_gaussian(v, 0.3, grid_step=1e-2, neighbouring="substitution"), [1.5, 6.0]),
    (lambda v: dpax.randomized_response(v, grid_step=1e-2), [0.5, 6.0]),
])
def test_constructions_answer_as_alone(make, values):
    batch = make(values)
    assert batch.support_length >= 5 * min(make(v).support_length for v in values)  # really different widths
    _assert_rows_as_alone(batch, [make(v) for v in values], mu=False)
