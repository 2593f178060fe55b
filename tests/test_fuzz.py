"""Fuzz of the public API: for every public function, hypothesis draws calls that
mix valid arguments with one invalid one (booleans, strings, NaN, infinity, negative or
out-of-range numbers, huge numbers, complex numbers, object arrays, wrong shapes, ragged
nested lists, None). An invalid call must raise ValueError or TypeError whose message names
the argument (and stays short); a valid call must return finite numbers (or the documented
inf, e.g. epsilon below the +inf atom), and meet its spec's invariants: every bracket
(safe, optimistic) ordered, the Gaussian's numbers on their sides of its closed form (it is
exactly mu-GDP), accountants equal to the mechanism they compose.

Every public callable is reached: the functions, classes and methods of dpax, dpax.gdp,
dpax.audit, dpax.targets, dpax.conversions, dpax.accountants, dpax.compat.gdpnum and
dpax.compat.riskcal, every boolean and enum flag, and every ``dpax`` subcommand (called in
process); test_every_public_callable_is_fuzzed lists them and fails for one without a spec.
The slow variants also draw the ends of documented ranges whose kernels the default run does
not compile (``Arg.slow_valid``: epsilon 599, grid steps 1 and 1e-7, sample rate 1e-12,
2**53 steps). Defects found in files this test's authors could not change go in as single
``xfail(strict=True)`` tests at the end (test_known_defect_*), each failing until its fix, which
moves it beside the fixed code's tests (none is open).

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
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpax
from dpax import audit, conversions, gdp, targets
from dpax._engine.grid import MemoryBudgetError
from exact_refs import gdp_advantage, gdp_beta, gdp_delta, gdp_epsilon

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
    #: valid values drawn by the slow variants only (the ends of a documented range whose
    #: kernels the default run does not compile: epsilon 599, grid steps 1 and 1e-7, 2**53 steps)
    slow_valid: st.SearchStrategy | None = None

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
    #: the public callables a call reaches besides ``name`` (dotted paths, see PUBLIC below)
    covers: tuple[str, ...] = ()
    #: an invariant between a valid call's arguments and its result: ``relation(result, kwargs)``
    relation: Callable[[Any, dict[str, Any]], None] | None = None
    #: valid calls in the default run too (False: they compile kernels of their own; the slow
    #: variants make them, the default run fuzzes the argument checks)
    valid_default: bool = True
    #: a test in the default run (False: only the slow variant; each such spec says which
    #: default test covers its function)
    in_default: bool = True
    #: calls of the slow variant (searches and subprocess-like command lines: fewer)
    slow_examples: int = SLOW_EXAMPLES
    #: an optional package its valid calls import (the slow variant, which makes them, is
    #: skipped without it)
    needs: str | None = None

    def __repr__(self) -> str:
        return self.name


def pls() -> dict[str, dpax.PrivacyLoss]:
    """The privacy losses the method fuzz runs on (built once per batch size, small)."""
    return _pls(_rows[0])


@functools.cache
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


def mechanism(fn: Callable[..., Any], *args: Arg, examples: int = DEFAULT_EXAMPLES,
              relation: str | None = None) -> Spec:
    """A mechanism's spec; ``relation``: "gaussian" (its closed form, exactly mu-GDP) or
    "bracket" (its advantage bracket ordered) for the valid calls (see the checks below)."""
    check = {None: None, "gaussian": lambda pl, kw: gaussian_is_exact(pl, kw),
             "bracket": lambda pl, kw: bracket_of_advantage(pl, kw),
             "bracket (slow)": lambda pl, kw: bracket_of_advantage_when_slow(pl, kw)}[relation]
    return Spec(f"dpax.{fn.__name__}", fn, args, a_privacy_loss, examples, relation=check)


MECHANISMS = [
    mechanism(dpax.gaussian, Arg("noise_multiplier", NOISE, BAD_POSITIVE),
              Arg("sensitivity", real(1e-300, 1.0, 1.0, log=True, pair=False), BAD_POSITIVE),
              Arg("grid_step", GRID, BAD_GRID, slow_valid=one_of(1.0, 0.5)),
              Arg("neighbouring", NEIGHBOURING, BAD_NEIGHBOURING), relation="gaussian"),
    mechanism(dpax.subsampled_gaussian, Arg("noise_multiplier", NOISE, BAD_POSITIVE),
              Arg("sample_rate", RATE, BAD_RATE, slow_valid=one_of(1e-12)), Arg("grid_step", GRID, BAD_GRID),
              Arg("neighbouring", NEIGHBOURING, BAD_NEIGHBOURING), relation="bracket (slow)"),
    mechanism(dpax.dpsgd, Arg("noise_multiplier", NOISE, BAD_POSITIVE), Arg("sample_rate", RATE, BAD_RATE),
              Arg("num_steps", counts(1, 3), BAD_COUNT, slow_valid=one_of(2**53, 2.0**53, 10**6)),
              Arg("grid_step", GRID, BAD_GRID, slow_valid=one_of(1.0)),
              Arg("neighbouring", NEIGHBOURING, BAD_NEIGHBOURING), relation="bracket (slow)"),
    mechanism(dpax.laplace, Arg("scale", real(1.0, 1e300, log=True), BAD_POSITIVE),
              Arg("sensitivity", real(1e-300, 1.0, 1.0, log=True, pair=False), BAD_POSITIVE),
              Arg("grid_step", GRID, BAD_GRID), Arg("neighbouring", NEIGHBOURING, BAD_NEIGHBOURING)),
    mechanism(dpax.subsampled_laplace, Arg("scale", real(1.0, 1e300, log=True, pair=False), BAD_POSITIVE),
              Arg("sample_rate", RATE, BAD_RATE),
              Arg("sensitivity", real(1e-300, 2.0, log=True, pair=False), BAD_POSITIVE),
              Arg("grid_step", GRID, BAD_GRID)),
    mechanism(dpax.randomized_response, Arg("epsilon", real(0.0, 3.0, 0.0), bad(below(0.0), above(600.0)),
                                            slow_valid=one_of(599.0, 600.0)),
              Arg("k", counts(2, 2**50), bad(1, 0, st.integers(max_value=1), NOT_WHOLE, 2**60)),
              Arg("grid_step", GRID, BAD_GRID), Arg("neighbouring", NEIGHBOURING, BAD_NEIGHBOURING)),
    mechanism(dpax.approximate_dp, Arg("epsilon", real(0.0, 3.0, 0.0), bad(below(0.0), above(600.0)),
                                       slow_valid=one_of(599.0, 600.0)),
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

def query(invalid: st.SearchStrategy) -> st.SearchStrategy:
    """The invalid values of a risk method's query array: ``invalid`` less the empty list (an
    empty query is valid and gets an empty answer, ``privacy_loss.checks.query_values``)."""
    return invalid.filter(lambda v: not (isinstance(v, list) and len(v) == 0))


METHODS = [
    Spec("PrivacyLoss.beta", lambda pl, alpha: pl.beta(alpha),
         (Arg("pl", one_of("one").map(lambda k: pls()[k]), None), Arg("alpha", ALPHA, query(BAD_PROB))), probability),
    Spec("PrivacyLoss.delta", lambda pl, epsilon: pl.delta(epsilon),
         (Arg("pl", one_of("one").map(lambda k: pls()[k]), None),
          Arg("epsilon", st.one_of(EPS, real(-1e300, 1e300)), query(ANY_BAD))),
         probability),
    Spec("PrivacyLoss.epsilon", lambda pl, delta: pl.epsilon(delta),
         (Arg("pl", one_of("one").map(lambda k: pls()[k]), None), Arg("delta", DELTA, query(BAD_PROB))),
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
        Arg("grid_step", one_of(None, "coarsest", 0.1),
            st.one_of(bad(0.0, below(0.0), above(1.0), scalar=True, none_ok=True), one_of("fine", "0.5", "")),
            "grid_step"),
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
         (Arg("epsilon", EPS, bad(below(0.0))), Arg("delta", DELTA, BAD_PROB), Arg("alpha", ALPHA, BAD_PROB)),
         probability),
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
          Arg("g", one_of(conversions.gdp_curve(0.5), conversions.tabulated_curve([0.0, 0.5, 1.0], [1.0, 0.2, 0.0])),
              BAD_PL, "g must")),
         finite, examples=FEW_EXAMPLES),
]

GDP = [
    Spec("gdp.tradeoff", gdp.tradeoff, (Arg("mu", MU, bad(below(0.0))), Arg("alpha", ALPHA, BAD_PROB)), probability),
    Spec("gdp.advantage", gdp.advantage, (Arg("mu", MU, bad(below(0.0))),), probability),
    Spec("gdp.delta", gdp.delta, (Arg("epsilon", st.one_of(EPS, real(-1e300, 1e300)), ANY_BAD),
                                  Arg("mu", MU, bad(below(0.0)))), probability),
    Spec("gdp.epsilon", lambda delta, mu: gdp.epsilon(delta, mu),
         (Arg("delta", real(1e-300, 1.0, 1.0, log=True), bad(0.0, below(0.0), above(1.0))),
          Arg("mu", MU, bad(below(0.0)))),
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
          Arg("tail", real(1e-300, 0.4999, 0.0, 1e-10, log=True, pair=False),
              bad(0.5, below(0.0), above(0.5), scalar=True))),
         functools.partial(finite, allow_inf=True)),  # tail 0 with an infinite atom: mu = inf (documented)
    Spec("gdp.report", gdp.report,
         (Arg("pl", one_of("one").map(lambda k: pls()[k]), BAD_PL),
          Arg("deltas", st.one_of(st.tuples(DELTA), st.tuples(DELTA, DELTA, DELTA).map(np.hstack)), BAD_PROB),
          Arg("tail", real(1e-300, 0.4999, 1e-10, log=True, pair=False),
              bad(0.5, below(0.0), above(0.5), scalar=True))),
         lambda r: finite([r.mu, r.regret, r.advantage, *np.ravel(r.beta)]), examples=FEW_EXAMPLES),
]

TARGET = one_of(targets.Advantage(0.2), targets.ErrRates(0.1, 0.5), [targets.Advantage(0.2), targets.GDP(1.0)])
BAD_TARGET = one_of(None, 0.2, "advantage", [], [None], (targets.Advantage, 0.2), {"advantage": 0.2})
BAD_RTOL = bad(0.0, below(1e-8), above(0.1), scalar=True)
BAD_BOUNDS = st.one_of(NOT_NUMBERS, NOT_FINITE,
                       one_of((1.0, 0.5), (0.0, 1.0), (1.0,), (0.1, 1.0, 10.0), (-1.0, 1.0), (2.0, 2.0)))
BAD_CANDIDATES = one_of(1, 0, 2000, 2.5, 3.0, True, "3", None, np.array([3]))


def _calibrate(mechanism, target, param_bounds, rtol, candidates, privacy, guess):
    return dpax.calibrate(mechanism, target, param_bounds=param_bounds, rtol=rtol, candidates=candidates,
                          privacy=privacy, guess=guess)


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
        Arg("mechanism", one_of(lambda s: dpax.gaussian(s, grid_step=0.1)),
            one_of(None, 1.0, "gaussian", [dpax.gaussian])),
        Arg("target", TARGET, BAD_TARGET),
        Arg("param_bounds", one_of((0.5, 50.0)), BAD_BOUNDS),
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
    # slow only (~3s of bisections); default siblings: test_fuzz_conversions_mu_from_epsilon_delta (the function of
    # gdp_mu, its epsilon and delta fuzzed alike), tests/test_api.py::test_bad_input_raises_naming_the_argument
    # (Epsilon's range errors) and tests/test_input_errors.py::test_shape_mismatch_names_the_arguments
    Spec("targets.Epsilon", targets.Epsilon, (Arg("epsilon", real(1e-300, 1e300, log=True), bad(0.0, below(0.0))),
                                              Arg("delta", real(1e-300, 0.999, log=True), PROB_OPEN)),
         lambda t: finite(t.gdp_mu()), in_default=False),
    Spec("targets.Accuracy", targets.Accuracy,
         (Arg("alpha", real(1e-3, 0.5), PROB_OPEN),
          Arg("accuracy", real(0.55, 0.7), bad(0.5, below(0.5), st.floats(0.9996, 1.0)))),
         lambda t: finite(t.gdp_mu())),
    Spec("targets.PPV", targets.PPV, (Arg("alpha", real(1e-3, 0.5), PROB_OPEN),
                                      Arg("ppv", real(0.55, 0.65), bad(0.5, below(0.5), st.floats(0.9991, 1.0)))),
         lambda t: finite(t.gdp_mu())),
    Spec("targets.Reconstruction", targets.Reconstruction,
         (Arg("baseline", real(1e-3, 0.3), PROB_OPEN),
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
         (Arg("false_positives", counts(0, 10, pair=False),
              bad(st.integers(max_value=-1), NOT_WHOLE, st.integers(11, 10**6), [1, 2])),
          Arg("negatives", one_of(10), BAD_N),
          Arg("false_negatives", counts(0, 10, pair=False),
              bad(st.integers(max_value=-1), NOT_WHOLE, st.integers(11, 10**6), [1, 2])),
          Arg("positives", one_of(10), BAD_N),
          Arg("confidence", real(1e-6, 1.0 - 1e-12, pair=False), bad(0.0, 1.0, below(0.0), above(1.0), scalar=True)),
          Arg("claim_mu", st.one_of(st.none(), real(1e-300, 1e300, 0.0, log=True, pair=False)),
              bad(below(0.0), scalar=True, none_ok=True))),
         lambda r: finite([r.epsilon_lower, r.mu_lower], allow_inf=True)),
    Spec("audit.epsilon_star", lambda **kw: audit.epsilon_star(**kw),
         (Arg("train_losses", LOSSES, BAD_LOSSES), Arg("test_losses", LOSSES, BAD_LOSSES),
          Arg("delta", real(1e-300, 0.5, 1e-5, log=True, pair=False),
              bad(0.0, 1.0, below(0.0), above(1.0), scalar=True)),
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
         (Arg("train_losses", LOSSES, BAD_LOSSES), Arg("test_losses", LOSSES, BAD_LOSSES)),
         lambda r: finite(np.concatenate(r[:2]))),
    Spec("audit.fit_gaussian_mixture", lambda **kw: audit.fit_gaussian_mixture(**kw),
         (Arg("x", _losses(10, 40), st.one_of(ANY_BAD, one_of(np.ones(20), [1.0]))),
          Arg("n_components", counts(1, 2, pair=False),
              bad(0, st.integers(max_value=0), NOT_WHOLE, st.integers(100, 10**6))),
          Arg("max_iter", counts(1, 50, pair=False), bad(0, NOT_WHOLE)),
          Arg("tol", real(0.0, 1.0, 0.0, 1e-8, pair=False), bad(below(0.0), scalar=True))),
         lambda gm: finite([*gm.means, *gm.stds, *gm.weights])),
    Spec("audit.ks_pvalues", lambda **kw: audit.ks_pvalues(**kw),
         (Arg("x", _losses(25, 40), st.one_of(ANY_BAD, one_of(np.arange(5.0)))),
          Arg("max_components", counts(1, 2, pair=False), bad(0, NOT_WHOLE)),
          Arg("n_samples", counts(10, 15, pair=False), bad(9, st.integers(max_value=9), NOT_WHOLE)),
          Arg("seed",
              st.one_of(st.none(), st.integers(0, 2**64), st.lists(st.integers(0, 2**32), min_size=1, max_size=3)),
              st.one_of(st.integers(max_value=-1),
                        one_of(1.5, nan, "seed", b"1", True, [1.5], [-1], [[1], [1, 2]], {"a": 1})))),
         probability),
]


# -- loss files -----------------------------------------------------------------------------------


@functools.cache
def loss_files() -> str:
    """A directory of good and bad loss files (made once, removed at exit)."""
    d = tempfile.mkdtemp(prefix="dpax-fuzz-")
    atexit.register(shutil.rmtree, d, True)
    np.save(os.path.join(d, "good.npy"), np.arange(5.0))
    with open(os.path.join(d, "sweep.csv"), "w") as fh:
        fh.write("noise_multiplier,sample_rate,num_steps\n4,0.1,2\n")
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

# -- the rest of the public surface -------------------------------------------------------------
# Every public callable (PUBLIC below) has a spec here or above; test_every_public_callable_is_fuzzed
# fails for one without. Valid results are checked against invariants: every bracket (safe,
# optimistic) ordered, the Gaussian's numbers on their side of its closed form (exact mu-GDP).

#: Examples per spec of this section in the default run (most calls are cheap argument checks).
FEW = 5
#: Their slow variants: most calls are cheap, but valid ones build pairs and companions.
SLOW_FEW = 300
#: Slow variants of specs whose valid calls run a search or a whole subcommand.
SLOW_HEAVY = 12
TINY = 1e-12  # slack of a comparison with a closed form (float64 round-off of numbers in [0, 1])
FLAG = one_of(False, True)
BAD_FLAG = one_of("yes", "", 1, 0, None, 1.0, np.array([True]), [True])
GAUSS_MU = 0.5  # pls()["one"] is dpax.gaussian(2.0): exactly 0.5-GDP


def ordered(b: Any, safe_is_upper: bool = True) -> None:
    """A bracket never crosses (an Interval from a bounds=True call)."""
    assert isinstance(b, dpax.Interval), b
    s, o = np.asarray(b.safe, np.float64), np.asarray(b.optimistic, np.float64)
    assert not np.isnan(s).any() and not np.isnan(o).any(), b
    assert np.all(o <= s + TINY) if safe_is_upper else np.all(o >= s - TINY), b


def safe_of(x: Any) -> np.ndarray:
    return np.asarray(x.safe if isinstance(x, dpax.Interval) else x, np.float64)


def optimistic_of(x: Any) -> np.ndarray | None:
    return np.asarray(x.optimistic, np.float64) if isinstance(x, dpax.Interval) else None


def around(x: Any, truth: Any, safe_is_upper: bool, tol: float = TINY) -> None:
    """The safe side on the safe side of the closed form, the optimistic side on the other."""
    truth = np.asarray(truth, np.float64)
    s, o = safe_of(x), optimistic_of(x)
    if safe_is_upper:
        assert np.all(s >= truth - tol), (s, truth)
        assert o is None or np.all(o <= truth + tol), (o, truth)
    else:
        assert np.all(s <= truth + tol), (s, truth)
        assert o is None or np.all(o >= truth - tol), (o, truth)


def a_bracket_or_probability(x: Any) -> None:
    if isinstance(x, dpax.Interval):
        probability(x.safe)
        probability(x.optimistic)
    else:
        probability(x)


def gaussian_truth(kwargs: dict[str, Any]) -> float:
    factor = 2.0 if kwargs.get("neighbouring") == "substitution" else 1.0
    with np.errstate(all="ignore"):
        return (np.asarray(kwargs.get("sensitivity", 1.0), np.float64) * factor
                / np.asarray(kwargs["noise_multiplier"], np.float64))


def in_slow_run() -> bool:
    """Whether the running fuzz test is a slow variant (see _fuzz_test)."""
    return _rows[0] == BATCH_ROWS[True]


def gaussian_is_exact(pl: dpax.PrivacyLoss, kwargs: dict[str, Any]) -> None:
    """dpax.gaussian: its advantage bracket contains the closed form's (exactly mu-GDP), and
    (slow variants: its own kernels) so does mu at tail 0 (all attacks; the closed-form bound
    caps the grid's)."""
    mu = gaussian_truth(kwargs)
    around(pl.advantage(bounds=True), gdp_advantage(mu), True)
    if not in_slow_run():
        return
    mu0 = np.asarray(gdp.mu_and_regret(pl, tail=0.0)[0])
    assert np.all(mu0 >= mu - TINY) and np.all(mu0 <= mu * (1 + 1e-12) + TINY), (mu0, mu)


def bracket_of_advantage(pl: dpax.PrivacyLoss, kwargs: dict[str, Any]) -> None:
    ordered(pl.advantage(bounds=True))


def bracket_of_advantage_when_slow(pl: dpax.PrivacyLoss, kwargs: dict[str, Any]) -> None:
    """:func:`bracket_of_advantage` in the slow variants (a composed companion compiles its own
    kernels); the default run checks the single step's (subsampled_gaussian, gaussian)."""
    if in_slow_run():
        bracket_of_advantage(pl, kwargs)


MECHANISMS_MORE = [
    # the finest grid (1e-7) with losses it can hold: DP-SGD at the smallest sample rates, up to
    # 2**53 steps; the slow run only (kernels of their own); default sibling: dpax.dpsgd's test
    Spec("dpax.dpsgd (finest grid)", lambda noise_multiplier, sample_rate, num_steps: dpax.dpsgd(
        noise_multiplier, sample_rate, num_steps, grid_step=1e-7), (
        Arg("noise_multiplier", real(1.0, 100.0, 1.0, pair=False), BAD_POSITIVE),
        Arg("sample_rate", one_of(1e-12, 1e-13), BAD_RATE),
        Arg("num_steps", one_of(1, 7, 1000, 2**53), BAD_COUNT),
    ), a_privacy_loss, FEW, in_default=False, relation=bracket_of_advantage),
    Spec("dpax.mixture_of_gaussians", lambda **kw: dpax.mixture_of_gaussians(**kw), (
        Arg("standard_deviation", real(4.0, 1e300, log=True, pair=False), BAD_POSITIVE),
        Arg("sensitivities", one_of([0.0, 1.0], np.array([1.0, 0.5])), st.one_of(
            bad(below(0.0)), one_of([[0.0], [1.0, 2.0]], 1.0))),
        Arg("sampling_probs", one_of([0.5, 0.5], [0.9, 0.1], [1.0, 0.0]), st.one_of(
            bad(below(0.0), above(1.0)), one_of([0.5, 0.6], [0.3], 0.5, [1.0, 1.0]))),
        Arg("grid_step", GRID, BAD_GRID),
    ), a_privacy_loss, FEW, valid_default=False, relation=bracket_of_advantage),  # its kernels: slow
]

# -- PrivacyLoss: the constructor, every method and flag ---------------------------------


def _rr_arrays(eps: float) -> tuple[list[float], list[float]]:
    e = np.exp(eps)
    return [e / (1 + e), 0.0, 1 / (1 + e)], [1 / (1 + e), 0.0, e / (1 + e)]


def _hand_built(kind: str, grid_step: float, exact_ratio: bool, description: str) -> dpax.PrivacyLoss:
    px, py = _rr_arrays(1.0)
    if kind == "batch":  # two rows, scalar atoms broadcast
        return dpax.PrivacyLoss([px, py], [py, px], [-1, -1], 0.0, 0.0, grid_step, description, exact_ratio=exact_ratio)
    return dpax.PrivacyLoss(px, py, -1, 0.0, 0.0, grid_step, description, exact_ratio=exact_ratio)


def _privacy_loss(pmf_x, pmf_y, offset, inf_mass_y, neginf_mass_x, grid_step, description, exact_ratio, optimistic):
    return dpax.PrivacyLoss(pmf_x, pmf_y, offset, inf_mass_y, neginf_mass_x, grid_step, description,
                            exact_ratio=exact_ratio, optimistic=optimistic)


RR_X, RR_Y = _rr_arrays(1.0)
BAD_PMF = st.one_of(NOT_NUMBERS, NOT_FINITE, st.just(None), one_of(
    [-0.1, 0.0, 1.1], [0.5, 0.0, 0.3], [0.9, 0.0, 0.9], 0.5, [[0.5, 0.5]], [0.5, 0.5]))

PRIVACY_LOSS = [
    Spec("dpax.PrivacyLoss", _privacy_loss, (
        Arg("pmf_x", one_of(RR_X, np.array(RR_X)), BAD_PMF),
        Arg("pmf_y", one_of(RR_Y), BAD_PMF),
        Arg("offset", one_of(-1, np.int64(-1), -1.0, 10**6), bad(0.5, 2.0**60, [-1, -1], none_ok=False)),
        Arg("inf_mass_y", one_of(0.0), bad(below(0.0), above(1.0), [0.0, 0.0], 0.5)),
        Arg("neginf_mass_x", one_of(0.0), bad(below(0.0), above(1.0), [0.0, 0.0], 0.5)),
        Arg("grid_step", st.one_of(real(1e-7, 5.0, 1.0, 1e-7, np.log(3.0), log=True, pair=False)),
            bad(0.0, below(0.0), scalar=True)),
        Arg("description", one_of("rr", ""), one_of(None, 1, b"rr", ["rr"])),
        Arg("exact_ratio", FLAG, BAD_FLAG),
        Arg("optimistic", one_of(False), BAD_FLAG),
    ), lambda pl: (a_privacy_loss(pl), probability(pl.beta([0.0, 0.3, 1.0]))), FEW,
        covers=("dpax.PrivacyLoss.loss_values",),
        # randomized response with epsilon 1 when its labels straddle the loss 0 (offset -1; a pair
        # placed elsewhere holds the same masses at other losses, a different curve)
        relation=lambda pl, kw: around(pl.advantage(), (np.e - 1) / (np.e + 1), True, 1e-12)
        if float(np.asarray(kw["offset"])) == -1.0 else None),
    Spec("PrivacyLoss.from_pair", lambda pair, grid_step, batch_shape: dpax.PrivacyLoss.from_pair(
        pair, grid_step, "copy", batch_shape), (
        Arg("pair", one_of("one").map(lambda k: pls()[k].pair), one_of(None, 1.0, (1, 2), "pair", np.ones(5))),
        Arg("grid_step", one_of(0.1), bad(0.0, below(0.0), scalar=True)),
        Arg("batch_shape", one_of((), (1,), (1, 1)), one_of((2,), (0,), (1.0,), "1", None, 1, (True,))),
    ), a_privacy_loss, FEW, covers=("dpax.PrivacyLoss.pair",)),
    Spec("PrivacyLoss.advantage", lambda pl, bounds: pl.advantage(bounds=bounds), (
        Arg("pl", one_of("one").map(lambda k: pls()[k]), None), Arg("bounds", FLAG, BAD_FLAG)),
        a_bracket_or_probability, FEW,
        relation=lambda r, kw: around(r, gdp_advantage(GAUSS_MU), True)),
    Spec("PrivacyLoss.tradeoff_points", lambda pl, symmetric: pl.tradeoff_points(symmetric=symmetric), (
        Arg("pl", one_of("one").map(lambda k: pls()[k]), None), Arg("symmetric", FLAG, BAD_FLAG)),
        each(probability), FEW, valid_default=False,
        relation=lambda r, kw: around(r[1], gdp_beta(r[0], GAUSS_MU), False, 1e-9) if kw["symmetric"] else None),
    Spec("PrivacyLoss.broadcast_to", lambda pl, shape: pl.broadcast_to(shape), (
        Arg("pl", one_of("one").map(lambda k: pls()[k]), None),
        Arg("shape", one_of((1,), (1, 1), (), (2, 3)), one_of((0,), (-1,), (2.0,), [0.1, 0.2], "ab", None, 3, (True,))),
    ), a_privacy_loss, FEW, covers=("dpax.PrivacyLoss.batch_shape",)),
    Spec("PrivacyLoss.optimistic_companion", lambda pl: pl.optimistic_companion(), (
        Arg("pl", one_of("one").map(lambda k: pls()[k]), None, slow_valid=one_of("batch").map(lambda k: pls()[k])),),
         lambda c: (a_privacy_loss(c), None if c.optimistic else pytest.fail("not optimistic")), 2,
         relation=lambda c, kw: around(c.advantage(), gdp_advantage(GAUSS_MU), False)
         if kw["pl"] is pls()["one"] else None),
    Spec("PrivacyLoss.compose", lambda pl, other, grid_step: pl.compose(other, grid_step=grid_step), (
        Arg("pl", one_of("one").map(lambda k: pls()[k]), None),
        Arg("other", one_of("one").map(lambda k: pls()[k]), one_of(None, 1.0, "pl", (None, 1)), "other"),
        Arg("grid_step", one_of(None, 0.1), st.one_of(bad(0.0, below(0.0), above(1.0), scalar=True, none_ok=True),
                                                      one_of("fine", ""))),
    ), a_privacy_loss, FEW, relation=lambda r, kw: around(r.advantage(), gdp_advantage(GAUSS_MU * np.sqrt(2)), True)),
    Spec("PrivacyLoss.to_dp_accounting", lambda pl: pl.to_dp_accounting(),
         (Arg("pl", one_of("one").map(lambda k: pls()[k]), None),),
         lambda pld: finite(pld.get_epsilon_for_delta(1e-5)), 1, covers=("dpax.to_dp_accounting",)),
]

# the methods with a bounds flag and the Gaussian's closed form (pls()["one"]: 0.5-GDP)
for _spec in METHODS:
    if _spec.name == "PrivacyLoss.beta":
        METHODS[METHODS.index(_spec)] = dataclasses.replace(
            _spec, call=lambda pl, alpha, bounds=False: pl.beta(alpha, bounds=bounds),
            args=_spec.args + (Arg("bounds", FLAG, BAD_FLAG),), check=a_bracket_or_probability,
            relation=lambda r, kw: (ordered(r, False) if kw["bounds"] else None,
                                    around(r, gdp_beta(np.asarray(kw["alpha"], np.float64), GAUSS_MU), False)))
    elif _spec.name == "PrivacyLoss.delta":
        METHODS[METHODS.index(_spec)] = dataclasses.replace(
            _spec, call=lambda pl, epsilon, bounds=False: pl.delta(epsilon, bounds=bounds),
            args=_spec.args + (Arg("bounds", FLAG, BAD_FLAG),), check=a_bracket_or_probability,
            relation=lambda r, kw: (ordered(r) if kw["bounds"] else None,
                                    around(r, gdp_delta(np.asarray(kw["epsilon"], np.float64), GAUSS_MU), True)))
    elif _spec.name == "PrivacyLoss.epsilon":
        METHODS[METHODS.index(_spec)] = dataclasses.replace(
            _spec, call=lambda pl, delta, bounds=False: pl.epsilon(delta, bounds=bounds),
            args=_spec.args + (Arg("bounds", FLAG, BAD_FLAG),),
            check=lambda r: (finite(r.safe, allow_inf=True), finite(r.optimistic, allow_inf=True))
            if isinstance(r, dpax.Interval) else finite(r, allow_inf=True),
            relation=lambda r, kw: (ordered(r) if kw["bounds"] else None,
                                    around(r, np.vectorize(gdp_epsilon)(np.asarray(kw["delta"], np.float64), GAUSS_MU),
                                           True, 1e-9)))
del _spec

INTERVAL = [
    Spec("dpax.Interval", lambda safe, optimistic, value, tol: dpax.Interval(safe, optimistic).contains(value, tol), (
        Arg("safe", real(0.0, 1.0), None), Arg("optimistic", real(0.0, 1.0), None),
        Arg("value", st.one_of(real(-1e300, 1e300), one_of(np.inf, -np.inf, [0.5, np.inf])),
            st.one_of(NOT_NUMBERS, one_of(np.nan, [0.5, np.nan], None))),
        Arg("tol", real(0.0, 1.0, 0.0, pair=False), bad(below(0.0), scalar=True)),
    ), lambda r: None, FEW, covers=("dpax.Interval.contains", "dpax.Interval.lower", "dpax.Interval.upper",
                                    "dpax.Interval.width")),
]

# -- the top level: calibration helpers, the kernel cache, dp-accounting, refine, devices ------


def _refine(build, evaluate, accuracy, grid_step, max_rounds):
    return dpax.refine(build, evaluate, accuracy, grid_step=grid_step, max_rounds=max_rounds)


GOOD_BUILD = lambda h: dpax.gaussian(2.0, grid_step=h)  # noqa: E731
GOOD_EVALUATE = lambda pl: pl.advantage(bounds=True)  # noqa: E731


def _refined(r: Any) -> None:
    assert isinstance(r, dpax.Refined) and r.privacy_loss.grid_step == r.grid_step
    ordered(r.value)
    around(r.value, gdp_advantage(GAUSS_MU), True)


def _blackbox(target, rtol, candidates, deltas, progress, full_output):
    eps = lambda w, d: gdp.epsilon(d, 1.0 / w)  # noqa: E731  an accountant of the 1/w-GDP mechanism
    out = dpax.calibrate_blackbox(target, epsilon=eps, rtol=rtol, candidates=candidates, deltas=deltas,
                                  progress=progress, full_output=full_output)
    if not full_output:
        return out
    assert isinstance(out, dpax.CalibrationResult) and out.status == "calibrated" and out.reason == ""
    assert out.noise_multiplier_failing < out.noise_multiplier <= out.noise_multiplier_failing * (1 + rtol)
    return out.noise_multiplier


def _event(kind: str) -> Any:
    from dp_accounting import dp_event

    return {"gaussian": dp_event.GaussianDpEvent(2.0),
            "sampled": dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(4.0)),
            "composed": dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(4.0), 2)}[kind]


