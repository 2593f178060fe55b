"""Every docstring example (``>>>``) in dpax runs and prints what it shows: one case per module.

Examples use coarse grids so that each module's take well under a few seconds and, where the
illustration allows, configurations other default tests compute too (e.g. DP-SGD with noise
[1.0, 2.0], sample rate 0.01, 100 steps at grid 1e-3, tests/test_plot.py's; the calibrations of
tests/test_calibrate.py, tests/test_calibrate_accuracy.py and tests/test_distributed.py), so
that their kernels load from the test run's shared cache instead of compiling; a module whose
optional dependency is missing is skipped.
"""

from __future__ import annotations

import doctest
import importlib
import types
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
OPTIONAL = {"dpax.interop": "dp_accounting", "dpax._engine.pld": "dp_accounting", "dpax.plot": "matplotlib",
            "dpax.audit.io": "pyarrow"}
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module_names() -> list[str]:
    names = []
    for path in sorted((SRC / "dpax").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


def run_examples(module: types.ModuleType) -> tuple[int, int, str]:
    """(examples run, failures, the runner's report) for one module's docstrings."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    lines: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    tried = failed = 0
    for test in finder.find(module, module.__name__):
        result = runner.run(test, out=lines.append, clear_globs=True)
        tried, failed = tried + result.attempted, failed + result.failed
    return tried, failed, "".join(lines)


@pytest.mark.parametrize("name", _module_names())
def test_docstring_examples(name):
    if name in OPTIONAL:
        pytest.importorskip(OPTIONAL[name])
    tried, failed, report = run_examples(importlib.import_module(name))
    assert failed == 0, report


def test_a_wrong_example_fails():
    fake = types.ModuleType("fake")
    exec('def f():\n    """\n    >>> 1 + 1\n    3\n    """\n', fake.__dict__)
    tried, failed, report = run_examples(fake)
    assert (tried, failed) == (1, 1) and "Expected:\n    3" in report


def test_public_functions_have_examples():
    """The core public modules show one runnable example per public function."""
    import inspect

    import dpax

    missing = []
    for mod in (dpax.mechanisms, dpax.privacy_loss, dpax.gdp.closed_form, dpax.calibration, dpax.targets):
        for name, obj in vars(mod).items():
            if name.startswith("_") or not inspect.isfunction(obj) or obj.__module__ != mod.__name__:
                continue
            if ">>>" not in (obj.__doc__ or ""):
                missing.append(f"{mod.__name__}.{name}")
    assert not missing, missing
