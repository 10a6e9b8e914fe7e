"""``njit``: numba's compiler with an on-disk cache when numba is there, else plain Python.

Set ``AGENTOS_2048_PURE=1`` to run every kernel as plain Python (same results, slower).
Where no cache directory is writable, functions are still compiled, just not cached.
"""

from __future__ import annotations

import os


def njit(function):
    """Compile ``function`` with ``numba.njit(cache=True)``; fall back as documented above."""
    if os.environ.get("AGENTOS_2048_PURE"):
        return function
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is a dependency
        return function
    try:
        return numba.njit(cache=True)(function)
    except RuntimeError:  # no writable cache locator for this install
        return numba.njit(function)
