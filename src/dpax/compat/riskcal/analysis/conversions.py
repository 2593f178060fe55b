"""riskcal's ``riskcal.analysis.conversions`` on the dpax engine: privacy risk (FNR at an
FPR, advantage, Bayes risk) from a PLD, Gaussian DP, (epsilon, delta)-DP, Rényi DP and
zCDP, with riskcal's names, arguments and deprecated aliases.

* PLDs (a dp-accounting ``PrivacyLossDistribution``, read by :func:`dpax.from_dp_accounting`,
  or a :class:`dpax.PrivacyLoss`, which may be a batch: results get its batch shape in
  front) are analysed by dpax's kernels: beta by Algorithm 1 with the symmetrisation of
  Dong et al. (Def. F.1), advantage delta(0) (Algorithm 3, Eq. 11), Bayes risk
  (1 - prior)(1 - delta(log(prior / (1 - prior)))) (Kulynych et al. 2025, Prop. D.1, Eq. 35);
* Gaussian DP: :mod:`dpax.gdp`'s closed forms (Dong et al. 2019, Eq. 6, Cor. 2.13);
  (epsilon, delta)-DP: Eq. 5 there (:func:`dpax.conversions.epsilon_delta_tradeoff`);
* Rényi DP: :func:`dpax.conversions.rdp_tradeoff` (the optimal conversion of one RDP
  guarantee, Zhu et al. 2022 App. F.1); zCDP: the largest of those curves over riskcal's
  grid of orders, and the advantage at the curve's fixed point (see ``_rdp``).

Every value errs on the safe side of the exact one (beta low, advantage high). Bad input
raises ``ValueError`` naming the argument where riskcal would return NaN. Arguments that
riskcal takes as scalars may be arrays. Scalar (int / float) ``alpha`` or ``prior`` gives a
float, as in riskcal.

The aliases ``get_beta_for_mu``, ``get_advantage_for_mu``, ``get_bayes_risk_for_mu``,
``get_beta_for_epsilon_delta``, ``get_advantage_for_epsilon_delta``,
``get_epsilon_for_err_rates`` and ``plrvs_from_pld`` carry riskcal's marker
``__deprecated__ = "2.0.0"`` and, as in riskcal 1.5.1, warn only where riskcal's do: the
``*_zcdp_approx`` functions and the ``alphas`` argument emit a ``DeprecationWarning``.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
from scipy.special import ndtri

from .... import conversions as _conv
from .... import gdp as _gdp
from ...._engine import validation as _v
from .._core import alpha_argument, as_loss, is_python_scalar, scalar_or_array
from . import _plrv, _rdp

__all__ = [
    "get_advantage_for_epsilon_delta",
    "get_advantage_for_mu",
    "get_advantage_from_adp",
    "get_advantage_from_gdp",
    "get_advantage_from_pld",
    "get_advantage_from_zcdp",
    "get_advantage_from_zcdp_approx",
    "get_bayes_risk_for_mu",
    "get_bayes_risk_from_gdp",
    "get_bayes_risk_from_pld",
    "get_beta_for_epsilon_delta",
    "get_beta_for_mu",
    "get_beta_from_adp",
    "get_beta_from_gdp",
    "get_beta_from_pld",
    "get_beta_from_rdp",
    "get_beta_from_zcdp",
    "get_beta_from_zcdp_approx",
    "get_epsilon_for_err_rates",
    "get_epsilon_from_err_rates",
    "get_mu_from_zcdp_approx",
    "pld_to_plrvs",
    "plrvs_from_pld",
]


def _alias(fn, name):
    """``fn`` under its deprecated riskcal name, marked ``__deprecated__ = "2.0.0"``."""

    @functools.wraps(fn)
    def alias(*args, **kwargs):
        return fn(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = name
    alias.__doc__ = f"Deprecated alias of :func:`{fn.__name__}` (riskcal marks it for removal in 2.0.0)."
    alias.__deprecated__ = "2.0.0"
    return alias


def _prior(prior):
    """(prior array, whether riskcal would return a scalar)."""
    return _v.probabilities("prior", prior), is_python_scalar(prior)


def _bayes_risk(q, delta_at, batch_shape=()):
    """(1 - q)(1 - delta(log(q / (1 - q)))) elementwise, 0 at q = 0 and q = 1 (Eq. 35);
    ``delta_at`` may answer for a batch of mechanisms (leading ``batch_shape``)."""
    flat = q.reshape(-1)
    inner = (flat > 0) & (flat < 1)
    out = np.zeros(tuple(batch_shape) + flat.shape)
    if np.any(inner):
        qi = flat[inner]
        d = np.asarray(delta_at(np.log(qi) - np.log1p(-qi)), float).reshape(tuple(batch_shape) + qi.shape)
        out[..., inner] = (1.0 - qi) * (1.0 - d)
    return out.reshape(tuple(batch_shape) + q.shape)


def _prior_result(out, scalar):
    return float(out.reshape(-1)[0]) if (scalar or out.ndim == 0) and out.size == 1 else out


# -- PLRVs ---------------------------------------------------------------------------------


def pld_to_plrvs(pld) -> _plrv.PLRVs:
    """The privacy loss random variables (:class:`PLRVs`, Definition 3.3) of a dp-accounting
    PLD or a :class:`dpax.PrivacyLoss`, as :func:`dpax.from_dp_accounting` reads them.
    ``is_symmetric`` is the PLD's own flag (False for a PrivacyLoss: its curve is then
    symmetrised, which is exact for a symmetric pair too)."""
    pl = as_loss(pld)
    return _plrv.from_privacy_loss(pl, bool(getattr(pld, "_symmetric", False)))


plrvs_from_pld = _alias(pld_to_plrvs, "plrvs_from_pld")


# -- PLD -----------------------------------------------------------------------------------


def get_beta_from_pld(pld, alpha=None, alphas=None):
    """FNR at FPR ``alpha`` of a dp-accounting PLD or a :class:`dpax.PrivacyLoss`
    (Algorithm 1, symmetrised). ``alphas``: riskcal's deprecated name (warns)."""
    alpha = alpha_argument(alpha, alphas)
    out = as_loss(pld, single=False).beta(_v.probabilities("alpha", alpha))
    return float(out) if is_python_scalar(alpha) and np.size(out) == 1 else out


