"""Undoing an install: what pip changed is put back, and Ctrl-C waits until files are consistent.

``pip_install`` runs ``pip install --no-deps`` of a planned set of files; if pip fails or Ctrl-C
arrives, ``undo`` removes what was new and reinstalls what was replaced (``rollback``), deletes what
a failed pip left half-written (``remove_half_installed``), and says exactly what is left, if
anything.  ``ctrl_c_deferred`` records a Ctrl-C during a block and raises it at the end.
"""

from __future__ import annotations

import contextlib
import os

from . import _pip
from ._client import IndexClient


def rollback(before: dict[str, str | None], client: IndexClient | None) -> list[str]:
    """Undo an install: remove what was new, reinstall what was replaced (best effort)."""
    after = _pip.installed_versions(before)
    remove = [n for n, v in before.items() if v is None and after.get(n) is not None]
    restore = [f"{n}=={v}" for n, v in before.items() if v is not None and after.get(n) != v]
    problems = []
    if remove:
        proc = _pip.run_pip("uninstall", "-y", *remove, shield=True)
        if proc.returncode:
            problems.append(_pip.error_line(proc))
    if restore:
        extra = ["--extra-index-url", client.simple_url] if client else []
        proc = _pip.run_pip("install", "--no-deps", *extra, *restore, shield=True)
        if proc.returncode:
            problems.append(_pip.error_line(proc))
    return problems


def installed_hash(project: str) -> str | None:
    """sha256 of the archive an installed distribution came from (its direct_url.json), if known."""
    import json
    from importlib import metadata

    try:
        text = metadata.distribution(project).read_text("direct_url.json")
        info = json.loads(text or "{}").get("archive_info", {})
    except (metadata.PackageNotFoundError, ValueError):
        return None
    hashes = info.get("hashes") or {}
    return hashes.get("sha256") or (info.get("hash", "").split("=", 1)[1] if "=" in info.get("hash", "") else None)


def leftovers(before: dict[str, str | None]) -> list[str]:
    """Distributions not back at their version of ``before`` (after a rollback)."""
    after = _pip.installed_versions(before)
    return [f"{n} {after[n]}" for n, v in before.items() if after.get(n) != v and after.get(n) is not None] + [
        f"{n} {v} (missing)" for n, v in before.items() if v is not None and after.get(n) is None
    ]


def remove_half_installed(project: str, wheel: str) -> None:
    """Delete what pip wrote of ``wheel`` (a project that was not installed before) when pip itself
    cannot uninstall it (a failure half-way leaves a ``.dist-info`` without METADATA or RECORD)."""
    import shutil
    import sysconfig
    import zipfile

    purelib = os.path.realpath(sysconfig.get_paths()["purelib"])
    with zipfile.ZipFile(wheel) as zf:
        members = [m for m in zf.namelist() if ".data/" not in m]
    folders = set()
    for member in members:
        target = os.path.realpath(os.path.join(purelib, member))
        if not target.startswith(purelib + os.sep):
            continue  # never outside site-packages (the wheel was validated; this is belt and braces)
        top = os.path.join(purelib, member.split("/", 1)[0])
        if top.endswith(".dist-info"):
            folders.add(top)
        if os.path.isfile(target):
            os.unlink(target)
        parent = os.path.dirname(target)
        while parent.startswith(purelib + os.sep):
            folders.add(parent)
            parent = os.path.dirname(parent)
    for folder in sorted(folders, key=len, reverse=True):
        if folder.endswith(".dist-info"):
            shutil.rmtree(folder, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                shutil.rmtree(os.path.join(folder, "__pycache__"), ignore_errors=True)
                os.rmdir(folder)  # only when empty: never someone else's files


def undo(before, client, what: str, art=None) -> str:
    """Roll back; the message says exactly what (if anything) is left and how to remove it."""
    problems = rollback(before, client)
    if art is not None and before.get(art.project) is None and _pip.installed_versions([art.project])[art.project]:
        remove_half_installed(art.project, art.path)
    left = leftovers(before)
    if not left:
        return f"{what}: the install was undone; agent.ini and requirements unchanged"
    names = " ".join(item.split()[0] for item in left)
    detail = f" ({'; '.join(problems)})" if problems else ""
    return (
        f"{what}: could not undo everything{detail}; left behind: {', '.join(left)}; "
        f"remove with: python -m pip uninstall -y {names}; agent.ini and requirements unchanged"
    )


def pip_install(art, requirements, before, client, force: bool, interrupted) -> None:
    args = ["install", "--no-deps", *(["--force-reinstall"] if force else []), *requirements]
    proc = _pip.run_pip(*args, shield=True)
    if interrupted.is_set():
        raise _pip.Interrupted(undo(before, client, "interrupted", art))
    if proc.returncode != 0:
        raise _pip.PipError(undo(before, client, f"pip failed: {_pip.error_line(proc)}", art))


class _Flag:
    def __init__(self):
        self.value = False

    def set(self, *_):
        self.value = True

    def is_set(self) -> bool:
        return self.value


@contextlib.contextmanager
def ctrl_c_deferred():
    """Ctrl-C is recorded, not raised, until the block ends: then it is raised (never lost)."""
    import signal

    flag = _Flag()
    try:
        old = signal.signal(signal.SIGINT, flag.set)
    except ValueError:  # not the main thread
        old = None
    try:
        yield flag
    finally:
        if old is not None:
            signal.signal(signal.SIGINT, old)
