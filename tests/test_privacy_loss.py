"""dpax.PrivacyLoss as a value: construction from user arrays, batches, indexing, the pytree,
re-discretisation and composition against the Gaussian closed form."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import dpax
from dpax._engine.pair import Pair
from exact_refs import gdp_beta

ALPHAS = np.array([1e-4, 1e-2, 0.1, 0.5])


def _user_pair():
    """Randomized response with e^eps = 3 written by hand: losses -log 3, 0, log 3 on the
    grid k log 3 (nothing at 0)."""
    return dpax.PrivacyLoss([0.75, 0.0, 0.25], [0.25, 0.0, 0.75], -1, 0.0, 0.0, np.log(3.0))


def test_user_arrays_any_batch_shape_and_float64():
    pl = _user_pair()
    assert pl.batch_shape == () and pl.support_length == 3 and pl.pmf_x.dtype == np.float64
    assert pl.advantage() == pytest.approx(0.5, abs=1e-12)  # RR with e^eps = 3: (3 - 1) / (3 + 1)
    with jax.enable_x64(False):
        batch = dpax.PrivacyLoss(np.full((2, 3, 3), [0.75, 0.0, 0.25]), np.full((2, 3, 3), [0.25, 0.0, 0.75]),
                                 np.full((2, 3), -1), np.zeros((2, 3)), np.zeros((2, 3)), np.log(3.0))
        assert batch.batch_shape == (2, 3) and batch.pmf_y.shape == (2, 3, 3)
        assert batch.pmf_x.dtype == np.float64 and batch.pair.pmf_x.dtype == np.float64
        np.testing.assert_allclose(batch.advantage(), 0.5, atol=1e-12)
    np.testing.assert_allclose(pl.loss_values(), [-np.log(3.0), 0.0, np.log(3.0)])
    assert pl.epsilon(0.0) == pytest.approx(np.log(3.0), rel=1e-12)  # pure epsilon-DP


def test_pair_round_trip_indexing_and_broadcast():
    pl = dpax.gaussian([1.0, 2.0, 4.0], grid_step=0.1)  # grid 0.1: every row on one support length
    assert isinstance(pl.pair, Pair) and pl.pair.pmf_x.shape == (3, pl.support_length)
    same = dpax.PrivacyLoss.from_pair(pl.pair, pl.grid_step, "copy", (3,), pl.exact_ratio)
    np.testing.assert_array_equal(same.beta(ALPHAS), pl.beta(ALPHAS))
    np.testing.assert_allclose(pl[1].beta(ALPHAS), dpax.gaussian(2.0, grid_step=0.1).beta(ALPHAS), atol=1e-12)
    assert pl[1:].batch_shape == (2,) and pl[0].batch_shape == ()
    b = pl[2].broadcast_to((2, 2))
    assert b.batch_shape == (2, 2)
    np.testing.assert_array_equal(b.advantage(), np.full((2, 2), pl[2].advantage()))
    with pytest.raises(IndexError):
        pl[0][0]


def test_pytree_through_jit():
    pl = dpax.gaussian([1.0, 2.0, 4.0], grid_step=0.1)  # the batch of the test above (its kernels)
    leaves, tree = jax.tree_util.tree_flatten(pl)
    assert len(leaves) == 5
    with jax.enable_x64(True):
        doubled = jax.jit(lambda q: jax.tree_util.tree_map(lambda a: a, q))(pl)
    assert isinstance(doubled, dpax.PrivacyLoss) and doubled.batch_shape == (3,)
    np.testing.assert_array_equal(doubled.beta(ALPHAS), pl.beta(ALPHAS))


def test_tradeoff_points_are_monotone_and_on_the_curve():
    # the pair of the regrid test below (its kernels); grid 0.05 (1e-3 until 2026-11-27): its
    # single step is on the shortest support, that of the Gaussians of the tests above
    pl = dpax.dpsgd(1.0, 0.01, 100, grid_step=0.05)
    a, b = pl.tradeoff_points()
    assert np.all(np.diff(a) <= 0) and np.all(np.diff(b) >= 0)
    sa, sb = pl.tradeoff_points(symmetric=True)
    assert np.all(np.diff(sa) >= 0) and np.all(np.diff(sb) <= 0)
    inside = (sa > 1e-9) & (sa < 1 - 1e-9)
    np.testing.assert_allclose(pl.beta(sa[inside]), sb[inside], atol=1e-9)


def test_regrid_is_pessimistic_and_the_identity_at_the_same_step():
    fine = dpax.dpsgd(1.0, 0.01, 100, grid_step=0.05)  # grids 1e-3 and 1e-2 until 2026-11-27
    assert fine.regrid(0.05) is fine
    coarse = fine.regrid(0.1)  # both on the shortest support: the kernels of the tests above
    assert coarse.grid_step == 0.1
    assert np.all(coarse.beta(ALPHAS) <= fine.beta(ALPHAS) + 1e-12)
    assert coarse.epsilon(1e-5) >= fine.epsilon(1e-5) - 1e-12
    assert np.max(fine.beta(ALPHAS) - coarse.beta(ALPHAS)) < 0.05  # pessimistic, not useless


# 16 steps (an FFT length of its own) and 1 (a beta kernel of its own) are slow; default siblings:
# 400, and tests/test_gaussian_exact.py::test_self_compose_equals_repeated_compose
@pytest.mark.parametrize("steps", [pytest.param(1, marks=pytest.mark.slow), pytest.param(16, marks=pytest.mark.slow),
                                   400])
def test_self_compose_matches_the_composed_gaussian(steps):
    sigma, step = 4.0, 1e-3
    pl = dpax.gaussian(sigma, grid_step=step).self_compose(steps)
    exact = gdp_beta(ALPHAS, np.sqrt(steps) / sigma)
    beta = pl.beta(ALPHAS)
    assert np.all(beta <= exact + 1e-12)
    assert np.max(exact - beta) < 2e-3
    both = dpax.compose((dpax.gaussian(sigma, grid_step=step), steps))
    np.testing.assert_allclose(both.beta(ALPHAS), beta, atol=1e-12)


def test_bad_arguments_name_themselves():
    pl = _user_pair()
    with pytest.raises(ValueError, match="alpha"):
        pl.beta(1.5)
    with pytest.raises(ValueError, match="delta"):
        pl.epsilon(-0.1)
    with pytest.raises(ValueError, match="num_steps"):
        pl.self_compose(0)
    with pytest.raises(ValueError, match="grid_step"):
        pl.regrid(0.0)
    with pytest.raises(TypeError, match="compose argument 1"):
        dpax.compose(pl, "not a loss")


def test_an_indexed_row_says_which_row_of_the_batch_it_is():
    pl = dpax.gaussian([[1.0, 2.0], [3.0, 4.0]], grid_step=1e-2)
    assert pl[1, 0].description == "gaussian(noise_multiplier=<(2, 2) array>, sensitivity=1)[1, 0]"
    assert pl[1, 0].description in repr(pl[1, 0])
    assert pl[:1].description.endswith("[2 of 4 rows]")


def test_an_index_that_selects_nothing_or_is_no_index_says_so():
    """pl[2:2] selects no configuration: a ValueError naming the index (it failed inside with
    "batch_shape (0,) does not hold the pair's 0 row(s)"); an index out of range or not made
    of integers is an IndexError naming it and the batch's shape."""
    pl = dpax.gaussian([1.0, 2.0, 3.0], grid_step=1e-2)
    with pytest.raises(ValueError, match=r"key slice\(2, 2, None\) selects none of the 3 rows of the PrivacyLoss"):
        pl[2:2]
    with pytest.raises(IndexError, match=r"key 10 is not an index into a batch of shape \(3,\)"):
        pl[10]
    assert pl[1:].batch_shape == (2,) and pl[1].batch_shape == ()


