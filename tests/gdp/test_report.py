"""dpax.gdp.report: the Tier I (mu, regret, regret < 1e-2) and Tier II (beta at fixed FPRs and
at the advantage-maximising FPR) report with epsilon at common deltas, as a dataclass, a table
and JSON, against mu_and_regret, the curve's own beta and epsilon, and the mu-GDP closed forms."""

from __future__ import annotations

import json

import numpy as np
import pytest
from gdp_losses import _dpsgd, _gaussian, _rows
from scipy.stats import norm

from dpax import gdp
from exact_refs import gdp_beta


def test_report_tiers_table_and_json():
    pl = _dpsgd(1.0, 0.3, 100)
    r = gdp.report(pl)
    mu, regret = gdp.mu_and_regret(pl)
    assert r.mu == mu and r.regret == regret and r.gdp_ok == (regret < 1e-2) and not r.gdp_ok
    assert r.alpha.shape == (8,) and r.beta.shape == (8,)
    np.testing.assert_allclose(r.alpha[:7], gdp.TIER2_ALPHAS)
    np.testing.assert_allclose(r.beta, pl.beta(r.alpha), rtol=1e-12)
    assert r.alpha_star == pytest.approx((1 - pl.advantage()) / 2)
    np.testing.assert_allclose(r.epsilon, pl.epsilon(np.array(gdp.REPORT_DELTAS)))
    # mu-GDP is on the safe side of Tier II: beta >= f_mu at every reported alpha in the box
    assert np.all(r.beta[1:] >= gdp_beta(r.alpha[1:], r.mu) - 1e-12)
    text = r.table()
    assert "Tier I" in text and "Tier II" in text and "(max advantage)" in text
    back = json.loads(r.to_json())
    assert back["mu"] == pytest.approx(mu) and len(back["beta"]) == 8
    # a batch reports per configuration (_rows(): the batch of test_gdp_mu_regret.py's chunked rows)
    rb = gdp.report(_rows())
    assert rb.mu.shape == (2, 2) and rb.beta.shape == (2, 2, 8) and rb.table().count("Tier I:") == 4


def test_report_gaussian_epsilon_matches_closed_form():
    # the Gaussian of sigma 1 at grid 2.5e-4 (the kernels of the DP-SGD report above; the 4-step
    # composition of sigma 1 at grid 1e-4 it replaced compiled 7 of its own): exactly 1-GDP
    r = gdp.report(_gaussian())
    assert r.regret < 1e-6 and r.gdp_ok
    np.testing.assert_allclose(r.epsilon, gdp.epsilon(np.array(gdp.REPORT_DELTAS), 1.0), rtol=1e-3)
    np.testing.assert_allclose(r.beta[:7], norm.cdf(norm.isf(r.alpha[:7]) - 1.0), rtol=1e-3, atol=1e-9)
