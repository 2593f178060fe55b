"""dpax.mechanisms.laplace_family: the Laplace mechanism and the Poisson-subsampled Laplace.

References: the Laplace trade-off curve in closed form (Dong, Roth & Su Example), the exact
privacy profile from the Laplace CDFs (both directions of the subsampled pair), and
dp-accounting's PLDs on the same grid. Tolerances: 1e-4 absolute, and never on the optimistic
side (beta above the truth, delta below it) beyond 1e-12. Also what a Laplace PrivacyLoss says
about itself (its description and breakpoints) and its arguments refused by name.
"""

from __future__ import annotations

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dpa_pld
from mechanism_refs import ALPHAS, EPSILONS, assert_safe_close, laplace_beta, laplace_delta

import dpax


def test_laplace_matches_closed_form_curve_batch():
    # scales 0.5 and 1 (0.4, 0.8 and 1 until 2026-11-27): the pairs of
    # tests/mechanisms/test_common.py::test_substitution_laplace_and_discrete_double_sensitivity_rr_unchanged and
    # test_laplace_agrees_with_dp_accounting_same_grid; each row is read on its own, on the
    # batch's (scale 1's) 20480-point support, whose one-row kernels other files compile (the
    # whole batch's analysis kernels would be the file's own); rows of a Laplace batch answer
    # as alone: tests/engine/test_batch_independence.py::test_constructions_answer_as_alone (its Laplace case)
    scale = np.array([0.5, 1.0])
    pl = dpax.laplace(scale, sensitivity=1.0)
    assert pl.batch_shape == (2,)
    for i, b in enumerate(scale):
        row = pl[i]
        e0 = 1.0 / b
        assert_safe_close(row.beta(ALPHAS), laplace_beta(ALPHAS, e0), 1e-8, "beta")
        assert_safe_close(row.delta(EPSILONS), laplace_delta(EPSILONS, e0), 1e-8, "risk")
        # pure epsilon-DP: epsilon at delta = 0 is eps0, on the grid
        assert abs(row.epsilon(0.0) - e0) <= 1e-4 and row.epsilon(0.0) >= e0 - 1e-12
        adv = 1 - 2 * np.exp(-e0 / 2) / 2  # TPR - FPR at the threshold o = D/2: 1 - e^(-eps/2)
        assert abs(row.advantage() - adv) <= 1e-8 and row.advantage() >= adv - 1e-12


def _laplace_agrees_with_dp_accounting(configs):
    for b, s in configs:
        oracle = dpa_pld.from_laplace_mechanism(b, sensitivity=s, value_discretization_interval=1e-4)
        pl = dpax.laplace(b, s)
        ours = pl.delta(EPSILONS)
        theirs = np.array([oracle.get_delta_for_epsilon(e) for e in EPSILONS])
        assert np.max(np.abs(ours - theirs)) <= 1e-10


def test_laplace_agrees_with_dp_accounting_same_grid():
    _laplace_agrees_with_dp_accounting([(1.0, 1.0)])


@pytest.mark.slow  # default sibling: test_laplace_agrees_with_dp_accounting_same_grid (scale 1, sensitivity 1)
def test_laplace_agrees_with_dp_accounting_same_grid_sensitivity_two():
    """Scale 0.5, sensitivity 2 (a support of its own) of the test above."""
    _laplace_agrees_with_dp_accounting([(0.5, 2.0)])


