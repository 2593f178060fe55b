"""``dpax sweep CONFIG -o RESULTS``: a table of DP-SGD configurations evaluated in batches
(:func:`dpax.sweep.run_sweep`).

    dpax sweep configs.csv -o results.csv --batch-size 64
"""

from __future__ import annotations

import argparse
import sys

from .. import distributed as _dist
from .._text import pairs
from ..sweep import config as sweep_config
from ..sweep import run_sweep
from .parsing import PROG, Parents, Subparsers, integer, number, options_named, options_parser


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    """Register ``sweep`` (its ``func`` and ``render``) with ``subparsers``."""
    p = subparsers.add_parser(
        "sweep",
        parents=[_options(), parents.common],
        help="analyse / calibrate every row of a CSV, JSON or YAML table of DP-SGD configurations",
        description=(
            "Evaluate a table of DP-SGD configurations (CSV, JSON, JSON lines or YAML; columns named like "
            "the Python arguments: noise_multiplier, sample_rate, num_steps, grid_step, alpha, beta, advantage, "
            "epsilon, delta, mu). A row with noise_multiplier is analysed (out_beta at alpha, out_advantage, "
            "out_epsilon at delta, out_mu, out_regret); a row without it is calibrated to its target, and compared "
            "with standard calibration to (epsilon, delta) at its delta (out_standard_epsilon, "
            "out_standard_noise_multiplier, out_noise_reduction). Results "
            "(the input columns plus the answers) are appended to RESULTS (.csv or .jsonl) after every batch; "
            "Ctrl-C stops after the batch in flight and --resume continues where it stopped. A file holds at most "
            f"{sweep_config.MAX_ROWS:,} rows, {sweep_config.MAX_CONFIG_BYTES // 2**20} MiB and "
            f"{sweep_config.MAX_COLUMNS:,} columns, as UTF-8 text; YAML anchors and aliases are refused, and so are "
            f"input columns named like the results' ({', '.join(sweep_config.RESERVED_COLUMNS)}, "
            f"{sweep_config.OUTPUT_PREFIX}*)."
        ),
    )
    p.set_defaults(func=run_sweep_command, render=render_sweep)


def _options() -> argparse.ArgumentParser:
    """The options only ``sweep`` takes (a parent parser, listed before the shared ones)."""
    p = options_parser()
    p.add_argument("config", metavar="CONFIG", help="table of configurations (.csv, .json, .jsonl, .yaml, .yml)")
    p.add_argument("-o", "--output", required=True, metavar="RESULTS", help="results file (.csv or .jsonl)")
    p.add_argument("--batch-size", type=integer(1), default=64, metavar="N",
                   help="rows per batched call (default: %(default)s)")
    p.add_argument("--resume", action="store_true",
                   help="skip the rows already in RESULTS and append the rest; RESULTS must be a file a sweep of "
                        "CONFIG wrote (else an error names its line), a last line cut short by a crash is dropped")
    p.add_argument("--overwrite", action="store_true", help="start RESULTS again if it exists (not with --resume)")
    p.add_argument("--on-error", choices=("skip", "reject"), default="skip",
                   help="malformed rows: skip them (reported with their line number, written as 'invalid') "
                        "or reject the whole file before computing anything (default: %(default)s)")
    p.add_argument("--rtol", type=number, default=1e-4, metavar="R",
                   help="relative tolerance of calibrated noise multipliers (default: %(default)s)")
    p.add_argument("--no-compare-standard", dest="compare_standard", action="store_false",
                   help="leave out_standard_epsilon, out_standard_noise_multiplier and out_noise_reduction empty: no "
                        "standard (epsilon, delta) calibration beside each calibrated row (about halves their time)")
    p.add_argument("--no-progress", dest="progress", action="store_const", const=False, default=None,
                   help="no progress report (default: a bar on a terminal; otherwise a plain line at most every "
                        "30 s of a long sweep and one at its end)")
    d = p.add_argument_group("several processes (jax.distributed)")
    d.add_argument("--distributed", action="store_true",
                   help="run as one process of a jax.distributed job (start one per host or GPU, same arguments): "
                        "each writes its share to a part file (out.csv: out.part-<i>-of-<n>.csv), process 0 merges "
                        "them into RESULTS; coordinator, process count and id come from SLURM / TPU / "
                        "JAX_COORDINATOR_ADDRESS unless given")
    d.add_argument("--coordinator", metavar="HOST:PORT", help="address of process 0 (with --distributed)")
    d.add_argument("--num-processes", type=integer(1), metavar="N", help="number of processes (with --distributed)")
    d.add_argument("--process-id", type=integer(0), metavar="I",
                   help="this process's id in 0..N-1 (with --distributed)")
    d.add_argument("--join-timeout", type=number, metavar="S",
                   help=f"seconds to wait for every process to join (with --distributed; default: "
                        f"{_dist.DEFAULT_JOIN_TIMEOUT:g})")
    d.add_argument("--heartbeat-timeout", type=number, metavar="S",
                   help=f"seconds of silence after which a process counts as dead (with --distributed; default: "
                        f"{_dist.DEFAULT_HEARTBEAT_TIMEOUT:g})")
    return p


