"""Numbers and plain-text tables for reports and the command line (no dpax imports).

Every human-readable output of dpax (the ``dpax`` subcommands, :class:`dpax.gdp.GDPReport`)
formats its numbers with :func:`fmt` and lays them out with :func:`table` and
:func:`pairs`; :func:`jsonable` turns results into what :mod:`json` writes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

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



#: A probability within this of 1 prints as "1 - q" (:func:`probability`): with 6 significant
#: digits it would keep fewer than three of q, and none once q < 5e-7 (an FNR of "1" beside
#: a TPR of 3e-10). q < 1e-4 is also where :func:`fmt` writes q in exponent notation.
NEAR_ONE = 1e-4


def probability(value: float | None, complement: float | None = None, digits: int = 6) -> str:
    """A probability with ``digits`` significant digits, or, within :data:`NEAR_ONE` of 1,
    as "1 - q" with q = 1 - ``value`` to ``digits`` significant digits (``complement``,
    when given, is q as computed, e.g. the FNR beside a TPR of 1 - FNR), so the digits
    printed are the complement's. 1 itself, None, NaN and values outside [0, 1] are as
    :func:`fmt` writes them.

    >>> probability(0.25), probability(1 - 2.83701e-10), probability(1 - 1e-12, complement=1e-12)
    ('0.25', '1 - 2.83701e-10', '1 - 1e-12')
    >>> probability(0.999826), probability(1.0)
    ('0.999826', '1')
    """
    if value is None:
        return fmt(value, digits)
    v = float(value)
    q = 1.0 - v if complement is None else float(complement)
    if 0.5 <= v <= 1.0 and 0.0 < q < NEAR_ONE:
        return f"1 - {fmt(q, digits)}"
    return fmt(v, digits)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Lines of a right-aligned table with a header line (the header alone for no rows).

    >>> print("\\n".join(table(("a", "b"), [("1", "22")])))
      a   b
      1  22
    """
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    lines = [indent + "  ".join(h.rjust(w) for h, w in zip(headers, widths))]
    lines += [indent + "  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
    return lines


def pairs(items: Sequence[tuple[str, str]], indent: str = "  ") -> list[str]:
    """Lines of ``key  value`` with the keys padded to one width (none for no items).

    >>> print("\\n".join(pairs([("mu", "1.5"), ("regret", "0.001")])))
      mu      1.5
      regret  0.001
    """
    width = max((len(k) for k, _ in items), default=0)
    return [f"{indent}{k.ljust(width)}  {v}" for k, v in items]
