"""Sweep files: a table of DP-SGD configurations read from CSV, JSON (lines or an array) or
YAML, each row parsed and checked (see :mod:`dpax.sweep` for the columns).

Nothing in a file is trusted. Values are parsed as numbers; YAML is read with a safe loader
that also refuses anchors and aliases (``&a`` / ``*a``: nine chained aliases in 440 bytes
expand to gigabytes); a file must be UTF-8 text without control characters (but tab and
the line ends). Limits, each named in the error that
enforces it (raise them by assigning to these module attributes):

* :data:`MAX_CONFIG_BYTES` (64 MiB): the size of the file;
* :data:`MAX_ROWS` (1,000,000): the number of rows;
* :data:`MAX_COLUMNS` (1,000): the number of distinct columns;
* :data:`MAX_FIELD_CHARS` (131,072, the csv module's own limit): the characters of one value.

Column names the results use (:data:`RESERVED_COLUMNS`: ``row``, ``line``, ``mode``,
``status``, ``reason``, and every name starting with ``out_``) cannot be input columns: their
values would be overwritten by the answers.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from typing import Any

from .._engine import validation as _v
from .._engine.grid import DEFAULT_GRID_STEP
from .results import OUTPUT_COLUMNS, _brief
from .rows import Row, _cap, parse_row

#: Largest sweep file read, in bytes.
MAX_CONFIG_BYTES = 64 * 2**20
#: Most rows in a sweep file.
MAX_ROWS = 1_000_000
#: Most distinct columns in a sweep file.
MAX_COLUMNS = 1_000
#: Most characters of one value (a CSV field, a YAML / JSON string).
MAX_FIELD_CHARS = 131_072
#: The prefix of every answer column, and the other columns the results write
#: (:data:`dpax.sweep.results.OUTPUT_COLUMNS`): input columns may not use them.
OUTPUT_PREFIX = "out_"
RESERVED_COLUMNS = tuple(c for c in OUTPUT_COLUMNS if not c.startswith(OUTPUT_PREFIX))
class SweepConfigError(ValueError):
    """A sweep file that cannot be read as a whole, or its malformed rows.

    Raised by :func:`read_config` for a file that is unreadable or breaks a limit of this
    module, and by :func:`dpax.sweep.run_sweep` with ``on_error='reject'`` for malformed rows.
    A ValueError: ``except ValueError`` catches it too.

    Args:
        *args: the message (as for ValueError), naming the file, the line and the reason.

    >>> import os, tempfile
    >>> from dpax.sweep import SweepConfigError, read_config
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "sweep.csv")
    ...     with open(path, "w") as fh:
    ...         _ = fh.write("sample_rate,num_steps,status\\n0.01,100,done\\n")
    ...     try:
    ...         read_config(path)
    ...     except SweepConfigError as exc:
    ...         print(str(exc)[len(path) + 2:])   # the message starts with the file's name
    line 2: the column 'status' is named like a column of the results (row, line, mode, status,
    reason, out_*), whose values would replace it: rename it
    """


def _fmt_of(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext == ".csv":
        return "csv"
    if ext in (".json", ".jsonl", ".ndjson"):
        return "json"
    if ext in (".yaml", ".yml"):
        return "yaml"
    raise ValueError(f"config file must end in .csv, .json, .jsonl, .yaml or .yml, got {path!r}")


def _read_text(path: str) -> str:
    """The file as text: at most :data:`MAX_CONFIG_BYTES` bytes of UTF-8 (a BOM is dropped)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)  # a FIFO or a growing file is bounded too
    except OSError as exc:
        raise SweepConfigError(f"config file {path!r}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise SweepConfigError(f"config file {path!r} is larger than {MAX_CONFIG_BYTES:,} bytes "
                               "(dpax.sweep.config.MAX_CONFIG_BYTES): split it into several sweeps")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SweepConfigError(f"{path}: line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); "
                               "save the file as UTF-8") from None
    control = _CONTROL.search(text)
    if control is not None:  # a UTF-16 file of plain ASCII decodes as UTF-8 with a NUL after every letter
        line = text.count("\n", 0, control.start()) + 1
        raise SweepConfigError(f"{path}: line {line}: control character U+{ord(control.group()):04X} in a text "
                               "table (a binary file, or UTF-16 text?); save the file as UTF-8 text")
    return text


#: Characters a text table never holds: the C0 controls but tab, line feed and carriage return, and DEL.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _read_records(path: str) -> list[tuple[int, object]]:
    """(line, record) pairs; a record is a dict of column -> value (or something malformed)."""
    fmt = _fmt_of(path)
    text = _read_text(path)
    if fmt == "csv":
        records = _csv_records(path, text)
    elif fmt == "json" and path.lower().endswith((".jsonl", ".ndjson")):
        records = _json_lines_records(path, text)
    else:
        records = _yaml_records(path, text)  # JSON arrays too: YAML's safe composer keeps line numbers
    _check_columns(path, records)
    return records


