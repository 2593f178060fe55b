"""The benchmark workloads shared by ``python -m benchmarks compare``, ``batch-curve``, the
goals file (benchmarks/goals.toml) and the suite (whose DP-SGD parameters are these).

Every workload uses only dpax's long-stable public API (``dpax.dpsgd(...).beta/.epsilon``,
``dpax.gdp.mu_and_regret``, ``dpax.calibrate_dpsgd``, ``dpax.accountants.PLDAccountant``), so
the same definition runs against any revision of dpax. Each returns its answer as a list of
floats (converted inside the call, so a timing includes waiting for the result).

Run one workload in this process and print one JSON line (what ``compare`` runs in a child
process with ``PYTHONPATH=<tree>/src``)::

    python -m benchmarks.workloads beta --repeat 5          # warm: three calls, then the median of 5
    python -m benchmarks.workloads beta --cold --t0 <time.time() of the parent>
    python -m benchmarks.workloads epsilon --smoke          # tiny grid: a seconds-long check
    python -m benchmarks.workloads --list

Only the standard library is imported at module level, so that a ``--cold`` run's time to its
first answer includes importing numpy, JAX and dpax.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

_MODULE_START = time.time()

# -- parameters (the suite's DP-SGD workloads use the same) ---------------------------------------

#: alphas at which beta is evaluated
ALPHAS = (1e-3, 1e-2, 0.1)
DELTA = 1e-5
#: DP-SGD of Kulynych et al. 2024 (Sec. 3.1)
DPSGD = dict(noise=1.0, rate=1e-3, steps=10_000)
#: DP-SGD of Gomez et al. 2025 (De et al., Sec. 5)
DE_ET_AL = dict(noise=9.4, rate=2**14 / 50_000, steps=2000)
#: one (alpha, beta) calibration of DP-SGD p = 1e-3, T = 1e4
CALIBRATION = dict(rate=1e-3, steps=10_000, alpha=0.1, beta=0.5, grid=1e-3)
#: the Opacus-style accountant workload
ACCOUNTANT = dict(noise=1.1, rate=0.01, steps=1000)
#: the DpEvent accountant workload: DP-SGD whose noise changes every ``per_level`` steps
#: (``levels`` noise multipliers from ``noise`` up by ``noise_step``), then ``releases`` Laplace
#: releases of scale ``laplace``, each event composed on its own (10,003 events)
EVENTS = dict(rate=0.01, noise=1.0, noise_step=0.05, levels=10, per_level=1000, laplace=20.0, releases=3)
#: eleven unlike rows of bench_calibrate.dpsgd_table(64): sample rates 3e-4..0.05, steps
#: 100..5000, alpha 0.01..0.1, all needing noise
ROWS11 = (0, 4, 6, 8, 10, 12, 15, 17, 18, 24, 28)
TABLE_GRID = 1e-3


def _floats(x) -> list:
    """A JSON-able list of floats (NaN as None)."""
    import numpy as np

    out = np.atleast_1d(np.asarray(x, dtype=float)).ravel().tolist()
    return [v if math.isfinite(v) else None for v in out]


def _table(n=64, seed=0):
    from benchmarks.bench_calibrate import dpsgd_table

    return dpsgd_table(n, seed)


# -- workload builders: (smoke) -> zero-argument callable returning a list of floats ----------


def _beta(smoke):
    import dpax

    s, p, t = DPSGD["noise"], DPSGD["rate"], (100 if smoke else DPSGD["steps"])
    g = 1e-2 if smoke else 1e-4
    return lambda: _floats(dpax.dpsgd(s, p, t, grid_step=g).beta(list(ALPHAS)))


def _epsilon(smoke):
    import dpax

    s, p, t = DPSGD["noise"], DPSGD["rate"], (100 if smoke else DPSGD["steps"])
    g = 1e-2 if smoke else 1e-4
    return lambda: _floats(dpax.dpsgd(s, p, t, grid_step=g).epsilon(DELTA))


def _accountant(smoke):
    from dpax.accountants import PLDAccountant

    steps = 10 if smoke else ACCOUNTANT["steps"]

    def run():
        acc = PLDAccountant()
        for _ in range(steps):
            acc.step(noise_multiplier=ACCOUNTANT["noise"], sample_rate=ACCOUNTANT["rate"])
        return _floats(acc.get_epsilon(DELTA))

    return run


def dp_events(smoke=False):
    """The events of the DpEvent accountant workload, in the order they are composed."""
    from dp_accounting import dp_event

    e = EVENTS
    per_level = 10 if smoke else e["per_level"]
    events = []
    for i in range(e["levels"]):
        step = dp_event.PoissonSampledDpEvent(e["rate"], dp_event.GaussianDpEvent(e["noise"] + e["noise_step"] * i))
        events += [step] * per_level
    return events + [dp_event.LaplaceDpEvent(e["laplace"])] * e["releases"]


def _events(smoke):
    from dpax.accountants import DpEventAccountant

    events = dp_events(smoke)
    grid = 1e-2 if smoke else 1e-4

    def run():
        acct = DpEventAccountant(value_discretization_interval=grid)
        for event in events:
            acct.compose(event)
        return _floats(acct.get_epsilon(DELTA))

    return run


def _mu(smoke):
    import dpax

    s, p, t = DE_ET_AL["noise"], DE_ET_AL["rate"], (20 if smoke else DE_ET_AL["steps"])
    g = 1e-2 if smoke else 1e-4
    return lambda: _floats([float(v) for v in dpax.gdp.mu_and_regret(dpax.dpsgd(s, p, t, grid_step=g))])


def _calibrate(smoke):
    import dpax

    c = CALIBRATION
    t, g = (1000, 1e-2) if smoke else (c["steps"], c["grid"])
    target = dpax.targets.ErrRates(c["alpha"], c["beta"])
    return lambda: _floats(dpax.calibrate_dpsgd(sample_rate=c["rate"], num_steps=t, target=target, grid_step=g,
                                                compare_standard=False).noise_multiplier)


def rows11(smoke=False):
    """(sample rates, steps, alphas, tprs) of the eleven unlike rows (three when smoke)."""
    p, t, a, tpr = _table(64)
    idx = list(ROWS11[:3] if smoke else ROWS11)
    return p[idx], t[idx], a[idx], tpr[idx]


def _batch11(smoke):
    import dpax

    p, t, a, tpr = rows11(smoke)
    target = dpax.targets.ErrRates.from_tpr(a, tpr)
    g = 1e-2 if smoke else TABLE_GRID
    return lambda: _floats(dpax.calibrate_dpsgd(sample_rate=p, num_steps=t, target=target, grid_step=g,
                                                compare_standard=False).noise_multiplier)


def _loop11(smoke):
    import dpax

    p, t, a, tpr = rows11(smoke)
    targets = [dpax.targets.ErrRates.from_tpr(float(a[i]), float(tpr[i])) for i in range(len(p))]
    g = 1e-2 if smoke else TABLE_GRID

    def run():
        return [v for i in range(len(p))
                for v in _floats(dpax.calibrate_dpsgd(sample_rate=float(p[i]), num_steps=int(t[i]), target=targets[i],
                                                      grid_step=g, compare_standard=False).noise_multiplier)]

    return run


def _table64(smoke):
    import dpax

    p, t, a, tpr = _table(8 if smoke else 64)
    target = dpax.targets.ErrRates.from_tpr(a, tpr)
    g = 1e-2 if smoke else TABLE_GRID
    return lambda: _floats(dpax.calibrate_dpsgd(sample_rate=p, num_steps=t, target=target, grid_step=g,
                                                compare_standard=False).noise_multiplier)


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    build: Callable = field(repr=False)
    #: the suite's row (benchmarks/suite.py) measuring the same thing, if any
    suite_row: str | None = None
    #: the suite row's grid step
    suite_grid: float | None = None
    #: the row of benchmarks/bench_cold_start.py measuring the same thing, if any
    cold_row: str | None = None


WORKLOADS = {w.name: w for w in [
    Workload("beta", "beta at alphas 1e-3, 1e-2, 0.1; DP-SGD sigma 1, p 1e-3, T 1e4, grid 1e-4", _beta,
             "DP-SGD p=0.001 T=10k sigma=1: beta at 3 alphas", 1e-4, "beta"),
    Workload("epsilon", "epsilon(1e-5) of the same DP-SGD", _epsilon,
             "DP-SGD p=0.001 T=10k sigma=1: epsilon at delta=1e-5", 1e-4, "epsilon"),
    Workload("accountant", "PLDAccountant: 1000 steps of (noise 1.1, rate 0.01), get_epsilon(1e-5)", _accountant,
             None, None, "accountant"),
    Workload("events", "DpEventAccountant fed 10,003 events (DP-SGD, noise changing every 1,000 steps, then 3 "
             "Laplace releases), epsilon(1e-5), grid 1e-4 (needs a REF with dpax.accountants.DpEventAccountant)",
             _events, "DpEvent accountant: 10,003 events, epsilon at delta=1e-5", 1e-4, "events"),
    Workload("mu", "mu and regret of dpsgd(9.4, 16384/50000, 2000), grid 1e-4", _mu,
             "mu and regret, sigma=9.4 p=16384/50000 T=2000", 1e-4, "mu"),
    Workload("calibrate", "one calibration ErrRates(0.1, 0.5), p 1e-3, T 1e4, grid 1e-3", _calibrate,
             "calibrate to alpha=0.1, beta=0.5", 1e-3, "calibration"),
    Workload("batch11", "11 unlike rows of dpsgd_table(64), ErrRates.from_tpr, grid 1e-3, one call", _batch11),
    Workload("loop11", "the same 11 rows, one calibrate_dpsgd call per row", _loop11),
    Workload("table64", "the 64-row dpsgd_table(64) at grid 1e-3 in one call", _table64, None, None, "table"),
]}
#: what ``compare`` runs unless told otherwise: every workload whose API any landed revision has
#: (``--workloads events`` compares two revisions that both have DpEventAccountant)
DEFAULT = tuple(name for name in WORKLOADS if name != "events")


def unlike_rows(n, seed=2, margin=0.95):
    """``n`` DP-SGD calibration rows drawn (fixed seed) from dpsgd_table's distribution,
    keeping only rows with sample rate in [3e-4, 0.05], steps in [100, 5000] and a target that
    needs noise with some margin: (1 - p)^T (1 - alpha) < margin (1 - tpr) (with no noise a
    record leaks with probability 1 - (1 - p)^T; the target beta is 1 - tpr). The rows for n
    are the first n of the rows for any larger n. Returns (p, t, alpha, tpr)."""
    import numpy as np

    parts, have, chunk = [], 0, 0
    while have < n:  # fixed-size chunks of 1024 draws, chunk k from seed (seed, k): nested in n
        p, t, a, tpr = _table(1024, (seed, chunk))
        keep = (p >= 3e-4) & (p <= 0.05) & (t >= 100) & (t <= 5000) & ((1 - p) ** t * (1 - a) < margin * (1 - tpr))
        parts.append((p[keep], t[keep], a[keep], tpr[keep]))
        have += int(keep.sum())
        chunk += 1
    return tuple(np.concatenate([part[i] for part in parts])[:n] for i in range(4))


# -- running one workload ---------------------------------------------------------------------


#: calls before the warm ones: a repeated search compiles its own sizes on its third call
#: (dpax._engine.grid.repeated)
CALLS_BEFORE_WARM = 3


def time_calls(fn, repeat) -> dict:
    """CALLS_BEFORE_WARM calls (timed, not counted as warm), then ``repeat`` timed calls:
    first_call_s, second_call_s, third_call_s, times, median and the answer."""
    before, answer = [], None
    for _ in range(CALLS_BEFORE_WARM):
        t0 = time.perf_counter()
        answer = fn()
        before.append(time.perf_counter() - t0)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        answer = fn()
        times.append(time.perf_counter() - t0)
    return dict(first_call_s=before[0], second_call_s=before[1], third_call_s=before[2], times=times,
                median=statistics.median(times) if times else None, answer=answer)


def run_warm(name, repeat=5, smoke=False) -> dict:
    """:func:`time_calls` of one workload, with the import's time."""
    t_import = time.perf_counter()
    import dpax

    import_s = time.perf_counter() - t_import
    timed = time_calls(WORKLOADS[name].build(smoke), repeat)
    return dict(workload=name, mode="warm", smoke=smoke, repeat=repeat, import_s=import_s, **timed,
                dpax_file=dpax.__file__)


