"""The README run as written: its quick start, every ```python block and every
``dpax`` command, with each output the README shows compared with what the code prints now,
so that the README cannot drift from the code.

- Quick start: the command of the first ```bash block (its last ``&&`` step) runs in-process
  (``dpax.cli.main.main``) and every number of the output block under "It prints (timing
  aside)" is compared with the number at the same place of what it prints.
- Python blocks: each runs alone in a fresh namespace (so it must import what it uses),
  statement by statement. A statement whose comment shows a value (``expr  # 0.405``,
  ``expr  # what it is -> array([0.9858, ...])``, ``a, b = f()  # 1.567, 0.00102``; an
  explanation in parentheses after the value is not part of it) is compared with the value's
  repr, or with what a ``print(...)`` printed.
- Commands: every ``dpax ...`` line of a ```bash block and every inline code span
  ``dpax ...`` with arguments exits 0 as written; those that examples/README.md lists are run
  by tests/test_examples.py instead (their input files live in examples/).
- The Accuracy table (the Gaussian mechanism's beta against its closed form, dpax and
  dp-accounting + riskcal) is recomputed.

Numbers are compared to the precision shown: a shown ``0.405`` accepts 0.4045 .. 0.4055,
``1e-05`` accepts 0.5e-5 .. 1.5e-5. Quoted strings and True / False / None must be equal.
``...`` in a shown value stands for any run of tokens.

Cost on 2 idle cores with an empty kernel cache decides what runs by default: the quick start
(DP-SGD calibration at the default grid 1e-4, ~13 s), the auditing block and the cheap
commands, the Accuracy table at grid 1e-4; the blocks and commands that compile fine-grid
calibrations or the mu/regret kernel (10-45 s each), the curve and Laplace commands at grid
1e-4 (whose command paths tests/cli and tests/mechanisms/test_mechanisms_cli.py run by default) and the
table's grid 1e-5 are ``slow``.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shlex
import tokenize
from dataclasses import dataclass

import numpy as np
import pytest

from dpax.cli.main import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Python blocks too slow for the default run, by the heading of their README section
SLOW_BLOCKS = {
    "Python API": "calibrations at grid 1e-4 and 1e-3, ~45 s cold",
    "Mechanisms, heterogeneous composition, dp-accounting": "~10 s cold",
    "Batched calibration, every risk target": "heterogeneous batch at grid 1e-3, ~20 s cold",
    "Reporting Gaussian DP": "the mu/regret kernel, ~10 s cold",
    "Opacus, riskcal and gdpnum backends; sweeps; plots": "~10 s cold",
    "Training with Opacus": "Opacus' bisection, about 15 compositions at grid 1e-4, ~17 s cold",
    # the same calls (accountant answers, brackets, from_dp_event, calibrate_dp_mechanism, event_family)
    # run by default in tests/events/ (test_dp_event_accountant.py, test_build.py, test_events.py)
    "dp-accounting's DpEvents and PrivacyAccountant": "two calibrations and the mu/regret kernel, ~15 s cold",
    "Certified error bars": "both sides of DP-SGD at grid 1e-4, ~30 s cold",
    "An accuracy knob instead of a grid step": "three grids down to 1e-4, ~30 s cold",
}
#: blocks that need optional packages (skipped without them), by heading
NEEDS = {"Training with Opacus": ("torch", "opacus")}
#: blocks that cannot run in one test process, by heading, with the test that runs them instead
NOT_RUN_BLOCKS = {
    "Beyond one machine: several processes with `jax.distributed`":
        "needs two processes: tests/distributed/test_distributed_calibration.py and tests/sweep/test_run.py "
        "run the same calls",
}
#: commands too slow for the default run, by prefix
SLOW_COMMANDS = {
    "dpax calibrate --sample-rate 0.001 --num-steps 10000 --advantage": "calibration at grid 1e-4, ~16 s cold",
    "dpax gdp --noise-multiplier": "the mu/regret kernel, ~10 s cold",
    "dpax curve --noise-multiplier 1 --sample-rate 0.001 --num-steps 10000 --alpha 0.01 --delta 1e-5 --accuracy":
        "both sides on three grids down to 1e-4, ~15 s cold",
    "dpax calibrate --sample-rate 0.001 --num-steps 10000 --alpha 0.1 --beta 0.5 --accuracy":
        "calibration with brackets down to grid 4e-4, ~40 s cold",
    # the two below: kernels of their own (~5 s and ~2.5 s cold); their command paths with the same
    # options run by default in tests/cli/test_curve_command.py::test_curve_brackets_hold_the_gaussian_truth
    # (curve with --alpha and --delta lists, brackets on) and
    # tests/mechanisms/test_mechanisms_cli.py::test_cli_mechanism_subcommand
    # (mechanism laplace --scale --count)
    "dpax curve --noise-multiplier 1 --sample-rate 0.001 --num-steps 10000 --alpha 0.001":
        "both sides of DP-SGD at grid 1e-4, ~5 s cold",
    "dpax mechanism laplace --scale 2 --count 10": "Laplace x 10 at grid 1e-4, ~2.5 s cold",
    # the two below: their paths run by default in tests/cli/test_configuration.py (calibrate from epochs) and
    # tests/test_plot_configurations.py (plot calibration with several configurations, results drawn by hand)
    "dpax calibrate --dataset-size 60000": "14,100 steps at grid 1e-4 with the standard comparison, ~8 s cold",
    "dpax plot calibration --dataset-size 60000": "eight calibrations and their standard ones, ~20 s cold",
}


def _read(*parts: str) -> str:
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as fh:
        return fh.read()


README = _read("README.md")


# -- extraction ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """One fenced code block: its language, the README line of its first code line, the code,
    and the heading of the section it is in."""

    lang: str
    line: int
    code: str
    heading: str


def code_blocks(text: str, lang: str | None = None) -> list[Block]:
    """The fenced blocks of a Markdown text (those of language ``lang`` when given)."""
    blocks = []
    for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M):
        headings = re.findall(r"^#+ (.+)$", text[: m.start()], flags=re.M)
        block = Block(m.group(1), text.count("\n", 0, m.start(2)) + 1, m.group(2), headings[-1] if headings else "")
        if lang is None or block.lang == lang:
            blocks.append(block)
    return blocks


_TOKEN = re.compile(
    r"""'[^'\n]*'|"[^"\n]*"|\.\.\.|…"""
    r"""|(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])"""
    r"""|\b(?:True|False|None|nan|inf)\b"""
)


