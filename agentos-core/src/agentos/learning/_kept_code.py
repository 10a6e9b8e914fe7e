"""An agent's own code kept with each run, content-addressed, so that ``agentos reproduce`` can rebuild it.

The agent's own code is the files that agent.ini's ``source = file.py:Name`` lines name (``agent.py`` of
every ``agentos init`` agent) and the ``.py`` files of the agent folder that they import, followed
import by import (read with :mod:`ast`, never run). When a record is made, each file is copied into
the run folder as ``code-<sha256>.py`` and the lock lists it as ``{"path", "sha256", "bytes"}`` under
``local_code``: the run folder stays flat (a run source only moves plain files).

Rebuilding (:func:`restore`) reads someone else's data: the lock's entries are checked against an
allowlist (relative ``.py`` paths of plain names, no ``..``, no absolute path, bounded count, depth and
sizes) and every kept file must be a plain file (no link) whose sha256 is the lock's, else one line.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re

from .._safe_text import printable

LOCK_KEY = "local_code"
MAX_FILES = 256  #: the most files of an agent's own code kept with a run
MAX_FILE_BYTES = 1024 * 1024
MAX_TOTAL_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 8  #: the most folders in a kept path
_PART = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,99}$")
_SHA = re.compile(r"^[0-9a-f]{64}$")


class CodeTooLarge(ValueError):
    """The agent's own code is beyond the bounds a run keeps (the message says which)."""


class CodeMismatch(ValueError):
    """A run's kept code is not what its lock lists (altered, missing or malformed; one line)."""


def kept_name(sha256: str) -> str:
    """The file name of a kept file in the run folder."""
    return f"code-{sha256}.py"


def _inside(folder: str, path: str) -> str | None:
    """``path`` relative to ``folder`` (with ``/``) when it is a plain .py file inside it, else None."""
    real = os.path.realpath(path)
    rel = os.path.relpath(real, folder)
    if rel.startswith("..") or os.path.isabs(rel) or not rel.endswith(".py"):
        return None
    if os.path.islink(path) or not os.path.isfile(real):
        return None
    return rel.replace(os.sep, "/")


def _candidates(folder: str, base: str, module: str) -> list[str]:
    """Files that ``import module`` may load, searched from ``base`` (the importing file's folder)."""
    parts = [p for p in module.split(".") if p]
    found = []
    for depth in range(1, len(parts) + 1):
        stem = os.path.join(base, *parts[:depth])
        found += [stem + ".py", os.path.join(stem, "__init__.py")]
    return found


