"""A run's packages, exactly: from its lock to checked files of the index to a fresh venv.

The lock (``lock.json`` of a run folder) is someone else's data. Each component it names must be a
released package (``install = wheel``) with a valid name and version, or the agent's own code that
the run kept (``install = local``, its file's hash checked: :mod:`agentos.learning._kept_code`);
agentos-core's version comes from its package list. Each file is taken from the configured index (its
sha256 checked against the index by :meth:`IndexClient.fetch_file`), and when the lock records
``files_sha256`` (the hash of the released files, :func:`agentos.learning._records.files_hash`)
the wheel's own RECORD must give the same hash. Any difference is a :class:`LockMismatch`
before anything is installed. pip then
installs those files by their hashes, and the lock's other packages only as constraints (versions
of what the components pull in, from pip's configured index).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile

from ..errors import AgentOSError, UsageError

_NAME_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$")
MAX_RECORD_BYTES = 16 * 1024 * 1024  #: the most of a wheel's RECORD that is read
CORE = "agentos-core"
#: The recording venv's own tools (what ``python -m venv`` put there), not the run's: never constrained
#: (an old venv's setuptools would forbid a torch that needs a newer one).
VENV_TOOLS = ("pip", "setuptools", "wheel")


class LockMismatch(AgentOSError):
    """The lock names something the index does not serve as locked (altered lock, or another index)."""

    exit_code = 1


def _version(value, what: str) -> str:
    from packaging.version import InvalidVersion, Version

    try:
        return str(Version(str(value)))
    except InvalidVersion:
        raise LockMismatch(f"the lock gives {what} the version {str(value)[:40]!r}, which is no version") from None


def _local_component(entry: dict, label: str, code: dict[str, bytes]) -> bool:
    """Whether ``entry`` is the agent's own code (``source = file.py:Name``) that the run kept, with the
    lock's hash; LockMismatch when it names a kept file with another hash."""
    from ..learning._kept_code import code_hash, kept_path

    source = entry.get("source")
    rel = kept_path(source) if isinstance(source, str) else ""
    if entry.get("install") != "local" or rel not in code:
        return False
    if entry.get("sha256") != code_hash(code, rel):
        raise LockMismatch(f"{label}: the lock's sha256 of {rel} is not that of the kept file: "
                           "the run folder was altered")
    return True


def pins_from_lock(lock: dict, code: dict[str, bytes] | None = None) -> tuple[list[dict], dict[str, str]]:
    """``[{project, version, files_sha256}]`` to install by hash (components and agentos-core), and
    ``{project: version}`` of the lock's other packages (constraints). ``code`` is the run's kept
    agent code (:func:`agentos.learning._kept_code.checked_code`): a local component must be one of it."""
    pins, named = [], set()
    for entry in lock.get("components", []):
        if not isinstance(entry, dict):
            raise LockMismatch(f"malformed lock entry {str(entry)[:60]!r}")
        label = f"{entry.get('kind')} {entry.get('name')}"
        if _local_component(entry, label, code or {}):
            continue
        install, package = entry.get("install"), entry.get("package")
        if install == "editable":
            raise LockMismatch(f"{label} was an editable install (a working copy): no released file to reproduce from")
        if install != "wheel" or not isinstance(package, str) or not _NAME_RE.match(package):
            raise LockMismatch(f"{label} is not a released package in the lock (install {str(install)[:20]!r}): "
                               "reproduce rebuilds packaged components only")
        files = entry.get("files_sha256")
        if files is not None and not (isinstance(files, str) and re.fullmatch(r"[0-9a-f]{64}", files)):
            raise LockMismatch(f"{label}: files_sha256 in the lock is not a sha256")
        if package.lower() not in named:
            named.add(package.lower())
            pins.append({"project": package, "version": _version(entry.get("version"), package), "files_sha256": files})
    others = {}
    for item in lock.get("packages", []):
        if isinstance(item, dict) and isinstance(item.get("name"), str) and _NAME_RE.match(item["name"]):
            others[item["name"]] = item.get("version")
    core = next((v for n, v in others.items() if n.lower() == CORE), None)
    if core is None:
        raise LockMismatch("the lock lists no agentos-core version")
    pins.append({"project": CORE, "version": _version(core, CORE), "files_sha256": None})
    constraints = {}
    for name, version in others.items():
        if name.lower() in named or name.lower() in (CORE, *VENV_TOOLS):
            continue
        try:
            constraints[name] = _version(version, name)
        except LockMismatch:
            continue  # a local or odd version of a package the components may not even need
    return pins, constraints


def _wheel_files_hash(path: str) -> str:
    from ..learning._records import files_hash

    with zipfile.ZipFile(path) as wheel:
        records = [i for i in wheel.infolist()
                   if i.filename.endswith(".dist-info/RECORD") and i.filename.count("/") == 1]
        if len(records) != 1 or records[0].file_size > MAX_RECORD_BYTES:
            raise LockMismatch(f"{os.path.basename(path)} has no readable RECORD")
        return files_hash(wheel.read(records[0]).decode("utf-8", "replace"))


def fetch_pinned(pins: list[dict], index_url: str) -> list[str]:
    """Each pin's file from the index, checked; returns ``name @ file:...#sha256=...`` requirements."""
    import pathlib

    from ..registry._client import IndexClient, choose_file

    client = IndexClient(index_url)
    requirements = []
    for pin in pins:
        project, version = pin["project"], pin["version"]
        missing = f"the lock names {project} {version}, which the index at {index_url} does not have"
        files = client.project_files(project)
        if not files:
            raise LockMismatch(missing)
        try:
            entry = choose_file(files, project, version)
        except UsageError:
            raise LockMismatch(missing) from None
        path = client.fetch_file(entry)
        if pin["files_sha256"] is not None and _wheel_files_hash(path) != pin["files_sha256"]:
            raise LockMismatch(
                f"{project} {version}: hash mismatch: the lock's files_sha256 {pin['files_sha256'][:12]} is not that "
                f"of the index's file ({_wheel_files_hash(path)[:12]}): the lock was altered or the index differs"
            )
        requirements.append(f"{project} @ {pathlib.Path(path).as_uri()}#sha256={entry['hashes']['sha256']}")
    return requirements


def build_venv(folder: str, requirements: list[str], constraints: dict[str, str], echo) -> str:
    """A fresh venv in ``folder`` with exactly ``requirements`` (by hash) under ``constraints``; its python."""
    from ..registry._pip import error_line

    echo(f"creating a fresh virtual environment {folder}")
    subprocess.run([sys.executable, "-m", "venv", folder], check=True, capture_output=True)
    python = os.path.join(folder, "Scripts" if os.name == "nt" else "bin", "python")
    constraints_path = os.path.join(os.path.dirname(folder), "constraints.txt")
    with open(constraints_path, "w") as handle:
        handle.writelines(f"{name}=={version}\n" for name, version in sorted(constraints.items()))
    echo(f"installing {len(requirements)} locked packages by hash (their requirements at the lock's versions)")
    proc = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-input", "--no-compile",
         "-c", constraints_path, *requirements],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise AgentOSError(f"installing the lock's packages failed: {error_line(proc)}")
    return python
