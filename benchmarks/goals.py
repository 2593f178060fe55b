"""dpax's speed goals (benchmarks/goals.toml): loading, checking, and the verdict lines that
``python -m benchmarks run``, ``compare``, ``batch-curve`` and ``census`` print at the end of
their Markdown.

A command evaluates every goal with a *lookup*, ``lookup(goal) -> [(label, value), ...]``: the
measured values of the goal's quantity (several for a goal over every workload or every batch
size; none where the command does not measure it). Each value gives a verdict line starting
with ``ok`` or ``FAIL``; a goal with no value gives one ``not measured`` line. Nothing is
estimated: a quantity the command did not measure is reported as not measured.
"""

from __future__ import annotations

import math
import os
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
GOALS_PATH = os.path.join(HERE, "goals.toml")

#: metric -> (how the verdict line names the quantity, unit suffix of its values)
METRICS = {
    "anchor_speedup_warm": ("{anchor} / dpax, warm", "x"),
    "warm_seconds": ("dpax warm", " s"),
    "cold_empty_over_anchor": ("fresh process, dpax with an empty cache / {anchor}", "x"),
    "cold_second_over_anchor": ("fresh process, dpax's second run / {anchor}", "x"),
    "batch_per_row_over_single": ("warm s per row of an N-row batch / one row alone, N >= {min_rows}", "x"),
    "ref_over_head_warm": ("REF / HEAD, warm median", "x"),
    "test_run_seconds": ("wall time of the default test run (python -m pytest)", " s"),
}
SECTIONS = ("warm", "cold", "batch", "compare", "tests")
ALL = "*"


def load(path: str = GOALS_PATH) -> list[dict]:
    """The goals of ``path``, checked: known section, metric and workload, exactly one of
    min / max, an anchor for the anchor metrics, unique ids."""
    from benchmarks.workloads import WORKLOADS

    with open(path, "rb") as fh:
        goals = tomllib.load(fh).get("goal", [])
    seen = set()
    for g in goals:
        where = f"{path}: goal {g.get('id')!r}"
        for key in ("id", "section", "workload", "metric"):
            if key not in g:
                raise ValueError(f"{where}: missing {key!r}")
        if g["id"] in seen:
            raise ValueError(f"{where}: duplicate id")
        seen.add(g["id"])
        if g["section"] not in SECTIONS:
            raise ValueError(f"{where}: unknown section {g['section']!r} (one of {', '.join(SECTIONS)})")
        if g["metric"] not in METRICS:
            raise ValueError(f"{where}: unknown metric {g['metric']!r} (one of {', '.join(METRICS)})")
        if g["workload"] != ALL and g["workload"] not in WORKLOADS:
            raise ValueError(f"{where}: unknown workload {g['workload']!r} (one of {', '.join(WORKLOADS)}, or '*')")
        if ("min" in g) == ("max" in g):
            raise ValueError(f"{where}: give exactly one of 'min' and 'max'")
        if "anchor" in METRICS[g["metric"]][0] and "anchor" not in g:
            raise ValueError(f"{where}: metric {g['metric']} needs an 'anchor'")
        if g["metric"] == "batch_per_row_over_single":
            g.setdefault("min_rows", 1)
        g.setdefault("tolerance", 1.0)
    return goals


def passes(goal: dict, value: float) -> bool:
    """Whether ``value`` meets the goal (with its tolerance); NaN never does."""
    if value is None or not math.isfinite(value):
        return False
    tol = goal.get("tolerance", 1.0)
    if "min" in goal:
        return value >= goal["min"] * tol
    return value <= goal["max"] / tol


def _num(x: float, unit: str) -> str:
    return f"{x:.3g}{unit}"


