"""One inter-process lock per folder (``fcntl.flock`` on a hidden lock file in it).

Used by the index (concurrent publishers) and by agent folders (concurrent installs editing
agent.ini and the requirements file): whoever holds it re-reads what it is about to change.
"""

from __future__ import annotations

import contextlib
import os


@contextlib.contextmanager
def folder_lock(folder: str, name: str = ".lock"):
    """Hold an exclusive lock on ``folder`` (blocking) for the duration of the ``with`` block."""
    import fcntl

    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
