"""Verifying claims without a maintainer: which claims wait, marking them ``pending``, running one.

A claim is a non-yanked trained-policy release with a results record. Its ``results["status"]`` in
the catalogue is the queue's state, so that it survives a restart: ``claimed`` (no verdict yet, not
queued), ``pending`` (queued or running), then the verdict ``agentos index verify`` stores:
``verified``, ``flagged`` or ``unverifiable``.

:func:`mark_pending` moves claims from ``claimed`` to ``pending`` under the index lock, bounded: at
most ``max_pending`` in all and ``per_owner`` per owner (a token's holder cannot fill the queue);
the others stay ``claimed`` until there is room. :func:`run_one` verifies one release in its own
process (``agentos index verify PROJECT==VERSION``: isolation, a timeout, a kill of its whole
process group) and maps the outcome; a re-run that crashed, timed out or was refused leaves no
verdict, so :func:`store_unverifiable` stores ``unverifiable`` with the reason (under the lock, only
if the release still has no verdict and the same record). Used by ``agentos index serve`` (see
:mod:`agentos.registry.server._verifier`) and by ``agentos index verify --all``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

VERDICTS = ("verified", "flagged", "unverifiable")
WAITING = ("claimed", "pending")
EXIT_CODES = {"verified": 0, "flagged": 1, "unverifiable": 3}  # 2: a usage error, nothing verified
DEFAULT_MAX_PENDING = 100
DEFAULT_PER_OWNER = 10
OUTPUT_TAIL = 16 << 10  # bytes of a verification's output kept (its last line is the reason)
MAINTAINERS = "(maintainers)"
ENV_KEEP = {"PATH", "HOME", "LANG", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"}
ENV_KEEP_PREFIXES = ("LC_", "PIP_", "XDG_", "UV_", "OMP_", "MKL_", "OPENBLAS_", "NUMBA_")  # threads, BLAS kernels


def status_of(release: dict) -> str | None:
    """The release's claim status, or None when it has no claim to verify (no record, or yanked)."""
    results = release.get("results")
    if not results or release.get("yanked"):
        return None
    return results.get("status", "claimed")


def claims(catalogue: dict, *, again: bool = False) -> list[tuple[str, str]]:
    """``(project, version)`` of every claim without a verdict (``again``: every claim), in catalogue order."""
    out = []
    for project, info in catalogue.get("projects", {}).items():
        for version, release in info.get("releases", {}).items():
            status = status_of(release)
            if status is not None and (again or status in WAITING):
                out.append((project, version))
    return out


def _rewrite(index, catalogue: dict, projects: set[str]) -> None:
    """Write the catalogue, the leaderboards and these projects' pages (as ``_verify.store`` does); under the lock."""
    from . import _site

    index._write_catalogue(catalogue, projects)
    _site.write_project_pages(index.root, catalogue, sorted(projects))


def mark_pending(
    root: str,
    *,
    max_pending: int = DEFAULT_MAX_PENDING,
    per_owner: int = DEFAULT_PER_OWNER,
    again: bool = False,
    skip=(),
) -> list[tuple[str, str]]:
    """Queue claims (``claimed`` -> ``pending``) while there is room; returns every pending ``(project, version)``.

    ``again`` queues releases that have a verdict too; ``skip`` names releases never to queue now.
    """
    from ._index import LocalIndex

    index = LocalIndex(root)
    with index.locked():
        catalogue = index.load_catalogue()
        projects = catalogue.get("projects", {})
        pending = [c for c in claims(catalogue) if _results(catalogue, c).get("status") == "pending"]
        owners: dict[str, int] = {}
        for project, _ in pending:
            owner = projects[project].get("owner") or MAINTAINERS
            owners[owner] = owners.get(owner, 0) + 1
        changed = set()
        for claim in claims(catalogue, again=again):
            project, _ = claim
            results = _results(catalogue, claim)
            owner = projects[project].get("owner") or MAINTAINERS
            if results.get("status") == "pending" or claim in skip:
                continue
            if len(pending) >= max_pending or owners.get(owner, 0) >= per_owner:
                continue  # stays as it is until there is room
            results["status"] = "pending"
            results.pop("verification", None)  # --again: the old verdict is replaced by the next one
            pending.append(claim)
            owners[owner] = owners.get(owner, 0) + 1
            changed.add(project)
        if changed:
            _rewrite(index, catalogue, changed)
    return pending


