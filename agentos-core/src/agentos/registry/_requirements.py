"""The agent's requirements file: one pinned, hashed line per installed component.

A component line names the exact file of the index, with its hash in the URL fragment::

    agentos-env-2048 @ file:///.../index/files/agentos-env-2048/agentos_env_2048-1.0.0-py3-none-any.whl#sha256=...

so ``pip install -r requirements.txt`` reinstalls exactly that file (pip checks the hash) without
consulting any index for it, and without switching pip into ``--require-hashes`` mode for the
other lines. Other lines (comments, options, hand-written requirements) are kept as they are.
"""

from __future__ import annotations

import os


def requirement_name(line: str) -> str | None:
    """The normalized project a requirements line is about, or None (comments, options...)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    text = line.split(" #", 1)[0].strip()
    if not text or text.startswith(("#", "-")):
        return None
    try:
        return canonicalize_name(Requirement(text).name)
    except InvalidRequirement:
        return None


def pinned_line(package: str, url: str, sha256: str) -> str:
    return f"{package} @ {url.split('#', 1)[0]}#sha256={sha256}"


def registry_line(client, project: str, version: str | None = None) -> str | None:
    """The hashed direct reference to the registry's file of ``project`` (``version``, else its latest).

    The one way a requirements line for a registry-hosted project is written (install, init,
    new agent); None when the registry has no such file.
    """
    from ..errors import UsageError
    from ._client import choose_file

    files = client.project_files(project) or []
    try:
        entry = choose_file(files, project, version)
    except UsageError:
        return None
    return pinned_line(project, entry["url"], entry["hashes"]["sha256"])


def lines_for(projects: dict[str, str | None], index_url: str | None = None, config=None) -> list[str]:
    """Requirements lines for ``projects`` (name -> installed version or None), as written by
    ``agentos init`` and ``agentos new agent``: each project the registry hosts is a hashed direct
    reference (:func:`registry_line`, the installed version when the registry has it, else its
    latest); anything else, or every line when no index is reachable, is pinned by version."""
    from ..errors import AgentOSError
    from ._client import IndexClient, resolve_index_url
    from ._owners import served

    try:
        client = IndexClient(resolve_index_url(index_url, config))
        hosted = served(client.catalogue())
    except AgentOSError:
        client, hosted = None, set()
    lines = []
    for project, version in projects.items():
        line = None
        if client is not None and project in hosted:
            line = registry_line(client, project, version) or registry_line(client, project)
        lines.append(line or (f"{project}=={version}" if version else project))
    return lines


def pin_hosted(path: str, index_url: str | None = None) -> None:
    """Rewrite the file at ``path`` so that every line naming an AgentOS project (``agentos-*``) is
    written by :func:`lines_for` (used after rendering ``agentos new agent``)."""
    from importlib import metadata

    text = read(path)
    out = []
    for line in text.splitlines():
        name = requirement_name(line)
        if name and name.startswith("agentos-"):
            try:
                version = metadata.version(name)
            except metadata.PackageNotFoundError:
                version = None
            line = lines_for({name: version}, index_url)[0]
        out.append(line)
    if out:
        from ..config import atomic_write

        atomic_write(path, "\n".join(out) + "\n")


def read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def with_line(text: str, project: str, line: str | None) -> str:
    """``text`` with the line(s) for ``project`` replaced by ``line`` (or removed when None)."""
    from packaging.utils import canonicalize_name

    project = canonicalize_name(project)
    out, placed = [], False
    for existing in text.splitlines():
        if requirement_name(existing) == project:
            if line is not None and not placed:
                out.append(line)
                placed = True
            continue
        out.append(existing)
    if line is not None and not placed:
        out.append(line)
    return "\n".join(out) + "\n" if out else ""


def requirements_path(config) -> str:
    return config.resolve_path(str(config.meta_value("requirements", "requirements.txt")))


def exists(path: str) -> bool:
    return os.path.exists(path)
