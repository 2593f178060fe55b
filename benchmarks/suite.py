"""dpax benchmark suite: dpax and the anchor libraries side by side, in one process, on the
same workloads and the same grids.

Entry point: ``python -m benchmarks run --quick|--full`` (see ``benchmarks/__main__.py``).
Every workload records, for dpax and each anchor (dp-accounting, riskcal, gdpnum,
prv-accountant, Opacus' RDP accountant):

- time cold (first call in this process, compilation included) and warm (best of
  ``repeat`` later calls), and the anchor / dpax ratios of both;
- accuracy against the exact closed form (T-fold Gaussian is mu-GDP with mu = sqrt(T)/sigma,
  so beta(alpha) = Phi(Phi^-1(1 - alpha) - mu) and delta(eps) is Dong et al. Cor. 2.13) or,
  where no closed form exists, against the finest-grid reference;
- pessimism violations: a reported beta above the true curve (or above a certified upper
  bound of it), an epsilon / advantage below the truth (or below a certified lower bound),
  a calibrated noise that fails its target. dpax must have zero;
- the peak resident memory while the call ran (sampled from /proc, plus the accelerator's
  peak bytes where JAX reports them);

plus scaling series of dpax's cost (and the anchor's, where affordable) against num_steps
(10..1e6), grid step (1e-2..1e-5) and batch size (1..4096). The result is one JSON document
and a Markdown report (``benchmarks/results/``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import platform
import resource
import sys
import threading
import time
import warnings

import numpy as np
from scipy.stats import norm

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=UserWarning, module="opacus")

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS_DIR = os.path.join(HERE, "results")
#: The committed report of the latest ``--quick`` run and the result it was generated from: the
#: one place the suite's figures are written down (README.md and benchmarks/README.md link here).
PUBLISHED_MD = os.path.join(HERE, "RESULTS.md")
PUBLISHED_JSON = os.path.join(HERE, "RESULTS.json")
#: The mode whose run is published.
PUBLISHED_MODE = "quick"

#: Workload parameters per mode. ``smoke`` is the reduced set the test suite runs.
MODES = {
    "smoke": dict(
        repeat=2, gauss=(10.0, 100, 1e-3), dpsgd_grid=1e-3, dpsgd_ref_grid=2e-4, gdp_grid=1e-3,
        calib=[], events_grid=1e-2, steps_series=[10, 1000], steps_grid=1e-2, grid_series=[1e-2, 3e-3],
        batch_series=[1, 16], batch_grid=1e-2, batch_anchor_max=2, cold_start_rounds=0,
    ),
    "quick": dict(
        repeat=3, gauss=(10.0, 100, 1e-4), dpsgd_grid=1e-4, dpsgd_ref_grid=1e-5, gdp_grid=1e-4,
        calib=[("errrates", 1e-3), ("advantage", 1e-4)], events_grid=1e-4,
        steps_series=[10, 100, 1000, 10_000, 100_000, 1_000_000], steps_grid=1e-3,
        grid_series=[1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5],
        batch_series=[1, 16, 256, 4096], batch_grid=1e-2, batch_anchor_max=16, cold_start_rounds=1,
    ),
    "full": dict(
        repeat=5, gauss=(10.0, 100, 1e-5), dpsgd_grid=1e-4, dpsgd_ref_grid=1e-5, gdp_grid=1e-4,
        calib=[("errrates", 1e-3), ("errrates", 1e-4), ("advantage", 1e-4)], events_grid=1e-4,
        steps_series=[10, 100, 1000, 10_000, 100_000, 1_000_000], steps_grid=1e-4,
        grid_series=[1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5],
        batch_series=[1, 4, 16, 64, 256, 1024, 4096], batch_grid=1e-2, batch_anchor_max=64,
        cold_start_rounds=3,
    ),
}

# The workloads' parameters are benchmarks/workloads.py's (shared with `compare`, `batch-curve`
# and benchmarks/goals.toml): DP-SGD of Kulynych et al. 2024 (Sec. 3.1) and of Gomez et al. 2025 (De et
# al., Sec. 5).
from benchmarks import workloads as _workloads  # noqa: E402

ALPHAS = np.array(_workloads.ALPHAS)
DELTA = _workloads.DELTA
DPSGD = dict(_workloads.DPSGD)
DE_ET_AL = dict(_workloads.DE_ET_AL)
# Round-off allowance in violation checks (values are float64 probabilities / epsilons).
TOL = 1e-9


# -- measurement helpers -----------------------------------------------------------------------


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):  # not Linux: fall back to the lifetime peak
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _device_peak_bytes():
    import jax

    stats = jax.devices()[0].memory_stats() or {}
    return stats.get("peak_bytes_in_use")


class PeakMemory:
    """Peak resident memory during a block: a thread samples /proc/self/statm every 2 ms
    (XLA's buffers are outside tracemalloc's view). ``peak_mib`` is the peak, ``delta_mib``
    the growth over the start of the block."""

    def __enter__(self):
        self.start = self.peak = _rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, _rss_bytes())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_bytes())
        self.peak_mib = self.peak / 2**20
        self.delta_mib = (self.peak - self.start) / 2**20
        return False


def measure(fn, repeat=3, warm=True):
    """(cold seconds, warm seconds or None, value, peak MiB, growth MiB) of ``fn()``; warm is
    the best of ``repeat`` further calls."""
    with PeakMemory() as mem:
        t0 = time.perf_counter()
        value = fn()
        cold = time.perf_counter() - t0
        best = None
        if warm:
            for _ in range(repeat):
                t0 = time.perf_counter()
                value = fn()
                best = min(best or np.inf, time.perf_counter() - t0)
    return cold, best, value, mem.peak_mib, mem.delta_mib


def device_info() -> dict:
    """The machine and the JAX device the run used (GPU/TPU detected through jax.devices())."""
    import jax

    dev = jax.devices()
    return dict(
        platform=dev[0].platform, device_kind=dev[0].device_kind, device_count=len(dev),
        devices=[str(d) for d in dev], accelerator=dev[0].platform in ("gpu", "cuda", "rocm", "tpu"),
        machine=platform.machine(), cpu_count=os.cpu_count(), python=sys.version.split()[0],
        jax=jax.__version__, numpy=np.__version__,
        memory_total_gib=os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30,
    )


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("dpax", "dp-accounting", "riskcal", "gdpnum", "prv-accountant", "opacus"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


# -- rows ---------------------------------------------------------------------------------------


class Recorder:
    def __init__(self, repeat, log=print):
        self.rows, self.series, self.repeat, self.log = [], [], repeat, log
        self._dpax = {}

    def row(self, workload, engine, grid, fn, *, warm=True, check=None, note=""):
        """Run ``fn`` (cold and warm), then ``check(value) -> dict`` (error, violations, ...)."""
        try:
            cold, best, value, peak, grow = measure(fn, self.repeat, warm)
        except ImportError as exc:  # an optional anchor (e.g. Opacus) not installed
            self.log(f"  {workload} / {engine}: skipped ({exc})")
            return None
        row = dict(workload=workload, engine=engine, grid_step=grid, cold_s=cold, warm_s=best,
                   peak_rss_mib=peak, rss_growth_mib=grow, note=note)
        row.update(check(value) if check else {})
        if engine == "dpax":
            self._dpax[workload] = row
        else:
            ref = self._dpax.get(workload)
            if ref:
                row["ratio_cold"] = cold / ref["cold_s"]
                if best is not None and ref["warm_s"]:
                    row["ratio_warm"] = best / ref["warm_s"]
        self.rows.append(row)
        warm_txt = f"{best:.3f}s" if best is not None else "-"
        self.log(f"  {workload} / {engine} @ {grid}: cold {cold:.3f}s warm {warm_txt} "
                 f"err {row.get('error', float('nan')):.2e} viol {row.get('violations', '-')} peak {peak:.0f} MiB",
                 flush=True)
        return value


def _beta_check(exact_or_ref, upper=None):
    """Errors of a beta vector against a reference; violations against ``upper`` (the true
    curve or a certified upper bound of it)."""

    def check(beta):
        beta = np.asarray(beta, dtype=float)
        out = dict(value=beta.tolist(), error=float(np.max(np.abs(beta - exact_or_ref))))
        if upper is not None:
            out["violations"] = int(np.sum(beta > np.asarray(upper) + TOL))
        return out

    return check


def _eps_check(ref, lower=None):
    def check(eps):
        eps = float(eps)
        out = dict(value=eps, error=abs(eps - ref))
        if lower is not None:
            out["violations"] = int(eps < lower - TOL)
        return out

    return check


# -- workloads ----------------------------------------------------------------------------------


def _dpacc_pld(noise, rate, steps, grid, pessimistic=True):
    from dp_accounting.pld import privacy_loss_distribution as pld_module

    return pld_module.from_gaussian_mechanism(
        standard_deviation=noise, sampling_prob=rate, use_connect_dots=pessimistic,
        pessimistic_estimate=pessimistic, value_discretization_interval=grid,
    ).self_compose(steps)


def _riskcal_beta(pld, alphas):
    from riskcal.analysis import get_beta_from_pld

    return get_beta_from_pld(pld, alpha=alphas)


def _prv_epsilon(noise, rate, steps, delta):
    from prv_accountant import GaussianMechanism, PoissonSubsampledGaussianMechanism, PRVAccountant

    mech = (GaussianMechanism(noise_multiplier=noise) if rate == 1.0
            else PoissonSubsampledGaussianMechanism(sampling_probability=rate, noise_multiplier=noise))
    acc = PRVAccountant(prvs=[mech],
                        eps_error=0.01, delta_error=delta / 1000, max_self_compositions=[steps])
    return acc.compute_epsilon(delta=delta, num_self_compositions=[steps])  # (lower, estimate, upper)


def _opacus_epsilon(noise, rate, steps, delta):
    from opacus.accountants.analysis import rdp

    orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
    r = rdp.compute_rdp(q=rate, noise_multiplier=noise, steps=steps, orders=orders)
    return rdp.get_privacy_spent(orders=orders, rdp=r, delta=delta)[0]


def composed_gaussian(rec: Recorder, sigma, steps, grid):
    """T-fold Gaussian: exactly mu-GDP with mu = sqrt(T) / sigma, so beta and epsilon have
    closed forms (Dong, Roth & Su) to check every library against."""
    import dpax

    mu = np.sqrt(steps) / sigma
    exact_beta = norm.cdf(norm.ppf(1 - ALPHAS) - mu)
    exact_eps = float(dpax.gdp.epsilon(DELTA, mu))
    name = f"Gaussian sigma={sigma:g} composed T={steps}: beta at 3 alphas"
    rec.row(name, "dpax", grid, lambda: dpax.gaussian(sigma, grid_step=grid).self_compose(steps).beta(ALPHAS),
            check=_beta_check(exact_beta, exact_beta))
    rec.row(name, "dp-accounting + riskcal", grid,
            lambda: _riskcal_beta(_dpacc_pld(sigma, 1.0, steps, grid), ALPHAS),
            check=_beta_check(exact_beta, exact_beta))
    name = f"Gaussian sigma={sigma:g} composed T={steps}: epsilon at delta=1e-5"
    rec.row(name, "dpax", grid, lambda: dpax.gaussian(sigma, grid_step=grid).self_compose(steps).epsilon(DELTA),
            check=_eps_check(exact_eps, exact_eps))
    rec.row(name, "dp-accounting", grid, lambda: _dpacc_pld(sigma, 1.0, steps, grid).get_epsilon_for_delta(DELTA),
            check=_eps_check(exact_eps, exact_eps))
    rec.row(name, "prv-accountant (upper)", None, lambda: _prv_epsilon(sigma, 1.0, steps, DELTA)[2],
            check=_eps_check(exact_eps, exact_eps), note="eps_error=0.01")
    rec.row(name, "Opacus RDP", None, lambda: _opacus_epsilon(sigma, 1.0, steps, DELTA),
            check=_eps_check(exact_eps, exact_eps))


def dpsgd_workload(rec: Recorder, grid, ref_grid):
    """DP-SGD p=0.001, T=10,000, sigma=1 (Kulynych et al. 2024, Sec. 3.1). No closed form exists:
    accuracy is against dpax at the finest grid ``ref_grid``. Violations: epsilon below
    prv-accountant's certified lower bound on the true epsilon; beta above the finest-grid
    connect-the-dots curve (the true curve lies above that one, so this is a nestedness
    check, not a certified bound: none of the anchors gives a certified upper bound on beta)."""
    import dpax

    s, p, t = DPSGD["noise"], DPSGD["rate"], DPSGD["steps"]
    ref_beta = dpax.dpsgd(s, p, t, grid_step=ref_grid).beta(ALPHAS)
    upper_beta = ref_beta
    ref_eps = float(dpax.dpsgd(s, p, t, grid_step=ref_grid).epsilon(DELTA))
    lower_eps = _prv_epsilon(s, p, t, DELTA)[0]
    name = "DP-SGD p=0.001 T=10k sigma=1: beta at 3 alphas"
    rec.row(name, "dpax", grid, lambda: dpax.dpsgd(s, p, t, grid_step=grid).beta(ALPHAS),
            check=_beta_check(ref_beta, upper_beta))
    rec.row(name, "dp-accounting + riskcal", grid, lambda: _riskcal_beta(_dpacc_pld(s, p, t, grid), ALPHAS),
            check=_beta_check(ref_beta, upper_beta))
    name = "DP-SGD p=0.001 T=10k sigma=1: epsilon at delta=1e-5"
    rec.row(name, "dpax", grid, lambda: dpax.dpsgd(s, p, t, grid_step=grid).epsilon(DELTA),
            check=_eps_check(ref_eps, lower_eps))
    rec.row(name, "dp-accounting", grid, lambda: _dpacc_pld(s, p, t, grid).get_epsilon_for_delta(DELTA),
            check=_eps_check(ref_eps, lower_eps))
    rec.row(name, "prv-accountant (upper)", None, lambda: _prv_epsilon(s, p, t, DELTA)[2],
            check=_eps_check(ref_eps, lower_eps), note="eps_error=0.01")
    rec.row(name, "Opacus RDP", None, lambda: _opacus_epsilon(s, p, t, DELTA), check=_eps_check(ref_eps, lower_eps))
    return dict(reference_grid=ref_grid, reference_beta=np.asarray(ref_beta).tolist(), reference_epsilon=ref_eps,
                certified_lower_epsilon=float(lower_eps))


def gdp_workload(rec: Recorder, grid):
    """mu-GDP and regret of De et al.'s DP-SGD (Gomez et al. 2025, Sec. 5: mu = 1.307, regret ~1e-3)."""
    import dpax

    s, p, t = DE_ET_AL["noise"], DE_ET_AL["rate"], DE_ET_AL["steps"]
    name = "mu and regret, sigma=9.4 p=16384/50000 T=2000"
    published = 1.307

    def check(v):
        mu, regret = map(float, v)
        return dict(value=[mu, regret], error=abs(mu - published), published_mu=published)

    rec.row(name, "dpax", grid, lambda: dpax.gdp.mu_and_regret(dpax.dpsgd(s, p, t, grid_step=grid)), check=check)

    def anchor():
        from gdpnum.dpsgd import get_mu_and_regret_for_dpsgd

        return get_mu_and_regret_for_dpsgd(s, p, t, grid_step=grid)

    rec.row(name, "gdpnum", grid, anchor, check=check)


