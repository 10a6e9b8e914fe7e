"""Atomic file writes for the index folder and the user's registry settings."""

from __future__ import annotations

import contextlib
import os
import tempfile


def write_atomic(path: str, data: bytes | str) -> None:
    """Readers see the old file or the new one, never a half-written one. A file that already holds
    exactly these bytes is left alone, so rebuilding an unchanged index changes nothing on disk."""
    data = data.encode() if isinstance(data, str) else data
    if holds(path, data):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def holds(path: str, data: bytes) -> bool:
    """Whether ``path`` is a regular file whose content is exactly ``data`` (its size is compared first)."""
    try:
        if os.stat(path).st_size != len(data) or os.path.islink(path):
            return False
        with open(path, "rb") as f:
            return f.read() == data
    except OSError:
        return False
