"""``python -m dpax``: the same command line as the ``dpax`` script (see :mod:`dpax.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
