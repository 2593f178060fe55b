"""riskcal's API on the dpax engine: ``from dpax.compat.riskcal import ...``.

Mirrors the names and arguments of riskcal 1.5 (``riskcal.analysis``,
``riskcal.calibration.dpsgd``, ``riskcal.accountants``) for the seed paper's quantities:
beta at alpha (Algorithm 1), advantage (Algorithm 3, Eq. 11), calibration to advantage
(Eq. 14) and to error rates (Eq. 18), and the closed forms for GDP and (epsilon, delta)-DP
(Dong et al. 2019, Eq. 5-6). Differences, all on the safe side:

* DP-SGD is built from the exact loss CDFs (not dp-accounting's second differences), so at
  fine grids beta is lower than riskcal's by riskcal's own discretisation error;
* calibration returns the smallest noise verified to meet the target at ``grid_step`` with a
  relative noise tolerance of 1e-4; ``advantage_tol`` / ``beta_tol`` (riskcal's tolerance on
  the risk) are accepted for compatibility and not needed. A target not met within
  ``[noise_min, noise_max]`` raises ValueError.

Arguments that were scalars in riskcal may be arrays here (one batched kernel).
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import conversions as _conv
from .. import gdp as _gdp
from .. import targets as _targets
from .._engine import validation as _v
from .._engine.x64 import float64
from ..accountants import PLDAccountant
from ..interop import from_dp_accounting
from ..calibration import calibrate_dpsgd
from ..mechanisms import dpsgd
from ..privacy_loss import PrivacyLoss

__all__ = [
    "CTDAccountant",
    "find_noise_multiplier_for_advantage",
    "find_noise_multiplier_for_err_rates",
    "get_advantage_for_dpsgd",
    "get_advantage_from_adp",
    "get_advantage_from_gdp",
    "get_advantage_from_pld",
    "get_bayes_risk_from_gdp",
    "get_bayes_risk_from_pld",
    "get_beta_for_dpsgd",
    "get_beta_from_adp",
    "get_beta_from_gdp",
    "get_beta_from_pld",
    "get_beta_from_rdp",
    "get_beta_from_zcdp",
    "get_epsilon_from_err_rates",
]


def _as_loss(pld) -> PrivacyLoss:
    if isinstance(pld, PrivacyLoss):
        return pld
    return from_dp_accounting(pld)


def _deprecated(old, new, value):
    if value is not None:
        warnings.warn(f"Parameter '{old}' is deprecated; use '{new}' instead.", DeprecationWarning, stacklevel=3)
    return value


def _scalar(a):
    a = np.asarray(a, dtype=np.float64)
    return float(a) if a.ndim == 0 else a


# -- PLD analysis (riskcal.analysis) -------------------------------------------------------


def get_beta_from_pld(pld, alpha=None, alphas=None):
    """FNR at FPR ``alpha`` of a dp-accounting PLD or a :class:`dpax.PrivacyLoss`
    (Algorithm 1, symmetrised curve). ``alphas`` is riskcal's deprecated name."""
    if alpha is None and alphas is None:
        raise ValueError("Must specify alpha.")
    if alpha is not None and alphas is not None:
        raise ValueError("Must pass either alpha or alphas.")
    if alphas is not None:
        alpha = _deprecated("alphas", "alpha", alphas)
    return _as_loss(pld).beta(alpha)


def get_advantage_from_pld(pld) -> float:
    """Largest TPR - FPR of any attack, delta(0) of the PLD (Algorithm 3)."""
    return _as_loss(pld).advantage()


def get_bayes_risk_from_pld(pld, prior):
    """Bayes risk (1 - prior)(1 - delta(log(prior / (1 - prior)))) for a binary prior
    (Kulynych et al. 2025, Prop. D.1, Eq. 35)."""
    q = _v.probabilities("prior", prior, low_open=True, high_open=True)
    eps = np.log(q / (1 - q))
    return _scalar((1 - q) * (1 - np.asarray(_as_loss(pld).delta(eps))))


# -- DP-SGD (riskcal.calibration.dpsgd) ----------------------------------------------------


def get_beta_for_dpsgd(noise_multiplier, sample_rate, num_steps, alpha, grid_step=1e-4):
    """FNR at FPR ``alpha`` of DP-SGD (Poisson-subsampled Gaussian, ``num_steps`` steps)."""
    return dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=grid_step).beta(alpha)


def get_advantage_for_dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=1e-4):
    """Attack advantage of DP-SGD."""
    return dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=grid_step).advantage()


def _calibrated(res):
    return _scalar(res.noise_multiplier)


def find_noise_multiplier_for_advantage(
    advantage,
    sample_rate,
    num_steps,
    grid_step=1e-4,
    advantage_tol=1e-3,
    noise_min=0.1,
    noise_max=50.0,
    advantage_error=None,
    mu_error=None,
    mu_min=None,
    mu_max=None,
):
    """Smallest DP-SGD noise multiplier in [noise_min, noise_max] whose advantage is at most
    ``advantage`` (Eq. 14), verified at ``grid_step``. riskcal's deprecated names
    (advantage_error, mu_error, mu_min, mu_max) are accepted with a DeprecationWarning."""
    _deprecated("advantage_error", "advantage_tol", advantage_error)
    _deprecated("mu_error", "advantage_tol", mu_error)
    noise_min = _deprecated("mu_min", "noise_min", mu_min) or noise_min
    noise_max = _deprecated("mu_max", "noise_max", mu_max) or noise_max
    res = calibrate_dpsgd(sample_rate=sample_rate, num_steps=num_steps, target=_targets.Advantage(advantage),
                          grid_step=grid_step, noise_bounds=(noise_min, noise_max), compare_standard=False,
                          on_infeasible="raise")
    return _calibrated(res)


