"""Build dpax's API reference from its docstrings with pdoc.

    python docs/build_docs.py            # -> docs/_build/index.html (git-ignored)
    python docs/build_docs.py OUT_DIR    # -> OUT_DIR/index.html

Configuration: every public module of the ``dpax`` package; Google-style docstrings (``Args:``,
``Returns:`` and ``Raises:`` become lists; reStructuredText's ``:func:`` / ``:class:``
cross-references, ``literals`` and ``text::`` literal blocks are understood too); math
rendered; source shown. Types in signatures appear by the names the code uses: ``ArrayLike``
stays ``ArrayLike`` instead of NumPy's long ``Union[...]``. A warning from pdoc (an annotation
or a name of ``__all__`` it cannot resolve) fails the build (exit status 1);
``tests/test_docs.py`` builds the reference and checks it.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import pathlib
import re
import sys
import textwrap
import warnings

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "_build"
SRC = HERE.parent / "src" / "dpax"

#: annotation names shown as written (the alias, not what it expands to)
SHORT_NAMES = ("ArrayLike",)


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


def _dpax_modules() -> list:
    return [m for name, m in sorted(sys.modules.items()) if (name == "dpax" or name.startswith("dpax.")) and m]


@contextlib.contextmanager
def prepared(names: list[str]):
    """Import ``names`` and make dpax's annotations render by name while pdoc runs; everything
    is put back after.

    * ``ArrayLike`` (and the other names of ``SHORT_NAMES``) becomes a type alias of that name
      in every dpax module's namespace, where pdoc evaluates the (string) annotations;
    * a ``NamedTuple``'s ``__new__`` is generated in a namespace of its own, where pdoc cannot
      resolve the field annotations: it is attributed to the class's module;
    * names a module creates on first access (``dpax.accountants.DpEventAccountant``) are
      created, so that pdoc finds every name of ``__all__``;
    * pdoc reads reStructuredText literal blocks (:func:`literal_blocks_as_code`).
    """
    import pdoc.docstrings
    from typing_extensions import TypeAliasType

    for name in names:
        module = importlib.import_module(name)
        for member in getattr(module, "__all__", ()):  # subpackages dpax loads on first access
            if importlib.util.find_spec(f"{name}.{member}") is not None:
                importlib.import_module(f"{name}.{member}")
    undo: list = []
    aliases: dict = {}
    for mod in _dpax_modules():
        for short in SHORT_NAMES:
            value = mod.__dict__.get(short)
            if value is not None and not isinstance(value, TypeAliasType):
                mod.__dict__[short] = aliases.setdefault(short, TypeAliasType(short, value))
                undo.append(lambda d=mod.__dict__, k=short, v=value: d.__setitem__(k, v))
        for obj in list(mod.__dict__.values()):
            if inspect.isclass(obj) and issubclass(obj, tuple) and hasattr(obj, "_fields"):
                new = obj.__new__
                if inspect.isfunction(new) and new.__module__ not in sys.modules:
                    undo.append(lambda f=new, m=new.__module__: setattr(f, "__module__", m))
                    new.__module__ = obj.__module__
        documented = any(mod.__name__ == n or mod.__name__.startswith(n + ".") for n in names)
        for name in getattr(mod, "__all__", ()) if documented else ():
            if name not in mod.__dict__ and importlib.util.find_spec(f"{mod.__name__}.{name}") is None:
                try:  # not a submodule: made by the module's __getattr__
                    mod.__dict__[name] = getattr(mod, name)
                except ImportError:  # its optional dependency is missing: pdoc says so
                    continue
                undo.append(lambda d=mod.__dict__, k=name: d.pop(k, None))
    rst = pdoc.docstrings.rst
    pdoc.docstrings.rst = lambda contents, source_file: rst(literal_blocks_as_code(contents), source_file)
    undo.append(lambda: setattr(pdoc.docstrings, "rst", rst))
    try:
        yield
    finally:
        for step in reversed(undo):
            step()


#: a reStructuredText literal block: "text::", a blank line, then indented (or blank) lines
_LITERAL_BLOCK = re.compile(r"^(?P<lead>.*?)::\n\n(?P<body>(?:[ \t]+.*\n|\n)+)", re.M)


def literal_blocks_as_code(text: str) -> str:
    """reStructuredText's ``text::`` + indented block as Markdown: ``text:`` + a fenced code
    block (left as it is, the marker shows as "::", and a short ``Name:`` line before an
    indented block would read as a Google section)."""
    def fence(m: re.Match) -> str:
        lead = m.group("lead").rstrip()
        body = textwrap.dedent(m.group("body")).strip("\n")
        return (f"{lead}:\n\n" if lead else "") + f"```python\n{body}\n```\n\n"

    return _LITERAL_BLOCK.sub(fence, text + "\n").rstrip("\n")


def build(out: pathlib.Path, names: list[str] | None = None, show_source: bool = True) -> list[str]:
    """Write the reference of ``names`` (default: :func:`modules`) to ``out``; return pdoc's
    warnings (what it could not read: an annotation, a name of ``__all__``, a docstring)."""
    if str(HERE.parent / "src") not in sys.path:
        sys.path.insert(0, str(HERE.parent / "src"))
    import pdoc
    import pdoc.render

    pdoc.render.configure(docformat="google", math=True, show_source=show_source,
                          footer_text="dpax: exact privacy accounting in JAX")
    names = names or modules()
    with prepared(names), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*names, output_directory=pathlib.Path(out))
    pdoc_dir = pathlib.Path(pdoc.__file__).parent
    return [str(w.message) for w in caught if pathlib.Path(w.filename).is_relative_to(pdoc_dir)]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    out = pathlib.Path(argv[0]) if argv else OUT
    problems = build(out)
    for message in problems:
        print(f"pdoc: {message}", file=sys.stderr)
    if problems:
        print(f"{len(problems)} pdoc warning(s): the API reference in {out} is incomplete", file=sys.stderr)
        return 1
    print(f"API reference written to {out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
