"""Every docstring example (``>>>``) in dpax runs and prints what it shows: one case per module.

Examples use coarse grids so that each module's take well under a few seconds and, where the
illustration allows, configurations other default tests compute too (e.g. DP-SGD with noise
[1.0, 2.0], sample rate 0.01, 100 steps at grid 1e-3, tests/test_plot.py's; the calibrations of
tests/calibration/test_calibration_dpsgd.py, tests/calibration/test_calibration_search.py,
tests/calibration/test_accuracy.py and tests/distributed/test_distributed_calibration.py), so
that their kernels load from the test run's shared cache instead of compiling; a module whose
optional dependency is missing is skipped.
"""

from __future__ import annotations

import doctest
import importlib
import types
from pathlib import Path

import pytest

from dpax._engine import grid

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
        grid.forget_repeats()  # each docstring's example is run as a reader runs it: a first call
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
    """The core public modules show one runnable example per public function (a package: per
    public function of its modules that it re-exports)."""
    import inspect

    import dpax

    missing = []
    for mod in (dpax.mechanisms, dpax.privacy_loss, dpax.gdp.closed_form, dpax.gdp.closed_form_mu, dpax.calibration,
                dpax.targets):
        for name, obj in vars(mod).items():
            # a package's own: defined in it or in one of its modules (re-exported)
            own = inspect.isfunction(obj) and (obj.__module__ + ".").startswith(mod.__name__ + ".")
            if name.startswith("_") or not own:
                continue
            if ">>>" not in (obj.__doc__ or ""):
                missing.append(f"{mod.__name__}.{name}")
    assert not missing, missing


# -- the API reference (docs/build_docs.py, pdoc) ----------------------------------------------


def _build_docs():
    """docs/build_docs.py as a module (skipped without pdoc, the `docs` and `test` extras')."""
    pytest.importorskip("pdoc")
    pytest.importorskip("typing_extensions")
    import importlib.util

    path = SRC.parent / "docs" / "build_docs.py"
    spec = importlib.util.spec_from_file_location("dpax_build_docs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_renders_args_as_lists_and_types_by_name(tmp_path):
    """Two modules of the reference (~1 s; the whole of it is the slow test below): no pdoc
    warning, Google-style Args / Returns as lists and headings (not one paragraph), ArrayLike
    by its name (not NumPy's Union), a NamedTuple's fields resolved (dpax.gdp.MuRegret), and
    dpax's own namespaces as they were."""
    import numpy.typing

    import dpax

    build_docs = _build_docs()
    assert build_docs.build(tmp_path, ["dpax.targets", "dpax.gdp"], show_source=False) == []
    targets = (tmp_path / "dpax" / "targets.html").read_text(encoding="utf-8")
    assert '<h6 id="arguments">Arguments:</h6>' in targets and "<li><strong>alpha:</strong>" in targets
    assert '<h6 id="returns">Returns:</h6>' in targets and "<p>Args:" not in targets
    assert "ArrayLike" in targets and "_array_like" not in targets and "Union[" not in targets
    gdp = (tmp_path / "dpax" / "gdp.html").read_text(encoding="utf-8")
    assert 'id="MuRegret.__init__"' in gdp and "_array_like" not in gdp
    assert dpax.targets.error_rates.ArrayLike is numpy.typing.ArrayLike  # put back after the build


def test_literal_blocks_become_code_blocks():
    build_docs = _build_docs()
    text = "Switching backend is one import line::\n\n    import a\n\n    b = 1\n\nAfter."
    assert build_docs.literal_blocks_as_code(text) == (
        "Switching backend is one import line:\n\n```python\nimport a\n\nb = 1\n```\n\nAfter.")
    assert build_docs.literal_blocks_as_code("No marker: x.\n\n    code") == "No marker: x.\n\n    code"


# slow (~9 s: every module, source included); default sibling:
# test_api_reference_renders_args_as_lists_and_types_by_name (the same build on two modules)
@pytest.mark.slow
def test_api_reference_builds_without_warnings(tmp_path):
    build_docs = _build_docs()
    assert build_docs.build(tmp_path) == []
    pages = list(tmp_path.rglob("*.html"))
    assert len(pages) > 20
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert "_array_like" not in html and "::</p>" not in html, page
