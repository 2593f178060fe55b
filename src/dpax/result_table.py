"""A calibration result as a table: one row per configuration, as text, records, CSV or a
pandas DataFrame.

:class:`dpax.CalibrationResult`'s ``table``, ``to_records``, ``to_csv`` and ``to_dataframe``
call the functions here. Rows follow the result's broadcast shape in C order (the order of
``numpy.ndindex``); each row holds

* ``sample_rate``, ``num_steps``: the configuration, where the result records it
  (:func:`dpax.calibrate_dpsgd`'s results do; :func:`dpax.calibrate`'s do not, and their rows
  are known by their order);
* ``target``: the row's target in words (``advantage <= 0.1``, ``FNR >= 0.5 at FPR 0.1``;
  several targets joined by ``and``) and its numbers, ``target_<field>`` (``target_alpha``,
  ``target_beta``, ...; a field two targets of a list share is ``target_<kind>_<field>``);
* ``noise_multiplier``, ``standard_noise_multiplier``, ``noise_reduction`` (1 - noise /
  standard noise), ``standard_epsilon`` and ``delta`` (NaN where the standard comparison was
  not run), ``achieved_<risk>`` (``achieved_beta``, ``achieved_advantage``,
  ``achieved_epsilon``), ``noise_multiplier_optimistic`` (with ``accuracy``: the lower end
  of the noise interval), ``status``, ``reason`` and ``grid_step``.

The text table shows the columns a reader compares (sample rate, steps, target, noise,
standard noise, noise reduction in percent, status). The module reads the result's fields
only; it imports nothing above :mod:`dpax.targets`.

>>> import dpax
>>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
...                          grid_step=1e-2, compare_standard=False)
>>> print(r.table())
  sample rate  steps            target     noise  standard noise  reduction      status
          0.1     10  advantage <= 0.3  0.537708               -          -  calibrated
>>> r.to_records()[0]["target_advantage"], r.to_records()[0]["status"]
(0.3, 'calibrated')
"""

from __future__ import annotations

import csv
import io
import math
import os
from typing import IO, Any, Protocol

import numpy as np

from . import targets as _targets
from ._engine import validation as _v
from ._text import fmt, table


class _ResultFields(Protocol):
    """The fields of :class:`dpax.CalibrationResult` this module reads (it reads nothing else,
    and does not import :mod:`dpax.calibration`, which imports it); ``sample_rate``,
    ``num_steps`` and ``noise_interval`` are read where the result has them."""

    @property
    def noise_multiplier(self) -> object: ...
    @property
    def standard_noise_multiplier(self) -> object: ...
    @property
    def noise_reduction(self) -> object: ...
    @property
    def standard_epsilon(self) -> object: ...
    @property
    def delta(self) -> object: ...
    @property
    def achieved(self) -> dict[str, Any] | None: ...
    @property
    def status(self) -> object: ...
    @property
    def reason(self) -> object: ...
    @property
    def target(self) -> _targets.Target: ...
    @property
    def grid_step(self) -> float: ...


#: The columns of the text table: (heading, record key).
TEXT_COLUMNS = (("sample rate", "sample_rate"), ("steps", "num_steps"), ("target", "target"),
                ("noise", "noise_multiplier"), ("standard noise", "standard_noise_multiplier"),
                ("reduction", "noise_reduction"), ("status", "status"))


