"""A sweep divided among the processes of a ``jax.distributed`` job: part files and their merge.

The batches of a sweep (:func:`dpax.sweep.make_batches`, the same on every process: they
depend on the file only) are divided into ``n`` contiguous shares of about equal row counts;
process ``i`` writes the answers of its share to ``OUTPUT`` with ``.part-<i>-of-<n>`` before
its extension (``out.csv`` -> ``out.part-0-of-2.csv``; each batch one
flushed write, like a one-process sweep) and process 0 writes the malformed rows. When every
process has finished, process 0 merges the parts, and the rows of ``OUTPUT`` itself when a
sweep resumes one, into ``OUTPUT`` in the order one process writes them (malformed rows, then
the batches in order), so the file equals a one-process sweep's; the parts are deleted once
``OUTPUT`` is safely replaced. Resuming reads the rows already done from ``OUTPUT`` and
from every part file (of any process count), so nothing written is computed twice or lost.
All processes must see the same directory (a shared file system on a cluster).
"""

from __future__ import annotations

import glob
import math
import os
import re

import numpy as np

from . import results as _results
from .rows import Row

SUFFIX = ".part-{index}-of-{count}"
_PART = re.compile(r"\.part-[0-9]+-of-[0-9]+\.[A-Za-z]+")


def _part_path(output: str, index: int | str, count: int) -> str:
    """Where process ``index`` of ``count`` writes its rows.

    >>> _part_path("runs/out.csv", 1, 4)
    'runs/out.part-1-of-4.csv'
    """
    stem, ext = os.path.splitext(output)
    return stem + SUFFIX.format(index=index, count=count) + ext


def _existing_parts(output: str) -> list[str]:
    """The part files of ``output`` on disk (of any process count), sorted."""
    stem, ext = os.path.splitext(output)
    found = glob.glob(glob.escape(stem) + ".part-*-of-*" + glob.escape(ext))
    return sorted(p for p in found if os.path.isfile(p) and _PART.fullmatch(p[len(stem):]))


def _share_batches(batches: list[list[Row]], index: int, count: int) -> list[list[Row]]:
    """Process ``index``'s contiguous share of ``batches``: those whose first row's position in
    the batch order falls in ``[index * rows // count, (index + 1) * rows // count)``."""
    sizes = np.array([len(b) for b in batches], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if sizes.size else sizes
    total = int(sizes.sum())
    lo, hi = index * total // count, (index + 1) * total // count
    return [b for b, s in zip(batches, starts) if lo <= s < hi]


def _done_rows(output: str, parts: list[str], header: list[str], rows: list[Row], config: str) -> set[int]:
    """Rows already in ``output`` (if it exists) or in any of ``parts``, each file checked
    with :func:`dpax.sweep.results._checked_records`; a row in two files must be the same record
    in both (a merge stopped before it deleted the parts), else a ValueError names both."""
    done: dict[int, tuple[str, dict]] = {}
    for path in ([output] if os.path.exists(output) and os.path.getsize(output) > 0 else []) + parts:
        for row, rec in _results._checked_records(path, header, rows, config).items():
            if row in done and _same(done[row][1]) != _same(rec):
                raise ValueError(f"results files {done[row][0]!r} and {path!r} both hold row {row}, with different "
                                 "values: not the files a sweep writes, so they cannot be resumed (remove the wrong "
                                 "one, or start again with overwrite=True / --overwrite)")
            done.setdefault(row, (path, rec))
    return set(done)


def _same(rec: dict) -> dict:
    """A record without its empty JSON values (a merge once dropped them)."""
    return {k: v for k, v in rec.items() if v is not None}


def _merge(output: str, header: list[str], order: list[int], parts: list[str], *, keep_output: bool) -> None:
    """Write ``output`` from the rows of ``parts`` (and of ``output`` when ``keep_output``) in
    the row order ``order``, atomically (a temporary file, synced, then renamed), then delete
    the parts. Raises ValueError naming the rows that no file holds."""
    by_row: dict[int, dict] = {}
    for path in ([output] if keep_output and os.path.exists(output) else []) + parts:
        for rec in _results.read_results(path):
            try:
                row = int(rec["row"])
            except (KeyError, TypeError, ValueError):
                continue
            # a JSON null is a NaN answer: written again as null, like the one-process writer
            by_row.setdefault(row, {k: math.nan if v is None else v for k, v in rec.items()})
    missing = [r for r in order if r not in by_row]
    if missing:
        raise ValueError(f"cannot merge the parts of {output!r}: rows {missing[:5]} are in no part file"
                         + (f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""))
    tmp = output + ".merging"
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        _results._ResultsWriter(fh, _results._out_format(output), header, write_header=True).emit(
            [by_row[r] for r in order])
    os.replace(tmp, output)
    for path in parts:
        os.unlink(path)