def events_workload(rec: Recorder, grid, smoke=False):
    """dp-accounting's PrivacyAccountant interface fed 10,003 DpEvents one by one
    (benchmarks/workloads.py EVENTS). The anchor is dp-accounting's PLDAccountant given the
    same events grouped by count, ten ``compose(event, 1000)`` calls and one
    ``compose(laplace, 3)``: its fastest use (fed one by one it composes 10,003 PLDs, about
    0.17 s each on a 2-core CPU, half an hour), so the ratio understates dpax's lead."""
    from dp_accounting.pld import PLDAccountant

    from dpax.accountants import DpEventAccountant

    events = _workloads.dp_events(smoke)
    groups = []
    for event in events:
        if groups and groups[-1][0] == event:
            groups[-1][1] += 1
        else:
            groups.append([event, 1])
    name = "DpEvent accountant: 10,003 events, epsilon at delta=1e-5"

    def ours():
        acct = DpEventAccountant(value_discretization_interval=grid)
        for event in events:
            acct.compose(event)
        return acct.get_epsilon(DELTA)

    def theirs():
        acct = PLDAccountant(value_discretization_interval=grid)
        for event, count in groups:
            acct.compose(event, count)
        return acct.get_epsilon(DELTA)

    ref = rec.row(name, "dpax", grid, ours)
    rec.row(name, "dp-accounting PLDAccountant (events grouped)", grid, theirs,
            check=lambda eps: dict(error=abs(float(eps) - float(ref)), value=float(eps)), warm=False,
            note="grouped by count: its fastest use")


