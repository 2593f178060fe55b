"""``python -m benchmarks batch-curve``: the warm cost per row of an N-row ``calibrate_dpsgd``
batch (grid 1e-3, ErrRates targets) against the cost of one row alone, in this process.

Two kinds of rows:

* alike: p 1e-3, T 1e4, alpha 0.1, beta 0.5, the same row N times (dpax may or may not
  deduplicate identical rows; either is fine, the curve shows which);
* unlike: rows drawn with a fixed seed from bench_calibrate.dpsgd_table's distribution,
  keeping those with sample rate 3e-4..0.05, steps 100..5000 and a target that needs noise
  (benchmarks/workloads.py, ``unlike_rows``); the N rows are the first N of one list.

One row alone: the mean warm time of single-row calls (scalar arguments) over the batch's
first ``LOOP_ROWS`` (16) rows, all of them below 16 rows: at every size the rows are called
one at a time, alternately with the batch, round by round, so that the machine's speed, which
drifts by tens of percent over the minutes a curve takes on a shared 2-core machine, moves
both sides alike (a baseline measured once, before the sizes, read 0.107 s a row and made the
16-row batch look 0.63x; timed alternately with it the same 16 rows cost 0.91-0.99x). Above 16
rows the baseline is a sample of the distribution the batch's rows are drawn from (rows
nested: the first 16 of every larger batch; the mean of rows 16-63 alone and of rows 0-15
alone agreed within 5%). Each side's timed call follows an untimed one: sixteen rows alone
use ~350 kernel shapes (in their repeated calls each row has its own) and a batch up to
~300, more together than dpax keeps in memory (``dpax._engine.cache.MAX_IN_MEMORY``), so
each side reloads from the disk store what the other evicted (with 32 rows alone both sides
ran 3-6x slower, reloading in their timed calls). Per N: three untimed calls of the batch (a
repeated search compiles its own sizes on its third call: dpax._engine.grid.repeated), then
``--repeat`` rounds (one when N >= 256) of a timed batch call and a timed pass over the
baseline rows, each after its untimed call; the medians make the ratio. Prints a Markdown table
per kind and the verdicts of benchmarks/goals.toml; writes ``benchmarks/results/batch-curve.json``,
again after every size (``meta.complete`` false until the last): an interrupted run keeps what
it measured.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "results", "batch-curve.json")
DEFAULT_SIZES = tuple(2**k for k in range(11))  # 1, 2, 4, ..., 1024
KINDS = ("alike", "unlike")
GRID = 1e-3
#: at most this many of a batch's rows, called one at a time, make its "one row alone" baseline
LOOP_ROWS = 16
#: at or above this N each size is timed once (after three untimed calls)
ONCE_FROM = 256


def _log(*a):
    print(*a, file=sys.stderr, flush=True)


def rows(kind: str, n: int):
    """(sample rates, steps, alphas, betas) of n rows of ``kind``."""
    import numpy as np

    from benchmarks import workloads

    if kind == "alike":
        c = workloads.CALIBRATION
        return (np.full(n, c["rate"]), np.full(n, c["steps"]), np.full(n, c["alpha"]), np.full(n, c["beta"]))
    if kind == "unlike":
        p, t, a, tpr = workloads.unlike_rows(n)
        return p, t, a, 1 - tpr
    raise ValueError(f"unknown kind {kind!r} (alike or unlike)")


def _call(p, t, a, b, grid):
    import dpax

    res = dpax.calibrate_dpsgd(sample_rate=p, num_steps=t, target=dpax.targets.ErrRates(a, b), grid_step=grid,
                               compare_standard=False)
    import numpy as np

    np.asarray(res.noise_multiplier, dtype=float)  # wait for the answer
    return res


def _now() -> float:
    return time.perf_counter()


def _timed(fn):
    t0 = _now()
    value = fn()
    return _now() - t0, value


def _one_at_a_time(p, t, a, b, grid, warmed: set) -> float:
    """Seconds to call each of these rows alone, one after the other, after an untimed pass
    (each row called three times the first time it is seen: its compilations and its
    repeated search's own sizes; once after that, to load back the kernels a batch evicted)."""
    calls = [lambda i=i: _call(float(p[i]), int(t[i]), float(a[i]), float(b[i]), grid) for i in range(len(p))]
    for i, call in enumerate(calls):
        key = (float(p[i]), int(t[i]), float(a[i]), float(b[i]))
        for _ in range(1 if key in warmed else 3):
            call()
        warmed.add(key)
    t0 = _now()
    for call in calls:
        call()
    return _now() - t0


def curve(sizes=DEFAULT_SIZES, kinds=KINDS, repeat=3, loop_rows=LOOP_ROWS, grid=GRID, on_point=None) -> dict:
    """The curve's result (see the module's docstring); ``on_point(result)``, if given, is
    called with the result so far after every size measured."""
    import numpy as np

    import dpax

    result = dict(meta=dict(started_utc=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                            grid_step=grid, repeat=repeat, once_from=ONCE_FROM, loop_rows=loop_rows,
                            cpu_count=os.cpu_count(), python=sys.version.split()[0], dpax_file=dpax.__file__,
                            load_average_start=[round(x, 2) for x in os.getloadavg()]),
                  points=[])
    t_start = time.perf_counter()
    for kind in kinds:
        warmed: set = set()
        for n in sizes:
            p, t, a, b = rows(kind, n)
            m = min(n, loop_rows)
            batch = lambda p=p, t=t, a=a, b=b: _call(p, t, a, b, grid)  # noqa: E731
            first, _ = _timed(batch)
            batch()
            third, _ = _timed(batch)
            times, alone, res = [], [], None
            for r in range(1 if n >= ONCE_FROM else repeat):  # alternately: drift moves both sides alike
                if r:
                    batch()  # untimed: loads back the kernels the rows alone evicted
                dt, res = _timed(batch)
                times.append(dt)
                alone.append(_one_at_a_time(p[:m], t[:m], a[:m], b[:m], grid, warmed))
            total, alone_s = statistics.median(times), statistics.median(alone) / m
            status = np.asarray(getattr(res, "status", np.array(["?"] * n)), dtype=str)
            pt = dict(kind=kind, n=n, first_s=first, third_s=third, times=times, warm_s=total, per_row_s=total / n,
                      alone_rows=m, alone_times=alone, single_s=alone_s, ratio=(total / n) / alone_s,
                      evaluations=getattr(res, "evaluations", None),
                      statuses={s: int(c) for s, c in zip(*np.unique(status, return_counts=True))})
            result["points"].append(pt)
            _log(f"  {kind} N={n}: first {first:.3f} s, warm {total:.4f} s, {pt['per_row_s']:.5f} s/row, "
                 f"one row alone {alone_s:.5f} s (mean of {m}), ratio {pt['ratio']:.3f}")
            result["meta"]["duration_s"] = time.perf_counter() - t_start
            result["meta"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
            if on_point is not None:
                on_point(result)
    result["meta"]["duration_s"] = time.perf_counter() - t_start
    result["meta"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    return result


def lookup_for(result: dict):
    """Goals lookup: per-row / single-row ratios of every measured N >= the goal's min_rows."""

    def lookup(goal):
        if goal["metric"] != "batch_per_row_over_single":
            return []
        return [(f"{pt['kind']} N={pt['n']}", pt["ratio"]) for pt in result["points"] if pt["n"] >= goal["min_rows"]]

    return lookup


def markdown(result: dict) -> str:
    from benchmarks import goals

    m = result["meta"]
    lines = [f"# dpax batch-cost curve: calibrate_dpsgd, grid {m['grid_step']:g}", "",
             f"Run {m['started_utc']} on {m['cpu_count']} CPU cores in {m['duration_s']:.0f} s; load average "
             f"{m['load_average_start']} at the start, {m['load_average_end']} at the end. Warm = median of "
             f"{m['repeat']} timed calls after three untimed calls (one timed call from N = {m['once_from']}), each "
             f"followed by one pass over the batch's first {m.get('loop_rows', 16)} rows (all of them in smaller "
             "batches) called one at a time, whose mean per row is the cost of one row alone (each side's timed "
             "call after an untimed one). "
             "Ratio = seconds per row / seconds of one row alone (< 1: batching pays).", ""]
    kinds = list(dict.fromkeys(pt["kind"] for pt in result["points"]))
    for kind in kinds:
        lines += [f"## {kind} rows", "",
                  "| N | first call (s) | third call (s) | total warm (s) | s per row | one row alone (s) "
                  "| rows alone | per row / one row | statuses |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for pt in result["points"]:
            if pt["kind"] == kind:
                st = ", ".join(f"{k} {v}" for k, v in pt["statuses"].items())
                lines.append(f"| {pt['n']} | {pt['first_s']:.3f} | {pt.get('third_s', float('nan')):.3f} | "
                             f"{pt['warm_s']:.4f} | {pt['per_row_s']:.5f} | {pt['single_s']:.4f} | "
                             f"{pt.get('alone_rows', '-')} | {pt['ratio']:.3f} | {st} |")
        lines.append("")
    lines.append(goals.markdown(result["goals"]))
    return "\n".join(lines)


def write(result: dict, path: str, goal_list, complete: bool) -> None:
    """``result`` with its goal verdicts and ``meta.complete`` to ``path``, replaced whole
    (written beside it, then renamed: a reader never sees half a file)."""
    from benchmarks import goals

    result["meta"]["complete"] = complete
    result["goals"] = goals.evaluate(goal_list, lookup_for(result))
    result["goals_summary"] = goals.summary(result["goals"])
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as fh:
        json.dump(result, fh, indent=1, default=float)
        fh.write("\n")
    os.replace(path + ".tmp", path)


def main(args) -> int:
    """The ``batch-curve`` subcommand (arguments parsed by benchmarks/__main__.py)."""
    from benchmarks import goals

    sizes = [int(x) for x in args.sizes.split(",")] if args.sizes else list(DEFAULT_SIZES)
    kinds = KINDS if args.kind == "both" else (args.kind,)
    goal_list = goals.load()
    path = args.out or OUT
    written = []

    def save(partial: dict) -> None:
        write(partial, path, goal_list, False)
        written.append(path)

    try:
        result = curve(sizes, kinds, repeat=args.repeat, on_point=save)
    except KeyboardInterrupt:
        _log(f"interrupted; {path} holds what was measured (meta.complete false)" if written
             else "interrupted before the first size was measured: nothing written")
        return 130
    write(result, path, goal_list, True)
    print(markdown(result))
    _log(f"wrote {path}")
    return 1 if args.strict and result["goals_summary"]["FAIL"] else 0
