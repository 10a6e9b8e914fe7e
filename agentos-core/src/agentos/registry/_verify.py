"""``agentos index verify``: the maintainers re-run a published claim and store the verdict.

A claim is a trained-policy release's results record. Verifying it means playing the same package
version on the same environment version (and task), on **new** seeds the verifier draws with
``secrets`` (none of the claim's), and comparing. The playing is given as a function
(:func:`verify`'s ``play``), so that this module holds only what the index decides and stores; the
CLI passes one that plays the policy in a sandbox (:mod:`agentos.sandbox`).

Agreement rule: the claim's 95% interval of the IQM and the re-run's overlap once both are widened
by ``tolerance`` times the larger |IQM| (a claim without an interval counts as its IQM alone). Two
honest 95% intervals of the same quantity overlap almost always (a point-in-interval rule would
flag about one honest claim in six at equal sample sizes), while a claim whose whole interval lies
above everything the package plays is flagged. The verdict (``verified`` or ``flagged``, with both
numbers, or ``unverifiable`` with the reason when ``play`` raises :class:`Unverifiable`; each with
``sandboxed`` and the ``environment`` release) goes into the catalogue under the index lock, the
re-run's record is served beside the claim's (``verification.json``), and the leaderboards and the
project's pages are rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time

from ..errors import AgentOSError, UsageError
from ._package_results import CONFIDENCE, index_interval
from ._results import MAX_EPISODES, MAX_RECORD, parse_results_record

DEFAULT_TOLERANCE = 0.05
EVALUATE_SEED_LIMIT = 2**32 - MAX_EPISODES  # agentos evaluate: --seed S plays S..S+N-1, S below this
MIN_EPISODES = 5  # agentos.stats.MIN_FOR_INTERVAL: fewer episodes give no interval to compare
STATUSES = ("verified", "flagged", "unverifiable")


class Unverifiable(AgentOSError):
    """The claim could not be re-run (the weights did not load, the re-run crashed or timed out, or the
    sandbox caught the package doing something forbidden); the message says why and is stored."""


def _target(index, spec: str) -> tuple[str, str, dict]:
    """(project, version, catalogue summary of its record) for ``PROJECT[==VERSION]``."""
    from packaging.version import InvalidVersion, Version

    from ..host._names import distribution_name, is_valid_name, normalize, parse_distribution_name
    from . import _catalogue

    name, _, wanted = spec.partition("==")
    name = name.strip()
    if not is_valid_name(name) or "\n" in name:
        raise UsageError(f"{spec[:80]!r}: name a policy project (e.g. 2048_master or agentos-policy-2048-master)")
    parsed = parse_distribution_name(name)
    project = normalize(name) if parsed and parsed[0] == "policy" else distribution_name("policy", name)
    info = index.load_catalogue()["projects"].get(project)
    if info is None:
        raise UsageError(f"{project} is not published in {index.root}")
    releases = info["releases"]
    if wanted:
        try:
            key = _catalogue.find_release(releases, wanted.strip())
        except InvalidVersion:
            raise UsageError(f"invalid version {wanted[:40]!r}") from None
        if key is None:
            raise UsageError(f"{project} has no version {wanted.strip()}")
    else:
        claims = [v for v, r in releases.items() if r.get("results") and not r.get("yanked")]
        if not claims:
            raise UsageError(f"{project} has no release with a results record to verify")
        key = max(claims, key=Version)
    results = releases[key].get("results")
    if not results:
        raise UsageError(f"{project} {key} has no results record (results.json) to verify")
    return project, key, results


def _claim(index, results: dict) -> dict:
    """The full claimed record, as served, validated again (never trusted from disk)."""
    path = os.path.join(index.root, *results["record"].split("/"))
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_RECORD + 1)
    except OSError as exc:
        raise UsageError(f"{results['record']}: unreadable ({exc.strerror}); run 'agentos index rebuild'") from None
    if hashlib.sha256(data).hexdigest() != results["sha256"]:
        raise UsageError(f"{results['record']} does not match the catalogue; run 'agentos index rebuild'")
    return parse_results_record(data)


def plan(index, spec: str, *, episodes: int | None = None, seed: int | None = None) -> dict:
    """What to re-run: the release, its claim, and ``episodes`` new seeds starting at ``seed``."""
    project, version, results = _target(index, spec)
    claim = _claim(index, results)
    episodes = claim["episodes"] if episodes is None else episodes
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < MIN_EPISODES:
        raise UsageError(f"--episodes must be at least {MIN_EPISODES} (fewer give no interval to compare)")
    if episodes > MAX_EPISODES:
        raise UsageError(f"--episodes must be at most {MAX_EPISODES:,} (what agentos evaluate plays)")
    used = set(claim["seeds"])
    start = _secret_start(used, episodes) if seed is None else seed
    if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start < EVALUATE_SEED_LIMIT:
        # said before any venv is made: a claim whose seeds end near the top would otherwise fail in the venv
        raise UsageError(
            f"the new seeds would start at {start}, outside agentos evaluate's range (0 to 2**32 - 100,001): "
            "pass --seed S (new seeds, none of the claim's)"
        )
    if seed is not None and any(s in used for s in range(seed, seed + episodes)):
        raise UsageError(
            f"--seed {seed} with {episodes} episodes reuses seeds of the claim ({min(used)}..{max(used)}); "
            "verification plays new seeds"
        )
    return {
        "project": project,
        "version": version,
        "policy": claim["policy"],
        "environment": claim["environment"],
        "claim": {**claim, "interval": results["interval"]},  # the index's own interval, as ranked
        "sha256": results["sha256"],
        "episodes": episodes,
        "seed": start,
    }


def _secret_start(used: set, episodes: int) -> int:
    """A first seed the package cannot predict (``secrets``), its ``episodes`` seeds none of the claim's."""
    while True:
        start = secrets.randbelow(EVALUATE_SEED_LIMIT)
        if not any(start <= s < start + episodes for s in used):
            return start