def _on_own_store(call: Callable[[], Any]) -> Any:
    from dpax._engine import cache

    cache.enable(tempfile.mkdtemp(prefix="dpax-fuzz-store-"))  # the conftest puts the run's store back
    return call()


def _devices_then_all(which: str | None) -> None:
    import jax

    try:
        dpax.use_devices({None: None, "one": jax.devices()[:1], "none": []}[which])
        assert pls()["one"].advantage() >= 0.0
    finally:
        dpax.use_devices(None)


TOP = [
    Spec("dpax.refine", _refine, (
        Arg("build", one_of(GOOD_BUILD),
            one_of(None, 1.0, lambda h: 0.5, lambda h: dpax.gaussian(2.0, grid_step=2 * h),
                   lambda h: dpax.gaussian(2.0, grid_step=h).optimistic_companion()), "build"),
        Arg("evaluate", one_of(GOOD_EVALUATE), one_of(None, "advantage", lambda pl: pl.advantage()), "evaluate"),
        Arg("accuracy", one_of(1.0, 0.5), bad(0.0, below(0.0), scalar=True)),
        Arg("grid_step", one_of(0.1), bad(0.0, below(0.0), above(1.0), st.floats(1e-300, 9.9e-7), scalar=True)),
        Arg("max_rounds", one_of(1, 2), bad(0, NOT_WHOLE, [1, 2])),
    ), _refined, FEW, covers=("dpax.Refined",)),
    Spec("dpax.calibrate_blackbox", _blackbox, (
        Arg("target", one_of(targets.Advantage(0.2)), BAD_TARGET),
        Arg("rtol", one_of(1e-2), BAD_RTOL),
        Arg("candidates", one_of(3), BAD_CANDIDATES),
        Arg("deltas", one_of(None, [1e-6, 1e-3, 0.1]), bad(below(0.0), above(1.0), none_ok=True)),
        Arg("progress", one_of(None, False), one_of("yes", 1, 0.5)),
        Arg("full_output", one_of(False, True), one_of("yes", 1, None)),
    ), lambda w: finite(w), FEW,
        # the 1/w-GDP accountant's answer meets the target's mu (1 / w at most the target's GDP mu)
        relation=lambda w, kw: around(1.0 / np.asarray(w), targets.Advantage(0.2).gdp_mu(), False, 2e-2)),
    Spec("dpax.from_dp_event", lambda event, grid_step, neighbouring: dpax.from_dp_event(
        event, grid_step=grid_step, neighbouring=neighbouring), (
        Arg("event", one_of("gaussian", "sampled", "composed").map(_event), one_of(None, 1.0, "event", [None]),
            "event"),
        Arg("grid_step", GRID, BAD_GRID),
        Arg("neighbouring", one_of("add_remove"), BAD_NEIGHBOURING),
    ), a_privacy_loss, FEW, relation=bracket_of_advantage),
    Spec("dpax.event_family", lambda make_event, grid_step, noise: dpax.event_family(
        make_event, grid_step=grid_step)(noise), (
        Arg("make_event", one_of(lambda s: _event("gaussian").__class__(s)), one_of(None, 1.0, "f")),
        Arg("grid_step", GRID, BAD_GRID),
        Arg("noise", NOISE, None),
    ), a_privacy_loss, FEW),
    Spec("dpax.from_dp_accounting", lambda pld, description: dpax.from_dp_accounting(pld, description), (
        Arg("pld", one_of("one").map(lambda k: pls()[k].to_dp_accounting()), one_of(None, 1.0, "pld", dpax.gaussian)),
        Arg("description", one_of(None, "imported"), one_of(1, b"x", ["x"])),
    ), lambda pl: (a_privacy_loss(pl), around(pl.advantage(), gdp_advantage(GAUSS_MU), True)), FEW,
        covers=("dpax.interop.to_dp_accounting",)),
    Spec("dpax.to_dp_accounting", dpax.to_dp_accounting, (
        Arg("pl", one_of("one").map(lambda k: pls()[k]), BAD_PL),),
        lambda pld: finite(pld.get_epsilon_for_delta(1e-5)), 4),
    # global switches of the kernel cache and the devices: the argument checks (a valid call
    # would change the test run's store or devices); kernel_cache_dir takes no argument
    Spec("dpax.enable_kernel_cache", lambda path: dpax.enable_kernel_cache(path), (
        Arg("path", one_of(None), one_of(1.0, b"x", ["x"], True)),), None, FEW,
        covers=("dpax.disable_kernel_cache", "dpax.kernel_cache_dir")),
    # valid calls on a store of their own (the run's is restored after each test); invalid flags:
    # test_clear_kernel_cache_checks_memory_only
    Spec("dpax.clear_kernel_cache", lambda memory_only: _on_own_store(lambda: dpax.clear_kernel_cache(memory_only)), (
        Arg("memory_only", FLAG, None),), lambda n: None if n >= 0 else pytest.fail(str(n)), 2),
    # valid devices only (the test run's devices are restored); invalid ones: test_use_devices_checks_devices
    Spec("dpax.use_devices", lambda devices: _devices_then_all(devices), (
        Arg("devices", one_of(None, "one", "none"), None),), lambda r: None, 3),
]
if hasattr(dpax, "dpsgd_schedule"):  # DP-SGD in epochs
    TOP.append(Spec("dpax.dpsgd_schedule", dpax.dpsgd_schedule, (
        Arg("dataset_size", counts(1, 10**9, pair=False), bad(0, st.integers(max_value=0), NOT_WHOLE)),
        Arg("batch_size", one_of(1), bad(0, st.integers(max_value=0), NOT_WHOLE)),
        Arg("epochs", counts(1, 100, pair=False), bad(0, st.integers(max_value=0))),
    ), lambda sch: (probability(sch.sample_rate), sch.accounting()), FEW,
        covers=("dpax.DPSGDSchedule", "dpax.DPSGDSchedule.accounting")))

