"""Sweeps: a table of DP-SGD configurations from a CSV / JSON / YAML file, evaluated in batches.

Each row names its parameters like the Python arguments: ``noise_multiplier``,
``sample_rate``, ``num_steps``, ``grid_step`` (optional; default from the caller), and
targets / query points ``alpha``, ``beta``, ``advantage``, ``epsilon``, ``delta``, ``mu``.

* A row **with** ``noise_multiplier`` is analysed: ``out_beta`` at its ``alpha`` (Algorithm 1),
  ``out_advantage`` (Algorithm 3), ``out_epsilon`` at its ``delta`` (default 1e-5),
  ``out_mu`` / ``out_regret`` (:func:`dpax.gdp.mu_and_regret`); if it also carries a target
  (``beta``, ``advantage``, ``epsilon``, ``mu``), ``out_meets_target`` says whether it is met.
* A row **without** it is calibrated with :func:`dpax.calibrate_dpsgd` to its target:
  ``alpha`` + ``beta`` (ErrRates, Eq. 18), ``advantage`` (Eq. 14), ``epsilon`` + ``delta``
  (standard calibration), ``mu`` (GDP); several targets mean all of them. ``out_noise_multiplier``
  is the answer, then the row is analysed at it like above; ``out_standard_epsilon``,
  ``out_standard_noise_multiplier`` and ``out_noise_reduction`` compare it with standard
  calibration to (epsilon, delta) at the row's ``delta`` (``compare_standard=False`` /
  ``--no-compare-standard``: left empty). ``status`` / ``reason`` are per
  row ('calibrated', 'met_without_noise', 'met_at_bound', 'infeasible', 'analysed',
  'invalid', 'error').

Rows are grouped into batches that share a grid step and a kind of work, so each batch is one
batched call; batches are formed from the whole file, the same on every run, so a resumed
sweep computes exactly what an uninterrupted one would. Results (the input columns, ``row``,
``line``, and the ``out_*`` answers) are appended to a CSV or JSON-lines file and flushed
after each batch; ``resume`` skips rows whose ``row`` number is already there, once the file
is checked to be one a sweep of the same config writes (:mod:`dpax.sweep.results`). SIGINT /
SIGTERM stop the sweep after the batch in flight, leaving the file consistent. Nothing in the
file is evaluated: values are parsed as numbers (YAML with the safe loader, no pickle, and
no anchors or aliases). A sweep file holds at most :data:`MAX_ROWS` rows,
:data:`MAX_CONFIG_BYTES` bytes and :data:`MAX_COLUMNS` columns, a value at most
:data:`MAX_FIELD_CHARS` characters; an input column may not be named like an answer
(``row``, ``line``, ``mode``, ``status``, ``reason``, ``out_*``): see :mod:`dpax.sweep.config`.
"""

from .config import (
    MAX_COLUMNS,
    MAX_CONFIG_BYTES,
    MAX_FIELD_CHARS,
    MAX_ROWS,
    RESERVED_COLUMNS,
    SweepConfigError,
    read_config,
)
from .evaluate import DEFAULT_BATCH_SIZE, DEFAULT_DELTA, batch_key, evaluate_batch, make_batches
from .results import OUTPUT_COLUMNS, read_results
from .rows import KNOWN_COLUMNS, NUMERIC_COLUMNS, Row, make_target, parse_row
from .run import run_sweep

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_DELTA",
    "KNOWN_COLUMNS",
    "MAX_COLUMNS",
    "MAX_CONFIG_BYTES",
    "MAX_FIELD_CHARS",
    "MAX_ROWS",
    "NUMERIC_COLUMNS",
    "OUTPUT_COLUMNS",
    "RESERVED_COLUMNS",
    "Row",
    "SweepConfigError",
    "batch_key",
    "evaluate_batch",
    "make_batches",
    "make_target",
    "parse_row",
    "read_config",
    "read_results",
    "run_sweep",
]