def get_advantage_from_pld(pld) -> float:
    """Largest TPR - FPR of any attack: delta(0) of the PLD (Algorithm 3, Eq. 11)."""
    return scalar_or_array(as_loss(pld, single=False).advantage())


def get_bayes_risk_from_pld(pld, prior):
    """Smallest error of an attack on a binary secret with prior ``prior``:
    (1 - prior)(1 - delta(log(prior / (1 - prior)))) (Kulynych et al. 2025, Eq. 35)."""
    q, scalar = _prior(prior)
    pl = as_loss(pld, single=False)
    return _prior_result(_bayes_risk(q, pl.delta, pl.batch_shape), scalar)


# -- GDP -----------------------------------------------------------------------------------


def get_beta_from_gdp(mu, alpha):
    """f_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) (Dong et al. 2019, Eq. 6)."""
    return _gdp.tradeoff(mu, alpha)


def get_advantage_from_gdp(mu):
    """Phi(mu / 2) - Phi(-mu / 2) (Dong et al. 2019, Cor. 2.13)."""
    return _gdp.advantage(mu)


def get_bayes_risk_from_gdp(mu, prior):
    """Bayes risk of mu-GDP, Eq. 35 with the Gaussian privacy profile (Cor. 2.13);
    min(prior, 1 - prior) at mu = 0."""
    m = _v.one_number("mu", mu, low=0.0)
    q, scalar = _prior(prior)
    if m == 0.0:
        return _prior_result(np.minimum(q, 1.0 - q), scalar)
    return _prior_result(_bayes_risk(q, lambda eps: _gdp.delta(eps, m)), scalar)


