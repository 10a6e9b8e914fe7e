"""Which names an index may serve, and who may publish to each project.

The names (the one rule, applied on publish, upload, rebuild and install):

* ``agentos-<kind>-<name>`` for a kind of the host (components), published by anyone with a token
  (the first uploader owns the project) or by the maintainers locally;
* projects the maintainers publish locally with ``--library`` (such as ``agentos-core``), recorded
  as ``"library": true`` in ``catalogue.json``.

Nothing else: an upload of ``gymnasium`` is refused, and a file of that name lying in the folder is
never listed, pinned or installed from the index (third-party dependencies come from PyPI).

Owners: a project uploaded with a token records its owner in ``catalogue.json`` (the same atomic
write that publishes it). Before the first byte of a new project is written, the owner is also
recorded as a *claim* in the token store (``.access.json``), so a publish killed half-way leaves the
name to the same owner, whose repeated upload completes it.
"""

from __future__ import annotations

import os

from ..errors import PublishError

NAMES_RULE = "this index serves only components named agentos-<kind>-<name> and its maintainers' libraries"


class Forbidden(PublishError):
    """A name or project this publisher may not publish to (HTTP 403)."""


def is_component_name(project: str) -> bool:
    from ..host import parse_distribution_name

    return parse_distribution_name(project) is not None


def index_owns(project: str, info: dict | None) -> bool:
    """True if the index may serve ``project`` (its catalogue entry is ``info``)."""
    return is_component_name(project) or bool(isinstance(info, dict) and info.get("library") is True)


def served(catalogue: dict) -> set[str]:
    """The projects of ``catalogue`` that the index may serve (install pins only these)."""
    projects = catalogue.get("projects")
    if not isinstance(projects, dict):
        return set()
    return {p for p, info in projects.items() if isinstance(p, str) and index_owns(p, info)}


def check_name(project: str, *, library: bool, owner: str | None) -> None:
    """Uploads (``owner``) may only be components; the maintainers may add libraries with ``--library``."""
    if is_component_name(project):
        return
    if owner is not None:
        raise Forbidden(f"{project}: {NAMES_RULE}; refused")
    if not library:
        raise PublishError(f"{project}: not a component name (agentos-<kind>-<name>); publish libraries with --library")


def _claims(root: str) -> dict:
    from ._tokens import TokenStore

    return TokenStore(root).projects()


def check_owner(root: str, catalogue: dict, project: str, owner: str | None) -> bool:
    """Refuse an upload by ``owner`` to a project that is not theirs; True if a claim must be written.

    A project with no recorded owner that exists (in the catalogue, or files left in the folder)
    belongs to the maintainers. ``owner`` None is the maintainers themselves: always allowed.
    """
    if owner is None:
        return False
    info = catalogue["projects"].get(project)
    folder = os.path.join(root, "files", project)
    exists = info is not None or bool(os.path.isdir(folder) and os.listdir(folder))
    # a claim counts only once something was written: one that wrote nothing never locks a name
    recorded = (info or {}).get("owner") or (_claims(root).get(project) if exists else None)
    if recorded is None:
        if exists:
            raise Forbidden(f"{project} is owned by the index's maintainers (published without a token)")
        return True
    if recorded != owner:
        raise Forbidden(f"{project} is owned by another user")
    return False


def claim(root: str, project: str, owner: str) -> None:
    """Record ``owner``'s claim before anything of ``project`` is written (under the index lock)."""
    from ._tokens import TokenStore

    store = TokenStore(root)
    with store.locked():
        store.assign(project, owner)


def show(index, project: str | None = None) -> list[tuple[str, str]]:
    """``(project, owner)`` rows: ``(maintainers)``, an owner, or ``OWNER (unfinished upload)``."""
    catalogue = index.load_catalogue()
    claims = _claims(index.root)
    rows = []
    for name in sorted(set(catalogue["projects"]) | set(claims)):
        if project is not None and name != project:
            continue
        info = catalogue["projects"].get(name)
        folder = os.path.join(index.root, "files", name)
        if info is None and not (os.path.isdir(folder) and os.listdir(folder)):
            continue  # a claim that wrote nothing: no project
        if info is None:
            rows.append((name, f"{claims[name]} (unfinished upload: the same upload again completes it)"))
        else:
            rows.append((name, info.get("owner") or claims.get(name) or "(maintainers)"))
    return rows


def reassign(index, project: str, owner: str | None) -> None:
    """Give ``project`` to ``owner`` (None: to the maintainers), in the catalogue and the claims."""
    from ..errors import UsageError
    from ._tokens import TokenStore

    store = TokenStore(index.root)
    if owner is not None:
        store.check_owner_name(owner)
    with index.locked():
        catalogue = index.load_catalogue()
        info = catalogue["projects"].get(project)
        if info is None and project not in store.projects():
            raise UsageError(f"{project} is not in {index.root}")
        with store.locked():
            store.assign(project, owner)
        if info is not None:
            if owner is None:
                info.pop("owner", None)
            else:
                info["owner"] = owner
            index.write_catalogue_only(catalogue)
