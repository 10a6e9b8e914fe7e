"""``njit``: numba's compiler with an on-disk cache when numba is there, else plain Python.

Set ``AGENTOS_2048_PURE=1`` to run every kernel as plain Python (same results, slower).
Where no cache directory is writable, functions are still compiled, just not cached.
"""

from __future__ import annotations

import os


def njit(function=None, *, inline: bool = False):
    """Compile ``function`` with ``numba.njit(cache=True)``; fall back as documented above.

    ``@njit(inline=True)`` compiles a small kernel to be inlined into its callers in numba's own IR
    (``inline="always"``): a call between compiled functions that takes arrays otherwise counts their
    references with atomic instructions, which stop the processor from overlapping the memory reads of
    one call with the next (valuing a 2048 afterstate took 4x longer through three such calls).
    """
    if function is None:
        return lambda function: njit(function, inline=inline)
    if os.environ.get("AGENTOS_2048_PURE"):
        return function
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is a dependency
        return function
    options = {"inline": "always"} if inline else {}
    try:
        return numba.njit(cache=True, **options)(function)
    except RuntimeError:  # no writable cache locator for this install
        return numba.njit(**options)(function)
