"""Numbers and plain-text tables for reports and the command line (no dpax imports).

Every human-readable output of dpax (the ``dpax`` subcommands, :class:`dpax.gdp.GDPReport`)
formats its numbers with :func:`fmt` and lays them out with :func:`table` and
:func:`pairs`; :func:`jsonable` turns results into what :mod:`json` writes.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np


def jsonable(value: Any) -> Any:
    """Plain Python values for json: floats (NaN -> null, +-inf -> "inf" / "-inf"),
    lists for arrays and tuples, dicts with string keys.

    >>> jsonable({"a": np.array([1.0, np.inf]), "b": float("nan")})
    {'a': [1.0, 'inf'], 'b': None}
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return None
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    return value


def fmt(value: Any, digits: int = 6) -> str:
    """``value`` with ``digits`` significant digits; "-" for None or NaN, strings as they are.

    >>> fmt(0.4051249), fmt(float("inf")), fmt(None)
    ('0.405125', 'inf', '-')
    """
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    v = float(value)
    if math.isnan(v):
        return "-"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{digits}g}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Lines of a right-aligned table with a header line.

    >>> print("\\n".join(table(("a", "b"), [("1", "22")])))
      a   b
      1  22
    """
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = [indent + "  ".join(h.rjust(w) for h, w in zip(headers, widths))]
    lines += [indent + "  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
    return lines


def pairs(items: Sequence[tuple[str, str]], indent: str = "  ") -> list[str]:
    """Lines of ``key  value`` with the keys padded to one width.

    >>> print("\\n".join(pairs([("mu", "1.5"), ("regret", "0.001")])))
      mu      1.5
      regret  0.001
    """
    width = max(len(k) for k, _ in items)
    return [f"{indent}{k.ljust(width)}  {v}" for k, v in items]