# -- dpax.gdp: the rest ----------------------------------------------------------------------------


def _mu_bounds(pl, tail, bounds):
    return gdp.mu_and_regret(pl, tail=tail, bounds=bounds)


def _mu_relation(r: Any, kw: dict[str, Any]) -> None:
    mu, regret = r
    if kw["bounds"]:
        ordered(mu)
        ordered(regret)
    if kw["tail"] == 0.0:  # every attack: the Gaussian's exact mu (its closed-form bound)
        around(mu, GAUSS_MU, True, 1e-12)


GDP_MORE = [
    Spec("gdp.mu_and_regret (bounds)", _mu_bounds, (
        Arg("pl", one_of("one").map(lambda k: pls()[k]), None),
        Arg("tail", one_of(0.0, 1e-10), bad(0.5, below(0.0), scalar=True)),
        Arg("bounds", FLAG, BAD_FLAG),
    ), lambda r: [finite(safe_of(x), allow_inf=True) for x in r] and None, FEW, valid_default=False,
        covers=("dpax.gdp.MuRegret",), relation=_mu_relation),
    Spec("gdp.regret_witness", gdp.regret_witness, (
        Arg("pl", one_of("one").map(lambda k: pls()[k]), BAD_PL),
        Arg("tail", one_of(1e-10), bad(0.5, below(0.0), above(0.5), scalar=True)),
    ), probability, FEW),
    Spec("gdp.symmetric_delta_divergence", gdp.symmetric_delta_divergence, (
        Arg("f", one_of(conversions.gdp_curve(1.0), conversions.epsilon_delta_curve(1.0, 1e-5)), BAD_PL, "f must"),
        Arg("g", one_of(conversions.gdp_curve(0.5)), BAD_PL, "g must"),
    ), lambda d: probability(d), 4, covers=("dpax.conversions.symmetric_delta_divergence",)),
    Spec("gdp.GDPReport", lambda pl, indent: gdp.report(pl).to_json(indent=indent), (
        Arg("pl", one_of("one").map(lambda k: pls()[k]), None),
        Arg("indent", one_of(None, 1, 2), one_of(1.5, [1], object(), b"x")),
    ), lambda text: json.loads(text), 4, covers=("dpax.gdp.GDPReport.to_json", "dpax.gdp.GDPReport.to_dict",
                                                 "dpax.gdp.GDPReport.table")),
]

