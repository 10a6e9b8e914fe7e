"""``agentos publish``, ``agentos yank`` and ``agentos index``: writing a local index."""

from __future__ import annotations

import os
import tempfile

from ..errors import PublishError, UsageError
from ._artifacts import check_convention, read_artifact
from ._build import collect
from ._client import embedded_index_dir
from ._index import LocalIndex
from ._unpacked import check_unpacked


def index_dir(index: str | None = None) -> str:
    """The folder to write: ``index`` (a path or ``file://`` URL), else the folder that a local
    ``$AGENTOS_INDEX_URL`` names (``file://`` or a path; a trailing ``/simple`` is the root's),
    else the embedded ``index/``."""
    from ._client import INDEX_URL_ENV, to_url

    if not index and os.environ.get(INDEX_URL_ENV, "").strip():
        url = to_url(os.environ[INDEX_URL_ENV])
        if url.startswith("file:"):
            index = url
    if index:
        if "://" in index:
            from ._client import local_path

            path = local_path(index)
            if path is None:
                raise UsageError(f"can only publish into a local folder, not {index}")
            index = path
        return os.path.abspath(index)
    embedded = embedded_index_dir()
    if embedded is None:
        raise UsageError(f"no index folder: pass --index DIR (or set {INDEX_URL_ENV} to a file:// URL)")
    return embedded


def publish(paths: list[str], index: str | None = None, *, library: bool = False, sdist: bool = False) -> list[dict]:
    """Publish plugin folders (built into a wheel, plus an sdist with ``sdist``), wheels or sdists.

    Folders are built (always from their path, never resolved as a name), then every file goes
    through :func:`publish_files`. Returns one ``{"filename", "project", "version", "status",
    "index"}`` per file.
    """
    if not paths:
        raise UsageError("nothing to publish: name a plugin folder, a wheel or an sdist")
    root = index_dir(index)
    with tempfile.TemporaryDirectory(prefix="agentos-publish-") as work:
        return publish_files(collect(list(paths), work, sdist=sdist), root, library=library)


def publish_files(files: list[str], index_root: str, *, library: bool = False, owner: str | None = None) -> list[dict]:
    """The one way files enter an index: local wheels/sdists already on disk into the folder ``index_root``.

    Each file is first copied into the index's staging folder, and only the copy is read, hashed
    and checked (file name grammar, archive structure, bounded metadata, requirements, naming
    convention), without any lock; then, under the index lock, names must be ones the index may
    serve (``library``: the maintainers' libraries too), projects must be ``owner``'s (an upload's
    token holder; None: the maintainers), versions immutable, and component names keep their first
    owner. Nothing is written unless every file passes. Raises :class:`PublishError` (one line;
    :class:`~agentos.registry._owners.Forbidden` for a name or project that is not the publisher's).
    """
    import shutil

    if not files:
        raise UsageError("nothing to publish: name a wheel or an sdist")
    target = LocalIndex(index_root)
    with target.staging() as stage:
        copies = []
        for i, path in enumerate(files):
            if not os.path.isfile(path):
                raise PublishError(f"{path}: no such file")
            name = os.path.basename(path)
            os.makedirs(os.path.join(stage, str(i)))
            copies.append(shutil.copyfile(path, os.path.join(stage, str(i), name)))
        artifacts = [read_artifact(p) for p in copies]
        for art in artifacts:
            if art.packagetype == "bdist_wheel":
                check_unpacked(art.path, art.filename)
        by_version: dict[tuple[str, str], list] = {}
        for art in artifacts:
            by_version.setdefault((art.project, art.version), []).append(art)
        for arts in by_version.values():
            wheels = [a for a in arts if a.packagetype == "bdist_wheel"]
            for art in wheels or arts:  # an sdist's entry points are only checked without a wheel
                check_convention(art, library=library or owner is not None)
        results = target.publish(artifacts, library=library, owner=owner)
    for r in results:
        r["index"] = target.root
    return results


def yank(package: str, version: str, reason: str = "", index: str | None = None, *, undo: bool = False) -> list[str]:
    """Mark a published version yanked (PEP 592): pip and ``agentos install`` skip it unless pinned."""
    from ..host import normalize, parse_distribution_name

    if not reason and not undo:
        raise UsageError("say why: agentos yank NAME VERSION --reason TEXT")
    target = LocalIndex(index_dir(index))
    project = normalize(package)
    if parse_distribution_name(project) is None and not os.path.isdir(os.path.join(target.simple, project)):
        matches = (
            [p for p in os.listdir(target.simple) if p.endswith(f"-{project}")] if os.path.isdir(target.simple) else []
        )
        if len(matches) == 1:
            project = matches[0]
    return target.yank(project, version, reason, undo=undo)


def rebuild_index(index: str | None = None, *, accept_changes: bool = False) -> dict:
    return LocalIndex(index_dir(index)).rebuild(accept_changes=accept_changes)


def show_owners(index: str | None = None, project: str | None = None) -> list[tuple[str, str]]:
    from ._owners import show

    return show(LocalIndex(index_dir(index)), project)


def set_owner(project: str, owner: str | None, index: str | None = None) -> None:
    from packaging.utils import canonicalize_name

    from ._owners import reassign

    reassign(LocalIndex(index_dir(index)), canonicalize_name(project), owner)


def check_index(index: str | None = None) -> list[str]:
    return LocalIndex(index_dir(index)).check()
