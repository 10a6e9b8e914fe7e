"""A static package index in a folder: publish, yank, rebuild, check.

Layout (every path is a static file, so any web server or ``file://`` serves it)::

    index.html                         browsable catalogue
    catalogue.json                     machine-readable catalogue (also the index's state)
    simple/index.html, index.json      PEP 503 / PEP 691 root: every project
    simple/<project>/index.html        PEP 503 project page
    simple/<project>/index.json        PEP 691 project page
    files/<project>/<file>             wheels and sdists
    files/<project>/<file>.metadata    PEP 658 core metadata of each wheel

Publishing rewrites only what changes: the project's two pages, the catalogue, the catalogue
page, and the root pages when the project is new, each atomically (temporary file, then
``os.replace``); concurrent publishers are serialized by a lock file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time

from ..errors import AgentOSError
from . import _catalogue, _install_files, _pages
from ._artifacts import Artifact, PublishError, is_distribution_file, read_artifact, sha256_file


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def write_atomic(path: str, data: bytes | str) -> None:
    """Readers see the old file or the new one, never a half-written one."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _copy_atomic(src: str, dest: str) -> None:
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(dest)}.", suffix=".tmp", dir=os.path.dirname(dest))
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _version_key(entry: dict):
    from packaging.utils import parse_sdist_filename, parse_wheel_filename

    name = entry["filename"]
    try:
        version = parse_wheel_filename(name)[1] if name.endswith(".whl") else parse_sdist_filename(name)[1]
    except ValueError:
        return (0, name)
    return (1, version, name)