def _too_many_rows(path: str) -> SweepConfigError:
    return SweepConfigError(f"{path}: more than {MAX_ROWS:,} rows (dpax.sweep.config.MAX_ROWS): "
                            "split it into several sweeps")


def _csv_records(path: str, text: str) -> list[tuple[int, object]]:
    """Records of a CSV file: the first non-empty line is the header."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header = None
    out: list[tuple[int, object]] = []
    line = 1
    try:
        for values in reader:
            line = reader.line_num
            if header is None:
                if not any(v.strip() for v in values):
                    continue
                header = [h.strip() for h in values]
                if len(set(header)) != len(header) or "" in header:
                    raise SweepConfigError(f"{path}: line {line}: the header must name every column once, "
                                           f"got {_brief(values)}")
                continue
            if not any(v.strip() for v in values):
                continue
            if len(out) >= MAX_ROWS:
                raise _too_many_rows(path)
            if len(values) != len(header):
                out.append((line, f"has {len(values)} fields, the header has {len(header)}"))
                continue
            out.append((line, {h: v.strip() for h, v in zip(header, values) if v.strip() != ""}))
    except csv.Error as exc:  # a field over the csv module's limit, a NUL byte, ...
        line = reader.line_num or line
        if "field larger than field limit" in str(exc):
            raise SweepConfigError(f"{path}: line {line}: a field is longer than {csv.field_size_limit():,} "
                                   "characters (the csv module's field_size_limit)") from None
        raise SweepConfigError(f"{path}: line {line}: not a valid CSV row ({exc})") from None
    if header is None:
        raise SweepConfigError(f"{path}: empty CSV file (no header)")
    return out


class _DuplicateKey(Exception):
    """A JSON object that gives one key twice (json.loads keeps the last silently)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _mapping_or_reason(item: object) -> object:
    """A record as read, except a string (a row that is a JSON or YAML string): the readers
    give a row's reason as a string, so it becomes the reason it is not a mapping."""
    if isinstance(item, str):
        return f"must be a mapping of column -> value, got str {_brief(item)}"
    return item


def _json_lines_records(path: str, text: str) -> list[tuple[int, object]]:
    """Records of a JSON-lines file, one object a line."""
    out: list[tuple[int, object]] = []
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            if len(out) >= MAX_ROWS:
                raise _too_many_rows(path)
            try:
                out.append((i, _mapping_or_reason(json.loads(line, object_pairs_hook=_unique_keys))))
            except _DuplicateKey as exc:
                out.append((i, f"gives the key {_brief(exc.args[0])} twice: give each column once"))
            except json.JSONDecodeError as exc:
                out.append((i, f"is not valid JSON ({exc.msg})"))
            except RecursionError:
                out.append((i, "is nested too deeply"))
    return out


_LOADER: type[Any] | None = None


def _loader_class() -> type[Any]:
    """A SafeLoader (plain data only: tags that would build Python objects are refused) that
    also refuses anchors and aliases, so no file expands beyond its own size, and a key given
    twice in one mapping (made on first use: PyYAML loads in ~50 ms, only when a YAML / JSON
    file is read)."""
    global _LOADER
    if _LOADER is None:
        import yaml

        class NoAliasSafeLoader(yaml.SafeLoader):
            def compose_node(self, parent: Any, index: Any) -> Any:
                event = self.peek_event()
                if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                    kind = "alias" if isinstance(event, yaml.AliasEvent) else "anchor"
                    raise yaml.composer.ComposerError(
                        None, None, f"found the YAML {kind} {_brief(event.anchor)}: anchors and aliases are not "
                        "allowed in a sweep file (use 'defaults' for values shared by rows)", event.start_mark)
                return super().compose_node(parent, index)

            def construct_mapping(self, node: Any, deep: bool = False) -> Any:
                first: dict[str, int] = {}
                for key, _ in node.value:  # a column given twice: which one the row means is not known
                    if isinstance(key, yaml.ScalarNode):
                        if key.value in first:
                            raise yaml.constructor.ConstructorError(
                                None, None, f"found the key {_brief(key.value)} twice in one mapping (first on line "
                                f"{first[key.value] + 1}): give each column once", key.start_mark)
                        first[key.value] = key.start_mark.line
                return super().construct_mapping(node, deep=deep)

        _LOADER = NoAliasSafeLoader
    return _LOADER