# -- conversions: the curve classes and their methods ---------------------------------------------

CURVE = one_of(conversions.gdp_curve(1.0), conversions.tabulated_curve([0.0, 0.2, 1.0], [1.0, 0.3, 0.0]),
               conversions.epsilon_delta_curve(1.0, 1e-3))


def _curve_methods(curve, alpha, u):
    out = (curve.beta(alpha), curve.v(u), curve.vertices_u(), curve.slopes(), curve.advantage())
    if isinstance(curve, conversions.GDPCurve):
        out += curve.tangent_u(np.abs(np.asarray(u, np.float64)) + 1e-3)
    return out


CONVERSIONS_MORE = [
    Spec("conversions.TradeoffCurve", _curve_methods, (
        Arg("curve", CURVE, None),
        Arg("alpha", ALPHA, BAD_PROB),
        Arg("u", real(-1.0, 1.0, -1.0, 0.0, 1.0), ANY_BAD),
    ), lambda r: (probability(r[0]), finite(r[1]), probability(r[4])), FEW,
        covers=tuple(f"dpax.conversions.{c}.{m}" for c, ms in (
            ("TradeoffCurve", ("beta", "v", "vertices_u", "slopes", "advantage")),
            ("GDPCurve", ("beta", "v", "tangent_u", "advantage")),
            ("PiecewiseLinearCurve", ("beta", "v", "vertices_u", "slopes"))) for m in ms)
        + ("dpax.conversions.GDPCurve", "dpax.conversions.PiecewiseLinearCurve"),
        relation=lambda r, kw: around(r[0], gdp_beta(np.asarray(kw["alpha"], np.float64), 1.0), True, 1e-9)
        if isinstance(kw["curve"], conversions.GDPCurve) else None),
    Spec("conversions.GDPCurve.tangent_u", lambda s: conversions.gdp_curve(1.0).tangent_u(s), (
        Arg("s", st.one_of(real(0.0, 1e300, 0.0, 1.0), one_of(np.inf, [1.0, np.inf])),
            st.one_of(NOT_NUMBERS, one_of(np.nan, -1.0, None, [1.0, np.nan]))),
    ), lambda r: finite(np.concatenate([np.ravel(r[0]), np.ravel(r[1])])), FEW),
    Spec("conversions.PrivacyLossCurve",
         lambda pl, alpha, u: _curve_methods(conversions.PrivacyLossCurve(pl), alpha, u), (
        Arg("pl", one_of("one").map(lambda k: pls()[k]), one_of(None, 1.0, "pl", conversions.gdp_curve(1.0))),
        Arg("alpha", ALPHA, BAD_PROB),
        Arg("u", real(-1.0, 1.0, 0.0), ANY_BAD),
    ), lambda r: (probability(r[0]), finite(r[1]), probability(r[4])), FEW,
        covers=tuple(f"dpax.conversions.PrivacyLossCurve.{m}"
                     for m in ("beta", "v", "vertices_u", "slopes", "advantage"))),
]