get_beta_for_mu = _alias(get_beta_from_gdp, "get_beta_for_mu")
get_advantage_for_mu = _alias(get_advantage_from_gdp, "get_advantage_for_mu")
get_bayes_risk_for_mu = _alias(get_bayes_risk_from_gdp, "get_bayes_risk_for_mu")


# -- (epsilon, delta)-DP -------------------------------------------------------------------


def get_beta_from_adp(epsilon, delta, alpha):
    """max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)) (Dong et al. 2019, Eq. 5)."""
    return _conv.epsilon_delta_tradeoff(epsilon, delta, alpha)


def get_advantage_from_adp(epsilon, delta):
    """(e^eps + 2 delta - 1) / (e^eps + 1): the largest advantage under (epsilon, delta)-DP
    (the curve above at its fixed point)."""
    e = _v.real_array("epsilon", epsilon, low=0.0)
    d = _v.probabilities("delta", delta)
    x = np.exp(-e)  # the same ratio times e^-eps over e^-eps: no inf / inf at a large epsilon
    return scalar_or_array((-np.expm1(-e) + 2.0 * d * x) / (1.0 + x))


def get_epsilon_from_err_rates(delta, alpha, beta):
    """Smallest epsilon for which (epsilon, delta)-DP allows the error rates (alpha, beta):
    max(0, log((1 - delta - alpha) / beta), log((1 - delta - beta) / alpha)) (inf where
    alpha or beta is 0 and the other below 1 - delta)."""
    d = _v.probabilities("delta", delta)
    a = _v.probabilities("alpha", alpha)
    b = _v.probabilities("beta", beta)
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = np.log(1.0 - d - a) - np.log(b)
        e2 = np.log(1.0 - d - b) - np.log(a)
    e1 = np.where(np.isnan(e1), -np.inf, e1)
    e2 = np.where(np.isnan(e2), -np.inf, e2)
    return scalar_or_array(np.maximum(np.maximum(e1, e2), 0.0))


get_beta_for_epsilon_delta = _alias(get_beta_from_adp, "get_beta_for_epsilon_delta")
get_advantage_for_epsilon_delta = _alias(get_advantage_from_adp, "get_advantage_for_epsilon_delta")
get_epsilon_for_err_rates = _alias(get_epsilon_from_err_rates, "get_epsilon_for_err_rates")


# -- RDP -----------------------------------------------------------------------------------


def get_beta_from_rdp(epsilon, alpha, order, linear_search_step=1e-3, max_bisection_steps=50, tol=1e-7):
    """Smallest FNR at FPR ``alpha`` allowed by (``order``, ``epsilon``)-RDP (the optimal
    conversion, Zhu et al. 2022 App. F.1): :func:`dpax.conversions.rdp_tradeoff`, bisected
    to 1e-13 (so ``tol`` is met; ``linear_search_step`` and ``max_bisection_steps`` are
    unused, as in riskcal). Orders below 1/2 use D_t(P||Q) = t / (1 - t) D_(1-t)(Q||P)."""
    t = _v.one_number("order", order, low=0.0, low_open=True)
    e = _v.one_number("epsilon", epsilon, low=0.0)
    a = _v.probabilities("alpha", alpha)
    _v.one_number("linear_search_step", linear_search_step, low=0.0, low_open=True)  # unused, but checked
    _v.one_integer("max_bisection_steps", max_bisection_steps)
    _v.one_number("tol", tol, low=0.0, low_open=True, high=0.5)
    if t < 0.5:  # both directions are bounded, so order t is order 1 - t with budget (1 - t) e / t
        t, e = 1.0 - t, (1.0 - t) * e / t
    return scalar_or_array(_conv.rdp_tradeoff(t, e, a))


# -- zCDP ----------------------------------------------------------------------------------