def calibration_workload(rec: Recorder, kind, grid):
    """Calibration of DP-SGD p=0.001, T=10,000 (Kulynych et al. 2024, Sec. 3): dpax vs riskcal, one
    calibration each (compare_standard=False). Violation: the returned noise fails the target
    when re-evaluated independently at the same grid (it must not)."""
    import dpax

    p, t = DPSGD["rate"], DPSGD["steps"]
    if kind == "errrates":
        target, name = dpax.targets.ErrRates(alpha=0.1, beta=0.5), "calibrate to alpha=0.1, beta=0.5"

        def fails(noise):
            return float(dpax.dpsgd(noise, p, t, grid_step=grid).beta(0.1)) < 0.5 - TOL

        def anchor():
            from riskcal.calibration.dpsgd import find_noise_multiplier_for_err_rates

            return find_noise_multiplier_for_err_rates(alpha=0.1, beta=0.5, sample_rate=p, num_steps=t, grid_step=grid)
    else:
        target, name = dpax.targets.Advantage(0.1), "calibrate to advantage 0.1"

        def fails(noise):
            return float(dpax.dpsgd(noise, p, t, grid_step=grid).advantage()) > 0.1 + TOL

        def anchor():
            from riskcal.calibration.dpsgd import find_noise_multiplier_for_advantage

            return find_noise_multiplier_for_advantage(advantage=0.1, sample_rate=p, num_steps=t, grid_step=grid)

    results = {}

    def check(noise):
        noise = float(noise)
        results.setdefault("values", []).append(noise)
        ref = results["values"][0]
        return dict(value=noise, error=abs(noise - ref) / ref, violations=int(fails(noise)))

    rec.row(name, "dpax", grid, lambda: dpax.calibrate_dpsgd(sample_rate=p, num_steps=t, target=target, grid_step=grid,
                                                            compare_standard=False).noise_multiplier, check=check)
    # riskcal's calibration is the slow anchor: one call, no warm repetition.
    rec.row(name, "riskcal", grid, anchor, warm=False, check=check, note="error: relative to dpax's noise")