class LocalIndex:
    """The index stored in the folder ``root``."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self.simple = os.path.join(self.root, "simple")
        self.files = os.path.join(self.root, "files")
        self.catalogue_path = os.path.join(self.root, "catalogue.json")

    # -- reading ------------------------------------------------------------------------------------
    def load_catalogue(self) -> dict:
        try:
            with open(self.catalogue_path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return _catalogue.empty()
        except (OSError, ValueError) as exc:
            raise AgentOSError(
                f"{self.catalogue_path}: unreadable catalogue ({exc}); run 'agentos index rebuild'"
            ) from None
        return data

    def project_files(self, project: str) -> list[dict]:
        path = os.path.join(self.simple, project, "index.json")
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)["files"]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError) as exc:
            raise AgentOSError(f"{path}: unreadable project page ({exc}); run 'agentos index rebuild'") from None

    @contextlib.contextmanager
    def locked(self):
        import fcntl

        os.makedirs(self.root, exist_ok=True)
        with open(os.path.join(self.root, ".lock"), "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    # -- writing ------------------------------------------------------------------------------------
    def _file_url(self, art: Artifact) -> str:
        return f"../../files/{art.project}/{art.filename}"

    def _write_project(self, project: str, files: list[dict]) -> None:
        files.sort(key=_version_key)
        versions = []
        for entry in files:
            v = _version_key(entry)
            if len(v) == 3 and str(v[1]) not in versions:
                versions.append(str(v[1]))
        folder = os.path.join(self.simple, project)
        write_atomic(os.path.join(folder, "index.json"), _pages.project_json(project, files, versions))
        write_atomic(os.path.join(folder, "index.html"), _pages.project_html(project, files))

    def _write_catalogue(self, catalogue: dict, changed: set[str] | None = None) -> None:
        _catalogue.refresh(catalogue)
        _install_files.write_all(self, catalogue, write_atomic, changed)  # install/<project>.txt, for plain pip
        write_atomic(self.catalogue_path, _catalogue.dumps(catalogue))
        write_atomic(os.path.join(self.root, "index.html"), _catalogue.render_html(catalogue))

    def _write_root(self, projects: list[str]) -> None:
        write_atomic(os.path.join(self.simple, "index.json"), _pages.root_json(projects))
        write_atomic(os.path.join(self.simple, "index.html"), _pages.root_html(projects))

    def _store(self, art: Artifact) -> None:
        dest = os.path.join(self.files, art.project, art.filename)
        if not (os.path.exists(dest) and sha256_file(dest) == art.sha256):
            _copy_atomic(art.path, dest)
        if art.metadata:
            write_atomic(f"{dest}.metadata", art.metadata)

    def publish(self, artifacts: list[Artifact]) -> list[dict]:
        """Add files; returns ``{"filename", "project", "version", "status"}`` per file.

        A file already published with the same bytes is left alone (``unchanged``); one with
        different bytes is refused (versions are immutable) and nothing is written.
        """
        results = []
        with self.locked():
            catalogue = self.load_catalogue()
            new_projects = False
            by_project: dict[str, list[Artifact]] = {}
            for art in artifacts:
                by_project.setdefault(art.project, []).append(art)
            plans = []
            for project, arts in by_project.items():  # check everything before writing anything
                files = self.project_files(project)
                listed = {f["filename"]: f for f in files}
                fresh = []
                for art in arts:
                    old = listed.get(art.filename)
                    stored = os.path.join(self.files, project, art.filename)
                    if old is None and os.path.exists(stored) and sha256_file(stored) != art.sha256:
                        old = {"hashes": {"sha256": sha256_file(stored)}}
                    if old is not None and old["hashes"].get("sha256") != art.sha256:
                        raise PublishError(
                            f"{art.filename} is already published with different content "
                            f"(sha256 {old['hashes'].get('sha256', '?')[:12]}..., new {art.sha256[:12]}...); "
                            "versions are immutable: bump the version"
                        )
                    status = "unchanged" if old is not None else "published"
                    results.append(
                        {"filename": art.filename, "project": project, "version": art.version, "status": status}
                    )
                    if old is None and art.filename not in {a.filename for a in fresh}:
                        fresh.append(art)
                if fresh:
                    plans.append((project, files, fresh))
            for project, files, fresh in plans:
                new_projects |= project not in catalogue["projects"]
                now = _now()
                for art in fresh:
                    self._store(art)
                    files.append(_pages.file_entry(art, self._file_url(art), now))
                    _catalogue.add_release(catalogue, art)
                self._write_project(project, files)
            if plans:
                self._write_catalogue(catalogue, {project for project, _, _ in plans})
            if new_projects or not os.path.exists(os.path.join(self.simple, "index.html")):
                self._write_root(sorted(catalogue["projects"]))
        return results

    def yank(self, project: str, version: str, reason: str = "", *, undo: bool = False) -> list[str]:
        """PEP 592: mark every file of ``version`` yanked (or not); returns the files changed."""
        from packaging.utils import canonicalize_name
        from packaging.version import InvalidVersion, Version

        project = canonicalize_name(project)
        try:
            wanted = Version(version)
        except InvalidVersion:
            raise PublishError(f"invalid version {version!r}") from None
        with self.locked():
            files = self.project_files(project)
            if not files:
                raise PublishError(f"{project} is not published in {self.root}")
            changed = []
            for entry in files:
                key = _version_key(entry)
                if len(key) == 3 and key[1] == wanted:
                    entry["yanked"] = False if undo else (reason or True)
                    changed.append(entry["filename"])
            if not changed:
                raise PublishError(f"{project} has no version {version}")
            self._write_project(project, files)
            catalogue = self.load_catalogue()
            release = catalogue["projects"].get(project, {}).get("releases", {}).get(str(wanted))
            if release is not None:
                release["yanked"] = False if undo else (reason or True)
            self._write_catalogue(catalogue, {project})
        return changed

    def rebuild(self) -> dict:
        """Re-read every published file and rewrite every page (keeps yanks and upload times)."""
        with self.locked():
            catalogue = _catalogue.empty()
            projects = sorted(os.listdir(self.files)) if os.path.isdir(self.files) else []
            count = 0
            for project in projects:
                old = {f["filename"]: f for f in self.project_files(project)}
                folder = os.path.join(self.files, project)
                files, arts = [], []
                for filename in sorted(os.listdir(folder)):
                    if not is_distribution_file(filename):
                        continue
                    art = read_artifact(os.path.join(folder, filename))
                    prev = old.get(filename, {})
                    upload = prev.get("upload-time") or time.strftime(
                        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(art.path))
                    )
                    files.append(_pages.file_entry(art, self._file_url(art), upload, prev.get("yanked", False)))
                    arts.append(art)
                    if art.metadata:
                        write_atomic(f"{art.path}.metadata", art.metadata)
                for art in sorted(arts, key=lambda a: a.packagetype != "sdist"):  # wheels last: they win
                    _catalogue.add_release(catalogue, art)
                    release = catalogue["projects"][art.project]["releases"][art.version]
                    release["yanked"] = next((f["yanked"] for f in files if f["filename"] == art.filename), False)
                if files:
                    self._write_project(project, files)
                    count += len(files)
            self._write_catalogue(catalogue)
            self._write_root(sorted(catalogue["projects"]))
        return {"projects": len(catalogue["projects"]), "files": count}

    def check(self) -> list[str]:
        """Problems found: listed files that are missing or whose bytes do not match their hash."""
        problems = []
        catalogue = self.load_catalogue()
        for project in catalogue["projects"]:
            for entry in self.project_files(project):
                path = os.path.join(self.files, project, entry["filename"])
                if not os.path.exists(path):
                    problems.append(f"{entry['filename']}: listed but missing")
                elif sha256_file(path) != entry["hashes"]["sha256"]:
                    problems.append(f"{entry['filename']}: sha256 does not match the index")
                meta = entry.get("core-metadata")
                if meta and (
                    not os.path.exists(f"{path}.metadata") or sha256_file(f"{path}.metadata") != meta["sha256"]
                ):
                    problems.append(f"{entry['filename']}.metadata: missing or does not match the index")
        return problems