def test_compose_names_its_parameter_other():
    pl = dpax.gaussian(1.0, grid_step=1e-2)
    with pytest.raises(TypeError, match=r"other must be a PrivacyLoss or a \(PrivacyLoss, count\) pair, got 3 "
                                        r"\(for 3 copies of this mechanism: self_compose\(3\)\)"):
        pl.compose(3)
    with pytest.raises(TypeError, match="other must be a PrivacyLoss"):
        pl.compose((None, 2))
    for count in (0, 1.5, True):  # the pair's count names other too
        with pytest.raises((TypeError, ValueError), match=r"the count of other \(other = \(PrivacyLoss, count\)\)"):
            pl.compose((pl, count))
    assert pl.compose((pl, 3)).advantage() == pytest.approx(pl.self_compose(4).advantage(), abs=1e-12)


@pytest.mark.parametrize("method, argument", [("delta", "epsilon"), ("epsilon", "delta"), ("beta", "alpha")])
def test_empty_queries_give_empty_answers_of_their_shape(method, argument):
    """Any shape is allowed, an empty one too: the answers are empty, batch_shape + shape,
    on both sides of a bracket; an empty array of booleans is refused like a full one."""
    pl = dpax.gaussian([1.0, 2.0], grid_step=1e-2)
    for query in (np.array([]), [], np.zeros((3, 0))):
        shape = np.shape(query)
        out = getattr(pl, method)(query)
        assert isinstance(out, np.ndarray) and out.shape == (2,) + shape and out.dtype == np.float64
        full = getattr(pl, method)(np.full(shape[:-1] + (1,), 0.5))
        assert full.shape == (2,) + shape[:-1] + (1,)  # the same layout as a non-empty query
        b = getattr(pl[0], method)(query, bounds=True)
        assert b.safe.shape == b.optimistic.shape == shape
    with pytest.raises(TypeError, match=f"{argument} must be a real number.*not booleans; got array"):
        getattr(pl, method)(np.array([], dtype=bool))


@pytest.mark.parametrize("batch_shape, error", [("ab", TypeError), ((True,), TypeError), ((2.0,), TypeError),
                                                ((-1, -2), ValueError), ((3,), ValueError)])
def test_from_pair_names_a_bad_batch_shape(batch_shape, error):
    pl = dpax.gaussian([1.0, 2.0], grid_step=1e-2)
    with pytest.raises(error, match="batch_shape"):
        dpax.PrivacyLoss.from_pair(pl.pair, pl.grid_step, "copy", batch_shape)
