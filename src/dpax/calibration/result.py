"""The outcome of a calibration: :class:`CalibrationResult` (one row per configuration, as a
table, records, CSV or a DataFrame via :mod:`dpax.result_table`) and the helpers every
calibration shares to shape its fields and to report rows that miss the target."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from .. import result_table as _result_table
from .. import targets as _targets
from .._engine import validation as _v
from .._engine.x64 import as_result
from ..privacy_loss import Interval


@dataclass
class CalibrationResult:
    """Outcome of a calibration; array fields have the broadcast shape of the configurations."""

    noise_multiplier: float | np.ndarray
    """Smallest noise found that meets the target at ``grid_step`` (0 where no noise is needed)."""
    noise_multiplier_failing: float | np.ndarray
    """Largest noise seen to fail the target (the lower end of the final bracket)."""
    achieved: dict[str, float | np.ndarray]
    """Risk at ``noise_multiplier``: 'beta' (at the target alpha), 'advantage', 'epsilon' (at
    ``delta``)."""
    delta: float | np.ndarray
    """The delta of ``achieved['epsilon']`` and of the standard comparison (an Epsilon
    target's own delta, else ``standard_delta``; NaN for :func:`dpax.calibrate`)."""
    standard_epsilon: float | np.ndarray
    """epsilon that standard (epsilon, delta) calibration would need to guarantee the same bound."""
    standard_noise_multiplier: float | np.ndarray
    """Noise that standard calibration to (standard_epsilon, delta) would need (NaN if not run)."""
    status: str | np.ndarray
    """'calibrated'; 'met_without_noise' (subsampling alone meets the target, noise 0);
    'met_at_bound' (the least private end of the bounds meets it); 'infeasible' (not met
    anywhere in the bounds: noise NaN, see ``reason``)."""
    target: _targets.Target
    grid_step: float
    """The grid step of the answer (with ``accuracy``: the one dpax chose; NaN for
    :func:`dpax.calibrate`, whose family chooses its own grid)."""
    rtol: float
    """The relative width of the final bracket: hi / lo - 1 <= rtol."""
    evaluations: int = 0
    """How many parameter values the search evaluated, over every row and round
    (:func:`dpax.calibrate_dpsgd` adds those of its standard comparison)."""
    details: dict[str, object] = field(default_factory=dict)
    reason: str | np.ndarray = ""
    """Why a row is not 'calibrated' (empty string where it is)."""
    accuracy: float | None = None
    """The ``accuracy`` asked for (None: the grid was ``grid_step``)."""
    noise_interval: Interval | None = None
    """With ``accuracy``: ``Interval(safe, optimistic)`` of the noise. ``safe`` is
    ``noise_multiplier`` (meets the target with the safe pair); ``optimistic`` a noise
    verified to *fail* it with the optimistic companion (:meth:`dpax.PrivacyLoss.bounds`),
    at most ``rtol`` below the companion's own answer. The truly smallest noise lies in
    [optimistic, safe]: the width is what the grid's discretisation costs. Both ends 0
    ('met_without_noise'), the lower bound ('met_at_bound'), NaN ('infeasible')."""
    achieved_interval: dict[str, Interval] | None = None
    """With ``accuracy``: for the target's quantity ('beta' at its alpha, 'advantage',
    'epsilon' at its delta; a list of targets: each), the :class:`~dpax.Interval` at
    ``noise_multiplier`` on ``grid_step`` -- what ``dpsgd(noise, ..., grid_step).beta(alpha,
    bounds=True)`` gives; every width is at most ``accuracy``."""
    sample_rate: float | np.ndarray | None = None
    """The configuration of each row, in the shape of the other fields: the sample rate
    (calibrate_dpsgd's results record it; None where a result does not)."""
    num_steps: int | np.ndarray | None = None
    """The number of steps of each row, like ``sample_rate`` (None where not recorded)."""

    @property
    def noise_reduction(self) -> float | np.ndarray:
        """1 - noise / standard noise: the share of noise attack-aware calibration saves (a
        float for one configuration, else an array, like the other fields; NaN where the
        standard comparison was not run).

        Returns:
            1 - ``noise_multiplier`` / ``standard_noise_multiplier``: a float for one
            configuration, else a float64 array of the result's shape.

        >>> import dpax
        >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
        ...                          grid_step=1e-2, compare_standard=False)
        >>> r.noise_reduction
        nan
        """
        return as_result(1.0 - np.asarray(self.noise_multiplier) / np.asarray(self.standard_noise_multiplier))

    def table(self, max_rows: int | None = None) -> str:
        """One line per configuration: sample rate, steps, target, noise, standard noise,
        noise reduction and status (:func:`dpax.result_table.text`).

        Args:
            max_rows: show at most this many rows (None: all), an integer >= 1.

        Returns:
            The aligned table as a string (no trailing newline).

        Raises:
            TypeError, ValueError: ``max_rows`` is not an integer >= 1.

        >>> import dpax
        >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
        ...                          grid_step=1e-2, compare_standard=False)
        >>> print(r.table())
          sample rate  steps            target     noise  standard noise  reduction      status
                  0.1     10  advantage <= 0.3  0.537708               -          -  calibrated
        """
        return _result_table.text(self, max_rows)

    def to_records(self) -> list[dict[str, float | int | str]]:
        """One dict per configuration, every column of :mod:`dpax.result_table` (the
        configuration, the target's numbers, the noise, the standard comparison, the
        achieved risks, status and reason).

        Returns:
            A list of dicts of Python numbers and strings (NaN where not computed), one per
            configuration in C order of the result's shape.

        >>> import dpax
        >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
        ...                          grid_step=1e-2, compare_standard=False)
        >>> round(r.to_records()[0]["noise_multiplier"], 3), r.to_records()[0]["status"]
        (0.538, 'calibrated')
        """
        return _result_table.records(self)

    def to_csv(self, path_or_file: str | os.PathLike[str] | IO[str] | None = None) -> str | None:
        """The records as CSV with a header line (NaN as an empty cell).

        Args:
            path_or_file: a file name (written as UTF-8, replaced if it exists), an open
                text file (written at its position), or None (default: return the text).

        Returns:
            The CSV text when ``path_or_file`` is None, else None.

        Raises:
            TypeError: ``path_or_file`` is neither a file name, an object with ``write``
                nor None.
            OSError: the file cannot be written.

        >>> import dpax
        >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
        ...                          grid_step=1e-2, compare_standard=False)
        >>> r.to_csv().splitlines()[1][:30]
        '0.1,10,advantage <= 0.3,0.3,0.'
        """
        return _result_table.write_csv(self, path_or_file)

    def to_dataframe(self) -> Any:  # a pandas.DataFrame: pandas is optional, so not importable for the annotation
        """The records as a ``pandas.DataFrame`` (pandas is imported on use; an ImportError
        says so where it is missing).

        Returns:
            A ``pandas.DataFrame`` with one row per configuration and the columns of
            :meth:`to_records`.

        Raises:
            ImportError: pandas is not installed (:meth:`to_records` and :meth:`to_csv`
                need nothing).

        >>> import dpax
        >>> r = dpax.calibrate_dpsgd(sample_rate=0.1, num_steps=10, target=dpax.targets.Advantage(0.3),
        ...                          grid_step=1e-2, compare_standard=False)
        >>> try:
        ...     frame = r.to_dataframe()
        ... except ImportError:       # pandas is optional: this runs with or without it
        ...     frame = None
        >>> frame is None or (frame.shape, frame["status"][0]) == ((1, 14), "calibrated")
        True
        """
        return _result_table.dataframe(self)


def _out(values: Any, shape: tuple[int, ...] | None = None) -> Any:
    """A result field: a Python scalar for one configuration, else an array (any dtype)."""
    return as_result(values, shape, dtype=None)


def _raise_infeasible(what: str, status: np.ndarray, reason: np.ndarray, shape: tuple[int, ...]) -> None:
    bad = np.flatnonzero(status == "infeasible")
    if bad.size:
        r = int(bad[0])
        where = f"row {[int(i) for i in np.unravel_index(r, shape)]}" if shape else "the target"
        more = f" ({bad.size} rows in all)" if bad.size > 1 else ""
        raise ValueError(f"{what}: {where}: {reason[r]}{more}")


def _on_infeasible(value: Any, shape: tuple[int, ...]) -> str:
    if value is None:
        return "raise" if shape == () else "mark"
    if not isinstance(value, str) or value not in ("raise", "mark"):
        raise ValueError(f"on_infeasible must be 'raise', 'mark' or None, got {_v.brief(value)}")
    return value