def _results(catalogue: dict, claim: tuple[str, str]) -> dict:
    project, version = claim
    return catalogue["projects"][project]["releases"][version]["results"]


def current(root: str, project: str, version: str) -> dict | None:
    """The release's results entry as the catalogue has it now (no lock: catalogue.json is replaced atomically)."""
    from ._index import LocalIndex

    release = LocalIndex(root).load_catalogue().get("projects", {}).get(project, {}).get("releases", {}).get(version)
    return None if release is None or status_of(release) is None else release["results"]


def store_unverifiable(root: str, project: str, version: str, sha256: str, reason: str) -> bool:
    """Store ``unverifiable`` with ``reason`` if the release still has the record ``sha256`` and no verdict."""
    from .._version import __version__
    from ._index import LocalIndex

    index = LocalIndex(root)
    with index.locked():
        catalogue = index.load_catalogue()
        release = catalogue.get("projects", {}).get(project, {}).get("releases", {}).get(version)
        if release is None or status_of(release) not in WAITING or release["results"].get("sha256") != sha256:
            return False
        verdict = {
            "status": "unverifiable",
            "reason": reason,
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "agentos": __version__,
        }
        release["results"]["status"] = "unverifiable"
        release["results"]["verification"] = verdict
        _rewrite(index, catalogue, {project})
    return True


def _reason(tail: bytes, code: int) -> str:
    from .._safe_text import printable

    lines = [ln.strip() for ln in tail.decode("utf-8", "replace").splitlines() if ln.strip()]
    last = lines[-1].removeprefix("agentos: error: ") if lines else ""
    return printable(last)[:300] or f"the verification exited with code {code}"


def run_one(
    root: str, project: str, version: str, *, timeout: float, stop: threading.Event | None = None, echo=None
) -> tuple[str, str] | None:
    """Verify ``project==version`` in its own process; ``(status, reason)``, or None if ``stop`` was set first.

    The process (and everything it started) is killed after ``timeout`` seconds or on ``stop``; a
    stopped release keeps its status (``pending``: verified at the next start).
    """
    before = current(root, project, version)
    if before is None:
        return None  # yanked or gone since it was queued
    command = [sys.executable, "-m", "agentos", "index", "verify", f"{project}=={version}", "--index", root]
    command += ["--timeout", f"{timeout:g}"]
    env = {**passed_on_environ(os.environ), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
        start_new_session=True,  # its own process group: a kill reaches pip, the venv and the policy
    )  # fmt: skip
    tail = bytearray()

    def drain():
        for chunk in iter(lambda: proc.stdout.read1(65536), b""):
            tail.extend(chunk)
            del tail[:-OUTPUT_TAIL]
            if echo:
                for line in chunk.decode("utf-8", "replace").splitlines():
                    echo(f"verify {project} {version}: {line}")

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout + min(timeout, 30)  # the inner --timeout first; this if it hangs anyway
    stopped = timed_out = False
    while proc.poll() is None:
        if stop is not None and stop.wait(0.2):
            stopped = True
        elif stop is None:
            time.sleep(0.2)
        timed_out = time.monotonic() > deadline
        if stopped or timed_out:
            _kill_group(proc)
            break
    proc.wait()
    reader.join(5)
    proc.stdout.close()
    if stopped:
        return None
    after = current(root, project, version)
    if after is not None and after.get("status") in VERDICTS and after.get("sha256") == before.get("sha256"):
        return after["status"], (after.get("verification") or {}).get("reason", "")  # verify stored it
    reason = f"the verification took longer than {timeout:g} s" if timed_out else _reason(bytes(tail), proc.returncode)
    store_unverifiable(root, project, version, before["sha256"], reason)
    return "unverifiable", reason


def passed_on_environ(environ) -> dict:
    """The environment variables a verification (or a fresh venv's set-up) gets: where programs, caches and
    pip's settings are, threads, never the rest (tokens, cloud credentials): the package's code runs there."""
    return {k: v for k, v in environ.items() if k in ENV_KEEP or k.startswith(ENV_KEEP_PREFIXES)}


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
