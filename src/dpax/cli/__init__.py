"""The ``dpax`` command line (entry point :func:`dpax.cli.main.main`, also ``python -m dpax``).

Layout: :mod:`dpax.cli.main` builds the parser and runs a subcommand, :mod:`dpax.cli.common`
holds what subcommands share (argument types, the parent parsers of the shared options, the
persistent compilation cache, the risk summary), and each subcommand has its own module
(``curve``, ``calibrate``, ``audit``, ``epsilon_star``, ``sweep``, ``plot``, ``gdp``,
``mechanism``); :mod:`dpax.cli.main` says how to add one.
"""

from .calibrate import render_calibrate
from .common import DEFAULT_ALPHAS, DEFAULT_DELTAS, compilation_cache
from .main import main

__all__ = ["DEFAULT_ALPHAS", "DEFAULT_DELTAS", "compilation_cache", "main", "render_calibrate"]
