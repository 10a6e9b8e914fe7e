"""pip as a subprocess of the agent's interpreter, and what we check before letting it change anything.

* :func:`unmet` - requirements that the installed distributions do not satisfy (recursively); when
  there are none, installing a component changes nothing but the component itself.
* :func:`dry_run` - ``pip install --dry-run --report -``: what pip would install, nothing changed.
* :func:`conflicts` - installed distributions whose requirements a plan would break.
* :func:`run_pip` - pip shielded from Ctrl-C while it changes the environment (then we roll back).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ..errors import AgentOSError


class PipError(AgentOSError):
    """pip failed; the message is pip's own error line (``line``: that line alone)."""

    def __init__(self, message: str, line: str | None = None):
        super().__init__(message)
        self.line = line or message


class Interrupted(AgentOSError):
    exit_code = 130


def pip_command(*args: str, python: str | None = None) -> list[str]:
    return [python or sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]


def run_pip(*args: str, shield: bool = False, python: str | None = None) -> subprocess.CompletedProcess:
    """Run pip; with ``shield``, Ctrl-C does not reach pip: we wait for it, then re-raise."""
    env = dict(os.environ)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    proc = subprocess.Popen(
        pip_command(*args, python=python),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=shield,
        env=env,
    )
    try:
        out, err = proc.communicate()
    except KeyboardInterrupt:
        if not shield:
            proc.terminate()
            proc.wait()
            raise
        out, err = proc.communicate()  # let pip finish its transaction, then undo it
        raise KeyboardInterrupt from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def error_line(proc: subprocess.CompletedProcess) -> str:
    """pip's most telling error line."""
    lines = [ln.strip() for ln in (proc.stderr or "").splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith("ERROR:"):
            msg = ln[len("ERROR:") :].strip()
            if "do not match the hashes" in msg.lower() or "THESE PACKAGES DO NOT MATCH" in ln:
                return "a downloaded file does not match its sha256 hash (the file was altered)"
            return msg
    return lines[-1] if lines else f"pip exited with code {proc.returncode}"


def _evaluate(marker, extra: str = "") -> bool:
    return marker is None or marker.evaluate({"extra": extra})


def unmet(requirements: list[str]) -> list[str]:
    """Requirements (with their transitive requirements) not satisfied by what is installed."""
    from importlib import metadata

    from packaging.requirements import InvalidRequirement, Requirement

    missing, seen = [], set()
    stack = [(req, "") for req in requirements]
    while stack:
        text, extra = stack.pop()
        if (text, extra) in seen:
            continue
        seen.add((text, extra))
        try:
            req = Requirement(text)
        except InvalidRequirement:
            missing.append(text)
            continue
        if not _evaluate(req.marker, extra):
            continue
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            missing.append(text)
            continue
        if req.url or not req.specifier.contains(dist.version, prereleases=True):
            missing.append(text)
            continue
        for sub in dist.requires or []:
            for e in sorted(req.extras) or [""]:
                stack.append((sub, e))
    return missing


def installed_versions(names) -> dict[str, str | None]:
    from importlib import metadata

    result = {}
    for name in names:
        try:
            result[name] = metadata.version(name) or "?"  # "?": a half-installed .dist-info (no METADATA)
        except metadata.PackageNotFoundError:
            result[name] = None
    return result


def conflicts(plan: dict[str, str], labels: dict[str, str] | None = None) -> list[str]:
    """Installed distributions (outside ``plan``) whose requirements ``plan`` would break.

    ``plan`` maps normalized names to the versions about to be installed; ``labels`` names the
    components a distribution provides, for the message.
    """
    from importlib import metadata

    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    labels = labels or {}
    found, seen = [], set()
    for dist in metadata.distributions():
        try:
            name = canonicalize_name(dist.metadata["Name"] or "")
        except Exception:
            continue
        if not name or name in plan or name in seen:
            continue
        seen.add(name)
        for text in dist.requires or []:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            target = canonicalize_name(req.name)
            if target not in plan or not _evaluate(req.marker):
                continue
            if not req.specifier.contains(plan[target], prereleases=True):
                who = labels.get(name, f"{dist.metadata['Name']} {dist.version}")
                found.append(
                    f"{who} requires {req.name}{req.specifier}, but this install would bring {req.name} {plan[target]}"
                )
    return found


def dry_run(requirements: list[str], *, extra_index: str | None = None) -> list[dict]:
    """What ``pip install`` would install (report items), without installing anything."""
    args = ["install", "--dry-run", "--quiet", "--report", "-"]
    if extra_index:
        args += ["--extra-index-url", extra_index]
    proc = run_pip(*args, *requirements)
    if proc.returncode != 0:
        line = error_line(proc)
        raise PipError(f"pip cannot install this: {line}; nothing was changed", line)
    try:
        start = proc.stdout.index("{")
        return json.loads(proc.stdout[start:]).get("install", [])
    except ValueError:
        raise PipError("pip's --report output was not JSON; nothing was changed") from None


def item_requirement(item: dict) -> str:
    """A report item as an exact ``name @ url#sha256=...`` requirement."""
    name = item["metadata"]["name"]
    info = item.get("download_info", {})
    url = info.get("url", "")
    hashes = info.get("archive_info", {}).get("hashes") or {}
    legacy = info.get("archive_info", {}).get("hash", "")
    if "sha256" not in hashes and legacy.startswith("sha256="):
        hashes = {"sha256": legacy.split("=", 1)[1]}
    if not url:
        return f"{name}=={item['metadata']['version']}"
    url = url.split("#", 1)[0]
    return f"{name} @ {url}#sha256={hashes['sha256']}" if "sha256" in hashes else f"{name} @ {url}"


def editable_location(project: str) -> str | None:
    """Where an editable install of ``project`` lives (its direct_url.json), or None."""
    import json
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    try:
        info = json.loads(metadata.distribution(project).read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        return None
    if not isinstance(info, dict) or not (info.get("dir_info") or {}).get("editable"):
        return None
    url = str(info.get("url", ""))
    return unquote(urlparse(url).path) if url.startswith("file:") else url or "?"