# -- scaling series -----------------------------------------------------------------------------


def _series_point(rec, series, x, fn, anchor=None, anchor_note="", extra=None, repeat=None):
    cold, best, value, peak, grow = measure(fn, repeat or rec.repeat)
    pt = dict(series=series, x=x, dpax_cold_s=cold, dpax_warm_s=best, peak_rss_mib=peak, rss_growth_mib=grow)
    if anchor is not None:
        a_time = measure(anchor, warm=False)[0]  # one call: numpy code has no compilation
        pt.update(anchor_s=a_time, anchor_note=anchor_note, ratio_warm=a_time / best if best else None)
    if extra:
        pt.update(extra(value))
    rec.series.append(pt)
    rec.log(f"  [{series}] x={x}: dpax cold {cold:.3f}s warm {best:.4f}s"
            + (f", anchor {pt['anchor_s']:.3f}s" if anchor is not None else "") + f", peak {peak:.0f} MiB", flush=True)
    return value


def scaling_series(rec: Recorder, cfg):
    import dpax

    s, p = DPSGD["noise"], DPSGD["rate"]
    g = cfg["steps_grid"]
    for t in cfg["steps_series"]:
        _series_point(rec, f"num_steps (DP-SGD p=0.001 sigma=1, grid {g:g}, beta at 3 alphas)", t,
                      lambda t=t: dpax.dpsgd(s, p, t, grid_step=g).beta(ALPHAS),
                      anchor=lambda t=t: _riskcal_beta(_dpacc_pld(s, p, t, g), ALPHAS),
                      anchor_note="dp-accounting + riskcal",
                      extra=lambda v: dict(beta=np.asarray(v).tolist()))
    finest = min(cfg["grid_series"])
    ref = None
    values = {}
    for g in sorted(cfg["grid_series"], key=lambda x: x):  # finest first: it is the reference
        v = _series_point(rec, "grid step (DP-SGD p=0.001 sigma=1 T=10k, beta at 3 alphas)", g,
                          lambda g=g: dpax.dpsgd(s, p, DPSGD["steps"], grid_step=g).beta(ALPHAS),
                          anchor=lambda g=g: _riskcal_beta(_dpacc_pld(s, p, DPSGD["steps"], g), ALPHAS),
                          anchor_note="dp-accounting + riskcal", repeat=1 if g < 1e-4 else None)
        values[g] = np.asarray(v)
        if ref is None:
            ref = values[finest]
        rec.series[-1].update(beta=values[g].tolist(), error_vs_finest=float(np.max(np.abs(values[g] - ref))),
                              finest_grid=finest, monotone_violations=int(np.sum(values[g] > ref + TOL)))
    gb = cfg["batch_grid"]
    for b in cfg["batch_series"]:
        sig = np.linspace(0.8, 3.0, b)
        m = min(b, cfg["batch_anchor_max"])

        def anchor(m=m, sig=sig):
            for x in sig[:m]:
                _riskcal_beta(_dpacc_pld(float(x), p, 1000, gb), np.array([0.1]))

        _series_point(rec, f"batch size (DP-SGD noise in [0.8, 3], p=0.001 T=1000, grid {gb:g}, beta at 0.1)", b,
                      lambda sig=sig: dpax.dpsgd(sig, p, 1000, grid_step=gb).beta(0.1),
                      anchor=anchor, anchor_note=f"dp-accounting + riskcal, loop over {m} configuration(s)")
        pt = rec.series[-1]
        pt["anchor_configs_timed"] = m
        pt["anchor_extrapolated_s"] = pt["anchor_s"] * b / m
        pt["ratio_warm"] = pt["anchor_extrapolated_s"] / pt["dpax_warm_s"]


