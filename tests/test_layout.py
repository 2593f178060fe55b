"""The package's layout is a picture of the pipeline: every module imports only downward.

Read from the source with ``ast`` (nothing is imported): the import graph of dpax's modules
must be acyclic (importing ``a.b.c`` from outside ``a.b`` also runs ``a.b``'s ``__init__``),
``dpax._engine`` must import nothing outside itself, no function may import a dpax module
(imports inside functions only dodge cycles), and no module may import from a layer above
its own. The checker is tested on a small fake package, so these tests can fail.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: Layers, bottom up: a module may import from its own layer (acyclically) or from below.
LAYERS = (
    "dpax._engine",
    "dpax._text",
    "dpax.schedule",
    # the PrivacyLoss package, one module per job: the value's fields below its operations
    "dpax.privacy_loss.interval",
    "dpax.privacy_loss.checks",
    "dpax.privacy_loss.fields",
    "dpax.privacy_loss.tails",
    "dpax.privacy_loss.companion",
    "dpax.privacy_loss.risks",
    "dpax.privacy_loss.shaping",
    "dpax.privacy_loss.regridding",
    "dpax.privacy_loss.composing",
    "dpax.privacy_loss.value",
    "dpax.privacy_loss.refining",
    "dpax.privacy_loss",
    "dpax.mechanisms",
    "dpax.events",
    "dpax.gdp",
    "dpax.conversions",
    "dpax.targets",
    "dpax.result_table",
    "dpax.calibration",
    "dpax.distributed",
    "dpax.interop",
    "dpax.accountants",
    "dpax.audit",
    "dpax.plot",
    "dpax.sweep",
    "dpax.compat",
    "dpax",
    "dpax.cli",
    "dpax.__main__",
)


def _modules(root: Path, package: str) -> dict[str, Path]:
    """Module name -> file, for every .py under ``root / package``."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level:
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))
    return node.module or ""


def _imports(module: str, path: Path, known: set[str], top: str):
    """(imported dpax module, line, inside a function) for each import of a dpax module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name == top or alias.name.startswith(top + "."):
                        found.append((alias.name, child.lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                target = _resolve(module, is_package, child)
                if target == top or target.startswith(top + "."):
                    for alias in child.names:  # `from . import x` names a submodule
                        sub = f"{target}.{alias.name}"
                        found.append((sub if sub in known else target, child.lineno, in_function))
            visit(child, inner)

    visit(tree, False)
    return found


def _layer(module: str, layers) -> int:
    best = -1
    for i, prefix in enumerate(layers):
        if module == prefix or module.startswith(prefix + "."):
            if best < 0 or len(prefix) > len(layers[best]):
                best = i
    return best


def check_layout(root: Path, top: str, layers, engine: str) -> list[str]:
    """Every violation of the rules above, as readable messages (empty: the layout holds)."""
    mods = _modules(root, top)
    known = set(mods)
    problems, edges = [], {m: set() for m in mods}
    for mod, path in mods.items():
        for target, line, in_function in _imports(mod, path, known, top):
            where = f"{path.relative_to(root)}:{line}"
            if in_function:
                problems.append(f"{where}: {mod} imports {target} inside a function")
            if mod.startswith(engine) and not (target == engine or target.startswith(engine + ".")):
                problems.append(f"{where}: {mod} (engine) imports {target} from outside the engine")
            if _layer(target, layers) > _layer(mod, layers):
                problems.append(f"{where}: {mod} imports {target} from a layer above its own")
            edges[mod] |= {t for t in _loaded_with(target, mod) if t in edges}
    problems += [f"import cycle: {' -> '.join(c)}" for c in _cycles(edges)]
    return problems


def _loaded_with(target: str, importer: str) -> set[str]:
    """Modules that importing ``target`` runs: itself and the ``__init__`` of each package
    above it, except the packages that hold the importer (already running)."""
    parts = target.split(".")
    out = {target}
    for i in range(1, len(parts)):
        pkg = ".".join(parts[:i])
        if not (importer == pkg or importer.startswith(pkg + ".")):
            out.add(pkg)
    out.discard(importer)
    return out


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected set of modules (depth-first search)."""
    state, stack, found = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(edges.get(m, ())):
            if state.get(t) == 1:
                found.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)
    return found


def test_dpax_imports_only_downward():
    problems = check_layout(SRC, "dpax", LAYERS, "dpax._engine")
    assert not problems, "\n".join(problems)


def test_every_module_has_a_layer():
    mods = _modules(SRC, "dpax")
    assert all(_layer(m, LAYERS) >= 0 for m in mods), [m for m in mods if _layer(m, LAYERS) < 0]


def _fake_package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_the_checker_reports_cycles_upward_and_function_imports(tmp_path):
    root = _fake_package(tmp_path, {
        "pk/__init__.py": "from . import top\n",
        "pk/_eng/__init__.py": "",
        "pk/_eng/core.py": "from .. import low\n",  # the engine reaching out, and upward
        "pk/low.py": "from ._eng import core\nfrom . import mid\n",  # upward, and a cycle low -> mid -> low
        "pk/mid.py": "from . import low\n\ndef f():\n    from . import top\n",
        "pk/top.py": "import pk.low\n",
        "pk/sub/__init__.py": "from .leaf import x\nfrom .. import other\n",
        "pk/sub/leaf.py": "",
        "pk/other.py": "from .sub import leaf\n",  # runs pk.sub's __init__, which imports pk.other
    })
    layers = ("pk._eng", "pk.low", "pk.mid", "pk.top", "pk.sub", "pk.other", "pk")
    problems = check_layout(root, "pk", layers, "pk._eng")
    text = "\n".join(problems)
    assert "pk._eng.core (engine) imports pk.low from outside the engine" in text
    assert "pk._eng.core imports pk.low from a layer above its own" in text
    assert "pk.low imports pk.mid from a layer above its own" in text
    assert "pk.mid imports pk.top inside a function" in text
    assert "import cycle: pk.low -> pk.mid -> pk.low" in text
    assert "import cycle: pk.other -> pk.sub -> pk.other" in text
    clean = _fake_package(tmp_path / "ok", {"pk/__init__.py": "from . import top\n", "pk/low.py": "",
                                            "pk/top.py": "from .low import x\n"})
    assert check_layout(clean, "pk", ("pk.low", "pk.top", "pk"), "pk._eng") == []


@pytest.mark.parametrize("name", ["dpax._engine", "dpax.cli", "dpax.gdp", "dpax.sweep"])
def test_packages_of_the_layout_exist(name):
    assert os.path.isdir(SRC / Path(*name.split(".")))