# -- audit: the rest ------------------------------------------------------------------------------

_GM = audit.fit_gaussian_mixture(np.arange(20.0), 2)
POINTS = st.one_of(real(-1e300, 1e300), one_of(np.inf, -np.inf))

AUDIT_MORE = [
    Spec("audit.epsilon_delta_tradeoff", audit.epsilon_delta_tradeoff, (
        Arg("alpha", ALPHA, BAD_PROB), Arg("epsilon", EPS, bad(below(0.0))), Arg("delta", DELTA, BAD_PROB)),
        probability, FEW),
    Spec("audit.gdp_tradeoff", audit.gdp_tradeoff, (Arg("alpha", ALPHA, BAD_PROB), Arg("mu", MU, bad(below(0.0)))),
         probability, FEW, relation=lambda r, kw: around(r, gdp_beta(np.asarray(kw["alpha"], np.float64),
                                                                     np.asarray(kw["mu"], np.float64)), True, 1e-12)),
    Spec("audit.goodness_of_fit", lambda **kw: audit.goodness_of_fit(**kw), (
        Arg("train_losses", _losses(30, 40), st.one_of(ANY_BAD, one_of([1.0, 2.0], np.arange(5.0)))),
        Arg("test_losses", _losses(30, 40), st.one_of(ANY_BAD, one_of([1.0, 2.0]))),
        Arg("max_components", one_of(1), bad(0, NOT_WHOLE)),
        Arg("n_samples", one_of(10), bad(9, NOT_WHOLE)),
        Arg("seed", one_of(0, None), one_of(-1, 1.5, "seed", True)),
    ), lambda r: (probability(r["train"]), probability(r["test"])), FEW),
    Spec("audit.GaussianMixture", lambda x, size, rng: (_GM.logpdf(x), _GM.cdf(x), _GM.sample(size, rng)), (
        Arg("x", POINTS, st.one_of(NOT_NUMBERS, one_of(np.nan, None, [0.0, np.nan]))),
        Arg("size", counts(0, 5, pair=False), bad(below(0.0), NOT_WHOLE, [1, 2])),
        Arg("rng", one_of(0, None, np.random.default_rng(0)), one_of(-1, 1.5, "seed", True, [1.5])),
    ), lambda r: (finite(r[0], allow_inf=True), probability(r[1]), finite(r[2])), FEW,
        covers=("dpax.audit.GaussianMixture.logpdf", "dpax.audit.GaussianMixture.cdf",
                "dpax.audit.GaussianMixture.sample", "dpax.audit.AuditResult", "dpax.audit.EpsilonStar")),
]

# -- targets: every class's methods ----------------------------------------------------------------

TARGET_OBJECTS = one_of(targets.Advantage(0.2), targets.ErrRates([0.1, 0.2], 0.5), targets.Epsilon(1.0, 1e-5),
                        targets.GDP(1.0), targets.All(targets.Advantage(0.2), targets.GDP([1.0, 2.0])))


def _target_methods(target, delta, leak_probability, shape, index, pair):
    flat = target.flat(shape)
    return (target.shape(), target.gdp_mu(), target.standard_epsilon(delta), target.met_without_noise(leak_probability),
            target.broadcast(np.broadcast_shapes(target.shape(), shape)), flat, flat.take(index), flat.margin(pair))


TARGETS_MORE = [
    Spec("targets.Target", _target_methods, (
        Arg("target", TARGET_OBJECTS, None),
        Arg("delta", real(0.0, 0.999, 0.0, 1e-5), bad(1.0, below(0.0), above(1.0))),
        Arg("leak_probability", real(0.0, 1.0, 0.0, 1.0), BAD_PROB),
        Arg("shape", one_of((2,)), one_of((2.0,), "2", None, 2, (True,), (-1,))),
        Arg("index", one_of([0], [1, 0], slice(0, 1), np.array([True, False])), one_of(0.5, "0", None, True, [0.5])),
        Arg("pair", one_of("batch").map(lambda k: pls()[k].pair), one_of(None, 1.0, "pair", [1.0])),
    ), lambda r: (finite(r[1], allow_inf=True), finite(r[-1][0])), FEW,
        covers=tuple(f"dpax.targets.{c}.{m}" for c in ("Target", "Advantage", "ErrRates", "Epsilon", "GDP", "All")
                     for m in ("shape", "gdp_mu", "standard_epsilon", "met_without_noise", "broadcast", "flat", "take",
                               "margin") if m in vars(getattr(targets, c)))),
    Spec("targets.ErrRates.from_tpr", targets.ErrRates.from_tpr, (
        Arg("alpha", real(1e-3, 0.1, pair=False), PROB_OPEN), Arg("tpr", real(0.2, 0.999, pair=False), PROB_OPEN)),
        lambda t: finite(t.gdp_mu()), FEW),
    Spec("targets.as_target", targets.as_target, (
        Arg("target", TARGET, one_of(None, 0.2, "advantage", [], [None], (targets.Advantage, 0.2))),),
        lambda t: finite(t.gdp_mu(), allow_inf=True), FEW),
    Spec("targets.All", lambda first, second: targets.All(first, second), (
        Arg("first", one_of(targets.Advantage(0.2)), one_of(None, 0.2, "x"), "targets"),
        Arg("second", one_of(targets.GDP(1.0), targets.All(targets.GDP(2.0))), one_of(None, 0.2, "x"), "targets"),
    ), lambda t: finite(t.gdp_mu()), FEW),
    Spec("targets.err_rates", lambda t: t.err_rates(), (
        Arg("t", one_of(targets.Accuracy(0.1, 0.6), targets.PPV(0.1, 0.6), targets.Reconstruction(0.1, 0.5)), None),),
        lambda e: finite(e.gdp_mu()), 3,
        covers=("dpax.targets.Accuracy.err_rates", "dpax.targets.PPV.err_rates",
                "dpax.targets.Reconstruction.err_rates")),
]

# -- accountants ------------------------------------------------------------------------------------

from dpax import accountants as _acc  # noqa: E402


def _accountant(grid_step, noise_multiplier, sample_rate, delta, epsilon, alpha):
    acct = _acc.PLDAccountant(grid_step=grid_step)
    acct.step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    acct.step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    restored = _acc.PLDAccountant(grid_step=grid_step)
    restored.load_state_dict(acct.state_dict())
    return (restored.get_epsilon(delta), restored.get_delta(epsilon), restored.get_beta(alpha),
            restored.get_advantage(), restored.get_mu_and_regret(), restored.privacy_loss(), acct.mechanism())


def _accounting_matches_dpsgd(r: Any, kw: dict[str, Any]) -> None:
    pl = dpax.dpsgd(kw["noise_multiplier"], kw["sample_rate"], 2, grid_step=kw["grid_step"])
    np.testing.assert_allclose(r[3], pl.advantage(), rtol=1e-12, atol=1e-15)


def _event_accountant(value_discretization_interval, noise, count, delta, bounds):
    from dp_accounting import dp_event

    acct = _acc.DpEventAccountant(value_discretization_interval=value_discretization_interval)
    acct.compose(dp_event.GaussianDpEvent(noise), count)
    return (acct.get_epsilon(delta, bounds=bounds), acct.get_delta(1.0, bounds=bounds),
            acct.get_beta(0.1, bounds=bounds), acct.get_advantage(bounds=bounds), acct.get_mu_and_regret(),
            acct.privacy_loss())


def _event_accountant_relation(r: Any, kw: dict[str, Any]) -> None:
    mu = np.sqrt(kw["count"]) / kw["noise"]  # count Gaussian steps: exactly mu-GDP
    around(r[3], gdp_advantage(mu), True)
    around(r[2], gdp_beta(0.1, mu), False)
    if kw["bounds"]:
        ordered(r[3])
        ordered(r[2], False)


ACCOUNTANTS = [
    Spec("accountants.PLDAccountant", _accountant, (
        Arg("grid_step", GRID, BAD_GRID),
        Arg("noise_multiplier", real(4.0, 1e300, log=True, pair=False), bad(0.0, below(0.0), scalar=True)),
        Arg("sample_rate", real(1e-300, 1.0, 1.0, log=True, pair=False), BAD_RATE),
        Arg("delta", real(1e-300, 1.0, log=True, pair=False), BAD_PROB),
        Arg("epsilon", real(0.0, 50.0, 0.0, pair=False), ANY_BAD),
        Arg("alpha", real(0.0, 1.0, 0.0, 1.0, pair=False), BAD_PROB),
    ), lambda r: (finite(r[0], allow_inf=True), probability(r[1]), probability(r[2]), probability(r[3])), FEW,
        covers=tuple(f"dpax.accountants.PLDAccountant.{m}" for m in (
            "step", "state_dict", "load_state_dict", "get_epsilon", "get_delta", "get_beta", "get_advantage",
            "get_mu_and_regret", "privacy_loss", "mechanism")), relation=_accounting_matches_dpsgd),
    Spec("accountants.DpEventAccountant", _event_accountant, (
        Arg("value_discretization_interval", GRID, BAD_GRID),
        Arg("noise", real(4.0, 100.0, pair=False), None),
        Arg("count", st.integers(1, 3), BAD_COUNT, "count"),  # dp-accounting's compose takes ints only
        Arg("delta", real(1e-300, 1.0, log=True, pair=False), BAD_PROB, "delta"),
        Arg("bounds", FLAG, BAD_FLAG),
    ), lambda r: (finite(safe_of(r[0]), allow_inf=True), a_bracket_or_probability(r[3])), FEW,
        covers=("dpax.accountants.DpEventAccounting",) + tuple(f"dpax.accountants.DpEventAccounting.{m}" for m in (
            "get_epsilon", "get_delta", "get_beta", "get_advantage", "get_mu_and_regret", "privacy_loss")),
        relation=_event_accountant_relation),
    Spec("accountants.PLDAccountant.get_optimizer_hook_fn", lambda sample_rate: _acc.PLDAccountant(
        grid_step=0.1).get_optimizer_hook_fn(sample_rate), (
        # invalid rates: test_optimizer_hook_checks_sample_rate
        Arg("sample_rate", real(1e-300, 1.0, 1.0, log=True, pair=False), None),), callable, 2),
    Spec("accountants.opacus_accountant", lambda name, grid_step: (
        _acc.opacus_accountant(name, grid_step=grid_step),
        _acc.register_with_opacus(name, grid_step=grid_step, force=True))[0], (
        Arg("name", one_of("dpax-fuzz"), one_of(None, 1, b"x")), Arg("grid_step", GRID, BAD_GRID)),
        lambda cls: None if isinstance(cls, type) else pytest.fail("not a class"), FEW, valid_default=False,
        covers=("dpax.accountants.register_with_opacus",), needs="opacus"),
]

