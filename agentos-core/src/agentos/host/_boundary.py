"""The import boundary: plugin code runs inside it, and what it does there stays with the plugin.

A plugin's import may raise anything, ``SystemExit`` and ``GeneratorExit`` included; only
``KeyboardInterrupt`` (the user) passes through, everything else is that plugin's error. What a
plugin prints while it is imported goes to stderr, so that machine-readable output on stdout
(``agentos list --check --json``) stays clean. A plugin named in ``$AGENTOS_DISABLE_PLUGINS``
is never imported at all.
"""

from __future__ import annotations

import contextlib
import os
import sys

#: Comma-separated distributions, kinds or ``kind.name`` entries whose code is never imported.
DISABLE_ENV = "AGENTOS_DISABLE_PLUGINS"


def passes_through(exc: BaseException) -> bool:
    """Whether an exception raised by plugin code must reach the host (only Ctrl-C does)."""
    return isinstance(exc, KeyboardInterrupt)


@contextlib.contextmanager
def stdout_to_stderr():
    """Send stdout to stderr: Python's ``sys.stdout`` and, when it can, file descriptor 1."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = None
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no descriptors 1 and 2 (a windowed process): Python's streams are enough
        if saved is not None:
            os.close(saved)
        saved = None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)
