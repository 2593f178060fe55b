"""Helpers of the sweep tests (tests/sweep/): writing a config file, reading a results CSV, and
the lines of a results file's bytes."""

from __future__ import annotations

import csv


def write_file(path, text):
    """Write ``text`` to ``path``; returns the path as a string."""
    path.write_text(text)
    return str(path)


def read_csv_rows(path):
    """The rows of the CSV file ``path``, as dicts."""
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def file_lines(data: bytes) -> list[str]:
    """The lines of a file's bytes, each without its newline (the last line ends in one)."""
    return data.decode().split("\n")[:-1]