def run_cold(name, t0=None, smoke=False) -> dict:
    """Seconds from ``t0`` (the parent's ``time.time()`` just before it started this process;
    default: when this module was imported) to the first answer, import included."""
    start = _MODULE_START if t0 is None else t0
    import dpax

    imported = time.time()
    answer = WORKLOADS[name].build(smoke)()
    done = time.time()
    return dict(workload=name, mode="cold", smoke=smoke, seconds=done - start, import_s=imported - start,
                startup_s=_MODULE_START - start, answer=answer, dpax_file=dpax.__file__,
                cache_dir=os.environ.get("DPAX_CACHE_DIR"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.workloads", description=__doc__.splitlines()[0])
    parser.add_argument("name", nargs="?", choices=sorted(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=5, help="timed warm calls (default 5)")
    parser.add_argument("--cold", action="store_true", help="time the first answer of this process instead")
    parser.add_argument("--t0", type=float, default=None, help="the parent's time.time() when it started this process")
    parser.add_argument("--smoke", action="store_true", help="tiny grid and few steps: a seconds-long check")
    parser.add_argument("--list", action="store_true", help="list the workloads")
    args = parser.parse_args(argv)
    if args.list or args.name is None:
        for w in WORKLOADS.values():
            print(f"{w.name}: {w.description}")
        return 0
    import warnings

    warnings.filterwarnings("ignore")
    out = run_cold(args.name, args.t0, args.smoke) if args.cold else run_warm(args.name, args.repeat, args.smoke)
    sys.stdout.flush()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
