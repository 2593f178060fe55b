"""The paper-reproduction notebooks (notebooks/*.ipynb) execute without error and print the
published numbers next to dpax's; each notebook asserts its own comparisons.

The default run checks every committed notebook against its source and executes the
notebooks, outputs cleared, with DPAX_NOTEBOOK_MODE=fast, except the calibration notebook
(over a minute even when fast: its fast run is in the slow suite, which also executes every
notebook with the full parameter set the committed outputs were produced with).
"""

from __future__ import annotations

import copy
import os
import sys

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("gdpnum")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NB_DIR = os.path.join(ROOT, "notebooks")
sys.path.insert(0, NB_DIR)

import build  # noqa: E402  (notebooks/build.py: the notebooks' source)

NAMES = sorted(build.NOTEBOOKS)
#: fast runs too long for the default suite's budget (they run under ``pytest -m slow``)
SLOW_FAST_RUNS = {"01_attack_aware_calibration", "02_gdp_reporting",
                  "04_certified_error_bars"}  # 04: ~40 s with an empty kernel cache


def _committed(name):
    return nbformat.read(os.path.join(NB_DIR, name + ".ipynb"), as_version=4)


def _cleared(nb):
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def _text(nb):
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                raise AssertionError(f"error output: {o.get('ename')}: {o.get('evalue')}")
            out.append(o.get("text", "") if o.get("output_type") == "stream"
                       else str(o.get("data", {}).get("text/plain", "")))
    return "".join(out)


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_matches_its_source_and_was_executed(name):
    nb = _committed(name)
    assert [c.source for c in nb.cells] == [src for _, src in build.NOTEBOOKS[name]], "re-run notebooks/build.py"
    assert nb.metadata.get("dpax_notebook_mode") in ("full", "fast")
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "committed notebooks carry their outputs"
    text = _text(nb)
    assert "MISMATCH" not in text
    assert "published" in text  # each notebook states the published numbers next to dpax's
    size = os.path.getsize(os.path.join(NB_DIR, name + ".ipynb"))
    assert size < 600_000, f"{name}.ipynb is {size} bytes: keep embedded images small"


def _run(name, mode):
    nb = _cleared(_committed(name))
    build.execute(nb, mode, timeout=3600)
    text = _text(nb)
    assert "MISMATCH" not in text and "published" in text
    return text


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_FAST_RUNS else n for n in NAMES])
def test_notebook_executes_fast(name):
    text = _run(name, "fast")
    assert "DPAX_NOTEBOOK_MODE=fast" in text


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_notebook_executes_full(name):
    text = _run(name, "full")
    assert "DPAX_NOTEBOOK_MODE=full" in text
