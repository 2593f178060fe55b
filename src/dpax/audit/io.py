r"""Reading per-example losses from .npy, .npz, .csv or .parquet files (for ``dpax epsilon-star``).

Every problem is a ``ValueError`` naming the file: missing file, unknown extension, no or
several candidate arrays / columns without ``column``, a column that is not there, an array
that is not one-dimensional, no values, booleans, or NaN / infinite / non-numeric values (with their
count and first position). Reading .parquet needs the optional package ``pyarrow``.

>>> import os, tempfile
>>> from dpax.audit import read_losses
>>> path = os.path.join(tempfile.mkdtemp(), "losses.csv")
>>> with open(path, "w") as fh:
...     _ = fh.write("loss\n0.5\n1.25\n")
>>> read_losses(path)
array([0.5 , 1.25])
"""

from __future__ import annotations

import csv
import os

import numpy as np

from .._engine import validation as _v

__all__ = ["read_losses", "FORMATS"]

FORMATS = (".npy", ".npz", ".csv", ".parquet")


def _pick(path: str, names: list[str], column: str | int | None, what: str) -> str:
    if column is not None:
        if str(column) not in names:
            raise ValueError(f"{path}: no {what} {_v.brief(column)}; "
                             f"it has {_v.brief(names, 200) if names else 'none'}")
        return str(column)
    if len(names) == 1:
        return names[0]
    if not names:
        raise ValueError(f"{path}: holds no {what}s (no losses)")
    raise ValueError(f"{path}: holds several {what}s ({_v.brief(names, 200)}); choose one with --column")


def _read_csv(path: str, column: str | int | None) -> np.ndarray:
    with open(path, newline="") as fh:
        rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
    if not rows:
        raise ValueError(f"{path}: is empty (no losses)")

    def numeric(cell: str) -> bool:
        try:
            float(cell)
            return True
        except ValueError:
            return False

    header = None if all(numeric(c) for c in rows[0]) else [c.strip() for c in rows[0]]
    body = rows[1:] if header is not None else rows
    width = len(rows[0])
    if header is not None:
        col = header.index(_pick(path, header, column, "column"))
    elif column is not None:
        try:
            col = int(column)
        except ValueError:
            raise ValueError(f"{path}: has no header row, so --column must be a 0-based index, "
                             f"got {_v.brief(column)}") from None
        if not 0 <= col < width:
            raise ValueError(f"{path}: column index {col} outside 0..{width - 1}")
    elif width == 1:
        col = 0
    else:
        raise ValueError(f"{path}: has {width} columns; choose one with --column")
    values = np.empty(len(body))
    for i, r in enumerate(body):
        if len(r) != width:
            raise ValueError(f"{path}: row {i + 1 + (header is not None)} has {len(r)} fields, expected {width}")
        cell = r[col].strip()
        try:
            values[i] = float(cell) if cell else np.nan
        except ValueError:
            raise ValueError(f"{path}: row {i + 1 + (header is not None)}: not a number: {_v.brief(cell)}") from None
    return values


def _read_parquet(path: str, column: str | int | None) -> np.ndarray:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError(f"{path}: reading .parquet files needs the optional package pyarrow "
                         "(pip install pyarrow)") from None
    schema = pq.read_schema(path)
    name = _pick(path, list(schema.names), column, "column")
    col = pq.read_table(path, columns=[name]).column(name)
    try:
        return np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{path}: column {_v.brief(name)} is not numeric ({col.type})") from None


def _reason(exc: BaseException, limit: int = 200) -> str:
    """An exception's text on one line, at most ``limit`` characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 4] + " ..."


def read_losses(path: str | os.PathLike[str], column: str | int | None = None) -> np.ndarray:
    """One-dimensional float64 array of losses from ``path`` (.npy, .npz, .csv or .parquet).

    A missing value in a .csv or a null in a .parquet counts as non-finite.

    Args:
        path: the file; its extension picks the format (:data:`FORMATS`).
        column: the array of an .npz, the column of a .parquet, or the column (header name,
            or 0-based index when there is no header) of a .csv; may be omitted when there
            is only one.

    Returns:
        The losses, a 1-D float64 array of finite values.

    Raises:
        ValueError: any problem with the file, naming it (see the module docstring).

    >>> import os, tempfile
    >>> import numpy as np
    >>> from dpax.audit import read_losses
    >>> path = os.path.join(tempfile.mkdtemp(), "losses.npz")
    >>> np.savez(path, train=[0.1, 0.2], test=[0.3, 0.4])
    >>> read_losses(path, column="test")
    array([0.3, 0.4])
    """
    try:
        path = os.fspath(path)
    except TypeError:
        raise TypeError(f"path must be a file name (str or os.PathLike), got {type(path).__name__}") from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if column is not None and (isinstance(column, bool) or not isinstance(column, (str, int))):
        raise TypeError(f"{path}: column must be a name (str), a 0-based index (int) or None, "
                        f"got {type(column).__name__}")
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise ValueError(f"{path}: unknown loss file type {ext or '(none)'!r}; use one of {', '.join(FORMATS)}")
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    if ext == ".npy" and column is not None:
        raise ValueError(f"{path}: a .npy file holds one array, so column {_v.brief(column)} does not apply "
                         "(name an array of an .npz, or a column of a .csv / .parquet)")
    try:
        if ext == ".npy":
            arr = np.load(path, allow_pickle=False)
        elif ext == ".npz":
            with np.load(path, allow_pickle=False) as z:
                arr = z[_pick(path, list(z.files), column, "array")]
        elif ext == ".csv":
            arr = _read_csv(path, column)
        else:
            arr = _read_parquet(path, column)
    except ValueError as exc:
        if str(exc).startswith(f"{path}: "):  # ours: it names the file already
            raise
        if "allow_pickle" in str(exc):  # NumPy's advice to unpickle an unknown file: never taken
            raise ValueError(f"{path}: cannot read losses: not a NumPy array of numbers (objects are not read: "
                             "dpax never unpickles a file)") from exc
        raise ValueError(f"{path}: cannot read losses: {_reason(exc)}") from exc  # NumPy's, pyarrow's, ...
    except Exception as exc:  # unreadable / corrupt file
        raise ValueError(f"{path}: cannot read losses: {_reason(exc)}") from exc
    if arr.dtype.kind == "b":  # as dpax.audit.epsilon_star refuses them: a mask is not a loss
        raise ValueError(f"{path}: losses must be numbers, not booleans (dtype bool)")
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{path}: losses must be numbers, got dtype {arr.dtype}")
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"{path}: losses must be a 1-D array, got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if arr.size == 0:
        raise ValueError(f"{path}: holds no losses (empty)")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{path}: {int(bad.sum())} of {arr.size} losses are NaN or infinite "
                         f"(first at position {int(np.flatnonzero(bad)[0])})")
    return arr
