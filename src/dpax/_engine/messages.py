"""How an error message quotes a value: a short one-line repr (:func:`brief`), never a whole
array or a hostile ``__repr__``.
"""

from __future__ import annotations

import reprlib
from typing import Any

import numpy as np

#: Longest quoted value in a message (characters).
BRIEF_CHARS = 80

_REPR = reprlib.Repr()
_REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict, _REPR.maxlevel = 40, 60, 6, 6, 4, 3


def brief(value: Any, limit: int = BRIEF_CHARS) -> str:
    """A short one-line repr of ``value`` for error messages (at most ``limit`` characters):
    arrays show a few entries and their shape, long lists and strings are cut.

    >>> brief(list(range(100)))
    '[0, 1, 2, 3, 4, 5, ...]'
    >>> brief(np.ones(10_000))
    'array([1., 1., 1., ..., 1., 1., 1.], shape=(10000,))'
    """
    try:
        if isinstance(value, np.ma.MaskedArray):  # its entries, masked ones as --
            with np.printoptions(threshold=8, edgeitems=3):
                text = f"masked_array({value})"
        elif isinstance(value, np.ndarray) and value.ndim > 0:
            body = np.array2string(value, threshold=8, edgeitems=3, separator=", ", max_line_width=10**6)
            text = f"array({body}, shape={value.shape})" if value.size > 8 else f"array({body})"
        else:
            text = _REPR.repr(value)
    except Exception:  # a hostile __repr__
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 4, 0)] + " ..."
