"""``agentos install``: pip in the agent's environment, then agent.ini (uninstall: :mod:`._uninstall`).

Order of events, so that a failure at any point leaves agent.ini, the requirements file and the
environment as they were:

1. read the index: the catalogue names the project, its page lists the file; the file is fetched
   and its sha256 checked against the page (nothing installed yet);
2. plan: if every requirement of the wheel is already satisfied, the plan is the component alone;
   otherwise ``pip install --dry-run --report -`` says what would be installed, and projects that
   the registry hosts are pinned to the registry's files (no dependency confusion);
3. refuse if the plan breaks a requirement of something installed (naming both sides);
4. ``pip install --no-deps`` of exactly the planned files, shielded from Ctrl-C: a Ctrl-C from
   then until the files are written is deferred, never lost; we let pip finish, then undo it (a
   failed pip is undone the same way: what was new is removed, what was replaced reinstalled);
5. only then, holding the agent folder's lock and re-reading both files under it, write the
   requirements file (the component and every registry-hosted requirement as hashed direct
   references) and agent.ini, each atomically.
"""

from __future__ import annotations

import os
import pathlib

from ..config import AgentConfig, atomic_write
from ..core._paths import agent_ini_path
from ..core._presets import family_of
from ..errors import AgentOSError, UsageError
from ..host import canonical_kind, normalize
from . import _extras, _gymnasium_ids, _pip, _requirements
from ._artifacts import read_artifact
from ._client import IndexClient, choose_file, resolve_index_url
from ._resolve import find_component, listed_extras
from ._rollback import ctrl_c_deferred, installed_hash, pip_install, undo


def checked_kind(kind: str) -> str:
    try:
        return canonical_kind(kind)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _split_version(name: str, version: str | None) -> tuple[str, str | None]:
    if "==" in name:
        name, _, pinned = name.partition("==")
        version = version or pinned
    return name.strip(), (version.strip() if version else None)


def _labels() -> dict[str, str]:
    """Normalized distribution -> "environment a (agentos-env-a 1.0)" for messages."""
    from ..host import discover

    labels: dict[str, str] = {}
    for spec in discover():
        label = f"{spec.kind} {spec.name} ({spec.package} {spec.version})"
        labels[normalize(spec.package)] = labels.get(normalize(spec.package), label)
    return labels


def _family_extras(kind: str, comp_name: str, task, extras: list[str], art, config) -> list[str]:
    """``extras`` with those a Gymnasium task adds (its family's, already in ``extras``) or a task's preset
    adds (zoo_ppo_lunarlander_v3: the zoo's ``box2d``); either keeps the extras the agent's requirements
    line already names (a second family's task keeps the first's)."""
    declared = set(_extras.declared(art.requires))
    extra = _gymnasium_ids.preset_extra(comp_name) if kind == "preset" else None
    if not task and extra not in declared:
        return extras
    kept = set(listed_extras(config, art.project)) & declared
    return sorted({*extras, *([extra] if extra in declared else []), *kept})


def _pin_registry_projects(items: list[dict], client: IndexClient, hosted: set[str], skip: str) -> list[str]:
    """Exact registry files for planned projects that the registry hosts but pip took elsewhere."""
    from packaging.utils import canonicalize_name

    pins = []
    for item in items:
        project = canonicalize_name(item["metadata"]["name"])
        url = item.get("download_info", {}).get("url", "")
        if project != skip and project not in hosted and url.startswith(client.url):
            raise AgentOSError(
                f"{project} would come from the registry at {client.url}, which may not serve that name "
                "(only agentos-<kind>-<name> components and its maintainers' libraries); refusing; nothing was changed"
            )
        if project == skip or project not in hosted or url.startswith(client.url):
            continue
        files = client.project_files(project) or []
        entry = None
        for version in (item["metadata"]["version"], None):  # the same version, else the registry's latest
            try:
                entry = choose_file(files, project, version)
                break
            except UsageError:
                continue
        if entry is None:
            raise AgentOSError(
                f"{project} {item['metadata']['version']} would come from {url}, not from the "
                "registry; refusing (dependency confusion); nothing was changed"
            )
        pins.append(f"{project} @ {entry['url']}#sha256={entry['hashes']['sha256']}")
    return pins