# -- compat: gdpnum and riskcal ---------------------------------------------------------------------

from dpax.compat import gdpnum as _gn  # noqa: E402
from dpax.compat import riskcal as _rc  # noqa: E402

GN_CURVE_A, GN_CURVE_B = [0.0, 0.2, 1.0], [1.0, 0.3, 0.0]


def _ctd(cls, grid_step, use_connect_dots, delta, alpha):
    acct = cls(grid_step=grid_step)
    acct.step(noise_multiplier=4.0, sample_rate=0.1)
    get_beta = (lambda: acct.get_beta(alpha=alpha, grid_step=grid_step, use_connect_dots=use_connect_dots))
    out = (acct.get_epsilon(delta=delta, grid_step=grid_step, use_connect_dots=use_connect_dots), get_beta(),
           acct.get_advantage(grid_step=grid_step, use_connect_dots=use_connect_dots),
           acct.get_pld(grid_step=grid_step, use_connect_dots=use_connect_dots), cls.mechanism())
    if cls is _gn.CTDAccountant:
        out += (acct.get_mu_and_regret(grid_step=grid_step, use_connect_dots=use_connect_dots),)
    return out


COMPAT = [
    Spec("compat.gdpnum.gaussian_fdp", lambda mu, alpha: _gn.gaussian_fdp(mu)(alpha), (
        Arg("mu", real(0.0, 1e300, 0.0, 1.0, log=False, pair=False), bad(below(0.0), scalar=True)),
        Arg("alpha", ALPHA, BAD_PROB)), probability, FEW),
    Spec("compat.gdpnum.get_worst_case_regret", _gn.get_worst_case_regret, (
        Arg("alphas", one_of(GN_CURVE_A), BAD_PROB), Arg("betas", one_of(GN_CURVE_B), BAD_PROB),
        Arg("mu", MU.filter(lambda m: np.ndim(m) == 0), bad(below(0.0), scalar=True)),
        Arg("tol", one_of(1e-10), bad(0.0, below(0.0), scalar=True))), probability, FEW),
    Spec("compat.gdpnum.get_mu_and_regret_for_dpsgd", lambda noise_multiplier, sample_rate, num_steps, err:
         _gn.get_mu_and_regret_for_dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=0.1, err=err), (
        Arg("noise_multiplier", NOISE, BAD_POSITIVE), Arg("sample_rate", RATE, BAD_RATE),
        Arg("num_steps", counts(1, 3), BAD_COUNT),
        Arg("err", one_of(1e-10, 0.0), bad(0.5, below(0.0), scalar=True), "tail")),
        lambda r: finite(r, allow_inf=True), FEW),
    Spec("compat.gdpnum.PLDConverter", lambda pl, alphas, err: (
        lambda c: (c.tradeoff_function(alphas), c.inverse_tradeoff_function(alphas), c.get_advantage(), c.get_beta(),
                   c.get_beta(alphas), c.get_mu(err), c.get_mu_and_regret(err)))(_gn.PLDConverter(pl)), (
        Arg("pl", one_of("one").map(lambda k: pls()[k]), one_of(None, 1.0, "pld")),
        Arg("alphas", ALPHA, BAD_PROB, "alpha"),
        Arg("err", one_of(1e-10), bad(0.5, below(0.0), scalar=True), "tail"),
    ), lambda r: (probability(r[0]), probability(r[1]), probability(r[2])), FEW,
        covers=tuple(f"dpax.compat.gdpnum.PLDConverter.{m}" for m in (
            "tradeoff_function", "inverse_tradeoff_function", "get_advantage", "get_beta", "get_mu",
            "get_mu_and_regret")),
        relation=lambda r, kw: around(r[0], gdp_beta(np.asarray(kw["alphas"], np.float64), GAUSS_MU), False, 1e-9)),
    Spec("compat.CTDAccountant", _ctd, (
        Arg("cls", one_of(_gn.CTDAccountant, _rc.CTDAccountant), None),
        Arg("grid_step", GRID, BAD_GRID),
        Arg("use_connect_dots", FLAG, BAD_FLAG),
        Arg("delta", real(1e-300, 1.0, log=True, pair=False), BAD_PROB),
        Arg("alpha", real(0.0, 1.0, 0.0, 1.0, pair=False), BAD_PROB),
    ), lambda r: (finite(r[0], allow_inf=True), probability(r[1]), probability(r[2])), FEW,
        covers=tuple(f"dpax.compat.{m}.CTDAccountant.{f}" for m in ("gdpnum", "riskcal") for f in (
            "get_epsilon", "get_beta", "get_advantage", "get_pld", "mechanism"))
        + ("dpax.compat.gdpnum.CTDAccountant.get_mu_and_regret", "dpax.compat.gdpnum.CTDAccountant",
           "dpax.compat.riskcal.CTDAccountant")),
    Spec("compat.riskcal.adp", lambda epsilon, delta, alpha: (_rc.get_advantage_from_adp(epsilon, delta),
                                                             _rc.get_beta_from_adp(epsilon, delta, alpha)), (
        Arg("epsilon", EPS, bad(below(0.0))), Arg("delta", DELTA, BAD_PROB), Arg("alpha", ALPHA, BAD_PROB)),
        each(probability), FEW,
        covers=("dpax.compat.riskcal.get_advantage_from_adp", "dpax.compat.riskcal.get_beta_from_adp")),
    Spec("compat.riskcal.gdp", lambda mu, alpha, prior: (_rc.get_advantage_from_gdp(mu),
                                                        _rc.get_beta_from_gdp(mu, alpha),
                                                        _rc.get_bayes_risk_from_gdp(mu, prior)), (
        # get_bayes_risk_from_gdp takes one mu (riskcal's signature)
        Arg("mu", real(1e-300, 1e300, 0.0, 1.0, log=True, pair=False), bad(below(0.0))), Arg("alpha", ALPHA, BAD_PROB),
        Arg("prior", real(0.0, 1.0, 0.0, 0.5, 1.0), BAD_PROB)),
        each(probability), FEW,
        covers=("dpax.compat.riskcal.get_advantage_from_gdp", "dpax.compat.riskcal.get_beta_from_gdp",
                "dpax.compat.riskcal.get_bayes_risk_from_gdp"),
        relation=lambda r, kw: around(r[0], gdp_advantage(np.asarray(kw["mu"], np.float64)), True, 1e-12)),
    Spec("compat.riskcal.get_bayes_risk_from_pld", lambda pld, prior: _rc.get_bayes_risk_from_pld(pld, prior), (
        Arg("pld", one_of("one").map(lambda k: pls()[k]), one_of(None, 1.0, "pld")),
        Arg("prior", real(0.0, 1.0, 0.0, 0.5, 1.0), BAD_PROB)), probability, FEW),
    Spec("compat.riskcal.pld", lambda pld, alpha: (_rc.get_advantage_from_pld(pld),
                                                   _rc.get_beta_from_pld(pld, alpha=alpha)), (
        Arg("pld", one_of("one").map(lambda k: pls()[k]), one_of(None, 1.0, "pld")),
        Arg("alpha", ALPHA, BAD_PROB)), each(probability), FEW,
        covers=("dpax.compat.riskcal.get_advantage_from_pld", "dpax.compat.riskcal.get_beta_from_pld")),
    Spec("compat.riskcal.get_beta_from_rdp", lambda epsilon, alpha, order, tol: _rc.get_beta_from_rdp(
        epsilon, alpha, order, tol=tol), (
        Arg("epsilon", real(0.0, 50.0, 0.0, pair=False), bad(below(0.0), scalar=True)),
        Arg("alpha", ALPHA, BAD_PROB),
        Arg("order", real(0.1, 100.0, 0.5, 1.0, pair=False), bad(0.0, below(0.0), scalar=True)),
        Arg("tol", one_of(1e-7), bad(0.0, below(0.0), above(0.5), scalar=True))), probability, FEW),
    Spec("compat.riskcal.get_beta_from_zcdp", lambda rho, alpha, grid_size: _rc.get_beta_from_zcdp(
        rho, alpha, grid_size=grid_size), (
        Arg("rho", real(0.0, 10.0, 0.0, pair=False), bad(below(0.0), scalar=True)), Arg("alpha", ALPHA, BAD_PROB),
        Arg("grid_size", one_of(30), bad(5, NOT_WHOLE))), probability, FEW),
    Spec("compat.riskcal.get_epsilon_from_err_rates", _rc.get_epsilon_from_err_rates, (
        Arg("delta", DELTA, BAD_PROB), Arg("alpha", ALPHA, BAD_PROB), Arg("beta", ALPHA, BAD_PROB)),
        lambda e: finite(e, allow_inf=True), FEW),
    Spec("compat.riskcal.dpsgd", lambda noise_multiplier, sample_rate, num_steps, alpha: (
        _rc.get_advantage_for_dpsgd(noise_multiplier, sample_rate, num_steps, grid_step=0.1),
        _rc.get_beta_for_dpsgd(noise_multiplier, sample_rate, num_steps, alpha, grid_step=0.1)), (
        Arg("noise_multiplier", NOISE, BAD_POSITIVE), Arg("sample_rate", RATE, BAD_RATE),
        Arg("num_steps", counts(1, 3), BAD_COUNT), Arg("alpha", ALPHA.filter(lambda a: np.ndim(a) == 0), BAD_PROB)),
        each(probability), FEW,
        covers=("dpax.compat.riskcal.get_advantage_for_dpsgd", "dpax.compat.riskcal.get_beta_for_dpsgd")),
    Spec("compat.riskcal.find_noise_multiplier", lambda advantage, sample_rate, num_steps, noise_min: (
        _rc.find_noise_multiplier_for_advantage(advantage, sample_rate, num_steps, grid_step=0.1, noise_min=noise_min),
        _rc.find_noise_multiplier_for_err_rates(0.1, 1.0 - 0.1 - advantage, sample_rate, num_steps, grid_step=0.1,
                                                noise_min=noise_min)), (
        Arg("advantage", one_of(0.2), PROB_OPEN), Arg("sample_rate", one_of(0.1), BAD_RATE),
        Arg("num_steps", one_of(2), BAD_COUNT), Arg("noise_min", one_of(0.5), bad(0.0, below(0.0), scalar=True))),
        None, FEW, covers=("dpax.compat.riskcal.find_noise_multiplier_for_advantage",
                           "dpax.compat.riskcal.find_noise_multiplier_for_err_rates")),
]

# -- the command line: every subcommand, in process --------------------------------------------------


def run_cli(argv: list[str]) -> dict[str, Any]:
    """``dpax ARGV --json`` in process: the JSON object, or a ValueError holding the error line
    (snake_case words spelled with hyphens, so that a message naming the argument as
    noise_multiplier names the option --noise-multiplier too)."""
    import contextlib
    import io

    from dpax.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv + ["--json"])
        except SystemExit as exc:  # --help / usage paths that exit
            code = exc.code
    if code != 0:
        lines = [line for line in err.getvalue().splitlines() if line.startswith("dpax: error:")]
        assert lines and "Traceback" not in err.getvalue(), err.getvalue()[-2000:]
        raise ValueError(lines[-1].replace("_", "-"))
    return json.loads(out.getvalue())