def cold_start(rounds):
    """First answer in fresh processes, import included (benchmarks/bench_cold_start.py's
    "beta" row: dpax with an empty and a warm kernel cache, and the anchor)."""
    from benchmarks import bench_cold_start as bcs

    row = bcs.measure(["beta"], rounds)["beta"]
    return {"dpax, empty cache": row["empty"], "dpax, warm cache": row["warm"], "anchor, fresh process": row["ref"]}


def fft_floor():
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        x = jnp.asarray(np.random.default_rng(0).random(2**18))
        f = jax.jit(lambda v: jnp.fft.irfft(jnp.fft.rfft(v) ** 3, n=v.shape[0]))
        f(x).block_until_ready()
        return min(measure(lambda: f(x).block_until_ready(), 5)[1], np.inf) * 1e3


# -- driver -------------------------------------------------------------------------------------


def run(mode="quick", log=print) -> dict:
    """Run the suite; returns the JSON-able result (meta, rows, series, cold_start, summary)."""
    from dpax._engine import cache

    if mode == "smoke":  # the tests' run: its times mean nothing, kernels may come from the cache
        return _run(mode, log)
    with cache.suspended():  # in-process "cold" times include compilation, as a first run's
        return _run(mode, log)


def _run(mode, log):
    cfg = MODES[mode]
    t_start = time.perf_counter()
    import dpax  # noqa: F401  (import time is not part of any workload)

    meta = dict(mode=mode, started_utc=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                device=device_info(), versions=_versions(),
                load_average=list(os.getloadavg()) if hasattr(os, "getloadavg") else None)
    log(f"dpax benchmark suite, mode={mode}, device {meta['device']['platform']}:{meta['device']['device_kind']}"
        f" x{meta['device']['device_count']}, {meta['device']['cpu_count']} CPU cores", flush=True)
    rec = Recorder(cfg["repeat"], log)
    extra = {}
    sigma, steps, grid = cfg["gauss"]
    composed_gaussian(rec, sigma, steps, grid)
    extra["dpsgd_reference"] = dpsgd_workload(rec, cfg["dpsgd_grid"], cfg["dpsgd_ref_grid"])
    gdp_workload(rec, cfg["gdp_grid"])
    events_workload(rec, cfg["events_grid"], smoke=mode == "smoke")
    for kind, g in cfg["calib"]:
        calibration_workload(rec, kind, g)
    scaling_series(rec, cfg)
    meta["fft_floor_ms"] = fft_floor()
    cs = cold_start(cfg["cold_start_rounds"]) if cfg["cold_start_rounds"] else {}
    dpax_rows = [r for r in rec.rows if r["engine"] == "dpax"]
    summary = dict(
        dpax_violations=int(sum(r.get("violations", 0) for r in dpax_rows))
        + int(sum(pt.get("monotone_violations", 0) for pt in rec.series)),
        anchor_violations={r["engine"] + " | " + r["workload"]: r["violations"] for r in rec.rows
                           if r["engine"] != "dpax" and r.get("violations")},
        max_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        device_peak_bytes=_device_peak_bytes(),
        duration_s=time.perf_counter() - t_start,
    )
    result = dict(meta=meta, rows=rec.rows, series=rec.series, cold_start=cs, summary=summary, **extra)
    result["goals"] = speed_goals(result)
    return result


