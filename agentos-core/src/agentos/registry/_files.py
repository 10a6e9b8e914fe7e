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
    _replace(path, lambda f: f.write(data))


def copy_atomic(src: str, dest: str) -> None:
    """``src`` copied to ``dest`` the way :func:`write_atomic` writes (readers never see half a file)."""
    import shutil

    with open(src, "rb") as source:
        _replace(dest, lambda f: shutil.copyfileobj(source, f, 1 << 20))


def _replace(path: str, fill) -> None:
    """Fill a temporary file beside ``path`` (``fill(file)``), then rename it over ``path``."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            fill(f)
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
