"""One row of a sweep file: its columns read as numbers and checked (:func:`parse_row`), and
the target it asks for (:func:`make_target`). :mod:`.config` reads the file.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from .. import targets as T
from .._engine import validation as _v
from .results import _brief

#: Columns dpax reads; any other column is carried to the results untouched.
NUMERIC_COLUMNS = ("noise_multiplier", "sample_rate", "num_steps", "grid_step", "alpha", "beta", "advantage",
                   "epsilon", "delta", "mu")
KNOWN_COLUMNS = NUMERIC_COLUMNS + ("mechanism", "name", "id")

#: Longest error of one row (kept in the results' ``reason`` column).
MAX_ERROR_CHARS = 300

def _cap(message: str, limit: int = MAX_ERROR_CHARS) -> str:
    return message if len(message) <= limit else message[: limit - 4] + " ..."


@dataclasses.dataclass
class Row:
    """One configuration of a sweep file, as :func:`parse_row` reads it.

    Args:
        row: the 1-based row number (the resume key).
        line: the file line the row starts on.
        raw: the values as read (column -> value; empty values left out), carried to the
            results.
        params: the parsed numeric parameters (column -> float; ``num_steps`` an int,
            ``grid_step`` always present); empty for a malformed row (default).
        error: why the row is malformed ('' for a well-formed row, the default).

    >>> from dpax.sweep import parse_row
    >>> r = parse_row(1, 2, {"noise_multiplier": "1.0", "sample_rate": "0.01", "num_steps": "100"}, 1e-3)
    >>> r.row, r.line, r.mode, r.params
    (1, 2, 'analyse', {'noise_multiplier': 1.0, 'sample_rate': 0.01, 'num_steps': 100, 'grid_step': 0.001})
    """

    row: int
    line: int
    raw: dict[str, object]
    params: dict[str, float] = dataclasses.field(default_factory=dict)
    error: str = ""

    @property
    def mode(self) -> str:
        """'analyse' for a row with ``noise_multiplier``, else 'calibrate'.

        >>> from dpax.sweep import parse_row
        >>> parse_row(1, 2, {"sample_rate": 0.01, "num_steps": 100, "advantage": 0.1}, 1e-3).mode
        'calibrate'
        """
        return "analyse" if "noise_multiplier" in self.params else "calibrate"

    def batch_key(self) -> tuple[float, str, tuple[str, ...]]:
        """The key of the rows that can share one batched call (a well-formed row only).

        Returns:
            ``(grid_step, mode, target kinds)``; the target kinds (:meth:`target_kinds`) only
            for a row to calibrate, ``()`` for one to analyse.

        Raises:
            KeyError: a malformed row (no ``grid_step`` in ``params``).

        >>> from dpax.sweep import parse_row
        >>> parse_row(1, 2, {"sample_rate": 0.01, "num_steps": 100, "advantage": 0.1}, 1e-3).batch_key()
        (0.001, 'calibrate', ('advantage',))
        """
        return (self.params["grid_step"], self.mode, self.target_kinds() if self.mode == "calibrate" else ())

    def target_kinds(self) -> tuple[str, ...]:
        """The kinds of target the row carries, in a fixed order.

        Returns:
            A tuple of 'err_rates' (``beta``), 'advantage', 'epsilon' and 'gdp' (``mu``),
            those the row has.

        >>> from dpax.sweep import parse_row
        >>> parse_row(1, 2, {"sample_rate": 0.01, "num_steps": 100, "mu": 1.0, "alpha": 0.1, "beta": 0.5},
        ...           1e-3).target_kinds()
        ('err_rates', 'gdp')
        """
        p = self.params
        kinds = []
        if "beta" in p:
            kinds.append("err_rates")
        if "advantage" in p:
            kinds.append("advantage")
        if "epsilon" in p:
            kinds.append("epsilon")
        if "mu" in p:
            kinds.append("gdp")
        return tuple(kinds)


def _number(name: str, value: object) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"{name} must be a number, got {_brief(value)}") from None
    raise ValueError(f"{name} must be a number, got {type(value).__name__} {_brief(value)}")


def _whole_count(name: str, value: object) -> None:
    """Refuse a whole number above 2**53 as written (an int, or its digits), before it is read
    as a float64, where 2**53 + 1 rounds to 2**53 and would pass the range check.

    >>> _whole_count("num_steps", "9007199254740993")
    Traceback (most recent call last):
    ...
    ValueError: num_steps must be at most 2**53 (9,007,199,254,740,992), got 9007199254740993
    """
    text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    digits = text[1:] if text[:1] == "+" else text
    if digits.isdigit() and len(digits) < 400 and int(digits) > 2**53:
        raise ValueError(f"{name} must be at most 2**53 ({2**53:,}), got {digits}")


def _plain(value: object) -> object:
    """A value carried to the results as it is if JSON can hold it, else as its text (a YAML
    date, binary data, a NaN inside a list)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return str(value)
    return value