def _cli(command: list[str], options: dict[str, Any]) -> dict[str, Any]:
    argv = list(command)
    for name, value in options.items():
        if value is None:
            continue
        argv.append(f"--{name.replace('_', '-')}")
        if value is not True:
            argv.extend(str(v) for v in (value if isinstance(value, (list, tuple)) else [value]))
    return run_cli(argv + ["--no-cache"])


def numbers_in(obj: Any) -> list[float]:
    """Every number in a JSON object (inf / NaN arrive as strings or floats)."""
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in numbers_in(v)]
    if isinstance(obj, list):
        return [x for v in obj for x in numbers_in(v)]
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        return [float(obj)]
    return []


def no_nan(obj: Any) -> None:
    assert not any(np.isnan(numbers_in(obj))), obj
    assert "NaN" not in json.dumps(obj) and "nan" not in json.dumps(obj).split('"'), obj


CLI_NUMBER = lambda lo, hi, *edges: real(lo, hi, *edges, pair=False).map(lambda v: f"{v:.17g}")  # noqa: E731
CLI_BAD = one_of("nan", "inf", "-1", "abc", "", "1e999", "0x10")
CLI_DPSGD = (
    Arg("noise_multiplier", CLI_NUMBER(4.0, 1e6, 4.0), CLI_BAD, "noise-multiplier"),
    Arg("sample_rate", CLI_NUMBER(1e-12, 1.0, 1.0, 1e-12), one_of("0", "1.5", "nan", "abc"), "sample-rate"),
    Arg("num_steps", one_of("1", "2"), one_of("0", "2.5", "-1", "abc", "1e20"), "num-steps"),
    Arg("grid_step", one_of("0.1", "0.05"), one_of("0", "2", "1e-9", "abc"), "grid-step"),
)

CLI = [
    Spec("dpax curve", lambda **kw: _cli(["curve"], kw), CLI_DPSGD, no_nan, 4, valid_default=False,
         covers=("cli.curve",)),
    # the report options are checked once the pair is built (kernels): slow only; default
    # sibling: "dpax curve" above (the same subcommand, its other options)
    Spec("dpax curve (report options)", lambda **kw: _cli(["curve"], kw), CLI_DPSGD + (
        Arg("alpha", one_of(None, ["0.1", "0.5"]), one_of(["1.5"], ["-0.1"], ["abc"]), "alpha"),
        Arg("delta", one_of(None, ["1e-5"]), one_of(["2"], ["-1"], ["abc"]), "delta"),
    ), no_nan, 4, in_default=False),
    Spec("dpax gdp", lambda **kw: _cli(["gdp"], kw), CLI_DPSGD + (
        Arg("tail", one_of(None, "0", "1e-10"), one_of("0.7", "-1", "abc"), "tail"),), no_nan, FEW, valid_default=False,
        covers=("cli.gdp",)),
    Spec("dpax gdp --epsilon", lambda **kw: _cli(["gdp"], kw), (
        Arg("epsilon", CLI_NUMBER(0.0, 50.0, 0.0), one_of("-1", "nan", "abc"), "epsilon"),
        Arg("delta", one_of("1e-5", "0.5"), one_of("0", "1.5", "abc"), "delta"),
    ), no_nan, FEW),
    Spec("dpax mechanism", lambda kind, **kw: _cli(["mechanism", kind], kw), (
        Arg("kind", one_of("laplace"), one_of("nonsense", "Laplace", ""), "kind"),
        Arg("scale", CLI_NUMBER(1.0, 1e6, 1.0), CLI_BAD, "scale"),
        Arg("grid_step", one_of("0.1"), one_of("0", "2", "abc"), "grid-step"),
        Arg("count", one_of(None, "1", "2"), one_of("0", "1.5", "abc"), "count"),
    ), no_nan, 3, valid_default=False, covers=("cli.mechanism",)),
    Spec("dpax audit", lambda **kw: _cli(["audit"], kw), (
        Arg("false_positives", one_of("0", "3"), one_of("-1", "1.5", "abc", "101"), "false-positives"),
        Arg("negatives", one_of("100"), one_of("0", "-1", "abc"), "negatives"),
        Arg("false_negatives", one_of("0", "30"), one_of("-1", "1.5", "abc"), "false-negatives"),
        Arg("positives", one_of("100"), one_of("0", "abc"), "positives"),
        Arg("confidence", one_of(None, "0.95", "0.5"), one_of("0", "1", "1.5", "abc"), "confidence"),
    ), no_nan, FEW, covers=("cli.audit",)),
    Spec("dpax epsilon-star", lambda train, test, **kw: _cli(["epsilon-star", train, test], kw), (
        Arg("train", one_of("good.csv").map(lambda f: os.path.join(loss_files(), f)),
            one_of("missing.csv", "words.csv", "empty.csv", "nan.csv").map(lambda f: os.path.join(loss_files(), f)),
            lambda v: v.replace("_", "-")),  # as run_cli spells the error line (a temporary path may hold "_")
        Arg("test", one_of("good.csv").map(lambda f: os.path.join(loss_files(), f)), None),
        Arg("delta", one_of(None, "1e-5", "0.5"), one_of("1", "-1", "abc"), "delta"),
        Arg("method", one_of(None, "parametric", "empirical", "both"), one_of("Parametric", "x"), "method"),
    ), no_nan, FEW, valid_default=False, covers=("cli.epsilon-star",)),
    Spec("dpax calibrate", lambda **kw: _cli(["calibrate"], kw), (
        Arg("sample_rate", one_of("0.1"), one_of("0", "1.5", "abc"), "sample-rate"),
        Arg("num_steps", one_of("2"), one_of("0", "2.5", "abc"), "num-steps"),
        Arg("advantage", one_of("0.2"), one_of("0", "1", "1.5", "abc"), "advantage"),
        Arg("grid_step", one_of("0.1"), one_of("0", "2", "abc"), "grid-step"),
    ), no_nan, 4, valid_default=False, covers=("cli.calibrate",)),
    Spec("dpax sweep",
         lambda config, output: run_cli(["sweep", config, "--output", output, "--overwrite", "--no-cache"]), (
        Arg("config", one_of("sweep.csv").map(lambda f: os.path.join(loss_files(), f)),
            one_of("missing.csv", "empty.csv").map(lambda f: os.path.join(loss_files(), f)),  # (bad rows are skipped:
            lambda v: os.path.basename(v)),                                                   # --on-error skip)
        Arg("output", one_of("results.csv").map(lambda f: os.path.join(loss_files(), f)), None),
    ), None, 3, covers=("cli.sweep",)),
    Spec("dpax plot", lambda kind, **kw: _cli(["plot", kind], kw), (
        Arg("kind", one_of("tradeoff"), one_of("nonsense", ""), "KIND"),
        Arg("output", one_of(os.path.join(tempfile.gettempdir(), "dpax-fuzz-plot.png")),
            one_of("/nonexistent-dir/x.png"), lambda v: v),
        Arg("noise_multiplier", one_of("4"), one_of("-1", "nan", "abc"), "noise-multiplier"),
        Arg("sample_rate", one_of("0.1"), one_of("0", "1.5"), "sample-rate"),
        Arg("num_steps", one_of("2"), one_of("0", "2.5"), "num-steps"),
        Arg("grid_step", one_of("0.1"), one_of("0", "abc"), "grid-step"),
    ), None, 4, covers=("cli.plot",)),
]

# -- calibration with valid calls (slow: each is a search) ----------------------------------------


def _calibrated(result: Any) -> None:
    assert isinstance(result, dpax.CalibrationResult)
    finite(result.noise_multiplier)
    text, records, csv = result.table(), result.to_records(), result.to_csv()
    assert isinstance(text, str) and records and isinstance(csv, str) and "noise" in csv
    try:
        import pandas  # noqa: F401
    except ImportError:
        return
    assert len(result.to_dataframe()) == len(records)


CALIBRATION_VALID = [
    Spec("dpax.calibrate_dpsgd (valid)", lambda target, sample_rate: dpax.calibrate_dpsgd(
        sample_rate=sample_rate, num_steps=2, target=target, grid_step=0.1, rtol=1e-3), (
        Arg("target", one_of(targets.Advantage(0.2), targets.ErrRates(0.1, 0.5)), BAD_TARGET),
        Arg("sample_rate", one_of(0.1, 1.0), BAD_RATE),
    ), _calibrated, 4, valid_default=False,
        covers=("dpax.CalibrationResult",) + tuple(f"dpax.CalibrationResult.{m}" for m in (
            "table", "to_records", "to_csv", "to_dataframe")),
        # the noise found meets the target: its DP-SGD's advantage / beta on the safe side of it
        relation=lambda r, kw: None if float(r.noise_multiplier) == 0.0 else (  # 0: met without noise
            lambda pl: (around(pl.advantage(), 0.2, False, 1e-9) if isinstance(kw["target"], targets.Advantage)
                        else around(pl.beta(0.1), 0.5, True, 1e-9)))(
            dpax.dpsgd(float(r.noise_multiplier), kw["sample_rate"], 2, grid_step=0.1))),
    Spec("dpax.calibrate (valid)", lambda advantage: dpax.calibrate(
        lambda s: dpax.gaussian(s, grid_step=0.1), targets.Advantage(advantage), param_bounds=(0.5, 50.0), rtol=1e-3), (
        Arg("advantage", real(0.05, 0.6, pair=False), PROB_OPEN),), finite, 4, valid_default=False,
        # the Gaussian's closed form: the noise found is at least the exact one (1 / mu of the target)
        relation=lambda s, kw: around(s, 1.0 / targets.Advantage(kw["advantage"]).gdp_mu(), True, 1e-3)),
]

# -- what the fuzz must reach ------------------------------------------------------------------------

#: The namespaces whose public callables (functions, classes and the methods of the classes) the
#: fuzz must reach; the command line's subcommands count as "cli.<name>".
NAMESPACES = ("dpax", "dpax.gdp", "dpax.audit", "dpax.targets", "dpax.conversions", "dpax.accountants",
              "dpax.compat.gdpnum", "dpax.compat.riskcal")
#: Public callables the fuzz does not call, and why.
NOT_FUZZED = {
    "dpax.PrivacyLoss.tree_flatten": ("JAX's pytree protocol (JAX calls it, not users); "
                                      "round trips in tests/test_api.py"),
    "dpax.PrivacyLoss.tree_unflatten": ("JAX's pytree protocol (JAX calls it, not users); "
                                        "round trips in tests/test_api.py"),
    "dpax.PrivacyLoss.bounds": ("deprecated name of optimistic_companion (fuzzed under that name), it only "
                                "warns and calls it: tests/privacy_loss/test_companion.py"),
}


def callable_key(owner: Any, name: str | None = None) -> tuple[str, ...]:
    """A callable's identity, the same however it is reached (re-exports share it)."""
    base = (getattr(owner, "__module__", ""), getattr(owner, "__qualname__", repr(owner)))
    return base if name is None else base + (name,)


