"""Which project an install name means: a component in the catalogue, a preset of a family, or a standard
Gymnasium task id (the ``gymnasium`` environment with its family's extra, :mod:`._gymnasium_ids`)."""

from __future__ import annotations

from ..core._presets import family_of
from ..errors import UsageError
from ..host import did_you_mean, distribution_name, is_valid_name, normalize
from . import _gymnasium_ids, _requirements
from ._client import IndexClient, IndexError_
from ._owners import served

__all__ = ["find_component", "find_project", "listed_extras"]


def find_project(client: IndexClient, kind: str, name: str) -> tuple[str, str, set[str]]:
    """(project, component name as published, projects the registry hosts) for ``kind name``."""
    try:
        catalogue = client.catalogue()
    except IndexError_ as exc:
        if "no catalogue.json" not in str(exc):
            raise
        return distribution_name(kind, name), name, set()  # a plain PEP 503 index: use the convention
    hosted = served(catalogue)  # only names the index may serve are pinned to it (never gymnasium)
    rows = [c for c in catalogue.get("components", []) if c["kind"] == kind]
    for row in rows:
        if normalize(row["name"]) == normalize(name):
            return row["project"], row["name"], hosted
    if kind == "preset" and (family := family_of(name, [r["name"] for r in rows])) is not None:
        row = next(r for r in rows if r["name"] == family)  # a preset of a family (zoo_sac_pendulum_v1 of zoo)
        return row["project"], name, hosted
    conventional = distribution_name(kind, name)
    if conventional in hosted:  # every release yanked: only an exact version can be installed
        return conventional, name, hosted
    hint = did_you_mean(name, [r["name"] for r in rows])
    raise UsageError(f"no {kind} named {name!r} in the registry at {client.url}{hint} (see: agentos search {kind})")


def find_component(client: IndexClient, kind: str, name: str, extras: list[str]):
    """:func:`find_project`, and a standard Gymnasium id as an environment's name: (project, component
    name, hosted projects, extras, the task id or None). ``LunarLander-v3`` is the ``gymnasium``
    environment with its family's extra (``box2d``) and the task LunarLander-v3 (:mod:`._gymnasium_ids`)."""
    found = _gymnasium_ids.family(name) if kind == "environment" else None
    if found is None or is_valid_name(name):  # ALE/Pong-v5 is no component's name: never looked up as one
        try:
            return (*find_project(client, kind, name), extras, None)
        except UsageError as exc:
            if found is None:
                if kind == "environment" and _gymnasium_ids.looks_like_an_id(name):
                    raise UsageError(f"{exc}; the Gymnasium ids it installs by name: {_gymnasium_ids.KNOWN}") from None
                raise
    project, comp_name, hosted = find_project(client, kind, _gymnasium_ids.COMPONENT)
    return project, comp_name, hosted, sorted({*extras, *([found[1]] if found[1] else [])}), name


def listed_extras(config, project: str) -> list[str]:
    """The extras of ``project``'s line in the agent's requirements file (kept when a task adds one)."""
    from packaging.requirements import InvalidRequirement, Requirement

    for line in _requirements.read(_requirements.requirements_path(config)).splitlines():
        if _requirements.requirement_name(line) == project:
            try:
                return sorted(Requirement(line).extras)
            except InvalidRequirement:
                return []
    return []