def describe(goal: dict) -> str:
    """``warm.beta [beta]: dp-accounting + riskcal / dpax, warm >= 20x``."""
    name, unit = METRICS[goal["metric"]]
    name = name.format(**{"anchor": goal.get("anchor"), "min_rows": goal.get("min_rows")})
    op, bound = (">=", goal["min"]) if "min" in goal else ("<=", goal["max"])
    text = f"{goal['id']} [{goal['workload']}]: {name} {op} {_num(bound, unit)}"
    if goal.get("grid") is not None:
        text += f" (grid {goal['grid']:g})"
    if goal.get("tolerance", 1.0) != 1.0:
        text += f" (tolerance {goal['tolerance']:g})"
    return text


def evaluate(goals: list[dict], lookup) -> list[dict]:
    """One verdict per measured value of each goal (``lookup(goal) -> [(label, value)]``), and
    one ``not measured`` verdict for a goal without any. Each verdict: id, section, workload,
    metric, bound (min or max), label, value, status ("ok", "FAIL" or "not measured"), line."""
    out = []
    for g in goals:
        unit = METRICS[g["metric"]][1]
        bound = {k: g[k] for k in ("min", "max", "tolerance") if k in g}
        base = dict(id=g["id"], section=g["section"], workload=g["workload"], metric=g["metric"], **bound)
        values = list(lookup(g) or [])
        if not values:
            out.append(dict(base, label=None, value=None, status="not measured",
                            line=f"not measured  {describe(g)}"))
            continue
        for label, value in values:
            ok = passes(g, value)
            status = "ok" if ok else "FAIL"
            shown = "nan" if value is None or not math.isfinite(value) else _num(value, unit)
            where = f" {label}:" if label else ":"
            out.append(dict(base, label=label, value=value, status=status,
                            line=f"{status:<4}  {describe(g)} --{where} {shown}"))
    return out


def lines(verdicts: list[dict]) -> list[str]:
    return [v["line"] for v in verdicts]


def markdown(verdicts: list[dict], title="Speed goals (benchmarks/goals.toml)") -> str:
    """The verdict lines as a Markdown section (a code block, one line per verdict) and a
    count of each status."""
    counts = {s: sum(v["status"] == s for v in verdicts) for s in ("ok", "FAIL", "not measured")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items())
    return "\n".join([f"## {title}", "", f"{summary}.", "", "```", *lines(verdicts), "```", ""])


def summary(verdicts: list[dict]) -> dict:
    return {s: sum(v["status"] == s for v in verdicts) for s in ("ok", "FAIL", "not measured")}


# -- the suite's lookup ------------------------------------------------------------------------


def suite_lookup(result: dict):
    """Lookup over a suite result (benchmarks/suite.py): the warm anchor ratios of the rows it
    shares with benchmarks/workloads.py (at the goal's grid) and the fresh-process rows of its
    cold-start table (the beta workload only). Everything else is not measured by the suite."""
    from benchmarks.workloads import WORKLOADS

    rows = result.get("rows", [])
    cold = result.get("cold_start") or {}

    def lookup(goal):
        w = WORKLOADS.get(goal["workload"])
        if w is None:
            return []
        metric = goal["metric"]
        if metric == "anchor_speedup_warm" and w.suite_row:
            grid = goal.get("grid", w.suite_grid)
            same = [r for r in rows if r["workload"] == w.suite_row
                    and (grid is None or (r["grid_step"] is not None and math.isclose(r["grid_step"], grid)))]
            dp = next((r for r in same if r["engine"] == "dpax"), None)
            anc = next((r for r in same if r["engine"] == goal["anchor"]), None)
            if dp is None or anc is None or not dp.get("warm_s"):
                return []
            anchor_s = anc["warm_s"] if anc.get("warm_s") is not None else anc["cold_s"]
            return [("suite", anchor_s / dp["warm_s"])]
        if metric in ("cold_empty_over_anchor", "cold_second_over_anchor") and w.cold_row == "beta" and cold:
            anchor = cold.get("anchor, fresh process")
            dpax = cold.get("dpax, empty cache" if metric == "cold_empty_over_anchor" else "dpax, warm cache")
            if anchor and dpax:
                return [("suite cold start, best of each", min(dpax) / min(anchor))]
        return []

    return lookup