def tokens(text: str) -> list[str]:
    """The numbers, quoted strings, True / False / None / nan / inf and ``...`` of a text, in
    order (NumPy's ``dtype=...`` and ``np.float64(...)`` wrappers dropped)."""
    text = re.sub(r",\s*dtype=[^)\]]*", "", text)
    text = re.sub(r"\bnp\.\w+\(", "(", text)
    return _TOKEN.findall(text)


def _tolerance(shown: str) -> float:
    """Half a unit of the last digit shown: ``0.405`` -> 5e-4, ``1e-05`` -> 5e-6."""
    mantissa, _, exponent = shown.lower().lstrip("+-").partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 0.5 * 10.0 ** (int(exponent or 0) - decimals) * (1 + 1e-9)


def _same(shown: str, actual: str) -> bool:
    if shown[0] in "'\"" or shown[0].isalpha():
        return shown.strip("'\"") == actual.strip("'\"")
    try:
        return abs(float(actual) - float(shown)) <= _tolerance(shown)
    except ValueError:
        return False


def _match_at(seg: list[str], act: list[str], j: int) -> bool:
    return j + len(seg) <= len(act) and all(_same(s, a) for s, a in zip(seg, act[j:]))


def mismatches(shown: str, actual: str) -> list[str]:
    """What differs between a shown output and the actual one (empty when they agree): their
    tokens pairwise, each number to the precision shown; ``...`` matches any run of tokens."""
    segments: list[list[str]] = [[]]
    for t in tokens(shown):
        if t in ("...", "…"):
            segments.append([])
        else:
            segments[-1].append(t)
    act = [t for t in tokens(actual) if t not in ("...", "…")]
    if len(segments) == 1:
        seg = segments[0]
        problems = [f"shown {s}, printed {a}" for s, a in zip(seg, act) if not _same(s, a)]
        if len(seg) != len(act):
            problems.append(f"{len(seg)} values shown, {len(act)} printed: {seg} vs {act}")
        return problems
    pos = 0
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if i == 0:
            starts = [0]
        elif last and seg:
            starts = [len(act) - len(seg)]
        else:
            starts = range(pos, len(act) - len(seg) + 1)
        j = next((j for j in starts if j >= pos and _match_at(seg, act, j)), None)
        if j is None and len(starts) == 1 and starts[0] >= pos:  # anchored at the start or the end
            return [f"shown {s}, printed {a}" for s, a in zip(seg, act[starts[0]:]) if not _same(s, a)] or [
                f"shown {seg} ({'start' if i == 0 else 'end'}), printed {act[starts[0]:starts[0] + len(seg)]}"]
        if j is None:
            return [f"shown {seg} (part {i + 1} of {len(segments)} between '...') not printed: {act[pos:]}"]
        pos = j + len(seg)
    return []