def _released_on(target: dict) -> dict:
    """The environment release the re-run played: name, version and, when the claim names one, task."""
    env = target["environment"]
    return {key: env[key] for key in ("name", "version", "task") if key in env}


def _fmt(value: float) -> str:
    return f"{value:,.6g}"


def verdict(claim: dict, rerun: dict, tolerance: float = DEFAULT_TOLERANCE) -> dict:
    """``verified`` when the two IQM intervals overlap, widened by ``tolerance`` x the larger |IQM|."""
    if rerun.get("interval") is None:
        raise UsageError(f"the re-run has no interval (at least {MIN_EPISODES} episodes are needed)")
    c_low, c_high = claim["interval"] or [claim["iqm"], claim["iqm"]]
    r_low, r_high = rerun["interval"]
    slack = tolerance * max(abs(claim["iqm"]), abs(rerun["iqm"]))
    if c_low > r_high + slack:
        status, why = "flagged", "the claim is above what the package plays"
    elif r_low > c_high + slack:
        status, why = "flagged", "the package plays better than it claims"
    else:
        status, why = "verified", "the intervals agree"
    reason = (
        f"{why}: claimed IQM {_fmt(claim['iqm'])} [{_fmt(c_low)}, {_fmt(c_high)}] over {claim['episodes']} episodes; "
        f"re-run IQM {_fmt(rerun['iqm'])} [{_fmt(r_low)}, {_fmt(r_high)}] over {rerun['episodes']} new episodes "
        f"(tolerance {tolerance:g} = {_fmt(slack)})"
    )
    seeds = rerun["seeds"]
    return {
        "status": status,
        "reason": reason,
        "sandboxed": bool(rerun.get("sandboxed", False)),
        "episodes": rerun["episodes"],
        "seeds": {
            "first": min(seeds),
            "last": max(seeds),
            "consecutive": seeds == list(range(seeds[0], seeds[-1] + 1)),
        },
        **{key: rerun[key] for key in ("mean", "std", "iqm", "interval", "confidence")},
        "tolerance": tolerance,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "agentos": rerun["agentos"],
    }


def _check_rerun(target: dict, rerun: dict) -> tuple[dict, dict]:
    """The re-run's record, checked to be of this very package, environment version and seeds, and the
    numbers to judge it by (its interval the index's own bootstrap of its returns)."""
    from packaging.version import Version

    from ..host._names import normalize

    rerun = parse_results_record(rerun)
    mine, theirs = target["policy"], rerun["policy"]
    if normalize(theirs["package"]) != target["project"] or Version(theirs["version"]) != Version(target["version"]):
        raise UsageError(
            f"the re-run played {theirs['package']} {theirs['version']}, not {target['project']} "
            f"{target['version']}; no verdict stored"
        )
    env, played = target["environment"], rerun["environment"]
    if normalize(played["name"]) != normalize(env["name"]) or Version(played["version"]) != Version(env["version"]):
        raise UsageError(
            f"the re-run played {played['name']} {played['version']}, not the claim's "
            f"{env['name']} {env['version']}; no verdict stored"
        )
    if env.get("task") and played.get("task") != env["task"]:  # a task of another board is not this claim
        raise UsageError(f"the re-run played task {played.get('task')}, not the claim's {env['task']}; "
                         "no verdict stored")
    wanted = list(range(target["seed"], target["seed"] + target["episodes"]))
    if rerun["seeds"] != wanted or normalize(theirs["name"]) != normalize(mine["name"]):
        raise UsageError("the re-run did not play the requested policy on the requested new seeds; no verdict stored")
    data = json.dumps(rerun, separators=(",", ":")).encode()
    ours = index_interval(hashlib.sha256(data).hexdigest(), rerun["returns"])  # not the venv's
    return rerun, {**rerun, "interval": ours, "confidence": CONFIDENCE}


