"""Running an analysis kernel on a batch within the memory budget: the query axis padded to few
compiled widths (:func:`query_width`), and rows and queries split into calls that fit
(:func:`query_plan`, :func:`per_query`, :func:`by_rows`), checked before any kernel runs.
Rows and queries are independent, so the split changes no answer.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from . import batching as _batching
from . import grid as _grid
from .cumulative import LEVEL_SEARCH_QUERIES
from .pair import Pair


def query_width(rows: int, m: int) -> int:
    """Queries per row (alphas, deltas, epsilons) a kernel is compiled for: m rounded up to a
    power of two, so that one executable serves every count up to twice smaller. Kept on m's
    side of LEVEL_SEARCH_QUERIES, where :func:`first_true` changes method, so that padding
    never changes how a table is searched.

    >>> [query_width(1, m) for m in (1, 3, 5, 200, 300)], query_width(10, 20)
    ([1, 4, 8, 256, 512], 25)
    """
    width = 1 << max(0, m - 1).bit_length()
    if rows * m <= LEVEL_SEARCH_QUERIES < rows * width:
        width = max(m, LEVEL_SEARCH_QUERIES // rows)
    return width


#: Working memory of the kernels that compare every query with every breakpoint, in bytes
#: per row, (padded) query and grid point: the (rows, m, n) intermediates of
#: :func:`epsilon_kernel` and :func:`delta_kernel` (measured: 16 and 8); the breakpoint
#: tables of every kernel take ``grid.BYTES_PER_POINT`` per row and point.
QUERY_BYTES = {"epsilon_kernel": 24, "delta_kernel": 16}
#: Working memory per row and (padded) query whatever the support: the kernel's own
#: per-query arrays, its input and output (measured on CPU: beta 64 bytes, delta 18), and
#: the host's copies of a call's queries, padded queries and answers (24).
PER_QUERY_BYTES = {"beta_kernel": 88, "delta_kernel": 48, "epsilon_kernel": 48}
#: The argument each query kernel answers at (named in memory errors).
QUERY_ARGUMENT = {"beta_kernel": "alpha", "delta_kernel": "epsilon", "epsilon_kernel": "delta"}
#: Query kernels that search the breakpoint tables (:func:`first_true`): split for the
#: memory budget, each call of theirs is padded to as many queries as keep the search
#: method of a single call.
SEARCHING_KERNELS = ("beta_kernel",)


def _padded_queries(kernel, pair: Pair, queries: np.ndarray, width: int | None = None):
    rows, m = queries.shape
    width = query_width(rows, m) if width is None else width
    if m == 0 or width == m:
        return kernel(pair, queries)
    padded = np.concatenate([queries, np.repeat(queries[:, -1:], width - m, axis=1)], axis=1)
    return np.asarray(kernel(pair, padded))[:, :m]


def traced(pair: Pair) -> bool:
    return any(isinstance(a, jax.core.Tracer) for a in pair)


class QueryPlan(NamedTuple):
    """How :func:`per_query` splits a batch of queries: ``rows`` rows and ``block`` queries
    per call, each call's queries padded to ``width``."""

    rows: int
    block: int
    width: int