def _imported(folder: str, rel: str, source: bytes) -> list[str]:
    """The agent-folder files that the file ``rel`` imports (absolute, from its folder; or relative)."""
    try:
        tree = ast.parse(source, filename=rel)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    here = os.path.join(folder, os.path.dirname(rel))
    paths = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                paths += _candidates(folder, here, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = here
            for _ in range(max(node.level - 1, 0)):
                base = os.path.dirname(base)
            module = node.module or ""
            paths += _candidates(folder, base, module) if module else [os.path.join(base, "__init__.py")]
            for alias in node.names:  # from package import module
                paths += _candidates(folder, base, f"{module}.{alias.name}" if module else alias.name)
    return paths


def agent_code(config) -> dict[str, bytes]:
    """The agent's own code: relative path -> bytes; :class:`CodeTooLarge` beyond the bounds."""
    folder = os.path.realpath(config.directory)
    todo = []
    for comp in config.components.values():
        file_part = (comp.source or "").partition(":")[0].strip()
        if file_part.endswith(".py"):
            todo.append(config.resolve_path(file_part))
    files, total = {}, 0
    while todo:
        rel = _inside(folder, todo.pop(0))
        if rel is None or rel in files:
            continue
        if len(files) >= MAX_FILES or len(rel.split("/")) > MAX_DEPTH + 1:
            raise CodeTooLarge(f"more than {MAX_FILES} files, or a path deeper than {MAX_DEPTH} folders")
        path = os.path.join(folder, rel)
        if os.path.getsize(path) > MAX_FILE_BYTES:
            raise CodeTooLarge(f"{rel} is larger than {MAX_FILE_BYTES // 1024} KiB")
        with open(path, "rb") as handle:
            files[rel] = data = handle.read(MAX_FILE_BYTES + 1)
        total += len(data)
        if total > MAX_TOTAL_BYTES:
            raise CodeTooLarge(f"more than {MAX_TOTAL_BYTES // 2**20} MiB of code")
        todo += _imported(folder, rel, data)
    return files


def keep(run_folder: str, config) -> dict:
    """Copy the agent's own code into ``run_folder``; the lock's keys for it (``local_code`` and, when
    the code is beyond the bounds, ``local_code_error``)."""
    if config is None:
        return {LOCK_KEY: []}
    try:
        files = agent_code(config)
    except (CodeTooLarge, OSError) as exc:
        return {LOCK_KEY: [], "local_code_error": str(exc)[:200]}
    entries = []
    for rel, data in sorted(files.items()):
        sha = hashlib.sha256(data).hexdigest()
        target = os.path.join(run_folder, kept_name(sha))
        if not os.path.exists(target):
            tmp = f"{target}.partial"
            with open(tmp, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
        entries.append({"path": rel, "sha256": sha, "bytes": len(data)})
    return {LOCK_KEY: entries}


def _check_entry(entry, run_id: str) -> tuple[str, str, int]:
    if not isinstance(entry, dict):
        raise CodeMismatch(f"run {run_id}: a local_code entry of its lock is not an object")
    path, sha, size = entry.get("path"), entry.get("sha256"), entry.get("bytes")
    parts = path.split("/") if isinstance(path, str) else []
    if (not parts or len(parts) > MAX_DEPTH + 1 or not path.endswith(".py")
            or not all(_PART.match(p) and p not in (".", "..") for p in parts)):
        raise CodeMismatch(printable(f"run {run_id}: local code path {str(path)[:80]!r} is not a relative .py path "
                                   "inside the agent folder; not using it"))
    if not (isinstance(sha, str) and _SHA.match(sha)):
        raise CodeMismatch(printable(f"run {run_id}: local code {path}: sha256 {str(sha)[:20]!r} is not a sha256"))
    if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= MAX_FILE_BYTES:
        raise CodeMismatch(f"run {run_id}: local code {path}: bytes is not a size up to {MAX_FILE_BYTES // 1024} KiB")
    return path, sha, size


def checked_code(record, lock: dict) -> dict[str, bytes]:
    """The kept code of a run (someone else's data): relative path -> bytes, every hash checked
    (:class:`CodeMismatch` with one line when it is not the lock's)."""
    if lock.get("local_code_error"):
        raise CodeMismatch(printable(f"run {record.id}: its agent's code was not kept "
                                   f"({str(lock['local_code_error'])[:120]})"))
    entries = lock.get(LOCK_KEY) or []
    if not isinstance(entries, list) or len(entries) > MAX_FILES:
        raise CodeMismatch(f"run {record.id}: local_code in its lock is not a list of at most {MAX_FILES} files")
    files, total = {}, 0
    for entry in entries:
        path, sha, size = _check_entry(entry, record.id)
        if path.lower() in {p.lower() for p in files}:
            raise CodeMismatch(printable(f"run {record.id}: local code {path} is listed twice"))
        kept = record.path(kept_name(sha))
        if os.path.islink(kept) or not os.path.isfile(kept):
            raise CodeMismatch(printable(f"run {record.id}: local code {path}: {kept_name(sha)} is not a file "
                                       "in the run folder"))
        with open(kept, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        total += len(data)
        if len(data) != size or hashlib.sha256(data).hexdigest() != sha or total > MAX_TOTAL_BYTES:
            raise CodeMismatch(printable(f"run {record.id}: local code {path} is not the file its lock hashed "
                                       f"(sha256 {sha[:12]}): the run folder was altered"))
        files[path] = data
    return files


def restore(files: dict[str, bytes], folder: str) -> None:
    """Write checked kept code (:func:`checked_code`) into the agent ``folder`` (a fresh scratch folder)."""
    for rel, data in files.items():
        target = os.path.join(folder, *rel.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "xb") as handle:
            handle.write(data)


def kept_path(source) -> str:
    """The kept path that a ``source = file.py:Name`` value names (``./agent.py`` is ``agent.py``)."""
    import posixpath

    rel = str(source or "").partition(":")[0].strip().replace(os.sep, "/")
    return posixpath.normpath(rel) if rel else ""


def code_hash(files: dict[str, bytes], rel: str) -> str | None:
    """The lock's ``sha256`` of a local component whose file is ``rel`` (as :func:`component_fingerprint`)."""
    data = files.get(rel)
    if data is None:
        return None
    return hashlib.sha256(os.path.basename(rel).encode() + data).hexdigest()


__all__ = ["LOCK_KEY", "CodeMismatch", "CodeTooLarge", "agent_code", "checked_code", "code_hash", "keep", "kept_path",
           "restore"]
