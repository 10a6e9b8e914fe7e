"""A trained-policy wheel's results record and replay, read out of the archive as data.

``agentos_policy_<name>/results.json`` (and the GIF it names) are zip members: they are read with
a bounded read (never imported, never executed, never extracted to disk by path), the record goes
through :func:`~._results.parse_results_record`, and it must describe this very package: the
record's policy is the wheel's project, version and a policy component the wheel declares. The
replay must be a member of the same folder, at most :data:`MAX_REPLAY` bytes, and a GIF within the
recorder's bounds (:func:`~._gif.check_gif`: size a side, frames, pixels). A wheel without a record is
published as before; a wheel with a bad one is refused. A record made before tasks existed names no
task: the task is then the ``id`` the package's shipped ``agent.ini`` sets for that environment (the
Gymnasium plugin's task setting; a task id by the same allowlist), else the record has none.
"""

from __future__ import annotations

import hashlib
import json
import os

from ..errors import PublishError
from ._gif import GifError, check_gif
from ._results import MAX_RECORD, ResultsRecordError, parse_results_record

MAX_REPLAY = 16 << 20  # bytes of a replay GIF
MAX_AGENT_INI = 64 << 10  # bytes of a shipped agent.ini read for a record without a task
GIF_SIGNATURES = (b"GIF87a", b"GIF89a")
RESULTS_FOLDER = "results"  # <index>/results/<project>/<version>/{results.json,replay.gif}
CONFIDENCE = 0.95  # of the interval the index computes and ranks by


def package_folder(project: str) -> str | None:
    """The import package a policy distribution ships its files in (``agentos_policy_<name>``), or None."""
    from ..host._names import parse_distribution_name

    parsed = parse_distribution_name(project)
    if parsed is None or parsed[0] != "policy":
        return None
    return "agentos_policy_" + parsed[1].replace("-", "_")


def _bounded(zf, member: str, limit: int, filename: str, what: str) -> bytes:
    info = zf.getinfo(member)
    if info.file_size > limit:
        raise PublishError(
            f"{filename}: {what} {member} is {info.file_size} bytes (at most {limit >> 20} MiB); refused"
        )
    with zf.open(member) as f:
        data = f.read(limit + 1)
    if len(data) > limit:  # a header that understates the size
        raise PublishError(f"{filename}: {what} {member} is larger than {limit >> 20} MiB; refused")
    return data


def read_package_results(zf, names: list[str], art) -> None:
    """Set ``art.results`` (the validated record), ``art.results_json`` and ``art.replay`` from ``zf``."""
    folder = package_folder(art.project)
    member = f"{folder}/results.json"
    if folder is None or member not in names:
        return
    data = _bounded(zf, member, MAX_RECORD, art.filename, "results record")
    try:
        record = parse_results_record(data)
    except ResultsRecordError as exc:
        raise ResultsRecordError(f"{art.filename}: {member}: {exc}") from None
    check_record_matches(record, art)
    if "task" not in record["environment"] and f"{folder}/agent.ini" in names:
        from ..core._tasks import task_from_agent_ini

        try:
            text = _bounded(zf, f"{folder}/agent.ini", MAX_AGENT_INI, art.filename, "agent.ini")
        except PublishError:  # a large agent.ini: the record simply has no task
            text = b""
        art.shipped_task = task_from_agent_ini(text.decode("utf-8", "replace"), record["environment"]["name"])
    replay = record.get("replay")
    if replay:
        path = f"{folder}/{replay}"
        if path not in names:
            raise PublishError(f"{art.filename}: {member} names the replay {replay!r}, which the package does not hold")
        art.replay = _bounded(zf, path, MAX_REPLAY, art.filename, "replay")
        if not art.replay.startswith(GIF_SIGNATURES):
            raise PublishError(f"{art.filename}: replay {path} is not a GIF (no GIF87a/GIF89a signature); refused")
        try:
            check_gif(art.replay)  # what every visitor's browser decodes: bounded like a recorded replay
        except GifError as exc:
            raise PublishError(f"{art.filename}: replay {path}: {exc}; refused") from None
    art.results = record
    art.results_json = json.dumps(record, separators=(",", ":")).encode() + b"\n"


def check_record_matches(record: dict, art) -> None:
    """The record's policy is this package: its project, its version, one of its policy components."""
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    from ..host._names import normalize

    policy = record["policy"]
    declared = {normalize(c["name"]) for c in art.components if c["kind"] == "policy"}
    if canonicalize_name(policy["package"]) != art.project or Version(policy["version"]) != Version(art.version):
        raise PublishError(
            f"{art.filename}: results.json describes {policy['package']} {policy['version']}, "
            f"not this package ({art.project} {art.version}); refused"
        )
    if normalize(policy["name"]) not in declared:
        raise PublishError(
            f"{art.filename}: results.json names the policy {policy['name']!r}, which it does not declare"
        )


