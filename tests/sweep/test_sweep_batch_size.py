"""A sweep's answers do not depend on ``--batch-size``: a row is computed on its
own support, window and FFT length whatever rows share its batch, so batches of 1 and 64
rows give every output column to float round-off (1e-12 relative; observed: identical)."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from dpax import sweep

STEP = 1e-2
#: one row per batch against all rows in one batch (a batch of 2 adds ~5 s of compilation)
SIZES = (1, 64)
COLUMNS = ("out_beta", "out_advantage", "out_epsilon", "out_mu", "out_regret")


def _rows(path):
    with open(path, newline="") as f:
        return {int(r["row"]): r for r in csv.DictReader(f)}


#: rows of very different support width side by side (0.3 x 20 steps is ~30 times wider than
#: 4.0 x 200 at p = 0.001), the narrow 1.685 / 0.01 / 20 among them, with two alphas and two
#: deltas in the batch
ROWS = ["1.685,0.01,20,0.01,1e-5", "0.3,0.01,20,0.1,1e-5", "4.0,0.001,200,0.1,1e-8"]
#: two more rows of middle widths (and two more alphas and deltas): each row alone compiles
#: ~9 kernels of its own, so the five-row table is slow; the default one keeps the extremes
MORE_ROWS = ["0.8,0.5,50,0.05,1e-5", "2.0,0.2,100,0.001,1e-6"]
#: the batch of tests/engine/test_composition.py::test_a_narrow_row_in_a_wide_batch_keeps_its_own_far_tails
#: at its grid 1e-3, with two alphas and two deltas: a narrow and a ~200 times wider row side by
#: side, whose construction and mu kernels (the batch's and the rows') other test files compile
WIDE = ["4.0,0.001,2000,0.01,1e-10", "2.0,0.2,1000,0.1,1e-6"]


# 3rows and 5rows are slow (3rows: 9 kernels of its own, a 3-row mu kernel among them, ~4 s);
# default sibling: the 2rows case, the same checks on a batch of two rows of very different widths
@pytest.mark.parametrize("rows, step", [pytest.param(WIDE, 1e-3, id="2rows"),
                                        pytest.param(ROWS, STEP, id="3rows", marks=pytest.mark.slow),
                                        pytest.param(ROWS + MORE_ROWS, STEP, id="5rows", marks=pytest.mark.slow)])
def test_batch_size_does_not_change_the_answers(tmp_path, rows, step):
    cfg = tmp_path / "cfg.csv"
    cfg.write_text("noise_multiplier,sample_rate,num_steps,alpha,delta\n" + "".join(r + "\n" for r in rows))
    results = {}
    for size in SIZES:
        out = tmp_path / f"res{size}.csv"
        sweep.run_sweep(str(cfg), str(out), grid_step=step, batch_size=size, progress=False, log=io.StringIO())
        results[size] = _rows(out)
    base = results[64]
    assert len(base) == len(rows) and all(r["status"] == "analysed" for r in base.values())
    for size in SIZES[:-1]:
        for row, r in results[size].items():
            for col in COLUMNS:
                a, b = float(base[row][col]), float(r[col])
                np.testing.assert_allclose(b, a, rtol=1e-12, atol=0, err_msg=f"row {row} {col} batch {size}")
