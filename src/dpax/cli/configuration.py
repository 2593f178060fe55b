"""A DP-SGD configuration on the command line: ``--sample-rate`` / ``--num-steps`` or the
schedule ``--dataset-size`` / ``--batch-size`` / ``--epochs``, read into one form.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
from collections.abc import Iterable
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .._engine.validation import shown
from .._text import fmt, table
from ..schedule import dpsgd_schedule
from .parsing import count, number

DPSGD_GROUP = ("--sample-rate P --num-steps T, or --dataset-size N --batch-size B --epochs E (sample rate B / N, "
               "E * ceil(N / B) steps: Opacus' batches per epoch; dpax.dpsgd_schedule)")
_RATE_OPTIONS = ("sample_rate", "num_steps")
_SCHEDULE_OPTIONS = ("dataset_size", "batch_size", "epochs")


def dpsgd_args(p: argparse.ArgumentParser, *, noise: bool = True, required: bool = True) -> None:
    """The "DP-SGD" argument group: --noise-multiplier (if ``noise``) and the configuration
    (:func:`configuration_args`); ``required``: the configuration must be given.

    Args:
        p: the parser the group is added to.
        noise: add --noise-multiplier (default True).
        required: the configuration (and --noise-multiplier) must be given (default True).

    Returns:
        None; ``p`` has the group.
    """
    g = p.add_argument_group("DP-SGD", DPSGD_GROUP)
    if noise:
        g.add_argument("--noise-multiplier", type=number, required=required, metavar="S",
                       help="noise standard deviation / clipping norm")
    configuration_args(p, g, required=required)


def configuration_args(p: argparse.ArgumentParser, group: argparse._ArgumentGroup, *, required: bool = True,
                       several: bool = False) -> None:
    """DP-SGD's configuration in ``group`` (of the parser ``p``): --sample-rate and
    --num-steps, or --dataset-size, --batch-size and --epochs (:func:`dpax.dpsgd_schedule`),
    one pair or the other (:func:`resolve_configuration` checks them).

    Args:
        p: the parser (its defaults say whether the configuration is required and several).
        group: where the options go (an argument group of ``p``, or ``p``).
        required: the configuration must be given.
        several: each option takes one or more values; the configurations are every combination.

    Returns:
        None; ``group`` has the options and ``p`` the defaults ``dpsgd_required``,
        ``dpsgd_several`` and ``schedule``.

    >>> from dpax.cli.parsing import options_parser
    >>> p = options_parser()
    >>> configuration_args(p, p.add_argument_group("DP-SGD"))
    >>> p.parse_args(["--dataset-size", "1000", "--batch-size", "100", "--epochs", "2"]).epochs
    2
    """
    more: dict[str, Any] = {"nargs": "+"} if several else {}
    each = " (one or more: every combination)" if several else ""
    group.add_argument("--sample-rate", type=number, metavar="P", help="Poisson sampling rate, in (0, 1]" + each,
                       **more)
    group.add_argument("--num-steps", type=count, metavar="T", help="number of steps (integer >= 1)" + each, **more)
    group.add_argument("--dataset-size", type=count, metavar="N",
                       help="instead of --sample-rate / --num-steps: number of training records" + each, **more)
    group.add_argument("--batch-size", type=count, metavar="B",
                       help="expected batch size, in [1, N]: sample rate B / N" + each, **more)
    group.add_argument("--epochs", type=count, metavar="E",
                       help="number of epochs: E * ceil(N / B) steps" + each, **more)
    p.set_defaults(dpsgd_required=required, dpsgd_several=several, schedule=None)


def _options_text(names: Iterable[str]) -> str:
    return " ".join("--" + n.replace("_", "-") for n in names)


def resolve_configuration(args: argparse.Namespace) -> None:
    """Check the DP-SGD configuration options of ``args`` (a usage error unless exactly one
    of the pairs is complete, or neither where it is optional) and, from --dataset-size,
    --batch-size and --epochs, set ``args.sample_rate`` and ``args.num_steps`` (lists for a
    subcommand taking several: every combination) and ``args.schedule`` (the JSON of the
    schedule). A namespace without these options is left as it is.

    Args:
        args: the parsed arguments, with ``args.parser`` the subcommand's parser.

    Returns:
        None; ``args`` is updated in place.

    Raises:
        SystemExit: a usage error (through ``args.parser.error``).
        ValueError: a value out of its range (a fractional --num-steps, a batch larger than
            the dataset, ...), naming it.

    >>> from dpax.cli.parsing import Parser
    >>> p = Parser()
    >>> configuration_args(p, p)
    >>> args = p.parse_args(["--dataset-size", "1000", "--batch-size", "100", "--epochs", "2"])
    >>> args.parser = p
    >>> resolve_configuration(args)
    >>> args.sample_rate, args.num_steps, args.schedule["steps_per_epoch"]
    (0.1, 20, 10)
    """
    if not hasattr(args, "dataset_size"):
        return
    rate = [o for o in _RATE_OPTIONS if getattr(args, o) is not None]
    sched = [o for o in _SCHEDULE_OPTIONS if getattr(args, o) is not None]
    if rate and sched:
        args.parser.error(f"give --sample-rate and --num-steps, or --dataset-size, --batch-size and --epochs, not "
                          f"both (got {_options_text(rate + sched)})")
    if sched:
        missing = [o for o in _SCHEDULE_OPTIONS if o not in sched]
        if missing:
            args.parser.error(f"--dataset-size, --batch-size and --epochs go together: {_options_text(missing)} is "
                              "missing")
        values = [getattr(args, o) for o in _SCHEDULE_OPTIONS]
        if args.dpsgd_several:
            values = [list(c) for c in zip(*itertools.product(*values))]
        s = dpsgd_schedule(*values)
        args.sample_rate, args.num_steps = s.sample_rate, s.num_steps
        if args.dpsgd_several:
            # DPSGDSchedule types its fields as object: arrays here (Python numbers for one schedule)
            args.sample_rate, args.num_steps = (np.atleast_1d(cast(ArrayLike, s.sample_rate)).tolist(),
                                                np.atleast_1d(cast(ArrayLike, s.num_steps)).tolist())
        args.schedule = {k: (np.asarray(v).tolist()) for k, v in dataclasses.asdict(s).items()}
        return
    if len(rate) == 1:
        other = _options_text(o for o in _RATE_OPTIONS if o not in rate)
        args.parser.error(f"--sample-rate and --num-steps go together: {other} is missing (or give --dataset-size, "
                          "--batch-size and --epochs)")
    if not rate and args.dpsgd_required:
        args.parser.error("the following arguments are required: --sample-rate and --num-steps, or --dataset-size, "
                          "--batch-size and --epochs")
    for t in np.atleast_1d(np.asarray(args.num_steps if rate else [], dtype=object)).tolist():
        if isinstance(t, float) and math.isfinite(t) and t != round(t):
            raise ValueError(f"num_steps (--num-steps) must be a whole number >= 1, got {shown(t)}; to train for a "
                             "number of epochs, give --dataset-size N --batch-size B --epochs E in place of "
                             "--sample-rate and --num-steps (E * ceil(N / B) steps)")
    if rate and args.dpsgd_several:
        combos = list(itertools.product(args.sample_rate, args.num_steps))
        args.sample_rate, args.num_steps = [c[0] for c in combos], [c[1] for c in combos]


def schedule_lines(r: dict) -> list[str]:
    """What a result computed from --dataset-size, --batch-size and --epochs says about the
    sample rate and steps they give (else nothing).

    Args:
        r: a subcommand's JSON-ready result, with the key ``schedule`` when the options were given.

    Returns:
        Lines of text: one for one configuration, a table for several.

    >>> schedule_lines({"schedule": {"sample_rate": 0.1, "num_steps": 20, "steps_per_epoch": 10,
    ...                              "dataset_size": 1000, "batch_size": 100, "epochs": 2}})
    ['from 2 epochs of batches of 100 out of 1,000 records: sample rate 0.1 (= 100 / 1,000), 20 steps (10 per epoch) (dpax.dpsgd_schedule)']
    """  # noqa: E501 (a doctest's expected output, kept verbatim on one line)
    s = r.get("schedule")
    if not s:
        return []
    if not isinstance(s["num_steps"], list):
        epochs = f"{s['epochs']:,} epoch{'' if s['epochs'] == 1 else 's'}"
        return [f"from {epochs} of batches of {s['batch_size']:,} out of {s['dataset_size']:,} records: "
                f"sample rate {fmt(s['sample_rate'])} (= {s['batch_size']:,} / {s['dataset_size']:,}), "
                f"{s['num_steps']:,} steps ({s['steps_per_epoch']:,} per epoch) (dpax.dpsgd_schedule)"]
    rows = [(f"{n:,}", f"{b:,}", f"{e:,}", fmt(p), f"{k:,}", f"{t:,}") for n, b, e, p, k, t in
            zip(s["dataset_size"], s["batch_size"], s["epochs"], s["sample_rate"], s["steps_per_epoch"],
                s["num_steps"])]
    return ["DP-SGD configurations from epochs (dpax.dpsgd_schedule):"] + table(
        ("dataset size", "batch size", "epochs", "sample rate", "steps per epoch", "steps"), rows)