def check_record_environment(catalogue: dict, art) -> None:
    """A record of an environment this index serves names that environment's project and one of its
    releases: a record evaluated on another package (or on a version the index never had) cannot take
    a place on that environment's leaderboard. (An environment the index does not serve is not checked.)"""
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    from ..host._names import normalize

    if art.results is None:
        return
    env = art.results["environment"]
    name = normalize(env["name"])
    owners = {
        project
        for project, info in catalogue.get("projects", {}).items()
        for release in info.get("releases", {}).values()
        for c in release.get("components", [])
        if c.get("kind") == "environment" and normalize(c.get("name", "")) == name
    }
    if not owners:
        return
    project = canonicalize_name(env["package"])
    if project not in owners:
        raise PublishError(
            f"{art.filename}: results.json names the environment {env['name']!r} of {env['package']}, "
            f"but this index serves it from {', '.join(sorted(owners))}; refused"
        )
    versions = set()
    for version in catalogue["projects"][project].get("releases", {}):
        try:
            versions.add(Version(version))
        except InvalidVersion:
            continue
    if Version(env["version"]) not in versions:
        raise PublishError(
            f"{art.filename}: results.json names {env['package']} {env['version']}, "
            "a version this index does not have; refused"
        )


#: The index's own interval of each record it has seen (by the record's sha256): a record's returns are
#: bootstrapped once, and ``index rebuild`` takes the intervals of the catalogue it replaces.
_INTERVALS: dict[str, list[float] | None] = {}


def remember_intervals(projects: dict) -> None:
    """Take the intervals a catalogue already holds (its ``projects``), so that a rebuild does not redo them."""
    for info in projects.values():
        for release in info.get("releases", {}).values():
            results = release.get("results")
            if results and "sha256" in results and results.get("confidence") == CONFIDENCE:
                _INTERVALS[results["sha256"]] = results.get("interval")


def index_interval(sha256: str, returns: list[float]) -> list[float] | None:
    """The 95% percentile-bootstrap interval of the IQM of ``returns``, computed by the index itself
    (:func:`agentos.stats.summarize`, the call ``agentos evaluate`` makes): what a leaderboard ranks by,
    whatever interval the record claims. None below the minimum number of episodes."""
    if sha256 not in _INTERVALS:
        from .. import stats

        if len(_INTERVALS) >= 100_000:  # a long-running server: the cache stays bounded
            _INTERVALS.clear()

        found = stats.summarize(returns, confidence=CONFIDENCE)["interval"]
        _INTERVALS[sha256] = [float(found[0]), float(found[1])] if found is not None else None
    return _INTERVALS[sha256]


def summary(art) -> dict:
    """What the catalogue keeps of a release's record (per-episode lists stay in the record file)."""
    record = art.results
    seeds = record["seeds"]
    consecutive = seeds == list(range(seeds[0], seeds[0] + len(seeds)))
    base = f"{RESULTS_FOLDER}/{art.project}/{art.version}"
    sha256 = hashlib.sha256(art.results_json).hexdigest()
    environment = dict(record["environment"])
    if art.shipped_task and "task" not in environment:
        environment["task"] = art.shipped_task  # read from the shipped agent.ini (a record made before tasks)
    return {
        "environment": environment,
        **({"task_from": "agent.ini"} if "task" not in record["environment"] and art.shipped_task else {}),
        "policy": record["policy"],
        "episodes": record["episodes"],
        "seeds": {"first": min(seeds), "last": max(seeds), "consecutive": consecutive},
        **{key: record[key] for key in ("mean", "std", "iqm")},
        "interval": index_interval(sha256, record["returns"]),
        "confidence": CONFIDENCE,
        "claimed_interval": record["interval"],
        "claimed_confidence": record["confidence"],
        **{key: record[key] for key in ("metrics", "created", "agentos")},
        "record": f"{base}/results.json",
        "replay": f"{base}/replay.gif" if art.replay else None,
        "sha256": sha256,
        "status": "claimed",
    }


def results_files(root: str, art) -> list[tuple[str, bytes]]:
    """``(path, bytes)`` of the record and replay files the index serves for ``art`` (none without a record)."""
    if art.results is None:
        return []
    base = os.path.join(root, RESULTS_FOLDER, art.project, art.version)
    out = [(os.path.join(base, "results.json"), art.results_json)]
    if art.replay:
        out.append((os.path.join(base, "replay.gif"), art.replay))
    return out


def check_results(root: str, catalogue: dict) -> list[str]:
    """Problems of the served record, replay and verification files, and records naming an environment
    release the index does not serve under that name (``agentos index check``)."""
    from ._ranking import environment_problem, served_environments

    problems = []
    served = served_environments(catalogue)
    for project, info in catalogue["projects"].items():
        for version, release in info.get("releases", {}).items():
            results = release.get("results")
            if not results:
                continue
            wrong = environment_problem(results["environment"], served)
            if wrong and not release.get("yanked"):
                problems.append(f"{project} {version}: {wrong}")
            path = os.path.join(root, *results["record"].split("/"))
            try:
                with open(path, "rb") as f:
                    digest = hashlib.sha256(f.read(2 * MAX_RECORD)).hexdigest()
            except OSError:
                digest = None
            if digest != results.get("sha256"):
                problems.append(f"{project} {version}: {results['record']} missing or not the published record")
            extra = [results.get("replay"), (results.get("verification") or {}).get("record")]
            for rel in filter(None, extra):
                if not os.path.isfile(os.path.join(root, *rel.split("/"))):
                    problems.append(f"{project} {version}: {rel} missing")
    return problems