def test_subsampled_laplace_exact_profile_and_dp_accounting():
    b, p = 0.8, 0.2
    pl = dpax.subsampled_laplace(b, p, sensitivity=1.0)
    e0 = 1.0 / b

    def sf_p(o):  # Pr_P[O > o], P = Lap(0, b)
        return np.where(o >= 0, 0.5 * np.exp(-o / b), 1 - 0.5 * np.exp(o / b))

    def sf_q1(o):  # Pr[O > o] under Lap(1, b)
        return sf_p(o - 1.0)

    def exact_delta(eps):
        # remove direction: Q' = (1-p)P + p Lap(1) vs P; L' > eps <=> L > t, L = (|o| - |o-1|)/b
        t = np.log((np.exp(eps) - 1 + p) / p)
        o = b * np.clip(t + e0, 0, 2 * e0) / 2
        o = np.where(t >= e0, np.inf, np.where(t < -e0, -np.inf, o))
        d1 = (1 - p) * sf_p(o) + p * sf_q1(o) - np.exp(eps) * sf_p(o)
        # add direction: P vs Q'; log(P/Q') > eps <=> L' < -eps <=> o < o(-eps)
        g = -eps
        t = np.log(np.maximum(np.exp(g) - 1 + p, 1e-300) / p) if np.exp(g) - 1 + p > 0 else -np.inf
        o2 = -np.inf if t < -e0 else (np.inf if t >= e0 else b * (t + e0) / 2)
        cdf_p = 1 - sf_p(o2)
        cdf_q = (1 - p) * cdf_p + p * (1 - sf_q1(o2))
        d2 = cdf_p - np.exp(eps) * cdf_q
        return max(d1, d2, 0.0)

    eps = np.array([0.0, 0.05, 0.1, 0.2, 0.4])
    exact = np.array([exact_delta(e) for e in eps])
    assert_safe_close(pl.delta(eps), exact, 1e-4, "risk")
    oracle = dpa_pld.from_laplace_mechanism(b, sensitivity=1.0, value_discretization_interval=1e-4, sampling_prob=p)
    theirs = np.array([oracle.get_delta_for_epsilon(e) for e in eps])
    assert np.max(np.abs(pl.delta(eps) - theirs)) <= 1e-6
    # p = 1 is the plain Laplace mechanism (scale 1, 0.8 until 2026-11-27: the pair and beta
    # kernel of test_laplace_agrees_with_dp_accounting_same_grid and other files, not its own)
    np.testing.assert_allclose(dpax.subsampled_laplace(1.0, 1.0).beta(ALPHAS), dpax.laplace(1.0).beta(ALPHAS),
                               atol=1e-12)


def test_repr_and_tradeoff_points():
    # scale 1 at grid 1e-4 (0.5 at 1e-3 until 2026-11-27, 2 before): the pair of
    # test_laplace_agrees_with_dp_accounting_same_grid, whose tradeoff_points kernel (20480
    # points) other files compile
    pl = dpax.laplace(1.0, sensitivity=1.0, grid_step=1e-4)
    text = repr(pl)
    for part in ("laplace(scale=1, sensitivity=1)", "grid_step=0.0001", "support_length=", "tail_mass"):
        assert part in text
    alpha, beta = pl.tradeoff_points()
    assert alpha.shape == beta.shape == (pl.support_length + 1,)
    assert np.all(np.diff(alpha) <= 0) and np.all(np.diff(beta) >= 0)
    assert np.all(beta <= laplace_beta(alpha, 1.0) + 1e-12)


# default sibling: tests/test_privacy_loss.py::test_tradeoff_points_are_monotone_and_on_the_curve
# (symmetric=True points monotone and on the curve at 1e-9)
@pytest.mark.slow
def test_symmetrised_tradeoff_points_interpolate_the_curve():
    pl = dpax.subsampled_laplace(1.0, 0.3, grid_step=1e-3)
    alpha, beta = pl.tradeoff_points(symmetric=True)
    assert alpha.shape == beta.shape == (2 * pl.support_length + 2,)
    assert np.all(np.diff(alpha) >= 0) and np.all(np.diff(beta) <= 1e-15)
    np.testing.assert_allclose(np.interp(ALPHAS, alpha, beta), pl.beta(ALPHAS), atol=1e-12)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: dpax.laplace(0.0), "scale"),
        (lambda: dpax.subsampled_laplace(1.0, 0.0), "sample_rate"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
