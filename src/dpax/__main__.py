"""``python -m dpax``: the same command line as the ``dpax`` script (see :mod:`dpax.cli.main`)."""

import sys

from .cli.main import main

if __name__ == "__main__":
    sys.exit(main())
