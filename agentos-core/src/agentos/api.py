"""The Python API behind every ``agentos`` command: each command is one function here."""

from __future__ import annotations

import importlib.util
import os

from .errors import UsageError
from .host import ComponentHost, canonical_kind, error_key, recorded_errors

__all__ = ["init_agent", "list_components", "run"]


def init_agent(directory: str = ".", **options) -> dict:
    """Create a minimal agent in ``directory`` (see :func:`agentos._scaffold.init_agent`)."""
    from ._scaffold import init_agent as _init_agent

    return _init_agent(directory, **options)


def _kind(kind: str | None) -> str | None:
    try:
        return canonical_kind(kind) if kind else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def list_components(kind: str | None = None, *, check: bool = False, agent_ini: str | None = None) -> list[dict]:
    """Installed components (no plugin is imported unless ``check``), with their status.

    Status is ``ok``, ``disabled``, or an error: a malformed entry point or missing module found
    from metadata alone, an error recorded when the component was last used, or (with ``check``)
    the error raised by importing it now.
    """
    from ._paths import find_agent_ini
    from .config import AgentConfig

    kind = _kind(kind)
    host = ComponentHost()
    config_path = agent_ini or find_agent_ini()
    config = AgentConfig.load(config_path) if config_path else None
    problems = host.check(kind) if check else {}
    recorded = recorded_errors()
    rows = []
    for spec in host.specs(kind):
        problem = problems.get(spec.key) or spec.problem
        if not problem and not check:
            problem = recorded.get(error_key(spec), "")
            if not problem and importlib.util.find_spec(spec.module.split(".")[0]) is None:
                problem = f"module {spec.module!r} not found"
        status = "ok" if not problem else "disabled" if problem.startswith("disabled") else f"error: {problem}"
        rows.append({
            "kind": spec.kind,
            "name": spec.name,
            "version": spec.version,
            "package": spec.package,
            "entry_point": spec.value,
            "summary": spec.summary,
            "default": bool(config and config.default(spec.kind) == spec.name),
            "status": status,
        })
    return rows


def run(agent_ini: str | None = None, *, episodes: int = 10, seed: int | None = None, on_episode=None) -> dict:
    """Build the agent of ``agent_ini`` and run it for ``episodes`` episodes; returns a summary."""
    from ._context import use
    from ._paths import find_agent_ini
    from ._runner import run_agent

    path = agent_ini or find_agent_ini()
    if path is None:
        raise UsageError("no agent.ini here; create one with 'agentos init' or name it: agentos run PATH")
    if os.path.isdir(path):
        path = os.path.join(path, "agent.ini")
    if episodes < 1:
        raise UsageError("--episodes must be at least 1")
    context = use(path)
    try:
        agent = context.build_agent()
        return run_agent(agent, episodes, seed=seed, config_path=path, on_episode=on_episode)
    finally:
        context.close()
