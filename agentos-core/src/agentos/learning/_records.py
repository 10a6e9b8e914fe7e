"""Run records: ``<agent dir>/runs/<run id>/`` for every ``agentos train`` and ``agentos run``.

A record holds::

    run.json          what ran: mode, status, components, seed, summary, checkpoint file name
    agent.ini         the agent.ini used, byte for byte
    lock.json         component packages (name, version, sha256 of the installed RECORD, files_sha256 of
                      the released files: :func:`files_hash`), the interpreter's other packages, and
                      ``local_code``: the agent's own code kept below (:mod:`._kept_code`)
    code-<sha256>.py  each file of the agent's own code (``source =`` files and what they import)
    returns.csv       one row per episode: episode,frame,return,length,seconds
    returns100.csv    every 100 episodes: frame,mean,std,max,min (autonomous-learning-library format,
                      no header, so ``all.experiments.plot_returns_100`` reads it as is)
    returns.png       the learning curve (matplotlib)
    checkpoint.*      the policy's learned state (safetensors or a weights-only torch file)

The CSV files and the plot are written by the built-in tracker (:mod:`agentos.trackers`), which is a
pluggy hook implementation like any third-party tracker.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import platform
import secrets
import sys

from .._safe_text import printable
from ..core._paths import runs_dir
from ..errors import UsageError
from ._kept_code import keep as keep_code
from ._record_check import MalformedRecord, warn_skipped

RUN_FILE = "run.json"
LOCK_FILE = "lock.json"
KINDS_USED = ("environment", "policy", "trainer", "agent")


def run_file(record, key: str) -> str | None:
    """The file that ``run.json``'s ``key`` names, only if it is a plain name inside the run folder."""
    name = record.meta.get(key)
    if not name:
        return None
    if not isinstance(name, str) or os.path.basename(name) != name or name in (".", ".."):
        raise UsageError(
            printable(f"run {record.id}: {key} {str(name)[:80]!r} is not a file name inside the run folder")
        )
    if os.path.islink(record.path(name)):  # a link would load a file from anywhere
        raise UsageError(
            printable(f"run {record.id}: {key} {name!r} is a symbolic link; a run folder's files must be files")
        )
    return record.path(name)


def host_id() -> str:
    """This machine, as run.json records it: a hash of its name (the name itself is not shared)."""
    return hashlib.sha256(platform.node().encode("utf-8", "replace")).hexdigest()[:16]


def new_run_id(mode: str) -> str:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{mode}-{secrets.token_hex(2)}"


def _atomic_json(path: str, value) -> None:
    """Write ``value`` as JSON through a temporary file; the temporary file never stays behind."""
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(value, f, indent=2, default=str)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


