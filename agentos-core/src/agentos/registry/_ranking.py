"""Which leaderboard a results record belongs on, whether it may be there, and where it ranks.

* **Boards**: one per environment component, and for an environment that plays many tasks (a
  Gymnasium id) one per task: :func:`board_id` is ``<environment>`` or ``<environment>--<task>``
  (lower case, ``/`` as ``--``; task ids never hold ``--``, so two tasks never share a file unless
  they differ only in case).
* **Environment check**: a record of an environment this index serves must name one of the releases
  that declare it (:func:`environment_problem`): a record evaluated on another package that took the
  name first, or on a version the index never had, is on no board (``index check`` lists it).
* **Statuses**: ``claimed`` (the publisher's record), ``pending`` (queued for the index's re-run),
  ``verified``, ``flagged`` (the re-run disagreed), ``unverifiable`` (the re-run could not play it).
  A flag (or an unverifiable verdict) stays on the project's later releases until one of them is
  verified itself (:func:`flagged_earlier`).
* **Ranking** (:func:`rank_key`): verified entries, then claimed and pending ones, then unverifiable
  and flagged ones; within a group, the lower end of the index's 95% interval of the IQM, then the
  IQM (entries without an interval after those with one).
"""

from __future__ import annotations

from ..host._names import normalize

STATUSES = ("claimed", "pending", "verified", "flagged", "unverifiable")
DISTRUSTED = ("flagged", "unverifiable")
RANKING = (
    "verified entries first, then claimed and pending ones, then unverifiable and flagged ones (a flag stays "
    "on the project's later releases until one is verified); within each, the highest lower end of the IQM's "
    "confidence interval first (ties: higher IQM), entries without an interval (too few episodes) after those with one"
)


def _version(text: str):
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text)
    except (InvalidVersion, TypeError):
        return None


def board_id(environment: dict) -> str:
    """``<environment>`` or, for a record with a task, ``<environment>--<task>`` (safe as a file stem)."""
    env = normalize(environment["name"])
    task = environment.get("task")
    return f"{env}--{task.lower().replace('/', '--')}" if task else env


def served_environments(catalogue: dict) -> dict[str, set[tuple[str, object]]]:
    """Normalized environment name -> the (project, version) of every release that declares it."""
    out: dict[str, set[tuple[str, object]]] = {}
    for project, info in catalogue.get("projects", {}).items():
        for version, release in info.get("releases", {}).items():
            for comp in release.get("components", []):
                if comp.get("kind") == "environment" and isinstance(comp.get("name"), str):
                    out.setdefault(normalize(comp["name"]), set()).add((project, _version(version)))
    return out


def environment_problem(environment: dict, served: dict) -> str | None:
    """Why a record of ``environment`` may not be on that environment's board (None: it may)."""
    from packaging.utils import canonicalize_name

    releases = served.get(normalize(environment["name"]))
    if not releases:
        return None  # an environment this index does not serve: its board holds only such records
    wanted = (canonicalize_name(environment["package"]), _version(environment["version"]))
    if wanted in releases:
        return None
    owners = ", ".join(sorted({project for project, _ in releases}))
    return (
        f"its record names {environment['package']} {environment['version']}, which is not a release of the "
        f"environment {environment['name']} this index serves (from {owners}): not on its leaderboard"
    )


def flagged_earlier(releases: dict, version: str) -> str | None:
    """The newest earlier release of a project (yanked or not) whose record was flagged or found
    unverifiable, when no release after it up to ``version`` was verified; else None."""
    mine = _version(version)
    history = sorted(
        ((_version(v), v, (r.get("results") or {}).get("status")) for v, r in releases.items()),
        key=lambda row: (row[0] is None, row[0]),
    )
    flag = None
    for parsed, text, status in history:
        if parsed is None or mine is None or parsed > mine:
            continue
        if status == "verified":
            flag = None
        elif status in DISTRUSTED and parsed < mine:
            flag = text
    return flag


def group(entry: dict) -> int:
    """0 verified, 1 claimed or pending, 2 unverifiable, flagged or flagged earlier."""
    if entry["status"] in DISTRUSTED or entry.get("flagged_earlier"):
        return 2
    return 0 if entry["status"] == "verified" else 1


def rank_key(entry: dict):
    interval = entry["interval"]
    low = interval[0] if interval is not None else entry["iqm"]
    return (group(entry), interval is None, -low, -entry["iqm"], entry["project"], entry["version"])


__all__ = ["RANKING", "STATUSES", "board_id", "environment_problem", "flagged_earlier", "rank_key",
           "served_environments"]
