"""``agentos uninstall``: pip removes the package (unless another component still uses it), then
agent.ini loses its section and the requirements file its line, under the agent folder's lock."""

from __future__ import annotations

import os

from ..config import AgentConfig, atomic_write
from ..core._paths import agent_ini_path
from ..errors import UsageError
from ..host import did_you_mean, distribution_name, normalize
from . import _pip, _requirements
from ._install import checked_kind, is_installed
from ._rollback import ctrl_c_deferred


def uninstall(kind: str, name: str, *, agent: str | None = None, ask=None, echo=None) -> dict:
    """Remove a component: its package (unless another component of agent.ini still uses it),
    its agent.ini section and its requirements line; picks (or asks for) the next default."""
    from ..host import ComponentHost

    echo = echo or (lambda message: None)
    kind = checked_kind(kind)
    config = AgentConfig.load(agent_ini_path(agent, "--agent PATH"))
    comp = config.component(kind, name)
    spec = ComponentHost().find(kind, name)
    if comp is None and spec is None:
        hint = did_you_mean(name, config.component_names(kind))
        raise UsageError(f"no {kind} named {name!r} is installed in {config.path}{hint}")
    comp_name = comp.name if comp else spec.name
    package = (comp.package if comp else "") or (spec.package if spec else "") or distribution_name(kind, name)
    local = bool(comp and comp.source)
    shared = [
        c
        for c in config.components.values()
        if c is not comp and c.package and normalize(c.package) == normalize(package)
    ]
    req_path = _requirements.requirements_path(config)
    old_req = _requirements.read(req_path)
    removed_pkg = False
    if not local and not shared and _pip.installed_versions([package])[package] is not None:
        try:
            proc = _pip.run_pip("uninstall", "-y", package, shield=True)
        except KeyboardInterrupt:
            _restore(package, old_req)
            raise _pip.Interrupted(
                "interrupted: the package was reinstalled; agent.ini and requirements unchanged"
            ) from None
        if proc.returncode != 0:
            raise _pip.PipError(f"pip failed: {_pip.error_line(proc)}; agent.ini and requirements unchanged")
        removed_pkg = True
    from ._lock import folder_lock

    with folder_lock(os.path.dirname(os.path.abspath(config.path)), ".agentos.lock"), ctrl_c_deferred():
        config = AgentConfig.load(config.path)  # re-read under the lock: another install may have written
        notes = []
        new_default = config.default(kind)
        if config.component(kind, comp_name) is not None:
            config.remove_component(kind, comp_name)
        if new_default is not None and normalize(new_default) == normalize(comp_name):
            remaining = [n for n in config.component_names(kind) if _usable(config, kind, n)]
            if not remaining:
                new_default = None
            elif len(remaining) == 1 or ask is None:
                new_default = remaining[0]
            else:
                new_default = ask(kind, remaining)
            config.set_default(kind, new_default)
            notes.append(f"the default {kind} is now {new_default}" if new_default else f"no default {kind} is left")
        old_req = _requirements.read(req_path)
        req_text = old_req if local or shared else _requirements.with_line(old_req, package, None)
        if req_text != old_req:
            atomic_write(req_path, req_text)
        config.save()
    return {
        "kind": kind,
        "name": comp_name,
        "package": package,
        "uninstalled": removed_pkg,
        "default": new_default,
        "agent_ini": config.path,
        "notes": notes,
    }


def _usable(config, kind: str, name: str) -> bool:
    """A component that can be a default: local (``source``) or actually installed."""
    comp = config.component(kind, name)
    return bool(comp and comp.source) or is_installed(kind, name)


def _restore(package: str, requirements_text: str) -> None:
    """Reinstall ``package`` from its pinned requirements line after an interrupted uninstall."""
    from packaging.utils import canonicalize_name

    for line in requirements_text.splitlines():
        if _requirements.requirement_name(line) == canonicalize_name(package):
            _pip.run_pip("install", "--no-deps", line.strip(), shield=True)
            return
