"""The Gaussian mechanism and its closed forms for the tests of dpax.targets (test_targets.py,
test_combined.py and test_calibrating_to_targets.py): the mu* of the Gaussian that just meets a
target, computed with scipy alone (Kulynych et al. 2024, App. B: Corollaries B.3 / B.4, the
analytic Gaussian of Balle & Wang; Table 1 for accuracy and PPV; Dong et al. for GDP), and
whether a Gaussian of a given noise meets it by dpax at the tests' grid STEP."""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

import dpax
from dpax.targets import GDP, PPV, Accuracy, Advantage, Epsilon, ErrRates, Reconstruction
from exact_refs import gdp_beta, gdp_delta

STEP = 1e-3
RTOL = 1e-4


def _gauss(s):
    return dpax.gaussian(s, grid_step=STEP)


def _exact_mu(target):
    """mu* of the Gaussian mechanism that just meets ``target`` (independent of dpax)."""
    if isinstance(target, Advantage):  # Corollary B.3
        return 2 * norm.ppf((1 + float(target.advantage)) / 2)
    if isinstance(target, Accuracy):  # Table 1: beta* = 2 (1 - acc) - alpha
        a = float(target.alpha)
        return norm.isf(a) - norm.ppf(2 * (1 - float(target.accuracy)) - a)
    if isinstance(target, PPV):  # ppv = (1 - b) / (1 - b + a) <= ppv*  <=>  b >= 1 - a ppv / (1 - ppv)
        a, v = float(target.alpha), float(target.ppv)
        return norm.isf(a) - norm.ppf(1 - a * v / (1 - v))
    if isinstance(target, Reconstruction):  # success <= 1 - f(kappa)
        return norm.isf(float(target.baseline)) - norm.ppf(1 - float(target.success))
    if isinstance(target, ErrRates):  # Corollary B.4
        return norm.isf(float(target.alpha)) - norm.ppf(float(target.beta))
    if isinstance(target, Epsilon):  # analytic Gaussian mechanism, Eq. 22
        e, d = float(target.epsilon), float(target.delta)
        return brentq(lambda m: gdp_delta(e, m) - d, 1e-3, 50, xtol=1e-15, rtol=1e-15)
    if isinstance(target, GDP):
        return float(target.mu)
    raise AssertionError(target)


def _risk_ok(target, sigma):
    """Does the Gaussian mechanism with noise sigma meet the target, by dpax at STEP?"""
    pl = _gauss(sigma)
    if isinstance(target, Advantage):
        return pl.advantage() <= float(target.advantage)
    if isinstance(target, Accuracy):
        a = float(target.alpha)
        return 0.5 * ((1 - a) + (1 - pl.beta(a))) <= float(target.accuracy)
    if isinstance(target, PPV):
        a = float(target.alpha)
        tpr = 1 - pl.beta(a)
        return tpr / (tpr + a) <= float(target.ppv)
    if isinstance(target, Reconstruction):
        return 1 - pl.beta(float(target.baseline)) <= float(target.success)
    if isinstance(target, ErrRates):
        return pl.beta(float(target.alpha)) >= float(target.beta)
    if isinstance(target, Epsilon):
        return pl.epsilon(float(target.delta)) <= float(target.epsilon)
    if isinstance(target, GDP):  # check on a dense alpha grid against G_mu
        alphas = np.concatenate([np.logspace(-12, -1, 200), np.linspace(0.1, 0.999, 300)])
        return bool(np.all(pl.beta(alphas) >= gdp_beta(alphas, float(target.mu)) - 1e-12))
    raise AssertionError(target)
