"""Fixtures shared by the sweep tests: a small config and the files a clean sweep of it writes,
made once per test session (tests/sweep/test_results.py resumes them, test_parts.py splits
them into part files)."""

from __future__ import annotations

import io

import pytest

from dpax import sweep

# four analysed rows with the kernel shapes of DP-SGD (4.0, 0.001, 200) at grid 1e-2, in
# batches of one, like tests/sweep/test_results.py's torn-line test: nothing compiled of their own
NOISES = [f"{4.0 + 0.004 * i:.3f}" for i in range(4)]
CONFIG = ("defaults: {sample_rate: 0.001, num_steps: 200, grid_step: 0.01, alpha: 0.1}\nrows:\n"
          + "".join(f"  - {{noise_multiplier: {s}, tag: r{i}}}\n" for i, s in enumerate(NOISES))
          + "  - {noise_multiplier: x, tag: bad}\n")


@pytest.fixture(scope="session")
def resume_config():
    """The text of the config ``clean`` sweeps: four rows to analyse, then a malformed one."""
    return CONFIG


@pytest.fixture(scope="session")
def clean(tmp_path_factory):
    """The config and the bytes a clean sweep of it writes, per format."""
    d = tmp_path_factory.mktemp("clean")
    cfg = d / "cfg.yaml"
    cfg.write_text(CONFIG)
    out = {}
    for ext in ("csv", "jsonl"):
        path = d / f"full.{ext}"
        sweep.run_sweep(str(cfg), str(path), batch_size=1, progress=False, log=io.StringIO())
        out[ext] = path.read_bytes()
    return str(cfg), out