def unverifiable(target: dict, reason: str, *, sandboxed: bool, tolerance: float) -> dict:
    """The verdict of a claim that could not be re-run: why, and what was asked (no numbers)."""
    from .._version import __version__

    first = target["seed"]
    return {
        "status": "unverifiable",
        "reason": reason,
        "sandboxed": bool(sandboxed),
        "environment": _released_on(target),
        "episodes": target["episodes"],
        "seeds": {"first": first, "last": first + target["episodes"] - 1, "consecutive": True},
        "tolerance": tolerance,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "agentos": __version__,
    }


def store(index, target: dict, rerun: dict | None, result: dict) -> None:
    """Record the verdict under the index lock; the claim must be the one that was re-run."""
    from . import _site
    from ._files import write_atomic

    with index.locked():
        catalogue = index.load_catalogue()
        release = catalogue["projects"].get(target["project"], {}).get("releases", {}).get(target["version"])
        results = (release or {}).get("results")
        if not results or results.get("sha256") != target["sha256"]:
            raise UsageError(f"{target['project']} {target['version']} changed while it was verified; run it again")
        results["status"] = result["status"]
        if rerun is None:  # unverifiable: nothing was played to serve
            results["verification"] = dict(result)
        else:
            record = results["record"].rsplit("/", 1)[0] + "/verification.json"
            path = os.path.join(index.root, *record.split("/"))
            write_atomic(path, json.dumps(rerun, separators=(",", ":")) + "\n")
            results["verification"] = {**result, "record": record}
        index._write_catalogue(catalogue, {target["project"]})  # leaderboards, root page, catalogue.json last
        _site.write_project_pages(index.root, catalogue, [target["project"]])


def verify(spec: str, play, *, index=None, episodes=None, seed=None, tolerance=DEFAULT_TOLERANCE, echo=None) -> dict:
    """Re-run the claim of ``spec`` (``PROJECT[==VERSION]``) with ``play(target)`` and store the verdict.

    ``play`` returns the re-run's record (bytes or dict; counted as not sandboxed) or ``(record,
    {"sandboxed": bool})``, or raises :class:`Unverifiable` (stored as an ``unverifiable`` verdict with
    its reason). ``target["environment"]`` may carry ``task`` (the Gymnasium id the claim played).
    Returns the verdict (``status``, ``reason``, ``sandboxed``, ``environment``, the re-run's numbers)
    plus ``project`` and ``version``.
    """
    from ._index import LocalIndex
    from ._publish import index_dir

    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 <= tolerance <= 10:
        raise UsageError("--tolerance must be a number from 0 to 10 (a fraction of the larger IQM)")
    target_index = LocalIndex(index_dir(index))
    target = plan(target_index, spec, episodes=episodes, seed=seed)
    if echo:
        seeds = f"{target['seed']}..{target['seed'] + target['episodes'] - 1}"
        echo(
            f"re-running {target['project']} {target['version']} on {target['environment']['name']} "
            f"{target['environment']['version']}: {target['episodes']} episodes, new seeds {seeds}"
        )
    try:
        played = play(target)
    except Unverifiable as exc:
        sandboxed = bool(getattr(exc, "sandboxed", False))
        result = unverifiable(target, str(exc), sandboxed=sandboxed, tolerance=float(tolerance))
        store(target_index, target, None, result)
        return {**result, "project": target["project"], "version": target["version"]}
    record, meta = played if isinstance(played, tuple) else (played, {})
    record, judged = _check_rerun(target, record)
    judged["sandboxed"] = bool(meta.get("sandboxed", False))
    result = {**verdict(target["claim"], judged, float(tolerance)), "environment": _released_on(target)}
    store(target_index, target, record, result)
    return {**result, "project": target["project"], "version": target["version"]}