def resolve(path: str) -> tuple[str, ...]:
    """The key of a dotted path ("dpax.PrivacyLoss.beta", "cli.curve")."""
    import importlib
    import inspect

    if path.startswith("cli."):
        return ("cli", path[4:])
    parts = path.split(".")
    owner, obj = None, importlib.import_module(parts[0])
    for i, name in enumerate(parts[1:], 1):  # attributes first (dpax.gdp.report is a function and a module)
        owner = obj
        if hasattr(obj, name):
            obj = getattr(obj, name)
        else:
            obj = importlib.import_module(".".join(parts[:i + 1]))
    if inspect.isclass(owner):
        return callable_key(owner, parts[-1])
    return callable_key(obj)


def public_callables() -> dict[tuple[str, ...], str]:
    """Key -> a dotted path, for every public callable of NAMESPACES (functions, classes but
    exceptions, and the functions, classmethods and staticmethods defined on the classes)
    and every subcommand of ``dpax``."""
    import importlib
    import inspect
    import types
    import warnings

    from dpax.cli.main import build_parser

    out: dict[tuple[str, ...], str] = {}
    for ns in NAMESPACES:
        mod = importlib.import_module(ns)
        warnings.filterwarnings("ignore", category=DeprecationWarning)  # riskcal's deprecated submodules
        names = getattr(mod, "__all__", None)
        if names is None:  # no __all__: the public names the module defines
            names = [n for n in dir(mod) if not n.startswith("_") and getattr(getattr(mod, n), "__module__", "") == ns]
        for n in names:
            obj = getattr(mod, n)
            if isinstance(obj, types.ModuleType) or not callable(obj):
                continue
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                continue
            out.setdefault(callable_key(obj), f"{ns}.{n}")
            if inspect.isclass(obj):
                for m, attr in vars(obj).items():
                    if not m.startswith("_") and (inspect.isfunction(attr)
                                                  or isinstance(attr, (classmethod, staticmethod))):
                        out.setdefault(callable_key(obj, m), f"{ns}.{n}.{m}")
    sub = next(a for a in build_parser()._actions if getattr(a, "choices", None) and isinstance(a.choices, dict))
    for name in sub.choices:
        out[("cli", name)] = f"cli.{name}"
    return out


def spec_path(spec: Spec) -> str:
    """The dotted path of a spec's name ("PrivacyLoss.beta" -> "dpax.PrivacyLoss.beta")."""
    name = spec.name.split(" ")[0]
    return name if name.startswith(("dpax.", "cli.")) else f"dpax.{name}"


def fuzzed() -> set[tuple[str, ...]]:
    """The keys every spec reaches: its name (where that names a callable) and its covers."""
    keys = set()
    for spec in SPECS:
        try:
            keys.add(resolve(spec_path(spec)))
        except (LookupError, AttributeError, ImportError):
            pass  # a label ("compat.riskcal.adp"): its covers say what it reaches
        keys.update(resolve(path) for path in spec.covers)
    return keys


#: The slow variants' calls of the specs above: searches and whole subcommands SLOW_HEAVY, the rest SLOW_FEW.
HEAVY = {"dpax curve", "dpax gdp", "dpax mechanism", "dpax calibrate", "dpax plot", "dpax sweep", "dpax epsilon-star",
         "dpax.calibrate_dpsgd (valid)", "dpax.calibrate (valid)", "compat.riskcal.find_noise_multiplier",
         "dpax.calibrate_blackbox", "dpax.refine", "audit.goodness_of_fit", "gdp.mu_and_regret (bounds)",
         "PrivacyLoss.tradeoff_points", "compat.CTDAccountant", "accountants.DpEventAccountant",
         "accountants.opacus_accountant", "dpax.mixture_of_gaussians", "PrivacyLoss.compose",
         "accountants.PLDAccountant", "compat.gdpnum.PLDConverter", "dpax.from_dp_event", "dpax.event_family",
         "dpax.use_devices",
         "dpax.clear_kernel_cache", "dpax.dpsgd (finest grid)"}
for _list in (MECHANISMS_MORE, PRIVACY_LOSS, INTERVAL, TOP, GDP_MORE, CONVERSIONS_MORE, AUDIT_MORE, TARGETS_MORE,
              ACCOUNTANTS, COMPAT, CLI, CALIBRATION_VALID):
    _list[:] = [dataclasses.replace(sp, slow_examples=SLOW_HEAVY if sp.name in HEAVY else SLOW_FEW) for sp in _list]
del _list

SPECS = (MECHANISMS + MECHANISMS_MORE + PROFILES + METHODS + PRIVACY_LOSS + INTERVAL + TOP + CONVERSIONS
         + CONVERSIONS_MORE + GDP + GDP_MORE + CALIBRATION + CALIBRATION_VALID + TARGETS + TARGETS_MORE + AUDIT
         + AUDIT_MORE + FILES + ACCOUNTANTS + COMPAT + CLI)


# -- the test -------------------------------------------------------------------------------------


def cases(spec: Spec, slow: bool = False) -> st.SearchStrategy:
    """``(wrong, arguments)``: all arguments valid (``wrong`` None), or exactly the one at
    index ``wrong`` invalid; one draw per call (cheaper than drawing argument by argument).
    The slow variants also draw each argument's ``slow_valid`` values."""
    def valid(a: Arg) -> st.SearchStrategy:
        return st.one_of(a.valid, a.slow_valid) if slow and a.slow_valid is not None else a.valid

    def arguments(wrong: int | None) -> st.SearchStrategy:
        return st.tuples(st.just(wrong), st.fixed_dictionaries(
            {a.name: (a.invalid if i == wrong else valid(a)) for i, a in enumerate(spec.args)}))

    options = [arguments(i) for i, a in enumerate(spec.args) if a.invalid is not None]
    if spec.check is not None and (slow or spec.valid_default):  # valid calls are half of all
        options = [arguments(None), st.one_of(*options)] if options else [arguments(None)]
    return st.one_of(*options)


def fuzz_once(spec: Spec, wrong: int | None, kwargs: dict[str, Any]) -> None:
    """One call of ``spec``: valid ones give finite numbers, an invalid one a named error."""
    if wrong is None:
        with np.errstate(all="ignore"):
            try:
                result = spec.call(**kwargs)
            except MemoryBudgetError as exc:  # valid, refused up front for its size: documented
                assert len(str(exc)) <= 2 * MAX_MESSAGE, str(exc)[:500]
                return
        spec.check(result)
        if spec.relation is not None:
            try:
                spec.relation(result, kwargs)
            except MemoryBudgetError as exc:  # e.g. a companion over the budget: refused up front, documented
                assert len(str(exc)) <= 2 * MAX_MESSAGE, str(exc)[:500]
        return
    arg = spec.args[wrong]
    with pytest.raises((ValueError, TypeError)) as err:
        with np.errstate(all="ignore"):
            spec.call(**kwargs)
    msg = str(err.value)
    expected = arg.says(kwargs[arg.name])
    assert expected in msg, (f"{spec.name}: the error about {arg.name}={kwargs[arg.name]!r:.80} "
                             f"does not name it: {msg!r}")
    assert len(msg) <= MAX_MESSAGE and "\n" not in msg, f"{spec.name}: a long or multi-line message: {msg[:500]!r}"
    for unhelpful in ("only 0-dimensional arrays", "arg 0 with shape", "Unknown format code", "could not convert"):
        assert unhelpful not in msg, msg


def _fuzz_settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None, print_blob=False,
                    suppress_health_check=list(HealthCheck))


def _fuzz_test(spec: Spec, examples: int, slow: bool) -> Callable[..., None]:
    @given(case=cases(spec, slow))
    @_fuzz_settings(examples)
    def calls(case: tuple[int | None, dict[str, Any]]) -> None:
        fuzz_once(spec, *case)

    def test() -> None:
        if spec.needs and (slow or spec.valid_default):
            pytest.importorskip(spec.needs)
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
    if _spec.in_default:
        globals()[f"test_fuzz_{_key}"] = _fuzz_test(_spec, _spec.examples, slow=False)
    globals()[f"test_fuzz_more_{_key}"] = _fuzz_test(_spec, _spec.slow_examples, slow=True)
del _spec, _key


def test_tabulated_curve_lengths_must_agree():
    assert conversions.tabulated_curve([0.0, 0.2, 1.0], [1.0, 0.3, 0.0]).beta(0.1) == pytest.approx(0.65)
    with pytest.raises(ValueError, match="alpha and beta"):
        conversions.tabulated_curve([0.0, 0.2, 1.0], [0.5])


def test_every_public_callable_is_fuzzed():
    """Every public function, class and method of NAMESPACES and every subcommand of ``dpax``
    has a spec above (by its name or its covers), unless NOT_FUZZED says why not: a public
    callable added without a fuzz entry fails here."""
    public = public_callables()
    skipped = {resolve(path) for path in NOT_FUZZED}
    missing = sorted(path for key, path in public.items() if key not in fuzzed() and key not in skipped)
    assert not missing, f"public callables without a fuzz spec: {missing}"
    # and the check itself: it sees the functions, the classes' methods and the subcommands
    assert {resolve("dpax.gaussian"), resolve("dpax.PrivacyLoss.beta"), resolve("dpax.targets.ErrRates.from_tpr"),
            ("cli", "curve"), ("cli", "mechanism")} <= set(public)
    # one re-exported function
    assert resolve("dpax.gdp.delta_divergence") == resolve("dpax.conversions.delta_divergence")


# -- argument checks the fuzz asked for ------------------------------------------------------------


def test_clear_kernel_cache_checks_memory_only(tmp_path):
    from dpax._engine import cache

    cache.enable(str(tmp_path / "store"))  # a store of its own (the test run's is restored after the test)
    with pytest.raises(TypeError, match="memory_only"):
        dpax.clear_kernel_cache(memory_only="no")


def test_use_devices_checks_devices():
    try:
        with pytest.raises(TypeError, match="devices"):
            dpax.use_devices("cpu")
    finally:
        dpax.use_devices(None)


def test_optimizer_hook_checks_sample_rate():
    with pytest.raises(ValueError, match="sample_rate"):
        dpax.accountants.PLDAccountant(grid_step=0.1).get_optimizer_hook_fn(-1.0)


def test_load_state_dict_names_state_dict():
    with pytest.raises(TypeError, match="state_dict"):
        dpax.accountants.PLDAccountant(grid_step=0.1).load_state_dict(1.0)


def test_event_accountant_names_its_own_arguments():
    with pytest.raises(ValueError, match="value_discretization_interval"):
        dpax.accountants.DpEventAccountant(value_discretization_interval=-1.0)


@pytest.mark.slow  # imports opacus (2 s); default siblings: the argument checks above
def test_register_with_opacus_checks_force():
    pytest.importorskip("opacus")
    with pytest.raises(TypeError, match="force"):
        dpax.accountants.register_with_opacus("dpax-fuzz-force", force="no")