class RunRecord:
    """One run's folder and its ``run.json`` (``meta``): create one with :meth:`create`, give it a
    checkpoint with :meth:`save_checkpoint`, end it with :meth:`finish` or :meth:`fail`; ``agentos runs``
    lists it. Public as :class:`agentos.plugin_api.RunRecord`."""

    def __init__(self, directory: str, meta: dict):
        self.directory = directory
        self.meta = meta

    @property
    def id(self) -> str:
        """The run id (the folder's name), e.g. ``20260101-120000-train-1a2b``."""
        return self.meta["id"]

    def path(self, name: str) -> str:
        """The path of file ``name`` inside the record."""
        return os.path.join(self.directory, name)

    @classmethod
    def create(
        cls, context, config_path: str, mode: str, *, seed=None, request: dict | None = None
    ) -> RunRecord | None:
        """Start a record for a run of the agent of ``context`` (None when records are disabled)."""
        directory = runs_dir(context.config)
        if directory is None:
            return None
        run_id = new_run_id(mode)
        folder = os.path.join(directory, run_id)
        os.makedirs(folder, exist_ok=False)
        try:
            with open(config_path, "rb") as f:
                ini_bytes = f.read()
            with open(os.path.join(folder, "agent.ini"), "wb") as f:
                f.write(ini_bytes)
            components = component_names(context)
            lock = make_lock(context, components)
            lock.update(keep_code(folder, context.config))  # the agent's own code, for agentos reproduce
            _atomic_json(os.path.join(folder, LOCK_FILE), lock)
            meta = {
                "id": run_id,
                "mode": mode,
                "status": "running",
                "started": _dt.datetime.now().isoformat(timespec="microseconds"),  # orders runs of one second
                "pid": os.getpid(),  # with host: agentos runs tells a killed run ("unfinished") from a running one
                "host": host_id(),
                "finished": None,
                "agent_dir": context.config.directory if context.config is not None else os.getcwd(),
                "agent_ini": os.path.abspath(config_path),
                "seed": seed,
                "request": request or {},
                "components": components,
                "checkpoint": None,
                "summary": None,
            }
            record = cls(folder, meta)
            record.write()
        except BaseException:  # no half-made record is left behind
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
            raise
        return record

    @classmethod
    def open(cls, folder: str) -> RunRecord:
        """The record in ``folder``: its run.json read bounded and checked (``_record_check``)."""
        from ._record_check import read_record

        return cls(folder, read_record(os.path.join(folder, RUN_FILE)))

    def write(self) -> None:
        """Write ``meta`` to ``run.json`` atomically."""
        _atomic_json(self.path(RUN_FILE), self.meta)

    def lock(self) -> dict:
        """lock.json, read bounded (``_record_check.read_json``); ValueError when it is no lock."""
        from ._record_check import read_json

        lock = read_json(self.path(LOCK_FILE))
        if not isinstance(lock, dict) or not isinstance(lock.get("components", []), list):
            raise ValueError("not a lock")
        return lock

    def save_checkpoint(self, policy, *, name: str = "checkpoint", key: str = "checkpoint") -> str | None:
        """Ask the policy (or trainer) to save itself; the file appears atomically, and run.json names it
        as ``key``. None when it has no state."""
        suffix = getattr(policy, "checkpoint_suffix", ".ckpt")
        final = self.path(f"{name}{suffix}")
        tmp = self.path(f"{name}.partial{suffix}")
        try:
            policy.save(tmp)
            os.replace(tmp, final)
        except NotImplementedError:
            return None
        finally:
            with contextlib.suppress(OSError):
                os.remove(tmp)
        self.meta[key] = os.path.basename(final)
        self.meta[f"{key}_sha256"] = file_sha256(final)  # agentos publish --run refuses a changed file
        self.write()
        return final

    def checkpoint_path(self) -> str | None:
        """The checkpoint file run.json names: a plain name of a file (not a link) in the run folder."""
        return run_file(self, "checkpoint")

    def fail(self, error: str, status: str = "failed") -> None:
        """End the record as ``status`` with ``error`` (best effort: the disk may be what failed)."""
        self.meta.update(status=status, error=error, finished=_dt.datetime.now().isoformat(timespec="seconds"))
        with contextlib.suppress(OSError):
            self.write()

    def finish(self, summary: dict) -> None:
        """End the record with ``summary`` (its ``status``, default ``finished``, becomes the run's)."""
        self.meta["status"] = summary.get("status", "finished")
        self.meta["finished"] = _dt.datetime.now().isoformat(timespec="seconds")
        self.meta["summary"] = summary
        if summary.get("error"):
            self.meta["error"] = summary["error"]
        self.write()


# -- finding runs ---------------------------------------------------------------------------------
def list_records(directory: str | None) -> list[RunRecord]:
    """Records in a runs folder, oldest first (unreadable folders are skipped)."""
    if not directory or not os.path.isdir(directory):
        return []
    records = []
    for name in sorted(os.listdir(directory)):
        folder = os.path.join(directory, name)
        if os.path.isfile(os.path.join(folder, RUN_FILE)):
            try:
                records.append(RunRecord.open(folder))
            except MalformedRecord as exc:  # one line; the other runs still list and work
                warn_skipped(os.path.join(folder, RUN_FILE), str(exc))
            except (OSError, ValueError):
                continue
    records.sort(key=lambda r: (r.meta.get("started") or "", r.id))
    return records