def _zcdp_checked(rho, tol, min_order, max_order, grid_size):
    r = _v.one_number("rho", rho, low=0.0)
    _v.one_number("tol", tol, low=0.0, low_open=True, high=0.5)
    size = _v.one_integer("grid_size", grid_size, minimum=6)
    lo = _v.one_number("min_order", min_order, low=1.0)
    hi = _v.one_number("max_order", max_order, low=1.0)
    orders = _rdp.zcdp_orders(lo, hi, size)
    return r, orders


def get_beta_from_zcdp(rho, alpha, tol=1e-9, min_order=1.0, max_order=1024.0, grid_size=1000):
    """Smallest FNR at FPR ``alpha`` allowed by ``rho``-zCDP: the largest (t, rho t)-RDP
    curve over riskcal's ``grid_size`` orders in [min_order, max_order] (Bun & Steinke 2016;
    Zhu et al. 2022 App. F.1), each bisected to ``tol`` / 4 from below. Exact at every
    alpha (riskcal returns 1 for alpha <= tol and 0 for alpha >= 1 - tol)."""
    r, orders = _zcdp_checked(rho, tol, min_order, max_order, grid_size)
    a = _v.probabilities("alpha", alpha)
    out = _rdp.max_rdp_tradeoff(orders, r * orders, a.reshape(-1), tol=tol).reshape(a.shape)
    return float(out.reshape(-1)[0]) if is_python_scalar(alpha) or out.ndim == 0 else out


def get_advantage_from_zcdp(rho, tol=1e-9, min_order=1.0, max_order=1024.0, grid_size=1000) -> float:
    """Largest TPR - FPR allowed by ``rho``-zCDP over the same orders as
    :func:`get_beta_from_zcdp`: 1 - 2 a*, a* the fixed point a = f(a) of that curve (the
    curve is convex and symmetric), found to ``tol`` / 4 from below (advantage from above)."""
    r, orders = _zcdp_checked(rho, tol, min_order, max_order, grid_size)
    if r == 0.0:
        return 0.0
    return float(min(1.0, 1.0 - 2.0 * _rdp.zcdp_fixed_point(r, orders, tol=tol)))


def get_mu_from_zcdp_approx(rho) -> float:
    """Deprecated (warns). The mu of Gaussian DP with the advantage of ``rho``-zCDP,
    2 Phi^-1((1 + advantage) / 2): f_mu passes through the fixed point of the zCDP curve
    (:func:`get_advantage_from_zcdp`), and the zCDP curve lies on or above it (checked on
    dense FPR grids for rho in [0.01, 2]), so the zCDP curve is mu-GDP with this mu. riskcal
    1.5.1 returns a fitted formula for it instead, within 0.07 of this for rho in
    [0.01, 0.5] and 0.31 below it at rho = 2."""
    warnings.warn(
        "get_mu_from_zcdp_approx is deprecated and will be removed in a future version. "
        "Use get_beta_from_zcdp or get_advantage_from_zcdp for exact computations.",
        DeprecationWarning, stacklevel=2,
    )
    adv = get_advantage_from_zcdp(rho)
    return float(2.0 * ndtri(0.5 * (1.0 + adv)))


def get_beta_from_zcdp_approx(rho, alpha):
    """Deprecated (warns): :func:`get_beta_from_zcdp`."""
    warnings.warn(
        "get_beta_from_zcdp_approx is deprecated and will be removed in a future version. "
        "Use get_beta_from_zcdp for exact computation.",
        DeprecationWarning, stacklevel=2,
    )
    return get_beta_from_zcdp(rho, alpha=alpha)


def get_advantage_from_zcdp_approx(rho) -> float:
    """Deprecated (warns): :func:`get_advantage_from_zcdp`."""
    warnings.warn(
        "get_advantage_from_zcdp_approx is deprecated and will be removed in a future version. "
        "Use get_advantage_from_zcdp for exact computation.",
        DeprecationWarning, stacklevel=2,
    )
    return get_advantage_from_zcdp(rho)
