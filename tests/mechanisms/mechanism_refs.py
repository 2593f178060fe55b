"""Closed forms and query points shared by the tests of dpax.mechanisms (test_laplace_family.py,
test_mechanisms_atoms.py, test_gaussian_family.py, test_common.py, test_mechanisms_profile.py and
test_mechanisms_cli.py): one ALPHAS and one EPSILONS, so that the files ask their queries with the
same kernel shapes.

References: closed-form trade-off curves (Laplace: Dong, Roth & Su Example; randomized
response and the epsilon-DP / (epsilon, delta) worst case: Kairouz et al.), exact privacy
profiles summed over the atoms (discrete mechanisms) or from the Laplace CDFs. Tolerances:
never on the optimistic side (beta above the truth, delta below it) beyond 1e-12.
"""

from __future__ import annotations

import numpy as np

ALPHAS = np.unique(np.concatenate([np.logspace(-6, np.log10(0.5), 30), np.linspace(0.01, 0.99, 50)]))
EPSILONS = np.array([0.0, 0.05, 0.2, 0.5, 1.0, 1.5, 2.5])


def laplace_beta(alpha, eps):
    """Trade-off curve of Lap(0, b) vs Lap(D, b), eps = D / b (Dong, Roth & Su)."""
    a = np.asarray(alpha, float)
    mid = np.exp(-eps) / (4.0 * np.maximum(a, 1e-300))
    return np.where(a < np.exp(-eps) / 2, 1 - np.exp(eps) * a, np.where(a <= 0.5, mid, np.exp(-eps) * (1 - a)))


def approx_dp_beta(alpha, eps, delta=0.0):
    """max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)) (Kairouz et al.)."""
    a = np.asarray(alpha, float)
    return np.maximum(0.0, np.maximum(1 - delta - np.exp(eps) * a, np.exp(-eps) * (1 - delta - a)))


def atoms_delta(eps, p, q):
    """Exact symmetrised delta(eps) of a finite pair: max of both hockey-stick divergences."""
    e = np.exp(np.asarray(eps, float))[..., None]
    return np.maximum(np.sum(np.maximum(q - e * p, 0), -1), np.sum(np.maximum(p - e * q, 0), -1))


def laplace_delta(eps, e0):
    """delta(eps) of the Laplace mechanism with eps0 = D / b: 1 - e^((eps - eps0) / 2)."""
    return np.where(eps < e0, -np.expm1((np.asarray(eps, float) - e0) / 2), 0.0)


def assert_safe_close(got, exact, tol, kind):
    """Within ``tol`` and on the safe side: 'beta' (got <= exact) or 'risk' (got >= exact)."""
    got, exact = np.asarray(got), np.asarray(exact)
    assert np.max(np.abs(got - exact)) <= tol, np.max(np.abs(got - exact))
    if kind == "beta":
        assert np.all(got <= exact + 1e-12), np.max(got - exact)
    else:
        assert np.all(got >= exact - 1e-12), np.max(exact - got)