#: The Python arguments of run_sweep and the distributed setup, as this command's options.
_OPTIONS = {"rtol": "--rtol", "batch_size": "--batch-size", "join_timeout": "--join-timeout",
            "heartbeat_timeout": "--heartbeat-timeout", "on_error": "--on-error", "grid_step": "--grid-step"}


def run_sweep_command(args: argparse.Namespace) -> dict:
    """Run the sweep; exit status 130 (after a complete batch) when interrupted, 2 when a
    process of a distributed sweep failed (named in the message) or when no row of the
    config is valid (the rows are still written, as 'invalid')."""
    given = [o for o, v in (("--coordinator", args.coordinator), ("--num-processes", args.num_processes),
                            ("--process-id", args.process_id), ("--join-timeout", args.join_timeout),
                            ("--heartbeat-timeout", args.heartbeat_timeout)) if v is not None]
    if given and not args.distributed:
        raise SystemExit(f"sweep: {', '.join(given)} only go(es) with --distributed")
    if args.resume and args.overwrite:
        raise SystemExit("sweep: --resume and --overwrite contradict each other: --resume keeps RESULTS and "
                         "continues it, --overwrite starts it again; pass one of them")
    try:
        with options_named(_OPTIONS):
            if args.distributed:
                join = _dist.DEFAULT_JOIN_TIMEOUT if args.join_timeout is None else args.join_timeout
                beat = _dist.DEFAULT_HEARTBEAT_TIMEOUT if args.heartbeat_timeout is None else args.heartbeat_timeout
                _dist.initialize(args.coordinator, args.num_processes, args.process_id, join_timeout=join,
                                 heartbeat_timeout=beat)
            summary = run_sweep(args.config, args.output, grid_step=args.grid_step, batch_size=args.batch_size,
                                resume=args.resume, overwrite=args.overwrite, on_error=args.on_error, rtol=args.rtol,
                                progress=args.progress, distributed=args.distributed,
                                compare_standard=args.compare_standard)
    except _dist.DistributedError as exc:
        print(f"{PROG}: error: distributed sweep: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    summary["command"] = "sweep"
    if summary["rows"] and summary["invalid"] == summary["rows"]:  # nothing to compute: not a success
        raise SystemExit(f"sweep: {args.config}: none of its {summary['rows']:,} row(s) is valid (each is named "
                         f"above with its reason, and written to {args.output} as 'invalid')")
    if summary["interrupted"]:
        print(f"{PROG} sweep: stopped by {summary['signal'] or 'a signal to another process'} after a complete batch; "
              f"{summary['written']} row(s) "
              f"written, {summary['remaining']} left: run again with --resume to continue", file=sys.stderr)
        raise SystemExit(130)
    return summary


def render_sweep(r: dict) -> str:
    """The human-readable form of :func:`run_sweep_command`'s result."""
    return "\n".join([f"sweep {r['config']} -> {r['output']}"] + pairs([
        ("rows in config", str(r["rows"])),
        ("malformed rows", str(r["invalid"])),
        ("already done (resumed)", str(r["already_done"])),
        ("rows written", str(r["written"])),
        ("batches", str(r["batches"])),
    ]))