def _yaml_message(exc: Exception) -> str:
    """'line L, column C: problem' of a PyYAML error, without its multi-line excerpt of the file."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + _cap(str(problem), 200)


def _yaml_records(path: str, text: str) -> list[tuple[int, object]]:
    """Records of a YAML (or JSON array) file: a list of rows, or a mapping with 'rows' and
    optional 'defaults'. Parsed with a safe loader that builds no Python objects and refuses
    anchors and aliases."""
    import yaml

    loader = _loader_class()(text)
    try:
        node = loader.get_single_node()
        if isinstance(node, yaml.MappingNode):  # {"rows": [...]} / {"defaults": {...}, "rows": [...]}
            found = [v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == "rows"]
            rows_node = found[-1] if found else None  # (a repeated key is refused when the document is built)
            if rows_node is None:
                raise SweepConfigError(f"{path}: a mapping at the top level needs a 'rows' list")
            if not isinstance(rows_node, yaml.SequenceNode):
                raise SweepConfigError(f"{path}: line {rows_node.start_mark.line + 1}: 'rows' must be a list of "
                                       f"rows, got {_node_kind(rows_node)}")
        elif isinstance(node, yaml.SequenceNode):
            rows_node = node
        else:
            raise SweepConfigError(f"{path}: expected a list of rows (or a mapping with 'rows')")
        if len(rows_node.value) > MAX_ROWS:
            raise _too_many_rows(path)
        doc = loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise SweepConfigError(f"{path}: cannot parse: {_yaml_message(exc)}") from None
    except RecursionError:
        raise SweepConfigError(f"{path}: cannot parse: nested too deeply") from None
    finally:
        loader.dispose()
    if isinstance(doc, dict):
        defaults = doc.get("defaults") or {}
        if not isinstance(defaults, dict):
            raise SweepConfigError(f"{path}: 'defaults' must be a mapping")
        items = doc["rows"]
    else:
        defaults, items = {}, doc
    lines = [n.start_mark.line + 1 for n in rows_node.value]
    out = []
    for line, item in zip(lines, items):
        out.append((line, {**defaults, **item} if isinstance(item, dict) else _mapping_or_reason(item)))
    return out


def _node_kind(node: Any) -> str:
    import yaml

    if isinstance(node, yaml.ScalarNode):
        return f"the value {_brief(node.value)}"
    return "a mapping" if isinstance(node, yaml.MappingNode) else "something else"


def _check_columns(path: str, records: list[tuple[int, object]]) -> None:
    """File-wide checks of the columns: none reserved for the answers, not too many, no value
    longer than :data:`MAX_FIELD_CHARS`."""
    seen: dict[str, int] = {}
    for line, rec in records:
        if not isinstance(rec, dict):
            continue
        for key, value in rec.items():
            name = str(key)
            if name not in seen:
                if name in RESERVED_COLUMNS or name.startswith(OUTPUT_PREFIX):
                    raise SweepConfigError(
                        f"{path}: line {line}: the column {_brief(name)} is named like a column of the results "
                        f"({', '.join(RESERVED_COLUMNS)}, {OUTPUT_PREFIX}*), whose values would replace it: "
                        "rename it")
                if len(seen) >= MAX_COLUMNS:
                    raise SweepConfigError(f"{path}: line {line}: more than {MAX_COLUMNS:,} distinct columns "
                                           "(dpax.sweep.config.MAX_COLUMNS)")
                if len(name) > MAX_FIELD_CHARS:
                    raise SweepConfigError(f"{path}: line {line}: a column name is longer than {MAX_FIELD_CHARS:,} "
                                           "characters (dpax.sweep.config.MAX_FIELD_CHARS)")
                seen[name] = line
            if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
                raise SweepConfigError(f"{path}: line {line}: the value of {_brief(name)} is longer than "
                                       f"{MAX_FIELD_CHARS:,} characters (dpax.sweep.config.MAX_FIELD_CHARS)")


def read_config(path: str, *, grid_step: float = DEFAULT_GRID_STEP) -> list[Row]:
    """Every row of a sweep file, parsed and checked (bad rows carry ``error``; see :func:`parse_row`).

    A CSV file's first non-empty line is its header; a JSON-lines file holds one object a
    line; a YAML or JSON file holds a list of rows or a mapping with ``rows`` and optional
    ``defaults`` (values shared by the rows).

    Args:
        path: the sweep file (.csv, .json, .jsonl, .ndjson, .yaml or .yml).
        grid_step: the grid step of rows without ``grid_step``, in [1e-7, 1].

    Returns:
        One :class:`Row` per row of the file, in file order (row numbers from 1).

    Raises:
        SweepConfigError: the file as a whole is unreadable or breaks a limit of this module
            (its size, rows, columns, a YAML anchor or alias, a column named like an
            answer); the message names the file, the line and the limit.
        ValueError: ``path`` does not exist or has another extension, or ``grid_step`` is
            out of range.

    >>> import os, tempfile
    >>> from dpax.sweep import read_config
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "sweep.csv")
    ...     with open(path, "w") as fh:
    ...         _ = fh.write("noise_multiplier,sample_rate,num_steps\\n1.0,0.01,100\\n,0.01,100\\n")
    ...     rows = read_config(path, grid_step=1e-3)
    >>> [(r.row, r.line, r.mode, bool(r.error)) for r in rows]
    [(1, 2, 'analyse', False), (2, 3, 'calibrate', True)]
    """
    step = _v.grid_step(grid_step)
    if not os.path.exists(path):
        raise ValueError(f"config file {path!r} does not exist")
    return [parse_row(i, line, rec, step) for i, (line, rec) in enumerate(_read_records(path), 1)]

