"""dpax.audit.fit: the Appendix 8.2 goodness of fit of the parametric Epsilon* model (Negoescu
et al.). EM recovers a Gaussian mixture; the KS p-values reject one Gaussian for bimodal data."""

from __future__ import annotations

import numpy as np
import pytest

from dpax import audit as A


def test_em_recovers_a_gaussian_mixture():
    rng = np.random.default_rng(11)
    n = 40_000
    comp = rng.random(n) < 0.3
    x = np.where(comp, rng.normal(-2.0, 0.5, n), rng.normal(1.5, 1.0, n))
    gm = A.fit_gaussian_mixture(x, 2)
    assert gm.converged
    assert gm.weights == pytest.approx([0.3, 0.7], abs=0.01)
    assert gm.means == pytest.approx([-2.0, 1.5], abs=0.03)
    assert gm.stds == pytest.approx([0.5, 1.0], abs=0.03)
    one = A.fit_gaussian_mixture(x, 1)  # one component: the sample mean and (ML) std
    assert one.means[0] == pytest.approx(x.mean(), abs=1e-10) and one.stds[0] == pytest.approx(x.std(), rel=1e-8)
    assert gm.log_likelihood > one.log_likelihood + 1000
    assert gm.cdf(np.array([-10.0, 10.0])) == pytest.approx([0.0, 1.0], abs=1e-12)


def test_ks_pvalues_reject_one_gaussian_for_bimodal_data():
    rng = np.random.default_rng(5)
    n = 20_000
    x = np.where(rng.random(n) < 0.5, rng.normal(-3.0, 1.0, n), rng.normal(3.0, 1.0, n))
    p = A.ks_pvalues(x, max_components=3, n_samples=1000, seed=1)
    assert p.shape == (3,)
    assert p[0] < 1e-6 and p[1] > 0.01 and p[2] > 0.01
    g = A.goodness_of_fit(rng.gamma(2.0, 5.0, 5000), rng.gamma(3.0, 5.0, 5000), max_components=2, n_samples=500)
    assert g["components"] == [1, 2] and len(g["train"]) == len(g["test"]) == 2
    assert all(0.0 <= v <= 1.0 for v in list(g["train"]) + list(g["test"]))