def speed_goals(result: dict) -> list[dict]:
    """The verdicts of benchmarks/goals.toml on a suite result: the goals whose quantity the
    suite measures are ok or FAIL, the others not measured (benchmarks/goals.py)."""
    from benchmarks import goals

    return goals.evaluate(goals.load(), goals.suite_lookup(result))


def _f(x, spec=".3g"):
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "-"
    return format(x, spec)


def markdown(result: dict) -> str:
    """The Markdown report of a run."""
    m, d, s = result["meta"], result["meta"]["device"], result["summary"]
    v = m["versions"]
    load = m.get("load_average")
    busy = (f" Load average when it started: {load[0]:.2f} (1 min), {load[1]:.2f} (5 min): timings are only "
            "comparable between runs on an otherwise idle machine." if load else "")
    lines = [
        f"# dpax benchmark results ({m['mode']})",
        "",
        f"Generated by `.venv/bin/python -m benchmarks run --{m['mode']}` (benchmarks/suite.py): run it again "
        "rather than editing this report.",
        "",
        f"Run {m['started_utc']} in {s['duration_s']:.0f} s on {d['cpu_count']} CPU cores ({d['machine']}, "
        f"{d['memory_total_gib']:.0f} GiB), JAX device {d['platform']}:{d['device_kind']} x{d['device_count']}, "
        f"python {d['python']}, jax {d['jax']}; dpax {v['dpax']}, dp-accounting {v['dp-accounting']}, "
        f"riskcal {v['riskcal']}, gdpnum {v['gdpnum']}, prv-accountant {v['prv-accountant']}, opacus {v['opacus']}. "
        f"FFT floor (rfft + cube + irfft of 2^18 float64 points): {m['fft_floor_ms']:.1f} ms.{busy}",
        "",
        f"**Pessimism violations by dpax: {s['dpax_violations']}** (over every row and series point).",
        "",
        "Cold = first call in the process (compilation included; later workloads reuse kernels compiled "
        "by earlier ones); warm = best of the repeated calls. Ratio = anchor time / dpax time "
        "(> 1: dpax faster). Error: against the exact closed form (Gaussian rows), the finest-grid "
        "dpax reference (DP-SGD rows), the published mu = 1.307 (GDP row), or dpax's noise (calibration rows). "
        "Violations: reported beta above the true curve / a certified upper bound, epsilon below "
        "the truth / a certified lower bound, calibrated noise failing its target. Peak = resident "
        "memory of the process while the call ran.",
        "",
        "| workload | engine | grid | cold (s) | warm (s) | ratio cold | ratio warm | value | error | violations "
        "| peak (MiB) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in result["rows"]:
        val = r.get("value")
        val = ", ".join(_f(x, ".4g") for x in val) if isinstance(val, list) else _f(val, ".5g")
        lines.append(
            f"| {r['workload']} | {r['engine']} | {_f(r['grid_step'], 'g')} | {_f(r['cold_s'])} | {_f(r['warm_s'])} | "
            f"{_f(r.get('ratio_cold'), '.2f')} | {_f(r.get('ratio_warm'), '.1f')} | {val} | "
            f"{_f(r.get('error'), '.2e')} | "
            f"{r.get('violations', '-')} | {r['peak_rss_mib']:.0f} |")
    ref = result.get("dpsgd_reference")
    if ref:
        lines += ["", f"DP-SGD reference: dpax at grid {ref['reference_grid']:g} (beta "
                      f"{', '.join(_f(x, '.6g') for x in ref['reference_beta'])}, "
                      f"epsilon {ref['reference_epsilon']:.5f}); "
                      f"beta violations there mean beta above that finest-grid curve; epsilon violations mean epsilon "
                      f"below prv-accountant's certified lower bound {ref['certified_lower_epsilon']:.5f}. "
                      "Opacus' cold time includes importing torch."]
    by_series = {}
    for pt in result["series"]:
        by_series.setdefault(pt["series"], []).append(pt)
    for name, pts in by_series.items():
        lines += ["", f"## Scaling: {name}", "",
                  "| x | dpax cold (s) | dpax warm (s) | anchor, one call (s) | ratio anchor / dpax warm "
                  "| peak (MiB) | note |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for pt in pts:
            note = []
            if "anchor_extrapolated_s" in pt:
                note.append(f"anchor timed on {pt['anchor_configs_timed']} config(s), scaled to {pt['x']}")
            if "error_vs_finest" in pt:
                note.append(f"max beta error vs grid {pt['finest_grid']:g}: {pt['error_vs_finest']:.1e}")
            anchor = pt.get("anchor_extrapolated_s", pt.get("anchor_s"))
            lines.append(f"| {_f(pt['x'], 'g')} | {_f(pt['dpax_cold_s'])} | {_f(pt['dpax_warm_s'])} | {_f(anchor)} | "
                         f"{_f(pt.get('ratio_warm'), '.1f')} | {pt['peak_rss_mib']:.0f} | {'; '.join(note)} |")
    if result.get("cold_start"):
        lines += ["",
                  "## First answer in a fresh process, import included (beta at 3 alphas, DP-SGD T=10k, grid 1e-4)",
                  "",
                  "| process | best (s) |", "| --- | --- |"]
        for k, ts in result["cold_start"].items():
            lines.append(f"| {k} | {min(ts):.3f} |")
    lines += ["", f"Process peak RSS {s['max_rss_mib']:.0f} MiB"
              + (f"; accelerator peak {s['device_peak_bytes'] / 2**20:.0f} MiB" if s.get("device_peak_bytes") else "")
              + ".", ""]
    if result.get("goals") is not None:  # results written before the goals file have none
        from benchmarks import goals

        lines += [goals.markdown(result["goals"])]
    return "\n".join(lines)


def _dump(result: dict, json_path: str, md_path: str) -> tuple[str, str]:
    """The result as JSON and its Markdown report, the report rendered from the JSON as written
    (so :func:`markdown` of the file reproduces the report exactly)."""
    with open(json_path, "w") as fh:
        json.dump(result, fh, indent=1, default=float)
        fh.write("\n")
    with open(json_path) as fh:
        text = markdown(json.load(fh))
    with open(md_path, "w") as fh:
        fh.write(text)
    return json_path, md_path


def write(result: dict, out_dir=RESULTS_DIR) -> tuple[str, str]:
    """``out_dir/suite-<mode>.json`` and ``.md``; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, f"suite-{result['meta']['mode']}")
    return _dump(result, stem + ".json", stem + ".md")


def publish(result: dict, json_path=PUBLISHED_JSON, md_path=PUBLISHED_MD) -> tuple[str, str]:
    """Write the committed report, benchmarks/RESULTS.md, and the result it is generated from,
    benchmarks/RESULTS.json (a ``--quick`` run only: the figures the READMEs point to)."""
    if result["meta"]["mode"] != PUBLISHED_MODE:
        raise ValueError(f"only a --{PUBLISHED_MODE} run is published, got --{result['meta']['mode']}")
    return _dump(result, json_path, md_path)


@contextlib.contextmanager
def _quiet_absl():
    try:
        import absl.logging

        absl.logging.set_verbosity(absl.logging.ERROR)
    except ImportError:
        pass
    yield