def find_record(directory: str | None, ref: str) -> RunRecord:
    """A run by id, unique id prefix, ``latest``, or path to its folder."""
    if os.path.isfile(os.path.join(ref, RUN_FILE)):
        try:
            return RunRecord.open(ref)
        except (OSError, ValueError) as exc:

            raise UsageError(printable(f"cannot use run {os.path.join(ref, RUN_FILE)}: {exc}")) from None
    records = list_records(directory)
    if not records:
        raise UsageError(f"no runs in {directory or 'this agent'} yet (agentos train creates one)")
    if ref in ("latest", "last"):
        return records[-1]
    exact = [r for r in records if r.id == ref]
    matches = exact or [r for r in records if r.id.startswith(ref) or r.id.endswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no run {ref!r} in {directory}; 'agentos runs' lists them")
    raise UsageError(
        f"{ref!r} matches {len(matches)} runs ({', '.join(r.id for r in matches[:4])}...): give more of the id"
    )


# -- locks ----------------------------------------------------------------------------------------
def component_names(context) -> dict[str, str]:
    names = {}
    for kind in KINDS_USED:
        name = context.default_name(kind)
        if name is not None:
            names[kind] = name
    return names


def file_sha256(path: str) -> str:
    """The sha256 (hex) of one file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _sha256_files(paths) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(os.path.basename(path).encode())
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def _module_files(module: str) -> list[str]:
    import importlib.util

    try:
        spec = importlib.util.find_spec(module.split(".")[0])
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        files = []
        for root in spec.submodule_search_locations:
            for folder, dirs, names in os.walk(root):
                dirs[:] = [d for d in dirs if d != "__pycache__"]
                files += [os.path.join(folder, n) for n in names if n.endswith(".py")]
        return files
    return [spec.origin] if spec.origin and os.path.isfile(spec.origin) else []


#: Rows that pip adds to a distribution's RECORD when it installs it (not files of the wheel).
_INSTALLER_ROWS = frozenset({"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"})


def files_hash(record_text: str) -> str:
    """sha256 of a RECORD's ``path,hash`` rows for the distribution's own files: the same for the wheel's
    RECORD and for any pip install of that wheel (pip's own rows -- INSTALLER, REQUESTED,
    direct_url.json, compiled .pyc files, scripts outside site-packages -- are left out)."""
    import csv

    rows = []
    for row in csv.reader(record_text.splitlines()):
        if len(row) < 2 or not row[1] or row[0].startswith("../"):
            continue
        if os.path.basename(row[0]) in _INSTALLER_ROWS and ".dist-info/" in row[0]:
            continue
        rows.append(f"{row[0]},{row[1]}\n")
    return hashlib.sha256("".join(sorted(rows)).encode()).hexdigest()


def dist_fingerprint(package: str, module: str = "") -> dict:
    """name, version and sha256 of an installed distribution.

    The sha256 is that of its installed ``RECORD`` (which lists every file with its own hash); for
    an editable install it is the hash of the component module's source files instead, so that an
    edit shows up.
    """
    from importlib import metadata

    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        return {"package": package, "version": None, "sha256": None, "install": "missing"}
    install = "wheel"
    direct = dist.read_text("direct_url.json")
    if direct:
        try:
            if json.loads(direct).get("dir_info", {}).get("editable"):
                install = "editable"
        except ValueError:
            pass
    if install == "editable" and module:
        files = _module_files(module)
        sha = _sha256_files(files) if files else None
    else:
        record = dist.read_text("RECORD") or ""
        sha = hashlib.sha256(record.encode()).hexdigest()
        if record:  # what agentos reproduce checks a released file against (see files_hash)
            return {"package": dist.metadata["Name"], "version": dist.version, "sha256": sha, "install": install,
                    "files_sha256": files_hash(record)}
    return {"package": dist.metadata["Name"], "version": dist.version, "sha256": sha, "install": install}


def component_fingerprint(context, kind: str, name: str) -> dict:
    spec = context.host.find(kind, name)
    entry = {"kind": kind, "name": name}
    if spec is None and kind == "preset":  # one of a family's presets (zoo_sac_pendulum_v1 of zoo): the family's
        from ..core._presets import family_of

        family = family_of(name, context.host.names("preset"))
        spec = context.host.find(kind, family) if family is not None else None
    if spec is None:
        return {**entry, "package": None, "version": None, "sha256": None, "install": "missing"}
    if spec.source != "entry-point":
        target = spec.value.partition(":")[0].strip()
        if target.endswith(".py"):
            if not os.path.isabs(target) and context.config is not None:
                target = os.path.join(context.config.directory, target)
            files = [target] if os.path.isfile(target) else []
        else:
            files = _module_files(target)
        sha = _sha256_files(files) if files else None
        return {**entry, "package": None, "version": None, "sha256": sha, "install": spec.source, "source": spec.value}
    return {**entry, **dist_fingerprint(spec.package, spec.module)}


def _name_version(dist) -> tuple[str | None, str | None]:
    """From the ``name-version.dist-info`` folder name when possible (parsing METADATA is slow)."""
    folder = os.path.basename(str(getattr(dist, "_path", "")))
    stem = folder[: -len(".dist-info")] if folder.endswith(".dist-info") else ""
    if stem.count("-") == 1:
        name, version = stem.split("-")
        return name.replace("_", "-"), version
    try:
        return dist.metadata["Name"], dist.version
    except Exception:
        return None, None


def make_lock(context, components: dict[str, str]) -> dict:
    from importlib import metadata

    others = {}
    for dist in metadata.distributions():
        name, version = _name_version(dist)
        if name and name not in others:
            others[name] = version
    component_packages = set()
    entries = []
    for kind, name in named_components(context, components):
        entry = component_fingerprint(context, kind, name)
        entries.append(entry)
        if entry.get("package"):
            component_packages.add(entry["package"])
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "components": entries,
        "packages": [
            {"name": n, "version": v}
            for n, v in sorted(others.items(), key=lambda kv: kv[0].lower())
            if n not in component_packages
        ],
    }


def named_components(context, defaults: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """Every component the agent uses or names: the defaults, then each ``[kind.name]`` of agent.ini."""
    pairs = list((defaults if defaults is not None else component_names(context)).items())
    if context.config is not None:
        for comp in context.config.components.values():
            if (comp.kind, comp.name) not in pairs:
                pairs.append((comp.kind, comp.name))
    return pairs


def unlocked_components(context, lock: dict) -> list[str]:
    """Components that the agent.ini of ``context`` names but ``lock`` does not list."""
    from ..host import normalize

    listed = {(e.get("kind"), normalize(str(e.get("name")))) for e in lock.get("components", []) if isinstance(e, dict)}
    return [f"{kind} {name}" for kind, name in named_components(context) if (kind, normalize(name)) not in listed]


def lock_differences(context, lock: dict, *, local: bool | None = None) -> list[str]:
    """How the installed components differ from a run's lock (empty when they match).

    ``local=True``: only the differences of local components (``source =``, locked by their file's
    hash and their source text), which ``--force`` never accepts; ``local=False``: only the others."""
    problems = []
    for entry in lock.get("components", []):
        if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str) or not entry.get("name"):
            problems.append(f"malformed lock entry {str(entry)[:60]!r}")
            continue
        kind, name = entry["kind"], str(entry["name"])
        now = component_fingerprint(context, kind, name)
        sources = (entry.get("source"), now.get("source"))
        other_source = "local" in (now.get("install"), entry.get("install")) and sources[0] != sources[1]
        a_file = any(str(s or "").partition(":")[0].strip().endswith(".py") for s in sources)
        is_local = other_source or ("local" in (now.get("install"), entry.get("install")) and a_file)
        if local is not None and is_local != local:
            continue
        if other_source:
            problems.append(f"{kind} {name}: source {entry.get('source')!r} in the run, {now.get('source')!r} here")
            continue
        if now.get("install") == "missing":
            if entry.get("install") == "missing":  # declared, absent then and now: the run did not use it
                continue
            problems.append(f"{kind} {name} ({entry.get('package') or 'local'}) is not installed")
            continue
        for key in ("package", "version", "sha256"):
            if entry.get(key) != now.get(key):
                was, is_ = entry.get(key), now.get(key)
                if key == "sha256":
                    was, is_ = (was or "-")[:12], (is_ or "-")[:12]
                problems.append(f"{kind} {name}: {key} {was} in the run, {is_} installed")
                break
    return problems
