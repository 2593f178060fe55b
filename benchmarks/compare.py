"""``python -m benchmarks compare REF``: dpax's speed at a git revision REF against the working
tree (HEAD plus uncommitted changes), workload by workload (benchmarks/workloads.py).

REF is checked out in a temporary git worktree (``git worktree add --detach``), removed at the
end, also on Ctrl-C or SIGTERM. Every measurement is a child process ``python -m
benchmarks.workloads NAME`` run from this repository's root with the same interpreter and
``PYTHONPATH=<tree>/src`` in front (which overrides an editable install: each child reports
``dpax.__file__`` and is checked to be the tree's), and ``DPAX_CACHE_DIR`` in a temporary
directory private to its side (mode 0700). The workload code is this checkout's for both sides.
Both trees' bytecode is written first, as an installed package's is
(``bench_cold_start.compile_bytecode``).

Per workload and side:

* warm: one child; three untimed calls, then the median of ``--repeat`` timed calls;
* cold empty: a fresh child with an empty kernel cache; seconds from the parent's timestamp
  taken just before it starts the child to the first answer (interpreter start and imports
  included);
* cold second: another fresh child on the cache the first one left (a revision without the
  kernel cache simply runs as the first time).

Sides alternate (REF, HEAD, REF, HEAD, ...) measurement by measurement, for ``--rounds`` rounds,
so that drift in the machine's load hits both; each figure is the median over the rounds.
Prints a Markdown table (ratio REF / HEAD > 1: HEAD faster) and the verdicts of
benchmarks/goals.toml, and writes ``benchmarks/results/compare-<REF>.json``.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS_DIR = os.path.join(HERE, "results")
SIDES = ("REF", "HEAD")
PATHS = ("warm", "cold empty", "cold second")
#: seconds a child may take before it is killed (table64's first run on an old revision compiles ~1 min)
CHILD_TIMEOUT_S = 1800


def _git(*args, cwd=ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _log(*a):
    print(*a, file=sys.stderr, flush=True)


def child_env(tree: str, cache_dir: str, root: str = ROOT) -> dict:
    """The environment of a child measuring ``tree``: its src/ first on PYTHONPATH (then this
    checkout's root, for the ``benchmarks`` package), its own kernel cache directory."""
    env = {k: v for k, v in os.environ.items() if k not in ("DPAX_CACHE", "DPAX_CACHE_DIR")}
    path = [os.path.join(tree, "src"), root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(path)
    env["DPAX_CACHE_DIR"] = cache_dir
    return env


def run_child(tree: str, name: str, *, cache_dir: str, cold: bool = False, repeat: int = 5, smoke: bool = False,
              root: str = ROOT, timeout: float = CHILD_TIMEOUT_S) -> dict:
    """Run one workload in a fresh process against ``tree``; its JSON record (plus ``wall_s``,
    the parent's view of the whole child), or ``{"error": ...}``. Raises if the child's dpax is
    not the tree's."""
    env = child_env(tree, cache_dir, root)
    args = ["--smoke"] if smoke else []
    t0 = time.time()
    cmd = [sys.executable, "-m", "benchmarks.workloads", name, *args]
    cmd += ["--cold", "--t0", repr(t0)] if cold else ["--repeat", str(repeat)]
    try:
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(error=f"timed out after {timeout:.0f} s", wall_s=time.time() - t0)
    wall = time.time() - t0
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode or not lines:
        return dict(error=f"exit status {proc.returncode}: {proc.stderr.strip()[-2000:]}", wall_s=wall)
    rec = json.loads(lines[-1])
    want = os.path.realpath(os.path.join(tree, "src"))
    if not os.path.realpath(rec["dpax_file"]).startswith(want + os.sep):
        raise RuntimeError(f"the child imported {rec['dpax_file']}, not dpax of {want}: PYTHONPATH did not take")
    rec["wall_s"] = wall
    return rec


def _seconds(rec: dict):
    if "error" in rec:
        return None
    return rec["median"] if rec["mode"] == "warm" else rec["seconds"]


def answer_diff(a, b):
    """Max relative difference of two answers (lists of floats, None = NaN); 0 when equal,
    inf when one is missing or their lengths differ."""
    if a is None or b is None or len(a) != len(b):
        return math.inf
    worst = 0.0
    for x, y in zip(a, b):
        if x is None or y is None:
            if (x is None) != (y is None):
                return math.inf
            continue
        scale = max(abs(x), abs(y))
        if scale:
            worst = max(worst, abs(x - y) / scale)
    return worst


def _median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarise(runs: dict) -> list[dict]:
    """Table rows from ``runs[workload][path][side] = [record, ...]``."""
    rows = []
    for name, by_path in runs.items():
        for path in PATHS:
            if path not in by_path:
                continue
            recs = {s: by_path[path].get(s, []) for s in SIDES}
            med = {s: _median([_seconds(r) for r in recs[s]]) for s in SIDES}
            answers = {s: next((r["answer"] for r in reversed(recs[s]) if "answer" in r), None) for s in SIDES}
            errors = {s: [r["error"] for r in recs[s] if "error" in r] for s in SIDES}
            ratio = med["REF"] / med["HEAD"] if med["REF"] and med["HEAD"] else None
            rows.append(dict(workload=name, path=path, ref_s=med["REF"], head_s=med["HEAD"], ratio=ratio,
                             answer_max_rel_diff=answer_diff(answers["REF"], answers["HEAD"]),
                             ref_times=[_seconds(r) for r in recs["REF"]],
                             head_times=[_seconds(r) for r in recs["HEAD"]],
                             errors={s: e for s, e in errors.items() if e}))
    return rows


def lookup_for(rows: list[dict]):
    """The goals lookup of a comparison: REF / HEAD warm ratios (every workload run, or the
    goal's) and HEAD's absolute warm times; nothing else is measured here."""
    warm = {r["workload"]: r for r in rows if r["path"] == "warm"}

    def lookup(goal):
        if goal["metric"] == "ref_over_head_warm":
            names = list(warm) if goal["workload"] == "*" else [goal["workload"]]
            return [(n, warm[n]["ratio"]) for n in names if n in warm and warm[n]["ratio"] is not None]
        if goal["metric"] == "warm_seconds" and goal["workload"] in warm and warm[goal["workload"]]["head_s"]:
            return [("HEAD", warm[goal["workload"]]["head_s"])]
        return []

    return lookup


def _fmt_s(x):
    return "-" if x is None else f"{x:#.4g}"


def _fmt_diff(d):
    if d is None or math.isinf(d):
        return "differ (missing)"
    return "identical" if d == 0 else f"{d:.1e}"


def markdown(result: dict) -> str:
    from benchmarks import goals

    m = result["meta"]
    head = f"HEAD {m['head_sha'][:10]}" + (" + uncommitted changes under src/" if m["head_dirty"] else "")
    lines = [
        f"# dpax speed: {m['ref']} ({m['ref_sha'][:10]}) against {head}",
        "",
        f"Generated by `python -m benchmarks compare {m['ref']} --rounds {m['rounds']} --repeat {m['repeat']}"
        f" --workloads {','.join(m['workloads'])}{'' if m['cold'] else ' --no-cold'}"
        f"{' --smoke' if m.get('smoke') else ''}` on {m['started_utc']}, "
        f"{m['cpu_count']} CPU cores, python {m['python']}; load average at the start {m['load_average_start']}, "
        f"at the end {m['load_average_end']}; {m['duration_s']:.0f} s.",
        "",
        "Each side in its own processes, alternating REF, HEAD. warm: median of the timed calls after three "
        "untimed calls (then median over rounds); cold empty: first answer of a fresh process with an empty "
        "kernel cache, import included; cold second: a fresh process on the cache the first left. "
        "Ratio REF / HEAD > 1: HEAD faster. Answers: max relative difference between the sides' answers.",
        "",
        "| workload | path | REF median (s) | HEAD median (s) | REF / HEAD | answers, max rel. diff |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in result["table"]:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        err = "; ".join(f"{s} error" for s in r["errors"])
        lines.append(f"| {r['workload']} | {r['path']} | {_fmt_s(r['ref_s'])} | {_fmt_s(r['head_s'])} | {ratio} | "
                     f"{_fmt_diff(r['answer_max_rel_diff'])}{' (' + err + ')' if err else ''} |")
    lines += ["", goals.markdown(result["goals"])]
    return "\n".join(lines)


def _private_dir(path: str) -> str:
    os.mkdir(path, mode=0o700)
    os.chmod(path, 0o700)
    return path


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def compare(ref: str, *, repeat=5, rounds=3, workloads=None, cold=True, smoke=False, root=ROOT) -> dict:
    """Measure; returns the result (meta, runs, table, goals). The worktree of ``ref`` and the
    cache directories are removed whatever happens."""
    from benchmarks import bench_cold_start, goals
    from benchmarks.workloads import DEFAULT, WORKLOADS

    names = list(workloads or DEFAULT)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        raise ValueError(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    goal_list = goals.load()
    ref_sha = _git("rev-parse", "--verify", f"{ref}^{{commit}}", cwd=root)
    head_sha = _git("rev-parse", "HEAD", cwd=root)
    dirty = bool(_git("status", "--porcelain", "--", "src", cwd=root))
    paths = PATHS if cold else ("warm",)
    meta = dict(ref=ref, ref_sha=ref_sha, head_sha=head_sha, head_dirty=dirty, rounds=rounds, repeat=repeat,
                workloads=names, cold=cold, smoke=smoke, python=sys.version.split()[0], executable=sys.executable,
                cpu_count=os.cpu_count(), machine=platform.machine(),
                started_utc=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                load_average_start=[round(x, 2) for x in os.getloadavg()])
    t_start = time.perf_counter()
    tmp = tempfile.mkdtemp(prefix="dpax-compare-")
    tree = os.path.join(tmp, "ref-tree")
    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    added = False
    try:
        _log(f"git worktree add --detach {tree} {ref_sha[:10]}")
        _git("worktree", "add", "--detach", tree, ref_sha, cwd=root)
        added = True
        trees = {"REF": tree, "HEAD": root}
        for side in SIDES:  # as an installed package's (benchmarks/bench_cold_start.py)
            bench_cold_start.compile_bytecode(os.path.join(trees[side], "src", "dpax"))
        base = {s: _private_dir(os.path.join(tmp, f"cache-{s}")) for s in SIDES}
        warm_cache = {s: _private_dir(os.path.join(base[s], "warm")) for s in SIDES}
        runs = {n: {p: {s: [] for s in SIDES} for p in paths} for n in names}
        for r in range(rounds):
            for name in names:
                cold_cache = {s: _private_dir(os.path.join(base[s], f"cold-{r}-{name}")) for s in SIDES}
                for path in paths:
                    for side in SIDES:
                        if path == "warm":
                            rec = run_child(trees[side], name, cache_dir=warm_cache[side], repeat=repeat, smoke=smoke,
                                            root=root)
                        else:
                            rec = run_child(trees[side], name, cache_dir=cold_cache[side], cold=True, smoke=smoke,
                                            root=root)
                        runs[name][path][side].append(rec)
                        sec = _seconds(rec)
                        _log(f"  round {r + 1}/{rounds} {name} {path} {side}: "
                             + (f"{sec:.4f} s" if sec is not None else f"ERROR {rec['error'][-300:]}"))
    finally:
        signal.signal(signal.SIGTERM, old_term)
        if added:
            subprocess.run(["git", "worktree", "remove", "--force", tree], cwd=root, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=root, capture_output=True)
    meta["duration_s"] = time.perf_counter() - t_start
    meta["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    table = summarise(runs)
    verdicts = goals.evaluate(goal_list, lookup_for(table))
    return dict(meta=meta, table=table, goals=verdicts, goals_summary=goals.summary(verdicts), runs=runs)


def out_path(ref: str, out_dir: str = RESULTS_DIR) -> str:
    return os.path.join(out_dir, f"compare-{re.sub(r'[^A-Za-z0-9._-]+', '_', ref)}.json")


def _json_safe(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    return x


def main(args) -> int:
    """The ``compare`` subcommand (arguments parsed by benchmarks/__main__.py)."""
    names = [n.strip() for n in args.workloads.split(",") if n.strip()] if args.workloads else None
    try:
        result = compare(args.ref, repeat=args.repeat, rounds=args.rounds, workloads=names, cold=args.cold,
                         smoke=args.smoke)
    except KeyboardInterrupt:
        _log("interrupted; the worktree and cache directories were removed")
        return 130
    print(markdown(result))
    path = args.out or out_path(args.ref)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(_json_safe(result), fh, indent=1)
        fh.write("\n")
    _log(f"wrote {path}")
    head_errors = any("HEAD" in r["errors"] for r in result["table"])
    failed = result["goals_summary"]["FAIL"] > 0
    return 1 if head_errors or (args.strict and failed) else 0
