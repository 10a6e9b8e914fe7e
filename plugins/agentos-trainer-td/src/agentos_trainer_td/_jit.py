"""``njit_nogil``: :func:`agentos_env_2048.kernels.njit` for the kernels Python threads call.

The function is compiled with ``nogil=True``: while it runs, other Python threads run too (each on
its own core).  Same fallbacks: plain Python under ``AGENTOS_2048_PURE=1``, no on-disk cache where
none is writable.
"""

from __future__ import annotations

import os


def njit_nogil(function):
    """Compile ``function`` with ``numba.njit(nogil=True, cache=True)``, falling back as documented above."""
    if os.environ.get("AGENTOS_2048_PURE"):
        return function
    import numba

    try:
        return numba.njit(nogil=True, cache=True)(function)
    except RuntimeError:  # no writable cache locator for this install
        return numba.njit(nogil=True)(function)