def _flat(value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A field of the result as one entry per row."""
    return np.broadcast_to(np.asarray(value), shape).reshape(-1)


def _parts(target: _targets.Target) -> tuple[_targets.Target, ...]:
    return target.parts if isinstance(target, _targets.All) else (target,)


def _fields(part: _targets.Target) -> tuple[str, ...]:
    return tuple(getattr(part, "__dataclass_fields__", {}))


def _describe_part(part: _targets.Target, i: int) -> str:
    """Row ``i`` of a flat target part, in words."""
    v = {f: fmt(np.asarray(getattr(part, f)).reshape(-1)[i]) for f in _fields(part)}
    if isinstance(part, _targets.ErrRates):
        return f"FNR >= {v['beta']} at FPR {v['alpha']}"
    if isinstance(part, _targets.Advantage):
        return f"advantage <= {v['advantage']}"
    if isinstance(part, _targets.Epsilon):
        return f"({v['epsilon']}, {v['delta']})-DP"
    if isinstance(part, _targets.Accuracy):
        return f"accuracy <= {v['accuracy']} at FPR {v['alpha']}"
    if isinstance(part, _targets.PPV):
        return f"PPV <= {v['ppv']} at FPR {v['alpha']}"
    if isinstance(part, _targets.Reconstruction):
        return f"success <= {v['success']} at baseline {v['baseline']}"
    if isinstance(part, _targets.GDP):
        return f"{v['mu']}-GDP"
    return f"{type(part).__name__}({', '.join(f'{k}={x}' for k, x in v.items())})"


def describe_targets(target: _targets.Target | list[_targets.Target] | tuple[_targets.Target, ...],
                     shape: tuple[int, ...]) -> list[str]:
    """Each row's target in words (several targets joined by ``and``).

    Args:
        target: a :mod:`dpax.targets` target, or a list / tuple of them (all must be met);
            their fields broadcast to ``shape``.
        shape: the batch shape of the configurations.

    Returns:
        One string per row, in C order.

    Raises:
        TypeError: ``target`` is not a target or a list / tuple of them.
        ValueError: a target's fields do not broadcast to ``shape``.

    >>> from dpax.targets import Advantage, ErrRates
    >>> describe_targets([ErrRates(0.1, [0.5, 0.6]), Advantage(0.2)], (2,))
    ['FNR >= 0.5 at FPR 0.1 and advantage <= 0.2', 'FNR >= 0.6 at FPR 0.1 and advantage <= 0.2']
    """
    flat = _targets.as_target(target).flat(shape)
    n = int(np.prod(shape, dtype=int))
    return [" and ".join(_describe_part(p, i) for p in _parts(flat)) for i in range(n)]


def _target_columns(target: _targets.Target, shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    """``target_<field>`` -> one value per row, for every field of every part."""
    out: dict[str, np.ndarray] = {}
    for part in _parts(_targets.as_target(target).flat(shape)):
        for f in _fields(part):
            name = f"target_{f}"
            if name in out:
                name = f"target_{type(part).__name__.lower()}_{f}"
            base, k = name, 2
            while name in out:
                name, k = f"{base}_{k}", k + 1
            out[name] = np.asarray(getattr(part, f), dtype=float).reshape(-1)
    return out


def _plain(value: Any) -> Any:
    """A NumPy scalar as a Python one."""
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return float(value)
    if isinstance(value, np.str_):
        return str(value)
    return value


def columns(result: _ResultFields) -> dict[str, np.ndarray]:
    """The result's columns: name -> one value per row (see the module docstring for the names).

    Args:
        result: a :class:`dpax.CalibrationResult`.

    Returns:
        A dict of 1-D arrays of equal length, in column order.

    >>> import dpax
    >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
    ...                          grid_step=1e-2, compare_standard=False)
    >>> list(columns(r))[:5]
    ['sample_rate', 'num_steps', 'target', 'target_advantage', 'noise_multiplier']
    """
    shape = np.shape(np.asarray(result.noise_multiplier))
    n = int(np.prod(shape, dtype=int))
    cols: dict[str, np.ndarray] = {}
    sample_rate, num_steps = getattr(result, "sample_rate", None), getattr(result, "num_steps", None)
    if sample_rate is not None and num_steps is not None:
        cols["sample_rate"] = _flat(sample_rate, shape).astype(float)
        cols["num_steps"] = _flat(num_steps, shape).astype(np.int64)
    cols["target"] = np.array(describe_targets(result.target, shape), dtype=object)
    cols.update(_target_columns(result.target, shape))
    cols["noise_multiplier"] = _flat(result.noise_multiplier, shape).astype(float)
    cols["standard_noise_multiplier"] = _flat(result.standard_noise_multiplier, shape).astype(float)
    with np.errstate(all="ignore"):
        cols["noise_reduction"] = _flat(result.noise_reduction, shape).astype(float)
    cols["standard_epsilon"] = _flat(result.standard_epsilon, shape).astype(float)
    cols["delta"] = _flat(result.delta, shape).astype(float)
    for k, v in (result.achieved or {}).items():
        cols[f"achieved_{k}"] = _flat(v, shape).astype(float)
    interval = getattr(result, "noise_interval", None)
    if interval is not None:
        cols["noise_multiplier_optimistic"] = _flat(interval.optimistic, shape).astype(float)
    cols["status"] = _flat(result.status, shape).astype(str).astype(object)
    cols["reason"] = _flat(result.reason, shape).astype(str).astype(object)
    cols["grid_step"] = np.full(n, float(result.grid_step))
    return cols


def records(result: _ResultFields) -> list[dict[str, Any]]:
    """One dict per row (Python floats, ints and strings; NaN where a value was not computed).

    Args:
        result: a :class:`dpax.CalibrationResult`.

    Returns:
        A list of dicts with the keys of :func:`columns`, in C order of the result's shape.

    >>> import dpax
    >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
    ...                          grid_step=1e-2, compare_standard=False)
    >>> rec = records(r)[0]
    >>> rec["sample_rate"], rec["num_steps"], rec["target_advantage"], round(rec["noise_multiplier"], 3)
    (0.1, 10, 0.3, 0.538)
    """
    cols = columns(result)
    n = len(next(iter(cols.values())))
    return [{k: _plain(v[i]) for k, v in cols.items()} for i in range(n)]


def _reduction(value: float | None) -> str:
    return "-" if value is None or math.isnan(float(value)) else f"{100 * float(value):.1f}%"


def text(result: _ResultFields, max_rows: int | None = None) -> str:
    """The result as an aligned text table: sample rate, steps (where the result records
    them), target, noise, standard noise, noise reduction and status, one line per row.

    Args:
        result: a :class:`dpax.CalibrationResult`.
        max_rows: show at most this many rows, then a line saying how many more there are
            (None: every row); an integer >= 1.

    Returns:
        The table as one string (no trailing newline).

    Raises:
        ValueError, TypeError: ``max_rows`` not an integer >= 1.

    >>> import dpax
    >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
    ...                          grid_step=1e-2, compare_standard=False)
    >>> print(text(r))
      sample rate  steps            target     noise  standard noise  reduction      status
              0.1     10  advantage <= 0.3  0.537708               -          -  calibrated
    """
    return records_text(records(result), max_rows)


def records_text(recs: list[dict[str, Any]], max_rows: int | None = None) -> str:
    """:func:`text` of a result's :func:`records` (as the JSON output of ``dpax plot
    calibration`` holds them; a record's number may be None there, for NaN).

    Args:
        recs: the records, each with the keys of :func:`columns`.
        max_rows: show at most this many rows (None: all), an integer >= 1.

    Returns:
        The table as one string.

    Raises:
        ValueError, TypeError: ``max_rows`` not an integer >= 1.
        KeyError: a record lacks a column the first record has.

    >>> print(records_text([{"target": "advantage <= 0.3", "noise_multiplier": 0.5377,
    ...                      "standard_noise_multiplier": 2.37, "noise_reduction": 0.773, "status": "calibrated"}]))
                target   noise  standard noise  reduction      status
      advantage <= 0.3  0.5377            2.37      77.3%  calibrated
    """
    if max_rows is not None:
        max_rows = _v.one_integer("max_rows", max_rows, minimum=1)
    n = len(recs)
    shown = n if max_rows is None else min(n, max_rows)
    heads = [(h, k) for h, k in TEXT_COLUMNS if not recs or k in recs[0]]
    rows = []
    for rec in recs[:shown]:
        row = []
        for _, k in heads:
            v = rec[k]
            row.append(_reduction(v) if k == "noise_reduction" else f"{v:,}" if k == "num_steps" else fmt(v))
        rows.append(row)
    lines = table([h for h, _ in heads], rows)
    if shown < n:
        lines.append(f"  ... {n - shown} more row(s) of {n} (table(max_rows=None) shows all)")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    """A CSV cell: floats as their shortest exact repr, NaN as an empty cell, +-inf as inf / -inf."""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    return str(value)


def write_csv(result: _ResultFields, path_or_file: str | os.PathLike[str] | IO[str] | None = None) -> str | None:
    """Write the result's :func:`records` as CSV with a header line.

    Args:
        result: a :class:`dpax.CalibrationResult`.
        path_or_file: a file name (written as UTF-8, replaced if it exists), an open text
            file (written at its position), or None.

    Returns:
        The CSV text when ``path_or_file`` is None, else None.

    Raises:
        TypeError: ``path_or_file`` is neither a file name, an object with ``write`` nor None.
        OSError: the file cannot be written.

    >>> import dpax
    >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
    ...                          grid_step=1e-2, compare_standard=False)
    >>> write_csv(r).splitlines()[0]
    'sample_rate,num_steps,target,target_advantage,noise_multiplier,standard_noise_multiplier,noise_reduction,standard_epsilon,delta,achieved_advantage,achieved_epsilon,status,reason,grid_step'
    """
    recs = records(result)
    header = list(columns(result)) if not recs else list(recs[0])
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for rec in recs:
        w.writerow([_cell(rec[k]) for k in header])
    data = buf.getvalue()
    if path_or_file is None:
        return data
    if isinstance(path_or_file, (str, os.PathLike)):
        with open(path_or_file, "w", newline="", encoding="utf-8") as fh:
            fh.write(data)
        return None
    if not callable(getattr(path_or_file, "write", None)):
        raise TypeError(f"path_or_file must be a file name, an open text file or None, got "
                        f"{type(path_or_file).__name__}")
    path_or_file.write(data)
    return None


def dataframe(result: _ResultFields) -> Any:  # a pandas.DataFrame: dpax does not depend on pandas
    """The result's :func:`records` as a pandas DataFrame (pandas is imported here; dpax does
    not depend on it).

    Args:
        result: a :class:`dpax.CalibrationResult`.

    Returns:
        A ``pandas.DataFrame`` with one row per configuration and the columns of
        :func:`columns`.

    Raises:
        ImportError: pandas is not installed (``to_records()`` and ``to_csv()`` need nothing).

    >>> import dpax
    >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
    ...                          grid_step=1e-2, compare_standard=False)
    >>> try:
    ...     frame = dataframe(r)
    ... except ImportError:       # pandas is optional: this runs with or without it
    ...     frame = None
    >>> frame is None or (frame.shape, frame["status"][0]) == ((1, 14), "calibrated")
    True
    """
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("CalibrationResult.to_dataframe() needs pandas, which dpax does not depend on: "
                          "pip install pandas (or use to_records() or to_csv(), which need nothing)") from None
    return pd.DataFrame.from_records(records(result), columns=list(columns(result)))
