"""Build dpax's API reference from its docstrings with pdoc.

    python docs/build_docs.py            # -> docs/_build/index.html (git-ignored)

Configuration: every public module of the ``dpax`` package, reStructuredText docstrings
(``:func:`` / ``:class:`` cross-references become links), math rendered, source shown.
"""

from __future__ import annotations

import pathlib
import sys

import pdoc
import pdoc.render

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "_build"
SRC = HERE.parent / "src" / "dpax"


def modules() -> list[str]:
    """``dpax`` and every public submodule / subpackage (dpax's ``__all__`` would hide them)."""
    import dpax

    names = ["dpax"]
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        if any(p.startswith("_") for p in parts) or len(parts) != 2:  # subpackages walk their own modules
            continue
        if parts[1] in getattr(dpax, "__all__", ()):  # already documented as a member of dpax
            continue
        names.append(".".join(parts))
    return names


def main(argv=None) -> int:
    sys.path.insert(0, str(HERE.parent / "src"))
    pdoc.render.configure(docformat="restructuredtext", math=True, show_source=True,
                          footer_text="dpax: exact privacy accounting in JAX")
    pdoc.pdoc(*modules(), output_directory=OUT)
    print(f"API reference written to {OUT / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
