"""dpax.privacy_loss.value: PrivacyLoss is a value (complete at construction, never changed
by its operations), its methods are thin calls into the modules by job, and nothing outside
the package reaches for its private members."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import dpax
from dpax.privacy_loss.fields import Fields

SRC = Path(__file__).resolve().parents[2] / "src" / "dpax"
PACKAGE = SRC / "privacy_loss"

#: The value's private members (attributes and methods), which only its package may touch.
PRIVATE = {name for name in vars(Fields) if name.startswith("_") and not name.startswith("__")} | {
    "_pair", "_batch_shape", "_slack", "_gdp_bound", "_companion",
    # the mutators and helpers of the class before it was a value
    "_with_companion", "_with_gdp_bound", "_optimistic_from", "_derived", "_need_slack", "_bounds",
    "_no_companion", "_gdp_bound_rows", "_bracket", "_query", "_answers", "_check_queries"}


# ~6 s (kernels of its own for the batch's bounded queries); default sibling:
# tests/privacy_loss/test_companion.py::test_the_value_is_unchanged_by_its_companion (the same check: every field
# the same object after a bounded query and the companion)
@pytest.mark.slow
def test_no_operation_changes_a_value():
    pl = dpax.gaussian([1.0, 2.0], grid_step=1e-2)
    before = dict(vars(pl))
    pl.beta(0.1, bounds=True), pl.advantage(bounds=True), pl.delta(1.0, bounds=True)
    pl.epsilon(1e-5, bounds=True), pl[0].optimistic_companion(), pl.self_compose(2).optimistic_companion()
    pl.tradeoff_points()
    # (broadcast_to, regrid and compose build new values the same way: from_pair / replaced)
    after = vars(pl)
    assert after.keys() == before.keys() and all(after[k] is before[k] for k in before)


def test_methods_agree_with_the_functions_of_their_modules():
    from dpax.privacy_loss import companion, composing, regridding, risks, shaping

    pl = dpax.gaussian([1.0, 2.0], grid_step=1e-2)
    assert pl.optimistic_companion() is companion.optimistic_companion(pl)
    np.testing.assert_array_equal(pl.delta([0.5, 1.0]), risks.delta(pl, [0.5, 1.0]))
    np.testing.assert_array_equal(pl[1].pmf_x, shaping.select(pl, 1).pmf_x)
    np.testing.assert_array_equal(pl.regrid(2e-2).pmf_y, regridding.regrid(pl, 2e-2).pmf_y)
    np.testing.assert_array_equal(pl.self_compose(3).advantage(), composing.self_compose(pl, 3).advantage())


def _private_uses(path: Path) -> list[str]:
    """``file:line: .name`` for each private member of the value read or called in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [f"{path.name}:{node.lineno}: .{node.attr}" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in PRIVATE
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))]


def test_nothing_outside_the_package_touches_private_members():
    found = [use for path in sorted(SRC.rglob("*.py")) if PACKAGE not in path.parents and "_engine" not in path.parts
             for use in _private_uses(path)]
    assert not found, found


def test_the_checker_sees_a_private_call(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f(pl):\n    x = pl._gdp_bound\n    return self._pair, pl._with_companion(reason=x)\n")
    assert _private_uses(probe) == ["probe.py:2: ._gdp_bound", "probe.py:3: ._with_companion"]


def test_modules_and_the_class_are_small():
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.glob("*.py")}
    assert max(sizes.values()) <= 500, sizes
    tree = ast.parse((PACKAGE / "value.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "PrivacyLoss")
    assert cls.end_lineno - cls.lineno + 1 < 300
