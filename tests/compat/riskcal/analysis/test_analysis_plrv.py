"""dpax.compat.riskcal.analysis._plrv: riskcal's ``PLRVs`` and ``get_beta`` on the dpax
engine. A hand-made asymmetric pair with a mass at infinity (its curve T(P, Q) known in
closed form), checked against that curve and against the real riskcal's ``get_beta``; the
conversion to and from a :class:`dpax.PrivacyLoss`."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpax.compat.riskcal.analysis import _plrv
from dpax.compat.riskcal.analysis._plrv import PLRVs, from_privacy_loss, get_beta, to_privacy_loss

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    rc_plrv = pytest.importorskip("riskcal.analysis._plrv")

#: P and Q on four outcomes; the last has no P-mass (loss +inf). The losses log(Q / P) are
#: log(1/3) < 0 < log(4) < +inf, on the grid indices -1, 0, 2 (only their order and sign count).
P = np.array([0.6, 0.3, 0.1, 0.0])
Q = np.array([0.2, 0.3, 0.4, 0.1])
#: T(P, Q): the Neyman-Pearson tests reject the outcomes of largest loss first:
#: (FPR, FNR) = (0, 1), (0, 0.9), (0.1, 0.5), (0.4, 0.2), (1, 0), linear in between
CURVE = (np.array([0.0, 0.1, 0.4, 1.0]), np.array([0.9, 0.5, 0.2, 0.0]))
A = np.linspace(0.0, 1.0, 41)


def _pair(symmetric):
    # X under P on -1, 0, 1, 2 (nothing at 1); Y under Q on -2, ..., 2 (another start), with its mass at +inf
    return PLRVs(y0=-2, pmf_Y=np.array([0.0, 0.2, 0.3, 0.0, 0.4]), infinity_mass_Y=0.1,
                 x0=-1, pmf_X=np.array([0.6, 0.3, 0.0, 0.1]), minus_infinity_mass_X=0.0, is_symmetric=symmetric)


def _riskcal_pair(plrvs):
    return rc_plrv.PLRVs(plrvs.y0, plrvs.pmf_Y, plrvs.infinity_mass_Y, plrvs.x0, plrvs.pmf_X,
                         plrvs.minus_infinity_mass_X, plrvs.is_symmetric)


def _pad(plrvs):
    """X and Y on one index range, as riskcal's Algorithm 1 reads them."""
    lo = min(plrvs.x0, plrvs.y0)
    n = max(plrvs.x0 + plrvs.pmf_X.size, plrvs.y0 + plrvs.pmf_Y.size) - lo
    x, y = np.zeros(n), np.zeros(n)
    x[plrvs.x0 - lo: plrvs.x0 - lo + plrvs.pmf_X.size] = plrvs.pmf_X
    y[plrvs.y0 - lo: plrvs.y0 - lo + plrvs.pmf_Y.size] = plrvs.pmf_Y
    return PLRVs(lo, y, plrvs.infinity_mass_Y, lo, x, plrvs.minus_infinity_mass_X, plrvs.is_symmetric)


def test_marked_symmetric_it_is_t_p_q():
    beta = get_beta(_pair(True), alpha=A)
    np.testing.assert_allclose(beta, np.interp(A, *CURVE), atol=1e-12)
    # riskcal's Algorithm 1 on the same pair
    np.testing.assert_allclose(beta, rc_plrv.get_beta(_riskcal_pair(_pad(_pair(True))), alpha=A), atol=1e-12)


def test_symmetrised_as_riskcal():
    beta = get_beta(_pair(False), alpha=A)
    ref = rc_plrv.get_beta(_riskcal_pair(_pad(_pair(False))), alpha=A)
    np.testing.assert_allclose(beta, ref, atol=1e-12)
    # the symmetrised curve lies on or below T(P, Q) and below it somewhere (the pair is asymmetric)
    t = np.interp(A, *CURVE)
    assert np.all(beta <= t + 1e-12) and np.any(beta < t - 1e-3)


def test_scalars_arrays_and_the_deprecated_name():
    assert isinstance(get_beta(_pair(True), alpha=0.1), float)
    assert get_beta(_pair(True), alpha=0.1) == pytest.approx(0.5, abs=1e-12)
    out = get_beta(_pair(True), alpha=np.array([[0.0, 0.1], [0.4, 1.0]]))
    assert out.shape == (2, 2)
    np.testing.assert_allclose(out, [[0.9, 0.5], [0.2, 0.0]], atol=1e-12)
    with pytest.warns(DeprecationWarning, match="'alphas'"):
        assert get_beta(_pair(True), alphas=0.4) == pytest.approx(0.2, abs=1e-12)
    with pytest.raises(ValueError, match="alpha"):
        get_beta(_pair(True), alpha=1.5)
    assert _plrv.__all__ == ["PLRVs", "get_beta"]


def test_to_and_from_a_privacy_loss():
    plrvs = _pair(False)
    pl = to_privacy_loss(plrvs)
    # both laws on one index range from min(x0, y0), zero-padded; grid step 1
    assert int(pl.offset) == -2 and pl.grid_step == 1.0
    np.testing.assert_array_equal(np.asarray(pl.pmf_x), [0.0, 0.6, 0.3, 0.0, 0.1])
    np.testing.assert_array_equal(np.asarray(pl.pmf_y), [0.0, 0.2, 0.3, 0.0, 0.4])
    assert float(pl.inf_mass_y) == 0.1 and float(pl.neginf_mass_x) == 0.0
    back = from_privacy_loss(pl, is_symmetric=True)
    assert (back.x0, back.y0, back.is_symmetric) == (-1, -1, True)
    np.testing.assert_array_equal(back.pmf_X, plrvs.pmf_X)
    np.testing.assert_array_equal(back.pmf_Y, [0.2, 0.3, 0.0, 0.4])
    assert back.infinity_mass_Y == 0.1 and back.minus_infinity_mass_X == 0.0
    # trimmed to the points where either law has mass
    padded = PLRVs(-3, np.array([0.0, 0.0, 0.2, 0.3, 0.0, 0.4, 0.0]), 0.1, -3, np.array([0.0, 0.0, 0.6, 0.3, 0.0, 0.1]),
                   0.0, False)
    trimmed = from_privacy_loss(to_privacy_loss(padded), False)
    assert trimmed.x0 == trimmed.y0 == -1 and trimmed.pmf_X.size == trimmed.pmf_Y.size == 4
    np.testing.assert_array_equal(trimmed.pmf_Y, back.pmf_Y)


def test_bad_pairs_are_refused():
    with pytest.raises(TypeError, match="plrvs must be a PLRVs"):
        to_privacy_loss({"y0": 0})
    bad = _pair(False)
    bad.y0 = 0.5
    with pytest.raises(ValueError, match="plrvs.y0 must be an integer grid index"):
        get_beta(bad, alpha=0.1)
    bad = _pair(False)
    bad.pmf_X = np.array([0.7, -0.1, 0.3, 0.1])
    with pytest.raises(ValueError, match="plrvs.pmf_X"):
        to_privacy_loss(bad)
    bad = _pair(False)
    bad.infinity_mass_Y = 1.5
    with pytest.raises(ValueError, match="plrvs.infinity_mass_Y"):
        to_privacy_loss(bad)
