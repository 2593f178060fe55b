"""The ``dpax`` command line (entry point :func:`dpax.cli.main.main`, also ``python -m dpax``).

Layout: :mod:`dpax.cli.main` builds the parser and runs a subcommand; what subcommands share is
in :mod:`dpax.cli.parsing` (argument types, the parent parsers of the shared options, the
kernel cache switch), :mod:`dpax.cli.configuration` (a DP-SGD configuration or schedule) and
:mod:`dpax.cli.brackets` (the risk summary with its certified brackets); each subcommand has
its own module ``<name>_command`` (``curve``, ``calibrate``, ``audit``, ``epsilon_star``,
``sweep``, ``plot``, ``gdp``, ``mechanism``); :mod:`dpax.cli.main` says how to add one.
"""

from .calibrate_command import render_calibrate
from .main import main
from .parsing import DEFAULT_ALPHAS, DEFAULT_DELTAS, compilation_cache

__all__ = ["DEFAULT_ALPHAS", "DEFAULT_DELTAS", "compilation_cache", "main", "render_calibrate"]