def find_noise_multiplier_for_err_rates(
    alpha,
    beta,
    sample_rate,
    num_steps,
    grid_step=1e-4,
    beta_tol=1e-3,
    noise_min=0.1,
    noise_max=50.0,
    beta_error=None,
    mu_error=None,
    mu_min=None,
    mu_max=None,
):
    """Smallest DP-SGD noise multiplier in [noise_min, noise_max] such that every attack
    with FPR ``alpha`` has FNR at least ``beta`` (Eq. 18), verified at ``grid_step``."""
    _deprecated("beta_error", "beta_tol", beta_error)
    _deprecated("mu_error", "beta_tol", mu_error)
    noise_min = _deprecated("mu_min", "noise_min", mu_min) or noise_min
    noise_max = _deprecated("mu_max", "noise_max", mu_max) or noise_max
    res = calibrate_dpsgd(sample_rate=sample_rate, num_steps=num_steps, target=_targets.ErrRates(alpha, beta),
                          grid_step=grid_step, noise_bounds=(noise_min, noise_max), compare_standard=False,
                          on_infeasible="raise")
    return _calibrated(res)


# -- closed forms (riskcal.analysis) -------------------------------------------------------


def get_beta_from_gdp(mu, alpha):
    """f_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) (Dong et al. 2019, Eq. 6)."""
    return _gdp.tradeoff(mu, alpha)


def get_advantage_from_gdp(mu):
    """Phi(mu / 2) - Phi(-mu / 2) (Dong et al. 2019, Cor. 2.13)."""
    return _gdp.advantage(mu)


@float64
def get_bayes_risk_from_gdp(mu, prior):
    """Bayes risk of mu-GDP: (1 - prior)(1 - delta_mu(log(prior / (1 - prior))))."""
    q = _v.probabilities("prior", prior, low_open=True, high_open=True)
    m = _v.real_array("mu", mu, low=0.0, low_open=True)
    return _scalar((1 - q) * (1 - np.asarray(_gdp.delta(np.log(q / (1 - q)), m))))


def get_beta_from_adp(epsilon, delta, alpha):
    """Trade-off curve of (epsilon, delta)-DP (Dong et al. 2019, Eq. 5)."""
    return _conv.epsilon_delta_tradeoff(epsilon, delta, alpha)


def get_advantage_from_adp(epsilon, delta):
    """(e^eps + 2 delta - 1) / (e^eps + 1): largest advantage under (epsilon, delta)-DP."""
    e = _v.real_array("epsilon", epsilon, low=0.0)
    d = _v.probabilities("delta", delta)
    return _scalar((np.exp(e) + 2 * d - 1) / (np.exp(e) + 1))


def get_epsilon_from_err_rates(delta, alpha, beta):
    """Smallest epsilon for which (epsilon, delta)-DP allows error rates (alpha, beta):
    max(0, log((1 - delta - alpha) / beta), log((1 - delta - beta) / alpha))."""
    d = _v.probabilities("delta", delta)
    a = _v.probabilities("alpha", alpha)
    b = _v.probabilities("beta", beta)
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = np.log((1 - d - a) / b)
        e2 = np.log((1 - d - b) / a)
    return _scalar(np.maximum(np.maximum(np.nan_to_num(e1, nan=0.0), np.nan_to_num(e2, nan=0.0)), 0.0))


def get_beta_from_rdp(epsilon, alpha, order, linear_search_step=1e-3, max_bisection_steps=50, tol=1e-7):
    """Smallest FNR at FPR ``alpha`` allowed by (order, epsilon)-RDP
    (:func:`dpax.conversions.rdp_tradeoff`; the search arguments are riskcal's, unused)."""
    return _conv.rdp_tradeoff(order, epsilon, alpha)


def get_beta_from_zcdp(rho, alpha, tol=1e-9, min_order=1.0, max_order=1024.0, grid_size=1000):
    """Smallest FNR at FPR ``alpha`` allowed by rho-zCDP, the largest RDP curve over
    ``grid_size`` orders in [min_order, max_order] (:func:`dpax.conversions.zcdp_tradeoff`)."""
    orders = np.unique(np.concatenate([
        np.linspace(min_order, 2, grid_size // 3)[:-1],
        np.linspace(2, 16, grid_size // 3)[:-1],
        np.logspace(np.log10(16), np.log10(max_order), grid_size // 3),
        _conv.ZCDP_ORDERS[(_conv.ZCDP_ORDERS >= min_order) & (_conv.ZCDP_ORDERS <= max_order)],
    ]))
    return _conv.zcdp_tradeoff(rho, alpha, orders=orders)


# -- accountant (riskcal.accountants) ------------------------------------------------------


class CTDAccountant(PLDAccountant):
    """riskcal's ``CTDAccountant`` on dpax: the same ``step`` / ``get_epsilon(delta=)`` /
    ``get_beta(alpha=)`` / ``get_advantage()`` calls, ``grid_step=`` accepted by every query,
    and ``get_pld`` returning the composed loss as a dp-accounting PLD."""

    def get_pld(self, grid_step=1e-4, use_connect_dots=True):
        """The composed privacy loss as a dp-accounting ``PrivacyLossDistribution``."""
        return self.privacy_loss(grid_step).to_dp_accounting()

    def get_epsilon(self, *, delta, grid_step=1e-4, **kwargs):
        return super().get_epsilon(delta, grid_step=grid_step)

    def get_beta(self, *, alpha, grid_step=1e-4, **kwargs):
        return super().get_beta(alpha, grid_step=grid_step)

    def get_advantage(self, grid_step=1e-4, **kwargs):
        return super().get_advantage(grid_step=grid_step)

    @classmethod
    def mechanism(cls) -> str:
        return "ctd"