def _plan(
    art, requirement: str, client: IndexClient, hosted: set[str], echo, also: list[str] = (), any_torch=False
) -> tuple[dict[str, str], list[str]]:
    """(normalized name -> version to install, requirements for ``pip install --no-deps``); ``also``:
    the requirements that the asked extras add. The installed torch is kept (see ``_torch``)."""
    from packaging.utils import canonicalize_name

    from . import _torch

    if not _pip.unmet([*art.requires, *also]):
        return {art.project: art.version}, [requirement]
    echo(f"resolving the requirements of {art.name} {art.version} (pip dry run)...")
    kept = _torch.installed_torch_pins()
    requirements = [requirement]
    for _ in range(3):
        try:
            items = _pip.dry_run([*requirements, *kept], extra_index=client.simple_url)
        except _pip.PipError as exc:
            if not kept:
                raise
            raise AgentOSError(_torch.kept_torch_error(kept, exc.line)) from None
        pins = _pin_registry_projects(items, client, hosted, art.project)
        if not pins:
            break
        requirements += pins
    else:
        raise AgentOSError("could not pin the registry's own projects to the registry; nothing was changed")
    plan = {canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"] for i in items}
    _torch.check_plan(plan, f"{art.name} {art.version}", any_torch=any_torch)
    exact = [requirement] + [
        _pip.item_requirement(i) for i in items if canonicalize_name(i["metadata"]["name"]) != art.project
    ]
    return plan, exact


def install(
    kind: str,
    name: str,
    *,
    version: str | None = None,
    default: bool | None = None,
    agent: str | None = None,
    index_url: str | None = None,
    ask=None,
    echo=None,
    any_torch: bool = False,
) -> dict:
    """Install the component ``kind name`` from the registry into the agent's environment.

    The torch the environment has is never replaced; when it has none and the component needs it,
    the install stops with a line on choosing the CPU or CUDA build, unless ``any_torch``.

    ``default``: True/False make it (not) the default of its kind; None makes it the default when
    it is the first of its kind, else asks with ``ask(kind, name, current)`` when given, else keeps
    the current default. Returns what was done.
    """
    echo = echo or (lambda message: None)
    kind = checked_kind(kind)
    name, version = _split_version(name, version)
    name, extras = _extras.split(name)
    config = AgentConfig.load(agent_ini_path(agent, "--agent PATH"))
    client = IndexClient(resolve_index_url(index_url, config))
    project, comp_name, hosted, extras, task = find_component(client, kind, name, extras)
    files = client.project_files(project)
    if not files:
        raise UsageError(f"{project} is not in the package index at {client.url}")
    entry = choose_file(files, project, version)
    path = client.fetch_file(entry)
    art = read_artifact(path)
    declared = [c["name"] for c in art.components if c["kind"] == kind]
    if not any(normalize(n) == normalize(comp_name) for n in declared) and not (
            kind == "preset" and family_of(comp_name, declared)):
        raise AgentOSError(f"{entry['filename']} does not declare the {kind} {comp_name!r}; not installing it")
    extras = _family_extras(kind, comp_name, task, extras, art, config)
    also = _extras.requirements(art, extras)
    package = f"{art.name}[{','.join(extras)}]" if extras else art.name
    requirement = f"{package} @ {pathlib.Path(path).as_uri()}#sha256={art.sha256}"
    installed = _pip.installed_versions([art.project])[art.project]
    same = installed == art.version and installed_hash(art.project) == art.sha256 and not _pip.unmet(also)
    editable = None if same or installed is None else _pip.editable_location(art.project)
    if editable:  # the author's working copy: never replaced behind their back
        same = True
    plan, exact = {art.project: art.version}, [requirement]
    if not same:
        plan, exact = _plan(art, requirement, client, hosted, echo, also, any_torch)
        clashes = _pip.conflicts(plan, _labels())
        if clashes:
            raise AgentOSError(
                f"conflict: installing {kind} {comp_name} ({art.name} {art.version}) would break "
                f"what is installed: {'; '.join(clashes)}; nothing was changed"
            )
    if default is None and ask is not None and _needs_question(config, kind, comp_name):
        default = bool(ask(kind, comp_name, config.default(kind)))  # asked before anything changes
    pins = _hosted_pins(art, exact, client, hosted, also)
    with ctrl_c_deferred() as interrupted:
        before = _pip.installed_versions(plan)
        if not same:
            echo(
                f"installing {art.name} {art.version}"
                + (f" and {len(plan) - 1} requirement(s)" if len(plan) > 1 else "")
            )
            pip_install(art, exact, before, client, installed == art.version, interrupted)
        if interrupted.is_set():
            raise _pip.Interrupted("interrupted: nothing was changed")

        def undo_all() -> str:
            return undo(before, client, "interrupted", art) if not same else "interrupted: nothing was changed"

        result = _record(config.path, kind, comp_name, art, entry, default, pins, not same, interrupted, undo_all,
                         package, task)
    if editable:
        result["notes"].insert(
            0,
            f"kept your editable install of {art.name} {installed} ({editable}); the registry's {art.version} "
            f"is recorded in agent.ini and requirements.txt but not installed "
            f"(to use it: python -m pip uninstall -y {art.name}, then install again)",
        )
    if kind == "policy" and not os.environ.get(NO_IMPORT_ENV):
        mismatch = _fits_note(config.path, comp_name, art.name)
        if mismatch:
            result["notes"].append(mismatch)
    return result


#: Set by the fresh venvs of verify and ``evaluate --isolated``: the install imports nothing it installed
#: (the fit check builds the agent, which loads every ``agentos.plugins`` entry point, the new package's too).
NO_IMPORT_ENV = "AGENTOS_INSTALL_IMPORTS_NOTHING"


def _fits_note(path: str, policy: str, package: str) -> str | None:
    """The one line a trained policy just installed gives in this agent when the agent plays another
    environment or task than the one it was trained on (:func:`agentos.core._tasks.check_fits`), or None."""
    from importlib import invalidate_caches

    from ..core._context import AgentContext
    from ..core._tasks import check_fits

    invalidate_caches()
    try:
        context = AgentContext.from_path(path)
        try:
            check_fits(context, policy, package)
        finally:
            context.close()
    except UsageError as exc:
        return str(exc)
    except Exception:  # an agent that cannot be built yet (say, its environment is not installed): said at run
        return None
    return None


def _hosted_pins(art, exact: list[str], client: IndexClient, hosted: set[str], also=()) -> dict[str, str]:
    """project -> hashed direct reference, for every requirement of ``art`` that the registry hosts."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    pins: dict[str, str] = {}
    for line in exact[1:]:  # the plan: exact files from the registry (or elsewhere)
        name = _requirements.requirement_name(line)
        if name in hosted and " @ " in line and "#sha256=" in line:
            pins[name] = line
    for text in [*art.requires, *also]:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        if name in pins or name not in hosted or (req.marker and not req.marker.evaluate({"extra": ""})):
            continue
        version = _pip.installed_versions([name])[name]
        line = _requirements.registry_line(client, name, version) if version else None
        if line:
            pins[name] = line
    return pins


def _needs_question(config, kind: str, comp_name: str) -> bool:
    current = config.default(kind)
    if current is None or normalize(current) == normalize(comp_name):
        return False
    local = config.component(kind, current)
    return bool(local and local.source) or is_installed(kind, current)


def is_installed(kind: str, name: str) -> bool:
    """Whether the component is installed (a preset also as one of an installed family's presets)."""
    from ..host import ComponentHost

    host = ComponentHost()
    if host.find(kind, name) is not None:
        return True
    if kind != "preset" or family_of(name, host.names("preset")) is None:
        return False
    from ..core._presets import load_preset

    try:
        load_preset(name, host)
    except AgentOSError:
        return False
    return True


def _record(path, kind, comp_name, art, entry, default, pins, changed, interrupted, undo, package=None,
            task=None) -> dict:
    """Write the requirements file and agent.ini, under the agent's lock, re-reading both first; ``task``:
    the Gymnasium id installed by name, set as the component's ``id`` when it is (made) the default."""
    from ._lock import folder_lock

    with folder_lock(os.path.dirname(os.path.abspath(path)), ".agentos.lock"):
        config = AgentConfig.load(path)
        current = config.default(kind)
        notes = []
        local = config.component(kind, current) if current else None
        same = current is not None and normalize(current) == normalize(comp_name)
        dangling = current is not None and not same and not (local and local.source) and not is_installed(kind, current)
        if current is None or same or dangling:
            make_default = True if default is None else default
            if dangling and make_default:
                notes.append(f"{comp_name} replaces {current} as the default {kind} ({current} is not installed)")
        elif default is not None:
            make_default = default
        else:
            make_default = False
            notes.append(f"{current} stays the default {kind} (use --default to make {comp_name} the default)")
        req_path = _requirements.requirements_path(config)
        req_text = _requirements.read(req_path)
        for project, line in sorted(pins.items()):
            req_text = _requirements.with_line(req_text, project, line)
        req_text = _requirements.with_line(
            req_text, art.project, _requirements.pinned_line(package or art.name, entry["url"], art.sha256)
        )
        config.add_component(kind, comp_name, package=art.name, version=art.version)
        if make_default:
            config.set_default(kind, comp_name)
            if kind == "preset":
                notes += _preset_decides(config, comp_name, explicit=default is True)
            if task:
                config.add_component(kind, comp_name, settings={_gymnasium_ids.SETTING: task})
        elif task:
            notes.append(f"agent.ini's {comp_name} keeps its {_gymnasium_ids.SETTING} "
                         f"(agentos install {kind} {task} --default plays {task})")
        if interrupted.is_set():
            raise _pip.Interrupted(undo())
        atomic_write(req_path, req_text)
        config.save()
    if interrupted.is_set():
        notes.append("Ctrl-C arrived after the install was recorded: it was kept")
    return {
        "kind": kind,
        "name": comp_name,
        "package": art.name,
        "version": art.version,
        "default": bool(make_default) or normalize(config.default(kind) or "") == normalize(comp_name),
        "changed": changed,
        "file": entry["url"],
        "sha256": art.sha256,
        "agent_ini": config.path,
        "requirements": req_path,
        "task": task,
        "notes": notes,
    }


def _preset_decides(config, preset: str, *, explicit: bool) -> list[str]:
    """A preset made the default with ``--default`` takes over the kinds it has components for: agent.ini's
    own defaults of those kinds (which would win over it) are removed; without ``--default`` they stay. A preset
    for one environment (its ``environment``) makes that agent.ini's environment with ``--default`` (or when
    agent.ini has none), and says so otherwise."""
    from ..core._presets import defaults_in_the_way, environment_in_the_way

    notes = []
    if (environments := environment_in_the_way(config, preset)) is not None:
        current, wanted = environments
        if explicit or current is None:
            config.set_default("environment", wanted)
            notes.append(f"the preset's environment {wanted} replaces {current} as the default environment"
                         if current else f"the preset's environment {wanted} is the default environment")
        else:
            notes.append(f"the preset is for environment {wanted}, not agent.ini's {current} "
                         f"(agentos install preset {preset} --default switches)")
    for kind, current, comp in defaults_in_the_way(config, preset):
        if explicit:
            config.set_default(kind, None)
            notes.append(f"the preset's {kind} {comp} replaces {current} as the default {kind}")
        else:
            notes.append(f"agent.ini's default {kind} {current} wins over the preset's {comp} "
                         f"(agentos install preset {preset} --default lets the preset decide)")
    return notes