_VALUE_START = re.compile(r"""-?\d|\.\d|[\[({'"]|array\(|(?:True|False|None)\b|[A-Z]\w*\(""")


def shown_value(comment: str) -> str | None:
    """The value a ``# ...`` comment shows, or None when it shows none: the text after the last
    ``->`` (or the whole comment), when it starts like a value; an explanation in parentheses
    after a space is cut off (``0.95508, True (the audit's example)`` -> ``0.95508, True``)."""
    text = comment.lstrip("#").strip()
    if "->" in text:
        text = text.rsplit("->", 1)[1].strip()
    if not _VALUE_START.match(text):
        return None
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            if ch == "(" and depth == 0 and i and text[i - 1] == " ":
                return text[:i].strip()
            depth += 1
        elif ch in ")]}":
            depth -= 1
    return text


@dataclass(frozen=True)
class Check:
    """A value the README shows (``shown``) and what the code gave (``actual``)."""

    line: int
    source: str
    shown: str
    actual: str

    def problems(self) -> list[str]:
        return [f"README.md:{self.line}: {self.source.splitlines()[0]}  # {self.shown}: {p}"
                for p in mismatches(self.shown, self.actual)]


def _is_print(node: ast.stmt) -> bool:
    call = node.value if isinstance(node, ast.Expr) else None
    return isinstance(call, ast.Call) and getattr(call.func, "id", "") == "print"


def run_python_block(block: Block) -> list[Check]:
    """Run a ```python block in a fresh namespace (README line numbers in tracebacks) and return
    a Check for each statement whose comment shows a value."""
    code = "\n" * (block.line - 1) + block.code
    comments = {tok.start[0]: tok.string for tok in tokenize.generate_tokens(io.StringIO(code).readline)
                if tok.type == tokenize.COMMENT}
    namespace: dict = {"__name__": "__readme__"}
    checks = []
    for node in ast.parse(code, "README.md").body:
        shown = shown_value(comments[node.end_lineno]) if node.end_lineno in comments else None
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            if isinstance(node, ast.Expr):
                value = eval(compile(ast.Expression(node.value), "README.md", "eval"), namespace)
            else:
                exec(compile(ast.Module([node], []), "README.md", "exec"), namespace)
                value = None
        if shown is None:
            continue
        if isinstance(node, ast.Assign):
            value = eval(ast.unparse(node.targets[0]), namespace)
        elif not isinstance(node, ast.Expr):
            raise AssertionError(f"README.md:{node.lineno}: a value shown on a statement that has none")
        actual = printed.getvalue() if _is_print(node) else repr(value)
        checks.append(Check(node.lineno, ast.get_source_segment(code, node), shown, actual))
    return checks


def quick_start(text: str) -> tuple[list[str], str, int]:
    """The quick start's command (arguments after ``dpax``), the output block it is shown to
    print, and that block's README line."""
    start = text.index("## Quick start")
    section = text[start:].split("\n## ", 1)[0]
    command = code_blocks(section, "bash")[0].code.strip().split("&&")[-1].split()
    assert command[0].endswith("bin/dpax"), command
    prints = start + section.index("It prints (timing aside)")
    shown = code_blocks(text[prints:], "")[0]
    return command[1:], shown.code, text.count("\n", 0, prints) + shown.line


def _normalise(command: str) -> str:
    return " ".join(command.split()).removeprefix(".venv/bin/")


def commands(text: str) -> list[str]:
    """Every ``dpax`` command line of the text's ```bash blocks (comments dropped, ``&&`` steps
    split) and every inline ```dpax ...``` with arguments that names no placeholder (KIND)."""
    found = []
    for block in code_blocks(text, "bash"):
        for line in block.code.replace("\\\n", " ").splitlines():
            for step in line.split("#", 1)[0].split("&&"):
                if _normalise(step).startswith("dpax "):
                    found.append(_normalise(step))
    for m in re.finditer(r"`(dpax [^`]*)`", text):
        command = _normalise(m.group(1))
        if len(command.split()) > 2 and not re.search(r"\b[A-Z]{3,}\b", command):
            found.append(command)
    return list(dict.fromkeys(found))


def run_command(command: str, tmp_path, capsys) -> str:
    """Run a README command in-process (an ``-o`` file goes to ``tmp_path``); return stdout."""
    args = shlex.split(command)[1:]
    if "-o" in args:
        i = args.index("-o") + 1
        args[i] = str(tmp_path / os.path.basename(args[i]))
    code = main(args)
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err, f"{command}\n{err}"
    assert out.strip(), command
    return out


