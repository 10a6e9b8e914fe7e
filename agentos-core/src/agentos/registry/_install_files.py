"""``install/<project>.txt``: one pip requirements file per project, for machines without AgentOS.

``pip install -r $AGENTOS_INDEX_URL/install/agentos-env-2048.txt`` installs the project's newest
release and every project of this index it needs (agentos-core) as direct references to this
index's files with their sha256 (pip verifies them), and takes only third-party dependencies
(gymnasium, numpy...) from pip's usual index. No other index can then substitute a same-named
project (dependency confusion: agentos-core exists on PyPI as an unrelated project). pip expands
``${AGENTOS_INDEX_URL}`` in the file, so the index stays relocatable.
"""

from __future__ import annotations

import os
import re

FOLDER = "install"
VARIABLE = "AGENTOS_INDEX_URL"
_NAME_RE = re.compile(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*")
_SEPARATORS = re.compile(r"[-_.]+")


def _pick(catalogue: dict, project: str, specifier) -> str | None:
    """The newest non-yanked release of ``project`` that ``specifier`` allows."""
    from packaging.version import Version

    releases = catalogue["projects"][project]["releases"]
    allowed = [v for v, r in releases.items() if not r.get("yanked") and Version(v) in specifier]
    return max(allowed, key=Version) if allowed else None


def closure(catalogue: dict, project: str, version: str) -> list[tuple[str, str]]:
    """``(project, version)`` of ``project`` and every project of this index it requires, dependencies first."""
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name

    from ._owners import served

    owned = served(catalogue)
    order: list[tuple[str, str]] = []

    def visit(name: str, ver: str, seen: tuple) -> None:
        if any(n == name for n, _ in order) or name in seen:
            return
        for line in catalogue["projects"][name]["releases"][ver].get("requires") or []:
            try:
                req = Requirement(line)
                dep = canonicalize_name(req.name)
                if dep not in owned or (req.marker and not req.marker.evaluate({"extra": ""})):
                    continue  # a third-party project (pip's usual index, whatever lies in the folder) or an extra
            except Exception:  # InvalidRequirement, UndefinedComparison: publish refuses them; never fatal here
                continue
            chosen = _pick(catalogue, dep, req.specifier or SpecifierSet())
            if chosen:
                visit(dep, chosen, (*seen, name))
        order.append((name, ver))

    visit(project, version, ())
    return order


def render(index, catalogue: dict, project: str, version: str) -> str | None:
    """The requirements file of ``project`` ``version``, or None when a needed file is missing."""
    lines = []
    for name, ver in closure(catalogue, project, version):
        files = [f for f in index.project_files(name) if _file_version(f["filename"]) == ver]
        wheels = [f for f in files if f["filename"].endswith("-py3-none-any.whl")] or files
        if not wheels:
            return None
        chosen = wheels[0]
        package = catalogue["projects"][name]["package"]
        url = f"${{{VARIABLE}}}/files/{name}/{chosen['filename']}#sha256={chosen['hashes']['sha256']}"
        lines.append(f"{package} @ {url}")
    head = [
        f"# {catalogue['projects'][project]['package']} {version} and what it needs from this index, each an exact",
        "# file checked by its sha256; other dependencies come from pip's usual index (PyPI).",
        f"# Usage: export {VARIABLE}=<this index's root URL>; pip install -r ${VARIABLE}/{FOLDER}/{project}.txt",
    ]
    return "\n".join(head + lines) + "\n"


# -- extras: install/<project>[<extra>].txt --------------------------------------------------------
# ``pip install -r $AGENTOS_INDEX_URL/install/agentos-core[server].txt`` is the safe form of
# ``pip install 'agentos-core[server]'``: our projects are pinned to this index's files (with the
# extras asked of them, ``agentos-core[server] @ ...``), the extras' third-party dependencies come
# from PyPI. A plain ``pip install 'agentos-core[server]'`` would take PyPI's unrelated agentos-core.
MAX_EXTRAS = 32


def extras(release: dict) -> list[str]:
    """The extras a release declares (normalized, sorted, at most MAX_EXTRAS), read from its requirements'
    markers; a name outside PEP 685's grammar (``../x``, spaces) gets no file."""
    from ._extras import declared

    return declared(release.get("requires") or [])[:MAX_EXTRAS]


def extra_path(root: str, project: str, extra: str) -> str:
    return os.path.join(root, FOLDER, f"{project}[{extra}].txt")


def closure_with_extras(catalogue: dict, project: str, version: str, wanted: set[str]) -> list[tuple[str, str, set]]:
    """``(project, version, extras)`` of ``project[wanted]`` and every project of this index it needs."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.utils import canonicalize_name

    chosen: dict[str, tuple[str, set]] = {}
    order: list[str] = []

    def visit(name: str, ver: str, asked: set[str], seen: tuple) -> None:
        if name in seen:
            return
        if name in chosen:
            new = asked - chosen[name][1]
            if not new:
                return
            chosen[name][1].update(new)
        else:
            chosen[name] = (ver, set(asked))
        ver = chosen[name][0]
        for line in catalogue["projects"][name]["releases"][ver].get("requires") or []:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            dep = canonicalize_name(req.name)
            if dep not in catalogue["projects"]:
                continue  # a third-party project: pip's usual index
            if req.marker and not any(req.marker.evaluate({"extra": e}) for e in ("", *sorted(asked))):
                continue
            pick = chosen[dep][0] if dep in chosen else _pick(catalogue, dep, req.specifier or SpecifierSet())
            if pick:
                visit(dep, pick, {canonicalize_name(e) for e in req.extras}, (*seen, name))
        if name not in order:
            order.append(name)

    visit(project, version, set(wanted), ())
    return [(name, chosen[name][0], chosen[name][1]) for name in order]


def render_extra(index, catalogue: dict, project: str, version: str, extra: str) -> str | None:
    """The requirements file of ``project[extra]`` ``version``, or None when a needed file is missing."""
    lines = []
    for name, ver, asked in closure_with_extras(catalogue, project, version, {extra}):
        files = [f for f in index.project_files(name) if _file_version(f["filename"]) == ver]
        wheels = [f for f in files if f["filename"].endswith("-py3-none-any.whl")] or files
        if not wheels:
            return None
        package = catalogue["projects"][name]["package"] + (f"[{','.join(sorted(asked))}]" if asked else "")
        url = f"${{{VARIABLE}}}/files/{name}/{wheels[0]['filename']}#sha256={wheels[0]['hashes']['sha256']}"
        lines.append(f"{package} @ {url}")
    package = catalogue["projects"][project]["package"]
    head = [
        f"# {package}[{extra}] {version} and what it needs from this index, each an exact",
        "# file checked by its sha256; other dependencies (the extra's too) come from pip's usual index (PyPI).",
        f"# Usage: export {VARIABLE}=<this index's root URL>;",
        f'#        pip install -r "${VARIABLE}/{FOLDER}/{project}[{extra}].txt"',
    ]
    return "\n".join(head + lines) + "\n"


def _write_extras(index, catalogue: dict, project: str, version: str | None, write) -> None:
    """Write ``install/<project>[<extra>].txt`` for each extra of the newest release; remove stale ones."""
    keep = set()
    if version:
        for extra in extras(catalogue["projects"][project]["releases"][version]):
            text = render_extra(index, catalogue, project, version, extra)
            if text is not None:
                path = extra_path(index.root, project, extra)
                keep.add(path)
                if not _same(path, text):
                    write(path, text)
    folder = os.path.join(index.root, FOLDER)
    names = os.listdir(folder) if os.path.isdir(folder) else []
    for path in [os.path.join(folder, n) for n in names if n.startswith(f"{project}[") and n.endswith("].txt")]:
        if path not in keep:
            os.unlink(path)


def _file_version(filename: str) -> str:
    from packaging.utils import parse_sdist_filename, parse_wheel_filename

    try:
        parsed = parse_wheel_filename(filename) if filename.endswith(".whl") else parse_sdist_filename(filename)
    except ValueError:
        return ""
    return str(parsed[1])


def write_all(index, catalogue: dict, write, changed: set[str] | None = None) -> None:
    """Write ``install/<project>.txt`` of each project whose file may differ (``write(path, text)``;
    ``text`` None removes the file). Only projects the index may serve get one (:mod:`._owners`).

    With ``changed`` (the projects just published or yanked), only the projects that need one of
    them are rendered (from the catalogue: no other page is read), so a publish stays cheap.
    """
    from ._catalogue import latest
    from ._owners import served

    affected = set(catalogue["projects"]) if changed is None else _dependents(catalogue, changed)
    owned = served(catalogue)
    for project, info in catalogue["projects"].items():
        if project not in affected:
            continue
        version = latest(info["releases"]) if project in owned else None
        text = render(index, catalogue, project, version) if version else None
        path = os.path.join(index.root, FOLDER, f"{project}.txt")
        if text is None:
            if os.path.exists(path):
                write(path, None)  # removed
        elif not _same(path, text):
            write(path, text)
        _write_extras(index, catalogue, project, version if text is not None else None, write)


def _dependents(catalogue: dict, changed: set[str]) -> set[str]:
    """``changed`` and every project whose releases name one of them, transitively (names only: cheap)."""
    requires = {
        project: {_name(line) for release in info["releases"].values() for line in release.get("requires") or []}
        for project, info in catalogue["projects"].items()
    }
    affected = set(changed)
    while True:
        more = {project for project, names in requires.items() if names & affected} - affected
        if not more:
            return affected
        affected |= more


def _name(requirement: str) -> str:
    match = _NAME_RE.match(requirement)
    return _SEPARATORS.sub("-", match.group(0).strip()).lower() if match else ""


def _same(path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read() == text
    except OSError:
        return False