def query_plan(kernel, pair: Pair, rows: int, m: int, argument: str | None = None, held: float = 0) -> QueryPlan | None:
    """The split of ``m`` queries on each of ``rows`` rows of ``pair`` that keeps the
    answers (kept whole), ``held`` bytes the caller holds meanwhile (its copies of the
    queries, answers computed before) and one call's working memory within the budget;
    None when a single call fits. Raises :class:`~dpax._engine.grid.MemoryBudgetError`,
    naming ``argument`` and its size, when not even one query on one row fits beside the
    answers."""
    name = getattr(kernel, "__name__", "analysis")
    argument = argument or QUERY_ARGUMENT.get(name, "query")
    n = pair.support_length
    per_point = QUERY_BYTES.get(name, 0) * n + PER_QUERY_BYTES.get(name, max(PER_QUERY_BYTES.values()))
    cost = lambda r, w: r * n * _grid.BYTES_PER_POINT + r * w * per_point
    fixed = rows * m * 8 + held
    limit = _grid.MEMORY_LIMIT_BYTES
    if fixed + cost(rows, query_width(rows, m)) <= limit:
        return None
    bisect = name in SEARCHING_KERNELS and rows * m > LEVEL_SEARCH_QUERIES  # as a single call searches
    row_width = lambda block: max(query_width(1, block), LEVEL_SEARCH_QUERIES + 1 if bisect else 0)
    block = m  # queries per call: all, or the most (a power of two) with which one row fits
    while block > 1 and fixed + cost(1, row_width(block)) > limit:
        block = 1 << ((block - 1).bit_length() - 1)
    detail = (f"{argument} of {m:,} value(s) on {rows} row(s) of {n} grid points (the answers alone "
              f"{_grid._gib(rows * m * 8)})")
    chunk = _grid.rows_per_chunk(rows, cost(1, row_width(block)), fixed, name.replace("_kernel", ""), detail,
                                 hint=f"fewer {argument} values per call, a coarser grid_step or a smaller batch")
    chunk = _batching.chunk_size(chunk)
    width = query_width(chunk, block)
    if bisect and chunk * width <= LEVEL_SEARCH_QUERIES:
        width = LEVEL_SEARCH_QUERIES // chunk + 1
    return QueryPlan(chunk, block, width)


def per_query(kernel, pair: Pair, queries, argument: str | None = None, held: float = 0):
    """``kernel(pair, queries)`` for queries (rows, m), evaluated with the query axis padded
    to :func:`query_width` by repeating the last query, and sliced back: every query is
    answered on its own, so the padding changes no answer, only how many shapes compile.

    Rows and queries are independent, so a batch whose working memory (the answers,
    ``held`` bytes the caller keeps meanwhile, :data:`QUERY_BYTES` and
    :data:`PER_QUERY_BYTES` per call) exceeds the budget is evaluated in chunks of rows
    and blocks of queries that fit (:func:`query_plan`), checked before any kernel runs; the
    answers are those of one call."""
    queries = np.asarray(queries)
    rows, m = queries.shape
    if m == 0 or traced(pair):
        return _padded_queries(kernel, pair, queries)
    plan = query_plan(kernel, pair, rows, m, argument, held)
    if plan is None:
        return _padded_queries(kernel, pair, queries)
    out = np.empty((rows, m))
    for index, real in _batching.row_chunks(rows, plan.rows):
        part = Pair(*(np.asarray(a)[index] for a in pair)) if plan.rows < rows else pair
        for start in range(0, m, plan.block):
            cols = slice(start, min(m, start + plan.block))
            block = queries[index, cols]  # every call (plan.rows, plan.width): one kernel shape
            answers = _padded_queries(kernel, part, block, max(plan.width, block.shape[1]))
            out[index[:real], cols] = np.asarray(answers)[:real]
    return out


def by_rows(kernel, pair: Pair, what: str):
    """``kernel(pair)`` (one answer per row), the rows in chunks whose breakpoint tables fit
    the memory budget (checked before any kernel runs)."""
    rows, n = pair.pmf_x.shape
    if traced(pair) or rows * n * _grid.BYTES_PER_POINT <= _grid.MEMORY_LIMIT_BYTES:
        return kernel(pair)
    chunk = _grid.rows_per_chunk(rows, n * _grid.BYTES_PER_POINT, 0, what, f"{rows} row(s) of {n} grid points")
    out = None
    for index, real in _batching.row_chunks(rows, _batching.chunk_size(chunk)):
        part = np.asarray(kernel(Pair(*(np.asarray(a)[index] for a in pair))))
        if out is None:  # one answer per row, or a row of answers per row
            out = np.empty((rows,) + part.shape[1:])
        out[index[:real]] = part[:real]
    return out