def check_quick_start(text: str, tmp_path, capsys) -> list[str]:
    args, shown, line = quick_start(text)
    out = run_command(" ".join(["dpax", *args]), tmp_path, capsys)
    actual = "\n".join(x for x in out.splitlines() if not x.startswith("(computed in"))
    return [f"README.md:{line}: quick-start output: {p}" for p in mismatches(shown, actual)]


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # commands name examples/... relative to the repository root


# -- the helper itself can fail -----------------------------------------------------------------

FAKE = '''# fake

## Quick start

```bash
python -m venv .venv && .venv/bin/pip install -e . && .venv/bin/dpax gdp --epsilon 8
```

It prints (timing aside):

```
(epsilon = 8, delta)-DP as Gaussian DP
  delta  mu of the Gaussian mechanism
  1e-05  1.667
  ...
```

## Python API

```python
x = 0.1 + 0.2
x                 # 0.31
[x, 2 * x]        # what it is -> [0.3, 0.6]
y, z = x, "a"     # 0.3, 'b' (an explanation)
x                 # a comment that shows no value
print(x)          # 0.300
```
'''


def test_comparison_catches_a_wrong_number():
    assert mismatches("0.405", "0.40549") == [] and mismatches("0.405", "0.4056")
    assert mismatches("1e-05 12.3176", "1e-05  12.31764") == []
    assert mismatches("1e-05 12.3176", "1e-05  12.3177")
    assert mismatches("38.6%", "38.649%") == [] and mismatches("38.6%", "38.66%")
    assert mismatches("0.1, 0.2", "0.1, 0.2, 0.3")  # a value printed but not shown
    assert mismatches("True", "False") and mismatches("'a'", "'b'")
    shown = "PrivacyLoss(laplace(scale=20) x 10 + ..., grid_step=0.0001, ...)"
    assert mismatches(shown, "PrivacyLoss(laplace(scale=20) x 10 + rr(k=4), grid_step=0.0001, n=81920)") == []
    assert mismatches(shown, "PrivacyLoss(laplace(scale=20) x 10 + rr(k=4), grid_step=0.001, n=81920)")
    assert mismatches(shown, "PrivacyLoss(laplace(scale=2) x 10 + rr(k=4), grid_step=0.0001, n=81920)")
    assert tokens("array([0.5, 1e-05], dtype=float64) np.float64(2.0) 'x1' b2") == ["0.5", "1e-05", "2.0", "'x1'"]


def test_python_block_checks_find_the_wrong_shown_values():
    block = code_blocks(FAKE, "python")[0]
    assert block.heading == "Python API" and FAKE.splitlines()[block.line - 1] == "x = 0.1 + 0.2"
    checks = run_python_block(block)
    assert [c.shown for c in checks] == ["0.31", "[0.3, 0.6]", "0.3, 'b'", "0.300"]
    bad = [c for c in checks if c.problems()]
    assert [c.shown for c in bad] == ["0.31", "0.3, 'b'"]
    line = FAKE.splitlines().index("x                 # 0.31") + 1
    assert bad[0].problems() == [f"README.md:{line}: x  # 0.31: shown 0.31, printed 0.30000000000000004"]


def test_quick_start_check_finds_a_wrong_number(tmp_path, capsys):
    args, shown, line = quick_start(FAKE)
    assert args == ["gdp", "--epsilon", "8"] and FAKE.splitlines()[line - 1] == "(epsilon = 8, delta)-DP as Gaussian DP"
    problems = check_quick_start(FAKE, tmp_path, capsys)
    assert problems == ["README.md:12: quick-start output: shown 1.667, printed 1.666"], problems
    assert check_quick_start(FAKE.replace("1.667", "1.666"), tmp_path, capsys) == []


# -- the README ---------------------------------------------------------------------------------


def test_quick_start_is_two_commands_on_a_fresh_install():
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    first, second = (b.code.strip() for b in code_blocks(section, "bash"))
    assert first.startswith("python -m venv .venv && .venv/bin/pip install -e . && .venv/bin/dpax calibrate ")
    assert second == "python -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest"


def test_quick_start_prints_what_the_readme_shows(tmp_path, capsys):
    problems = check_quick_start(README, tmp_path, capsys)
    assert not problems, "\n".join(problems)