def parse_row(row: int, line: int, record: object, default_grid_step: float) -> Row:
    """Parse and check one record of a sweep file.

    Numbers must be in range (``sample_rate`` in (0, 1], ``num_steps`` a whole number >= 1,
    probabilities in [0, 1], ...), ``mechanism`` (if given) 'dpsgd', ``beta`` needs ``alpha``
    and ``epsilon`` needs ``delta``, and a row without ``noise_multiplier`` (to calibrate)
    needs a target that :func:`make_target` accepts. A problem is kept in ``Row.error``
    instead of raised.

    Args:
        row: the row's 1-based number.
        line: the file line the row starts on.
        record: the row as read: a dict of column -> value (numbers or their text), or the
            reason the reader could not read it (a string) or anything else (malformed).
        default_grid_step: the grid step of a row without ``grid_step``.

    Returns:
        The :class:`Row`; ``error`` says why a row is malformed ('' if it is not).

    >>> from dpax.sweep import parse_row
    >>> print(parse_row(3, 4, {"sample_rate": 0.01, "num_steps": 100}, 1e-3).error)
    a row without noise_multiplier is calibrated and needs a target: alpha and beta,
    advantage, epsilon and delta, or mu
    >>> parse_row(3, 4, {"sample_rate": 2, "num_steps": 100, "mu": 1}, 1e-3).error
    'sample_rate must lie in (0, 1], got 2'
    """
    if not isinstance(record, dict):
        msg = record if isinstance(record, str) else (f"must be a mapping of column -> value, got "
                                                      f"{type(record).__name__} {_brief(record)}")
        return Row(row, line, {}, error=_cap(msg))
    raw = {str(k): _plain(v) for k, v in record.items() if v is not None and v != ""}
    r = Row(row, line, raw)
    try:
        _whole_count("num_steps", raw.get("num_steps"))
        p = {k: _number(k, raw[k]) for k in NUMERIC_COLUMNS if k in raw}
        mech = str(raw.get("mechanism", "dpsgd")).strip().lower()
        if mech not in ("dpsgd", "dp-sgd", "dp_sgd"):
            raise ValueError(f"mechanism must be 'dpsgd' (the only one a sweep runs), got {_brief(raw['mechanism'])}")
        for k in ("sample_rate", "num_steps"):
            if k not in p:
                raise ValueError(f"missing {k}")
        _v.real_array("sample_rate", p["sample_rate"], low=0.0, high=1.0, low_open=True)
        p["num_steps"] = _v.one_integer("num_steps", p["num_steps"])
        p["grid_step"] = _v.grid_step(p.get("grid_step", default_grid_step))
        if "noise_multiplier" in p:
            _v.real_array("noise_multiplier", p["noise_multiplier"], low=0.0, low_open=True)
        for k in ("alpha", "beta", "advantage", "delta"):
            if k in p:
                _v.probabilities(k, p[k])
        if "epsilon" in p:
            _v.real_array("epsilon", p["epsilon"], low=0.0)
        if "mu" in p:
            _v.real_array("mu", p["mu"], low=0.0, low_open=True)
        if "beta" in p and "alpha" not in p:
            raise ValueError("beta needs alpha (the target is: FNR >= beta at FPR alpha)")
        if "epsilon" in p and "delta" not in p:
            raise ValueError("epsilon needs delta")
        if "noise_multiplier" not in p:
            if not _kinds(p):
                raise ValueError("a row without noise_multiplier is calibrated and needs a target: alpha and beta, "
                                 "advantage, epsilon and delta, or mu")
            make_target([p])  # target-specific checks (alpha + beta < 1, ...)
    except (ValueError, TypeError) as exc:
        r.error = _cap(str(exc))
        return r
    r.params = p
    return r


def _kinds(p: dict[str, float]) -> tuple[str, ...]:
    return Row(0, 0, {}, p).target_kinds()


def make_target(params: list[dict[str, float]]) -> T.Target:
    """The calibration target of rows that share their target kinds.

    Args:
        params: one dict of parsed parameters per row (:attr:`Row.params`), all with the
            target kinds of the first (:meth:`Row.target_kinds`).

    Returns:
        :class:`dpax.targets.ErrRates`, ``Advantage``, ``Epsilon`` or ``GDP`` with one entry
        per row, or ``All`` of several.

    Raises:
        ValueError: a target value outside its range (e.g. alpha + beta >= 1).
        KeyError: a row lacks a column of the first row's targets.
        IndexError: ``params`` is empty or the first row has no target.

    >>> from dpax.sweep import make_target
    >>> make_target([{"advantage": 0.1}, {"advantage": 0.2}])
    Advantage(advantage=array([0.1, 0.2]))
    """
    col = lambda k: np.array([p[k] for p in params], float)
    parts: list[T.Target] = []
    kinds = _kinds(params[0])
    if "err_rates" in kinds:
        parts.append(T.ErrRates(alpha=col("alpha"), beta=col("beta")))
    if "advantage" in kinds:
        parts.append(T.Advantage(col("advantage")))
    if "epsilon" in kinds:
        parts.append(T.Epsilon(col("epsilon"), col("delta")))
    if "gdp" in kinds:
        parts.append(T.GDP(col("mu")))
    return parts[0] if len(parts) == 1 else T.All(*parts)
