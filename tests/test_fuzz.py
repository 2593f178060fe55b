"""Fuzz of the public API (issue 21): for every public function, hypothesis draws calls that
mix valid arguments with one invalid one (booleans, strings, NaN, infinity, negative or
out-of-range numbers, huge numbers, complex numbers, object arrays, wrong shapes, ragged
nested lists, None). An invalid call must raise ValueError or TypeError whose message names
the argument (and stays short); a valid call must return finite numbers (or the documented
inf, e.g. epsilon below the +inf atom).

One test per function, ``test_fuzz_<function>``, generated from ``SPECS``; half of its calls
are valid. Reproducible: ``derandomize=True`` and no example database, so CI draws the same
calls every run. The default run makes ``DEFAULT_EXAMPLES`` calls per function (``FEW_EXAMPLES``
for ``gdp.report``, ``delta_divergence`` and ``read_losses``; a function with few distinct calls
stops once it has made them all); ``pytest -m slow`` runs ``test_fuzz_more_<function>`` with
``SLOW_EXAMPLES`` (2000, more than the 200 / 100, then 100 / 50 calls the default run made
until 2026-11-27). The default run took ~35 s on 2 cores at 200 / 100, a third of it XLA
compilation, and ~23 s at 100 / 50 with two-row batches; every kernel shape below is reached
within the first few calls, so the one-row default batches (below) cut more than the counts:
42 -> 23 compilations, half the time of the file alone.

Cheap on purpose: JAX compiles one kernel per distinct array shape, so the valid values keep
every support on a few padded lengths (256 points: grids 0.05..0.1, Gaussian noise >= 4,
Laplace scale >= 1) and every batch at one row by default (valid arrays of one number: the
array path, on the kernels of the scalar calls) or two in the slow variants (``BATCH_ROWS``;
two by default until 2026-11-27); counts of steps stay at 1..3 (one FFT power ladder), and the
discrete Gaussian at one sigma (its atoms are an array shape).
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import os
import re
import shutil
import tempfile
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpax
from dpax import audit, conversions, gdp, targets

DEFAULT_EXAMPLES = 50  # 200, then 100 until 2026-11-27; the slow variants keep 2000
FEW_EXAMPLES = 25  # gdp.report, delta_divergence, read_losses: 100, then 50 until 2026-11-27
SLOW_EXAMPLES = 2000
#: Numbers in a valid array argument (rows of a valid batch): default and slow variants.
BATCH_ROWS = {False: 1, True: 2}
_rows = [BATCH_ROWS[False]]  # the running test's (set by each test, see _fuzz_test)
#: An error message longer than this floods a terminal (a whole array's repr).
MAX_MESSAGE = 400

nan, inf = float("nan"), float("inf")

# -- values ------------------------------------------------------------------------------


def one_of(*values: Any) -> st.SearchStrategy:
    return st.sampled_from(values)


#: Not real numbers at all: TypeError (or ValueError for the empty array), in any argument;
#: None too where it is not the argument's default (``bad(none_ok=True)``).
NOT_NUMBERS = one_of(
    True, False, np.bool_(True), np.array([True, False]), "0.5", "abc", "", b"1", 1 + 0j,
    np.array([1.0 + 1.0j]), np.array([1.0], dtype=object), np.array(["0.5"], dtype=object), [[1.0], [1.0, 2.0]],
    [], {"a": 1}, object(), [None, 1.0],
)
NOT_FINITE = one_of(nan, inf, -inf, np.array([1.0, nan]), np.array([inf, 1.0]), 10**400)
#: Scalar-only arguments: more than one number.
NOT_SCALAR = one_of([0.1, 0.2], np.full((2, 2), 0.1))


def batch(*values: Any) -> np.ndarray:
    """A valid array argument: the first ``_rows[0]`` of ``values`` (one or two rows)."""
    return np.array(values[: _rows[0]])


def real(lo: float, hi: float, *edges: Any, log: bool = False, pair: bool = True) -> st.SearchStrategy:
    """Valid numbers: ``edges`` and draws from [lo, hi] (log-uniform with ``log``); with
    ``pair`` arrays of them as well (:func:`batch`: one more batch shape in the slow variants,
    none by default)."""
    if log:
        core = st.floats(np.log10(lo), np.log10(hi)).map(lambda x: float(min(max(10.0**x, lo), hi)))
    else:
        core = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    one = st.one_of(one_of(*edges), core) if edges else core
    return st.one_of(one, st.tuples(one, one).map(lambda t: batch(*t))) if pair else one


def below(v: float, *, inclusive: bool = False) -> st.SearchStrategy:
    """Finite numbers below ``v`` (or at it, ``inclusive``), down to -1.8e308."""
    return st.floats(max_value=v, exclude_max=not inclusive, allow_nan=False, allow_infinity=False)


def above(v: float, *, inclusive: bool = False) -> st.SearchStrategy:
    """Finite numbers above ``v`` (or at it, ``inclusive``), up to 1.8e308."""
    return st.floats(min_value=v, exclude_min=not inclusive, allow_nan=False, allow_infinity=False)


def bad(*out_of_range: Any, scalar: bool = False, none_ok: bool = False) -> st.SearchStrategy:
    """Invalid values of a numeric argument: the catalogue above and its own out-of-range ones
    (values or strategies; ``scalar``: arrays too; ``none_ok``: None is the argument's
    default, so not among them)."""
    parts = [NOT_NUMBERS, NOT_FINITE]
    if not none_ok:
        parts.append(st.just(None))
    values = [v for v in out_of_range if not isinstance(v, st.SearchStrategy)]
    if values:
        parts.append(one_of(*values))
    parts += [v for v in out_of_range if isinstance(v, st.SearchStrategy)]
    if scalar:
        parts.append(NOT_SCALAR)
    return st.one_of(*parts)


def counts(lo: int, hi: int, *, pair: bool = True) -> st.SearchStrategy:
    """Valid whole numbers in [lo, hi] (ints, and floats that are whole)."""
    one = st.one_of(st.integers(lo, hi), st.integers(lo, min(hi, 2**53)).map(float))
    return st.one_of(one, st.tuples(one, one).map(lambda t: batch(*t))) if pair else one


GRID = real(0.05, 0.1, 0.1, 0.05, pair=False)  # one padded support length (256) for every valid call
BAD_GRID = bad(0.0, below(0.0), above(1.0), st.floats(1e-300, 9.9e-8), scalar=True)
BAD_PROB = bad(below(0.0), above(1.0))
BAD_POSITIVE = bad(0.0, below(0.0))
NOT_WHOLE = st.floats(-1e15, 1e15).filter(lambda x: x != round(x))
BAD_COUNT = bad(0, st.integers(max_value=0), NOT_WHOLE, st.integers(2**53 + 1, 2**62), above(2.0**53))
NEIGHBOURING = one_of("add_remove", "substitution")
BAD_NEIGHBOURING = one_of("add-remove", "", None, 1, True, "x" * 1000)
ANY_BAD = st.one_of(NOT_NUMBERS, NOT_FINITE, st.just(None))

# -- what a valid result must be ------------------------------------------------------------


def finite(x: Any, *, allow_inf: bool = False) -> None:
    arr = np.asarray(x, dtype=np.float64)
    assert not np.isnan(arr).any(), x
    if not allow_inf:
        assert np.isfinite(arr).all(), x


def probability(x: Any) -> None:
    finite(x)
    arr = np.asarray(x, dtype=np.float64)
    assert np.all((arr >= 0) & (arr <= 1)), x


def each(check: Callable[[Any], None]) -> Callable[[Any], None]:
    """The check of every item of a tuple result (arrays of different shapes)."""
    return lambda result: [check(x) for x in result] and None


def a_privacy_loss(pl: Any) -> None:
    assert isinstance(pl, dpax.PrivacyLoss)
    probability(pl.advantage())


def a_curve(curve: Any) -> None:
    probability(curve.beta(np.array([0.0, 0.1, 0.5, 1.0])))


# -- the functions --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Arg:
    """An argument: its keyword, valid and invalid values, and what an error about it says
    (``token``: a string, or a function of the invalid value; default the keyword)."""

    name: str
    valid: st.SearchStrategy
    invalid: st.SearchStrategy | None  # None: not fuzzed (the object a method is called on)
    token: str | Callable[[Any], str] | None = None

    def says(self, value: Any) -> str:
        if callable(self.token):
            return self.token(value)
        return self.token or self.name


@dataclasses.dataclass(frozen=True)
class Spec:
    """A public function: ``call(**arguments)``, its arguments, and the check of a valid
    call's result (``None``: valid calls are not made, e.g. a calibration, whose argument
    checks alone are fuzzed)."""

    name: str
    call: Callable[..., Any]
    args: tuple[Arg, ...]
    check: Callable[[Any], None] | None
    examples: int = DEFAULT_EXAMPLES

    def __repr__(self) -> str:
        return self.name


def pls() -> dict[str, dpax.PrivacyLoss]:
    """The privacy losses the method fuzz runs on (built once per batch size, small)."""
    return _pls(_rows[0])


@functools.lru_cache(maxsize=None)
def _pls(rows: int) -> dict[str, dpax.PrivacyLoss]:
    return {
        "one": dpax.gaussian(2.0, grid_step=0.1),
        "fine": dpax.gaussian(2.0, grid_step=0.05),
        "batch": dpax.dpsgd([2.0, 4.0][:rows], 0.1, 2, grid_step=0.1),
    }


PL = st.sampled_from(["one", "batch"]).map(lambda k: pls()[k])
BAD_PL = one_of(None, 1.0, "pl", [None], dpax.gaussian, np.ones(3))
MU = real(1e-300, 1e300, 0.0, 1.0, log=True)
EPS = real(1e-300, 1e300, 0.0, 709.0, 710.0, log=True)
DELTA = st.one_of(real(0.0, 1.0, 0.0, 1.0), real(1e-300, 1.0, log=True))
ALPHA = st.one_of(real(0.0, 1.0, 0.0, 1.0), real(1e-300, 1.0, log=True))
NOISE = real(4.0, 1e300, log=True)  # noise >= 4: every support on 256 points
RATE = real(1e-300, 1.0, 1.0, log=True)
BAD_RATE = bad(0.0, below(0.0), above(1.0))


def mechanism(fn: Callable[..., Any], *args: Arg, examples: int = DEFAULT_EXAMPLES) -> Spec:
    return Spec(f"dpax.{fn.__name__}", fn, args, a_privacy_loss, examples)


MECHANISMS = [
    mechanism(dpax.gaussian, Arg("noise_multiplier", NOISE, BAD_POSITIVE),
              Arg("sensitivity", real(1e-300, 1.0, 1.0, log=True, pair=False), BAD_POSITIVE),
              Arg("grid_step", GRID, BAD_GRID), Arg("neighbouring", NEIGHBOURING, BAD_NEIGHBOURING)),
    mechanism(dpax.subsampled_gaussian, Arg("noise_multiplier", NOISE, BAD_POSITIVE),
              Arg("sample_rate", RATE, BAD_RATE), Arg("grid_step", GRID, BAD_GRID),
              Arg("neighbouring", NEIGHBOURING, BAD_NEIGHBOURING)),
    mechanism(dpax.dpsgd, Arg("noise_multiplier", NOISE, BAD_POSITIVE), Arg("sample_rate", RATE, BAD_RATE),
              Arg("num_steps", counts(1, 3), BAD_COUNT), Arg("grid_step", GRID, BAD_GRID),
              Arg("neighbouring", NEIGHBOURING, BAD_NEIGHBOURING)),
    mechanism(dpax.laplace, Arg("scale", real(1.0, 1e300, log=True), BAD_POSITIVE),
              Arg("sensitivity", real(1e-300, 1.0, 1.0, log=True, pair=False), BAD_POSITIVE), Arg("grid_step", GRID, BAD_GRID),
              Arg("neighbouring", NEIGHBOURING, BAD_NEIGHBOURING)),
    mechanism(dpax.subsampled_laplace, Arg("scale", real(1.0, 1e300, log=True, pair=False), BAD_POSITIVE),
              Arg("sample_rate", RATE, BAD_RATE), Arg("sensitivity", real(1e-300, 2.0, log=True, pair=False), BAD_POSITIVE),
              Arg("grid_step", GRID, BAD_GRID)),
    mechanism(dpax.randomized_response, Arg("epsilon", real(0.0, 3.0, 0.0), bad(below(0.0), above(600.0))),
              Arg("k", counts(2, 2**50), bad(1, 0, st.integers(max_value=1), NOT_WHOLE, 2**60)), Arg("grid_step", GRID, BAD_GRID),
              Arg("neighbouring", NEIGHBOURING, BAD_NEIGHBOURING)),
    mechanism(dpax.approximate_dp, Arg("epsilon", real(0.0, 3.0, 0.0), bad(below(0.0), above(600.0))),
              Arg("delta", DELTA, BAD_PROB), Arg("grid_step", GRID, BAD_GRID)),
    mechanism(dpax.discrete_laplace, Arg("scale", real(1.0, 1e300, log=True, pair=False), BAD_POSITIVE),
              Arg("sensitivity", one_of(1, 2), BAD_COUNT), Arg("grid_step", GRID, BAD_GRID),
              Arg("neighbouring", NEIGHBOURING, BAD_NEIGHBOURING)),
    # sigma and the sensitivity set the number of integer atoms, an array shape: one value each
    mechanism(dpax.discrete_gaussian, Arg("sigma", one_of(5.0), bad(0.0, below(0.0), above(1.1e5))),
              Arg("sensitivity", one_of(1), BAD_COUNT), Arg("grid_step", GRID, BAD_GRID),
              Arg("neighbouring", NEIGHBOURING, BAD_NEIGHBOURING)),
]


def _profile(e):
    from scipy.stats import norm

    return norm.cdf(0.5 - e) - np.exp(e) * norm.cdf(-0.5 - e)


PROFILES = [
    Spec("dpax.from_privacy_profile", lambda delta, grid_step, epsilon_max: dpax.from_privacy_profile(
        delta, grid_step=grid_step, epsilon_max=epsilon_max), (
        Arg("delta", one_of(_profile), one_of(None, 1.0, "delta", lambda e: np.full(np.shape(e), nan),
                                                lambda e: np.ones(3), lambda e: -np.ones(np.shape(e)))),
        Arg("grid_step", one_of(0.1), BAD_GRID),
        Arg("epsilon_max", real(8.0, 12.0, pair=False), bad(0.0, below(0.0), above(600.0), none_ok=True)),
    ), a_privacy_loss),
]


def _compose(first, second, grid_step):
    return dpax.compose(first, second, grid_step=grid_step)


COMPOSE_ITEM = st.sampled_from([("one", 1), ("one", 2), ("one", 3.0), ("fine", 1), ("one", "batch")]).map(
    lambda kc: pls()[kc[0]] if kc[1] == 1 else (pls()[kc[0]], batch(1, 2) if kc[1] == "batch" else kc[1]))
BAD_COMPOSE_ITEM = st.one_of(
    one_of(None, 1.0, "pl", [None], (None,), (None, 1, 2)),
    BAD_COUNT.map(lambda c: (pls()["one"], c)),
)

METHODS = [
    Spec("PrivacyLoss.beta", lambda pl, alpha: pl.beta(alpha),
         (Arg("pl", one_of("one").map(lambda k: pls()[k]), None), Arg("alpha", ALPHA, BAD_PROB)), probability),
    Spec("PrivacyLoss.delta", lambda pl, epsilon: pl.delta(epsilon),
         (Arg("pl", one_of("one").map(lambda k: pls()[k]), None),
          Arg("epsilon", st.one_of(EPS, real(-1e300, 1e300)), ANY_BAD)),
         probability),
    Spec("PrivacyLoss.epsilon", lambda pl, delta: pl.epsilon(delta),
         (Arg("pl", one_of("one").map(lambda k: pls()[k]), None), Arg("delta", DELTA, BAD_PROB)),
         functools.partial(finite, allow_inf=True)),
    Spec("PrivacyLoss.self_compose", lambda pl, num_steps: pl.self_compose(num_steps),
         (Arg("pl", one_of("one").map(lambda k: pls()[k]), None),
          Arg("num_steps", counts(1, 3), BAD_COUNT)), a_privacy_loss),
    Spec("PrivacyLoss.regrid", lambda pl, grid_step: pl.regrid(grid_step),
         (Arg("pl", one_of("fine").map(lambda k: pls()[k]), None), Arg("grid_step", GRID, BAD_GRID)),
         a_privacy_loss),
    Spec("dpax.compose", _compose, (
        Arg("first", COMPOSE_ITEM, BAD_COMPOSE_ITEM, "compose argument 0"),
        Arg("second", COMPOSE_ITEM, BAD_COMPOSE_ITEM, "compose argument 1"),
        Arg("grid_step", one_of(None, "coarsest", 0.1), st.one_of(bad(0.0, below(0.0), above(1.0), scalar=True, none_ok=True),
                                                                  one_of("fine", "0.5", "")), "grid_step"),
    ), a_privacy_loss),
]

CONVERSIONS = [
    Spec("conversions.mu_from_epsilon_dp", conversions.mu_from_epsilon_dp, (Arg("epsilon", EPS, bad(below(0.0))),),
         functools.partial(finite, allow_inf=True)),  # inf beyond epsilon ~708 (documented)
    Spec("conversions.mu_from_epsilon_delta", conversions.mu_from_epsilon_delta,
         (Arg("epsilon", real(0.0, 500.0, 0.0), bad(below(0.0))),
          Arg("delta", real(1e-300, 0.999, 1e-5, log=True), bad(0.0, 1.0, below(0.0), above(1.0)))), finite),
    Spec("conversions.gdp_curve", conversions.gdp_curve, (Arg("mu", real(1e-300, 1e300, 0.0, log=True, pair=False),
                                                               bad(below(0.0), scalar=True)),),
         a_curve),
    Spec("conversions.epsilon_delta_tradeoff", conversions.epsilon_delta_tradeoff,
         (Arg("epsilon", EPS, bad(below(0.0))), Arg("delta", DELTA, BAD_PROB), Arg("alpha", ALPHA, BAD_PROB)), probability),
    Spec("conversions.epsilon_delta_curve", conversions.epsilon_delta_curve,
         (Arg("epsilon", real(1e-300, 1e300, 0.0, 800.0, log=True, pair=False), bad(below(0.0), scalar=True)),
          Arg("delta", real(0.0, 1.0, 0.0, 1.0, pair=False), bad(below(0.0), above(1.0), scalar=True))), a_curve),
    Spec("conversions.rdp_tradeoff", conversions.rdp_tradeoff,
         (Arg("order", real(0.5, 1e4, 0.5, 1.0, log=True), bad(below(0.5))),
          Arg("epsilon", EPS, bad(below(0.0))), Arg("alpha", ALPHA, BAD_PROB)),
         probability),
    Spec("conversions.rdp_curve", conversions.rdp_curve,
         (Arg("order", real(0.5, 1e4, 1.0, log=True, pair=False), bad(below(0.5), scalar=True)),
          Arg("epsilon", real(1e-300, 1e300, 0.0, log=True, pair=False), bad(below(0.0), scalar=True))), a_curve),
    Spec("conversions.zcdp_tradeoff", conversions.zcdp_tradeoff,
         (Arg("rho", real(1e-300, 1e300, 0.0, log=True), bad(below(0.0))), Arg("alpha", ALPHA, BAD_PROB),
          Arg("orders", st.lists(real(1.0, 1e3, 1.0, log=True, pair=False), min_size=1, max_size=3),
              bad(below(1.0), none_ok=True))), probability),
    Spec("conversions.zcdp_curve", conversions.zcdp_curve,
         (Arg("rho", real(1e-300, 1e300, 0.0, log=True, pair=False), bad(below(0.0), scalar=True)),
          Arg("orders", st.lists(real(1.0, 1e3, 1.0, log=True, pair=False), min_size=1, max_size=3),
              bad(below(1.0), none_ok=True))), a_curve),
    Spec("conversions.tabulated_curve", conversions.tabulated_curve,
         (Arg("alpha", st.lists(real(0.0, 1.0, 0.0, 1.0, pair=False), min_size=3, max_size=3), BAD_PROB),
          Arg("beta", st.lists(real(0.0, 1.0, 0.0, 1.0, pair=False), min_size=3, max_size=3).map(np.array), BAD_PROB)),
         a_curve),
    Spec("conversions.delta_divergence", conversions.delta_divergence,
         (Arg("f", one_of(conversions.gdp_curve(1.0), conversions.epsilon_delta_curve(1.0, 1e-5)), BAD_PL, "f must"),
          Arg("g", one_of(conversions.gdp_curve(0.5), conversions.tabulated_curve([0.0, 0.5, 1.0], [1.0, 0.2, 0.0])), BAD_PL,
              "g must")),
         finite, examples=FEW_EXAMPLES),
]

GDP = [
    Spec("gdp.tradeoff", gdp.tradeoff, (Arg("mu", MU, bad(below(0.0))), Arg("alpha", ALPHA, BAD_PROB)), probability),
    Spec("gdp.advantage", gdp.advantage, (Arg("mu", MU, bad(below(0.0))),), probability),
    Spec("gdp.delta", gdp.delta, (Arg("epsilon", st.one_of(EPS, real(-1e300, 1e300)), ANY_BAD),
                                  Arg("mu", MU, bad(below(0.0)))), probability),
    Spec("gdp.epsilon", lambda delta, mu: gdp.epsilon(delta, mu),
         (Arg("delta", real(1e-300, 1.0, 1.0, log=True), bad(0.0, below(0.0), above(1.0))), Arg("mu", MU, bad(below(0.0)))),
         functools.partial(finite, allow_inf=True)),  # inf for a mu beyond ~1e154 (epsilon beyond float64)
    Spec("gdp.compose", lambda first, second: gdp.compose(first, second),
         (Arg("first", MU, bad(below(0.0)), "mu 0"), Arg("second", MU, bad(below(0.0)), "mu 1")),
         functools.partial(finite, allow_inf=True)),
    Spec("gdp.gaussian_mu", gdp.gaussian_mu,
         (Arg("noise_multiplier", real(1e-300, 1e300, log=True), BAD_POSITIVE),
          Arg("sensitivity", real(1e-300, 1e300, 1.0, log=True), BAD_POSITIVE),
          Arg("num_steps", counts(1, 2**53), BAD_COUNT)), functools.partial(finite, allow_inf=True)),
    Spec("gdp.subsampled_clt_mu", gdp.subsampled_clt_mu,
         (Arg("noise_multiplier", real(1e-300, 1e300, log=True), BAD_POSITIVE),
          Arg("sample_rate", RATE, BAD_RATE), Arg("num_steps", counts(1, 2**53), BAD_COUNT)),
         functools.partial(finite, allow_inf=True)),
    Spec("gdp.clt_mu", gdp.clt_mu, (Arg("pl", PL, BAD_PL), Arg("num_steps", counts(1, 2**53), BAD_COUNT)),
         finite),
    Spec("gdp.mu_and_regret", gdp.mu_and_regret,
         (Arg("pl", one_of("one").map(lambda k: pls()[k]), BAD_PL),
          Arg("tail", real(1e-300, 0.4999, 0.0, 1e-10, log=True, pair=False), bad(0.5, below(0.0), above(0.5), scalar=True))),
         functools.partial(finite, allow_inf=True)),  # tail 0 with an infinite atom: mu = inf (documented)
    Spec("gdp.report", gdp.report,
         (Arg("pl", one_of("one").map(lambda k: pls()[k]), BAD_PL),
          Arg("deltas", st.one_of(st.tuples(DELTA), st.tuples(DELTA, DELTA, DELTA).map(np.hstack)), BAD_PROB),
          Arg("tail", real(1e-300, 0.4999, 1e-10, log=True, pair=False), bad(0.5, below(0.0), above(0.5), scalar=True))),
         lambda r: finite([r.mu, r.regret, r.advantage, *np.ravel(r.beta)]), examples=FEW_EXAMPLES),
]

TARGET = one_of(targets.Advantage(0.2), targets.ErrRates(0.1, 0.5), [targets.Advantage(0.2), targets.GDP(1.0)])
BAD_TARGET = one_of(None, 0.2, "advantage", [], [None], (targets.Advantage, 0.2), {"advantage": 0.2})
BAD_RTOL = bad(0.0, below(1e-8), above(0.1), scalar=True)
BAD_BOUNDS = st.one_of(NOT_NUMBERS, NOT_FINITE, one_of((1.0, 0.5), (0.0, 1.0), (1.0,), (0.1, 1.0, 10.0), (-1.0, 1.0), (2.0, 2.0)))
BAD_CANDIDATES = one_of(1, 0, 2000, 2.5, 3.0, True, "3", None, np.array([3]))


def _calibrate(mechanism, target, bounds, rtol, candidates, privacy, guess):
    return dpax.calibrate(mechanism, target, bounds=bounds, rtol=rtol, candidates=candidates, privacy=privacy, guess=guess)


CALIBRATION = [
    # valid calls run a search (seconds): only the argument checks are fuzzed
    Spec("dpax.calibrate_dpsgd", lambda **kw: dpax.calibrate_dpsgd(**kw), (
        Arg("sample_rate", one_of(0.1), BAD_RATE),
        Arg("num_steps", one_of(3), BAD_COUNT),
        Arg("target", TARGET, BAD_TARGET),
        # None is the default grid (1e-4, or the one accuracy= chooses)
        Arg("grid_step", one_of(0.1), bad(0.0, below(0.0), above(1.0), st.floats(1e-300, 9.9e-8),
                                          scalar=True, none_ok=True)),
        Arg("rtol", one_of(1e-3), BAD_RTOL),
        Arg("noise_bounds", one_of((0.5, 50.0)), BAD_BOUNDS),
        Arg("standard_delta", one_of(1e-5), bad(0.0, 1.0, below(0.0), above(1.0), scalar=True)),
        Arg("candidates", one_of(3), BAD_CANDIDATES),
        Arg("on_infeasible", one_of(None, "mark"), one_of("x", 1, True, "Raise")),
        Arg("compare_standard", one_of(True), one_of("no", 1, 0, None)),
        Arg("progress", one_of(None), one_of("yes", 1, 0.5)),
    ), None),
    Spec("dpax.calibrate", _calibrate, (
        Arg("mechanism", one_of(lambda s: dpax.gaussian(s, grid_step=0.1)), one_of(None, 1.0, "gaussian", [dpax.gaussian])),
        Arg("target", TARGET, BAD_TARGET),
        Arg("bounds", one_of((0.5, 50.0)), BAD_BOUNDS),
        Arg("rtol", one_of(1e-3), BAD_RTOL),
        Arg("candidates", one_of(3), BAD_CANDIDATES),
        Arg("privacy", one_of("increasing"), one_of("up", None, 1, True)),
        Arg("guess", one_of(None), bad(0.0, below(0.0), none_ok=True)),
    ), None),
    Spec("dpax.calibrate_gaussian", dpax.calibrate_gaussian,
         (Arg("target", TARGET, BAD_TARGET), Arg("sensitivity", real(1e-300, 1e300, log=True), BAD_POSITIVE)),
         finite),
]

PROB_OPEN = bad(0.0, 1.0, below(0.0), above(1.0))
TARGETS = [
    Spec("targets.ErrRates", targets.ErrRates, (Arg("alpha", real(1e-300, 0.3, log=True), PROB_OPEN),
                                                Arg("beta", real(1e-300, 0.6, log=True), PROB_OPEN)),
         lambda t: finite(t.gdp_mu())),
    Spec("targets.Advantage", targets.Advantage, (Arg("advantage", real(1e-12, 0.999), PROB_OPEN),),
         lambda t: finite(t.gdp_mu())),
    Spec("targets.Epsilon", targets.Epsilon, (Arg("epsilon", real(1e-300, 1e300, log=True), bad(0.0, below(0.0))),
                                              Arg("delta", real(1e-300, 0.999, log=True), PROB_OPEN)),
         lambda t: finite(t.gdp_mu())),
    Spec("targets.Accuracy", targets.Accuracy, (Arg("alpha", real(1e-3, 0.5), PROB_OPEN),
                                                Arg("accuracy", real(0.55, 0.7), bad(0.5, below(0.5), st.floats(0.9996, 1.0)))),
         lambda t: finite(t.gdp_mu())),
    Spec("targets.PPV", targets.PPV, (Arg("alpha", real(1e-3, 0.5), PROB_OPEN),
                                      Arg("ppv", real(0.55, 0.65), bad(0.5, below(0.5), st.floats(0.9991, 1.0)))),
         lambda t: finite(t.gdp_mu())),
    Spec("targets.Reconstruction", targets.Reconstruction, (Arg("baseline", real(1e-3, 0.3), PROB_OPEN),
                                                            Arg("success", real(0.35, 0.99), bad(below(9e-4), above(1.0, inclusive=True)))),
         lambda t: finite(t.gdp_mu())),
    Spec("targets.GDP", targets.GDP, (Arg("mu", real(1e-300, 1e300, log=True), bad(0.0, below(0.0))),),
         lambda t: finite(t.gdp_mu())),
]

FP, FN = counts(0, 10), counts(0, 10)
NEG, POS = counts(10, 10**6, pair=False), counts(10, 10**4, pair=False)
BAD_K = bad(st.integers(max_value=-1), NOT_WHOLE, st.integers(2**53 + 1, 2**62))
BAD_N = bad(0, st.integers(max_value=0), NOT_WHOLE, st.integers(2**53 + 1, 2**62))
CONF = real(1e-6, 1.0 - 1e-12, 0.95)
BAD_CONF = PROB_OPEN


def _losses(n_min: int, n_max: int) -> st.SearchStrategy:
    """Distinct losses (a Gaussian fit needs a spread), as a list, a 1-D array or a column."""
    values = st.lists(st.integers(-10**6, 10**6), min_size=n_min, max_size=n_max, unique=True).map(
        lambda v: np.array(v, dtype=np.float64) / 7.0)
    return st.one_of(values, values.map(list), values.map(lambda a: a[:, None]))


LOSSES = _losses(2, 30)
BAD_LOSSES = st.one_of(ANY_BAD, one_of(np.ones((2, 2)), [1.0], 5.0, "abc"))
RATES3 = st.lists(real(0.0, 1.0, 0.0, 1.0, pair=False), min_size=3, max_size=3)

AUDIT = [
    Spec("audit.clopper_pearson", audit.clopper_pearson,
         (Arg("successes", FP, BAD_K), Arg("trials", NEG, BAD_N), Arg("confidence", CONF, BAD_CONF),
          Arg("alternative", one_of("two-sided", "upper", "lower"), one_of("both", None, 1, True))),
         each(probability)),
    Spec("audit.rate_upper_limits", audit.rate_upper_limits,
         (Arg("false_positives", FP, BAD_K), Arg("negatives", NEG, BAD_N), Arg("false_negatives", FN, BAD_K),
          Arg("positives", POS, BAD_N), Arg("confidence", CONF, BAD_CONF)), each(probability)),
    Spec("audit.epsilon_lower_bound", audit.epsilon_lower_bound,
         (Arg("false_positives", FP, BAD_K), Arg("negatives", NEG, BAD_N), Arg("false_negatives", FN, BAD_K),
          Arg("positives", POS, BAD_N), Arg("delta", DELTA, BAD_PROB),
          Arg("confidence", CONF, BAD_CONF)), functools.partial(finite, allow_inf=True)),
    Spec("audit.mu_lower_bound", audit.mu_lower_bound,
         (Arg("false_positives", FP, BAD_K), Arg("negatives", NEG, BAD_N), Arg("false_negatives", FN, BAD_K),
          Arg("positives", POS, BAD_N), Arg("confidence", CONF, BAD_CONF)), functools.partial(finite, allow_inf=True)),
    Spec("audit.audit", lambda **kw: audit.audit(**kw),
         (Arg("false_positives", counts(0, 10, pair=False), bad(st.integers(max_value=-1), NOT_WHOLE, st.integers(11, 10**6), [1, 2])),
          Arg("negatives", one_of(10), BAD_N),
          Arg("false_negatives", counts(0, 10, pair=False), bad(st.integers(max_value=-1), NOT_WHOLE, st.integers(11, 10**6), [1, 2])),
          Arg("positives", one_of(10), BAD_N),
          Arg("confidence", real(1e-6, 1.0 - 1e-12, pair=False), bad(0.0, 1.0, below(0.0), above(1.0), scalar=True)),
          Arg("claim_mu", st.one_of(st.none(), real(1e-300, 1e300, 0.0, log=True, pair=False)),
              bad(below(0.0), scalar=True, none_ok=True))),
         lambda r: finite([r.epsilon_lower, r.mu_lower], allow_inf=True)),
    Spec("audit.epsilon_star", lambda **kw: audit.epsilon_star(**kw),
         (Arg("train_losses", LOSSES, BAD_LOSSES), Arg("test_losses", LOSSES, BAD_LOSSES),
          Arg("delta", real(1e-300, 0.5, 1e-5, log=True, pair=False), bad(0.0, 1.0, below(0.0), above(1.0), scalar=True)),
          Arg("method", one_of("parametric"), one_of("Parametric", None, 1, "")),
          Arg("grid_points", counts(3, 301, pair=False), bad(2, st.integers(max_value=2), NOT_WHOLE))),
         lambda r: finite(float(r))),
    Spec("audit.epsilon_star (empirical)", lambda **kw: audit.epsilon_star(method="empirical", **kw),
         (Arg("train_losses", LOSSES, BAD_LOSSES), Arg("test_losses", LOSSES, BAD_LOSSES),
          Arg("delta", real(0.0, 0.5, 0.0, pair=False), bad(1.0, below(0.0), above(1.0), scalar=True)),
          Arg("rate_range", st.one_of(st.none(), st.tuples(st.floats(0.0, 0.49), st.floats(0.51, 1.0))),
              st.one_of(bad(below(0.0), above(1.0), none_ok=True), one_of((0.5, 0.5), (0.9, 0.1), (0.1,))))),
         lambda r: finite(float(r), allow_inf=True)),
    Spec("audit.epsilon_star_from_rates", lambda **kw: audit.epsilon_star_from_rates(**kw),
         (Arg("fpr", RATES3, BAD_PROB), Arg("fnr", RATES3, BAD_PROB),
          Arg("delta", real(0.0, 0.5, 0.0, pair=False), bad(1.0, below(0.0), above(1.0), scalar=True)),
          Arg("thresholds", st.one_of(st.none(), st.lists(real(-1e300, 1e300, pair=False), min_size=3, max_size=3)),
              bad([1.0, 2.0], none_ok=True))),
         lambda r: finite(float(r), allow_inf=True)),
    Spec("audit.mechanism_bound", audit.mechanism_bound,
         (Arg("epsilon_stars", real(1e-300, 1e300, 0.0, log=True), bad(below(0.0))),), finite),
    Spec("audit.loss_transform", audit.loss_transform,
         (Arg("train_losses", LOSSES, BAD_LOSSES), Arg("test_losses", LOSSES, BAD_LOSSES)), lambda r: finite(np.concatenate(r[:2]))),
    Spec("audit.fit_gaussian_mixture", lambda **kw: audit.fit_gaussian_mixture(**kw),
         (Arg("x", _losses(10, 40), st.one_of(ANY_BAD, one_of(np.ones(20), [1.0]))),
          Arg("n_components", counts(1, 2, pair=False), bad(0, st.integers(max_value=0), NOT_WHOLE, st.integers(100, 10**6))),
          Arg("max_iter", counts(1, 50, pair=False), bad(0, NOT_WHOLE)),
          Arg("tol", real(0.0, 1.0, 0.0, 1e-8, pair=False), bad(below(0.0), scalar=True))),
         lambda gm: finite([*gm.means, *gm.stds, *gm.weights])),
    Spec("audit.ks_pvalues", lambda **kw: audit.ks_pvalues(**kw),
         (Arg("x", _losses(25, 40), st.one_of(ANY_BAD, one_of(np.arange(5.0)))),
          Arg("max_components", counts(1, 2, pair=False), bad(0, NOT_WHOLE)),
          Arg("n_samples", counts(10, 15, pair=False), bad(9, st.integers(max_value=9), NOT_WHOLE)),
          Arg("seed", st.one_of(st.none(), st.integers(0, 2**64), st.lists(st.integers(0, 2**32), min_size=1, max_size=3)),
              st.one_of(st.integers(max_value=-1), one_of(1.5, nan, "seed", b"1", True, [1.5], [-1], [[1], [1, 2]], {"a": 1})))),
         probability),
]


# -- loss files -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def loss_files() -> str:
    """A directory of good and bad loss files (made once, removed at exit)."""
    d = tempfile.mkdtemp(prefix="dpax-fuzz-")
    atexit.register(shutil.rmtree, d, True)
    np.save(os.path.join(d, "good.npy"), np.arange(5.0))
    np.savez(os.path.join(d, "good.npz"), train=np.arange(3.0))
    np.savez(os.path.join(d, "two.npz"), train=np.arange(3.0), test=np.arange(3.0))
    with open(os.path.join(d, "good.csv"), "w") as fh:
        fh.write("loss\n0.5\n1.5\n")
    with open(os.path.join(d, "nan.csv"), "w") as fh:
        fh.write("loss\n0.5\nnan\n")
    with open(os.path.join(d, "words.csv"), "w") as fh:
        fh.write("loss\n0.5\nabc\n")
    with open(os.path.join(d, "empty.csv"), "w") as fh:
        fh.write("")
    np.save(os.path.join(d, "objects.npy"), np.array([1.0, None], dtype=object), allow_pickle=True)
    np.save(os.path.join(d, "matrix.npy"), np.ones((3, 3)))
    np.save(os.path.join(d, "strings.npy"), np.array(["a", "b"]))
    with open(os.path.join(d, "corrupt.npy"), "wb") as fh:
        fh.write(b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }" + b" " * 60)
    with open(os.path.join(d, "garbage.npz"), "wb") as fh:
        fh.write(b"not a zip file")
    with open(os.path.join(d, "losses.txt"), "w") as fh:
        fh.write("1\n2\n")
    return d


def _read(path, column):
    return audit.read_losses(os.path.join(loss_files(), path) if isinstance(path, str) else path, column=column)


def _path_token(value: Any) -> str:
    return os.path.join(loss_files(), value) if isinstance(value, str) else "path"


FILES = [
    Spec("audit.read_losses", _read, (
        Arg("path", one_of("good.npy", "good.npz", "good.csv"),
            one_of("nan.csv", "words.csv", "empty.csv", "objects.npy", "matrix.npy", "strings.npy", "corrupt.npy",
                   "garbage.npz", "two.npz", "losses.txt", "missing.csv", 12, None, 1.5), _path_token),
        Arg("column", one_of(None), one_of(True, 1.5, [0]), "column"),
    ), finite, examples=FEW_EXAMPLES),
]

SPECS = MECHANISMS + PROFILES + METHODS + CONVERSIONS + GDP + CALIBRATION + TARGETS + AUDIT + FILES


# -- the test -------------------------------------------------------------------------------------


def cases(spec: Spec) -> st.SearchStrategy:
    """``(wrong, arguments)``: all arguments valid (``wrong`` None), or exactly the one at
    index ``wrong`` invalid; one draw per call (cheaper than drawing argument by argument)."""
    def arguments(wrong: int | None) -> st.SearchStrategy:
        return st.tuples(st.just(wrong), st.fixed_dictionaries(
            {a.name: (a.invalid if i == wrong else a.valid) for i, a in enumerate(spec.args)}))

    options = [arguments(i) for i, a in enumerate(spec.args) if a.invalid is not None]
    if spec.check is not None:  # valid calls are half of all
        options = [arguments(None), st.one_of(*options)]
    return st.one_of(*options)


def fuzz_once(spec: Spec, wrong: int | None, kwargs: dict[str, Any]) -> None:
    """One call of ``spec``: valid ones give finite numbers, an invalid one a named error."""
    if wrong is None:
        with np.errstate(all="ignore"):
            result = spec.call(**kwargs)
        spec.check(result)
        return
    arg = spec.args[wrong]
    with pytest.raises((ValueError, TypeError)) as err:
        with np.errstate(all="ignore"):
            spec.call(**kwargs)
    msg = str(err.value)
    expected = arg.says(kwargs[arg.name])
    assert expected in msg, f"{spec.name}: the error about {arg.name}={kwargs[arg.name]!r:.80} does not name it: {msg!r}"
    assert len(msg) <= MAX_MESSAGE and "\n" not in msg, f"{spec.name}: a long or multi-line message: {msg[:500]!r}"
    for unhelpful in ("only 0-dimensional arrays", "arg 0 with shape", "Unknown format code", "could not convert"):
        assert unhelpful not in msg, msg


def _fuzz_settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None, print_blob=False,
                    suppress_health_check=list(HealthCheck))


def _fuzz_test(spec: Spec, examples: int, slow: bool) -> Callable[..., None]:
    @given(case=cases(spec))
    @_fuzz_settings(examples)
    def calls(case: tuple[int | None, dict[str, Any]]) -> None:
        fuzz_once(spec, *case)

    def test() -> None:
        _rows[0] = BATCH_ROWS[slow]  # read while hypothesis draws the calls
        try:
            calls()
        finally:
            _rows[0] = BATCH_ROWS[False]

    test.__doc__ = (f"{spec.name}: {examples} calls, invalid ones named in their errors, valid ones finite "
                    f"(valid batches of {BATCH_ROWS[slow]} row(s)).")
    return pytest.mark.slow(test) if slow else test


# one test per function (its own example count), and a slow variant with SLOW_EXAMPLES
for _spec in SPECS:
    _key = re.sub(r"\W+", "_", _spec.name).strip("_")
    globals()[f"test_fuzz_{_key}"] = _fuzz_test(_spec, _spec.examples, slow=False)
    globals()[f"test_fuzz_more_{_key}"] = _fuzz_test(_spec, SLOW_EXAMPLES, slow=True)
del _spec, _key


def test_tabulated_curve_lengths_must_agree():
    assert conversions.tabulated_curve([0.0, 0.2, 1.0], [1.0, 0.3, 0.0]).beta(0.1) == pytest.approx(0.65)
    with pytest.raises(ValueError, match="alpha and beta"):
        conversions.tabulated_curve([0.0, 0.2, 1.0], [0.5])


def test_every_public_function_is_fuzzed():
    """The specs cover dpax's constructors, the conversions, gdp and audit entry points."""
    covered = {s.name.split(" ")[0] for s in SPECS}
    public = {f"dpax.{n}" for n in ("gaussian", "subsampled_gaussian", "dpsgd", "laplace", "subsampled_laplace",
                                     "randomized_response", "approximate_dp", "discrete_laplace", "discrete_gaussian",
                                     "from_privacy_profile", "compose", "calibrate_dpsgd", "calibrate", "calibrate_gaussian")}
    public |= {f"conversions.{n}" for n in conversions.__all__ if callable(getattr(conversions, n))
               and n[0].islower() and n != "symmetric_delta_divergence"}
    public |= {f"gdp.{n}" for n in ("tradeoff", "advantage", "delta", "epsilon", "compose", "gaussian_mu",
                                     "subsampled_clt_mu", "clt_mu", "mu_and_regret", "report")}
    public |= {f"audit.{n}" for n in ("clopper_pearson", "rate_upper_limits", "epsilon_lower_bound", "mu_lower_bound",
                                       "audit", "epsilon_star", "epsilon_star_from_rates", "mechanism_bound",
                                       "loss_transform", "fit_gaussian_mixture", "ks_pvalues", "read_losses")}
    assert public <= covered, public - covered