def test_readme_shows_values_that_these_tests_compare():
    """The extraction finds the shown values (a change of comment style would otherwise leave
    the blocks run but unchecked), and each slow entry names something in the README."""
    blocks = code_blocks(README, "python")
    shown = 0
    for block in blocks:
        code = "\n" * (block.line - 1) + block.code
        shown += sum(shown_value(tok.string) is not None
                     for tok in tokenize.generate_tokens(io.StringIO(code).readline) if tok.type == tokenize.COMMENT)
    assert len(blocks) >= 6 and shown >= 25, (len(blocks), shown)
    assert set(SLOW_BLOCKS) | set(NOT_RUN_BLOCKS) | set(NEEDS) <= {b.heading for b in blocks}
    assert all(any(c.startswith(prefix) for c in commands(README)) for prefix in SLOW_COMMANDS)
    assert len(quick_start(README)[1].splitlines()) >= 8
    assert [row[0] for row in _accuracy_rows()] == ["1e-4", "1e-5"]


def _block_params():
    params = []
    for block in code_blocks(README, "python"):
        marks = [pytest.mark.slow] if block.heading in SLOW_BLOCKS else []
        if block.heading in NOT_RUN_BLOCKS:
            marks = [pytest.mark.skip(reason=NOT_RUN_BLOCKS[block.heading])]
        params.append(pytest.param(block, id=re.sub(r"\W+", "-", block.heading).strip("-").lower(), marks=marks))
    return params


@pytest.mark.parametrize("block", _block_params())
def test_python_block_runs_and_prints_what_the_readme_shows(block):
    for module in NEEDS.get(block.heading, ()):
        pytest.importorskip(module)
    problems = [p for check in run_python_block(block) for p in check.problems()]
    assert not problems, "\n".join(problems)


_EXAMPLES_COMMANDS = {_normalise(c) for c in commands(_read("examples", "README.md"))}
_QUICK_START = _normalise(" ".join(["dpax", *quick_start(README)[0]]))


def _command_params():
    params = []
    for command in commands(README):
        if command in _EXAMPLES_COMMANDS or command == _QUICK_START:
            continue  # run by tests/test_examples.py / the quick-start test above
        marks = [pytest.mark.slow] if any(command.startswith(p) for p in SLOW_COMMANDS) else []
        params.append(pytest.param(command, id=command[:60], marks=marks))
    return params


def test_commands_run_as_written_or_live_in_examples():
    """No usage syntax in a command ([--json], A | B): a newcomer pastes it. The commands that
    need examples/ files are those examples/README.md lists (and tests/test_examples.py runs)."""
    for command in commands(README):
        assert not re.search(r"[\[\]|<>]", command), command
        if "examples/" in command:
            assert command in _EXAMPLES_COMMANDS, command
    assert len(_command_params()) >= 5


@pytest.mark.parametrize("command", _command_params())
def test_command_runs_as_written(command, tmp_path, capsys):
    run_command(command, tmp_path, capsys)


def _accuracy_rows() -> list[list[str]]:
    """The rows of the README's table of the Gaussian mechanism's beta error (Accuracy)."""
    section = README.split("## Accuracy", 1)[1].split("\n## ", 1)[0]
    table = section.split("| grid step | dpax: exact - beta (max) |", 1)[1].split("\n\n", 1)[0]
    return [[c.strip() for c in row.strip("|").split("|")] for row in table.strip().splitlines()[2:]]


def _accuracy_params():
    return [pytest.param(row, id=row[0], marks=[pytest.mark.slow] if float(row[0]) < 1e-4 else [])
            for row in _accuracy_rows()]


@pytest.mark.parametrize("row", _accuracy_params())
def test_accuracy_table_of_the_gaussian_mechanism(row):
    """Noise 0.7 (exactly mu-GDP, mu = 1/0.7), 999 alphas in [0.001, 0.999]: dpax's largest
    distance below and above the exact curve, and dp-accounting + riskcal's largest above it."""
    from dp_accounting.pld import privacy_loss_distribution as pld_module
    from riskcal.analysis import get_beta_from_pld
    from scipy.stats import norm

    import dpax

    grid, below, above, anchor = row
    alphas = np.linspace(0.001, 0.999, 999)
    exact = norm.cdf(norm.ppf(1 - alphas) - 1 / 0.7)
    beta = np.asarray(dpax.gaussian(0.7, grid_step=float(grid)).beta(alphas))
    pld = pld_module.from_gaussian_mechanism(standard_deviation=0.7, use_connect_dots=True,
                                             pessimistic_estimate=True, value_discretization_interval=float(grid))
    anchor_beta = np.asarray(get_beta_from_pld(pld, alpha=alphas))
    assert above == "below 1e-15 (round-off)" and (beta - exact).max() < 1e-15
    problems = mismatches(f"{below} {anchor}", f"{(exact - beta).max()!r} {(anchor_beta - exact).max()!r}")
    assert not problems, problems
