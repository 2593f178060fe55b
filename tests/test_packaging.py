"""Packaging and first impressions: the LICENSE pyproject names (an SPDX expression), a
changelog, classifiers and no placeholder project URLs, extras that do not download torch, and
result fields of plain Python types."""

from __future__ import annotations

import os
import re
import tomllib

import numpy as np

import dpax

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(*parts: str) -> str:
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as fh:
        return fh.read()


def _project() -> dict:
    return tomllib.loads(_read("pyproject.toml"))["project"]


def test_license_file_is_the_apache_2_license_pyproject_names():
    project = _project()
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    build = tomllib.loads(_read("pyproject.toml"))["build-system"]["requires"]
    assert "setuptools>=77" in build  # the SPDX string needs it
    text = _read("LICENSE")
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    for clause in ("TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION", "1. Definitions.",
                   "2. Grant of Copyright License.", "3. Grant of Patent License.", "4. Redistribution.",
                   "9. Accepting Warranty or Additional Liability.", "END OF TERMS AND CONDITIONS",
                   "http://www.apache.org/licenses/LICENSE-2.0"):
        assert clause in text, clause
    assert 11_000 < len(text) < 11_500  # the whole text, not a summary


def test_classifiers_authors_and_no_placeholder_urls():
    project = _project()
    classifiers = set(project["classifiers"])
    for c in ("Programming Language :: Python :: 3.11", "Programming Language :: Python :: 3.12",
              "Intended Audience :: Science/Research",
              "Topic :: Scientific/Engineering :: Mathematics", "Operating System :: OS Independent"):
        assert c in classifiers, c
    # the license is the SPDX `license` string; setuptools deprecates license classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]
    assert project["requires-python"] == ">=3.11"
    assert project["authors"] == [{"name": "The dpax developers"}]
    assert "urls" not in project  # the project has no public address to point at


def test_test_extra_does_not_download_torch():
    """The README's test command installs the `test` extra: no torch (from PyPI, a multi-GB
    CUDA build) and no Opacus there; they are the `opacus` extra, installed on purpose."""
    extras = _project()["optional-dependencies"]
    names = {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower() for r in extras["test"]}
    assert not names & {"torch", "opacus"}
    assert {re.split(r"[<>=]", r, maxsplit=1)[0] for r in extras["opacus"]} == {"opacus", "torch"}
    assert all(">=" in r for r in extras["opacus"])  # floors, not a pin of one local build


def test_changelog_keeps_a_changelog():
    text = _read("CHANGELOG.md")
    assert text.startswith("# Changelog") and "keepachangelog.com" in text
    versions = re.findall(r"^## \[([^\]]+)\]", text, flags=re.M)
    assert versions[0] == "Unreleased" and _project()["version"] in versions
    for version, section in zip(versions, re.split(r"^## ", text, flags=re.M)[1:]):
        kinds = re.findall(r"^### (.+)$", section, flags=re.M)
        assert set(kinds) <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security", "Performance"}
        assert kinds or version == "Unreleased", version  # a release says what it has
    # no links to addresses that do not exist (the project has no public repository)
    assert "dpax-dev" not in text and not re.search(r"^\[[^\]]+\]: ", text, flags=re.M)


def test_noise_reduction_is_a_python_float_for_one_configuration():
    target = dpax.targets.ErrRates(alpha=0.1, beta=0.5)
    one = dpax.calibrate_dpsgd(sample_rate=0.01, num_steps=100, target=target, grid_step=1e-2)
    for field in ("noise_multiplier", "standard_noise_multiplier", "standard_epsilon", "noise_reduction"):
        assert type(getattr(one, field)) is float, field
    assert one.noise_reduction == 1.0 - one.noise_multiplier / one.standard_noise_multiplier
    assert 0.0 < one.noise_reduction < 1.0
    # a batch of one row (shape (1,)): an array, on the kernels of the single configuration
    # (a batch of two rows compiles every kernel again for 6 and 2 rows)
    batch = dpax.calibrate_dpsgd(sample_rate=[0.01], num_steps=100, target=target, grid_step=1e-2)
    assert isinstance(batch.noise_reduction, np.ndarray) and batch.noise_reduction.shape == (1,)
    assert batch.noise_reduction.dtype == np.float64
    np.testing.assert_allclose(batch.noise_reduction, one.noise_reduction, rtol=1e-12)


def _published_result() -> dict:
    import json

    with open(os.path.join(ROOT, "benchmarks", "RESULTS.json"), encoding="utf-8") as fh:
        return json.load(fh)


def test_benchmark_report_is_generated_by_the_runner():
    """benchmarks/RESULTS.md is exactly what the runner renders from benchmarks/RESULTS.json
    (a hand edit, or figures from another run, fail here): the one source of the figures."""
    import sys

    sys.path.insert(0, ROOT)
    from benchmarks import suite

    result = _published_result()
    assert result["meta"]["mode"] == suite.PUBLISHED_MODE == "quick"
    assert suite.markdown(result) == _read("benchmarks", "RESULTS.md")
    assert suite.PUBLISHED_MD == os.path.join(ROOT, "benchmarks", "RESULTS.md")


def test_benchmark_readme_points_to_the_report_instead_of_repeating_it():
    text = _read("benchmarks", "README.md")
    assert "RESULTS.md" in text
    assert not re.search(r"measured:?\s+\d", text, flags=re.I)  # no "measured: 98 s" beside the commands
    result = _published_result()
    for figure in (f"{result['summary']['duration_s']:.0f} s",
                   *(f"{min(ts):.3f}" for ts in result.get("cold_start", {}).values())):
        assert figure not in text, figure


def test_benchmark_publish_writes_the_report_from_its_json(tmp_path):
    """suite.publish renders the report from the JSON it wrote (what the test above re-checks),
    and publishes a --quick run only."""
    import copy
    import sys

    import pytest

    sys.path.insert(0, ROOT)
    from benchmarks import suite

    result = _published_result()
    json_path, md_path = suite.publish(result, str(tmp_path / "R.json"), str(tmp_path / "R.md"))
    with open(md_path, encoding="utf-8") as fh:
        assert fh.read() == _read("benchmarks", "RESULTS.md")
    other = copy.deepcopy(result)
    other["meta"]["mode"] = "full"
    with pytest.raises(ValueError, match="only a --quick run is published"):
        suite.publish(other, str(tmp_path / "F.json"), str(tmp_path / "F.md"))


def test_readme_points_to_the_benchmark_report_instead_of_repeating_it():
    """The top-level README names benchmarks/RESULTS.md and carries neither the hand-copied
    duration of a suite run nor the hand-copied table of its speed-ups (copied figures go stale)."""
    text = _read("README.md")
    assert "benchmarks/RESULTS.md" in text
    assert "104 s measured" not in text
    assert "| workload (grid) | anchor | speed-up warm |" not in text
    assert not re.search(r"run --(quick|full)\b.*\d+ s measured", text)
    result = _published_result()
    assert f"{result['summary']['duration_s']:.0f} s" not in text.split("## Benchmarks", 1)[1].split("\n## ", 1)[0]


def test_test_module_names_are_unique():
    """pytest imports test modules by basename (no __init__.py in tests/), so two files of one
    name in different folders make the second fail to collect ('import file mismatch')."""
    from collections import Counter
    from pathlib import Path

    names = Counter(p.name for p in (Path(__file__).parent).rglob("test_*.py"))
    assert not [n for n, c in names.items() if c > 1]
