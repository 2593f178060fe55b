"""The code is lint-clean: ``ruff check`` (the configuration in pyproject.toml: line length
120; pyflakes, pycodestyle, import order, bugbear, pyupgrade) finds nothing in the package,
the tests, the benchmarks, the docs builder and the examples. The check is tested on a file
with a known fault, so this test can fail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("src", "tests", "benchmarks", "docs", "examples")


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_the_repository_is_ruff_clean():
    out = _ruff(*CHECKED)
    assert out.returncode == 0, f"ruff check {' '.join(CHECKED)}:\n{out.stdout[-4000:]}{out.stderr[-2000:]}"


def test_ruff_sees_a_fault(tmp_path):
    # the project's own configuration, on a file with an unused import and an undefined name
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "bad.py").write_text("import os\n\nprint(undefined_name)\n")
    out = _ruff("bad.py", cwd=tmp_path)
    assert out.returncode == 1 and "F401" in out.stdout and "F821" in out.stdout


def test_every_public_module_is_type_checked_strictly():
    """mypy (run by CI after the tests) is strict (every function annotated) on the modules
    listed in pyproject.toml's override: every public module outside the compat drop-ins
    (whose signatures mirror other libraries') must be on it, so a new one joins it."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    strict = {m for o in config["overrides"] if o.get("disallow_untyped_defs") and o.get("disallow_incomplete_defs")
              for m in ([o["module"]] if isinstance(o["module"], str) else o["module"])}
    public = set()
    for path in (ROOT / "src" / "dpax").rglob("*.py"):
        parts = list(path.relative_to(ROOT / "src").with_suffix("").parts)
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if not any(p.startswith("_") for p in parts[1:]) and "compat" not in parts:
            public.add(".".join(parts))
    assert "dpax.privacy_loss.value" in public and len(public) > 50  # the walk sees the package
    assert not sorted(public - strict), f"public modules not strict in pyproject.toml: {sorted(public - strict)}"
