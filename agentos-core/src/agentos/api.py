"""The Python API behind every ``agentos`` command: each command is one function here."""

from __future__ import annotations

import importlib.util
import os

from .errors import UsageError
from .host import ComponentHost, canonical_kind, error_key, recorded_errors

__all__ = [
    "init_agent",
    "install",
    "list_components",
    "list_runs",
    "new",
    "publish",
    "run",
    "search",
    "show_run",
    "train",
    "uninstall",
    "yank",
]


def init_agent(
    directory: str = ".",
    *,
    name: str | None = None,
    install: bool = False,
    index_url: str | None = None,
    echo=None,
) -> dict:
    """Create a minimal agent in ``directory`` (see :func:`agentos._scaffold.init_agent`).

    With ``install``, the starter components (environment corridor, policy random) that are not
    installed yet are installed from the registry into this Python environment, so that
    ``agentos run`` works at once. Returns ``directory``, ``written``, ``installed`` and ``missing``
    (what is still not installed, with the reason when an install failed).
    """
    from ._scaffold import init_agent as _init_agent

    result = _init_agent(directory, name=name)
    result["installed"] = []
    if install and result["missing"]:
        from .errors import AgentOSError
        from .registry import install as _install

        ini = os.path.join(result["directory"], "agent.ini")
        still_missing = []
        for missing in result["missing"]:
            kind, comp = missing.split(" ", 1)
            try:
                _install(kind, comp, agent=ini, index_url=index_url, default=True, echo=echo)
            except AgentOSError as exc:
                if echo is not None:
                    echo(f"agentos: warning: could not install {missing}: {exc}")
                still_missing.append(missing)
            else:
                result["installed"].append(missing)
        result["missing"] = still_missing
    return result


def _kind(kind: str | None) -> str | None:
    try:
        return canonical_kind(kind) if kind else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _local_problem(spec, config) -> str:
    """A local component's file must exist (checked without running it)."""
    target = spec.value.partition(":")[0].strip()
    if target.endswith(".py") and not os.path.isfile(config.resolve_path(target)):
        return f"file {target!r} not found next to {config.path}"
    return ""


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
    for comp in config.components.values() if config else ():
        if comp.source:  # the agent's own code (``source = agent.py:MyAgent``) is listed too
            host.add_local(comp.kind, comp.name, comp.source, config.directory)
    problems = host.check(kind) if check else {}
    recorded = recorded_errors()
    rows = []
    for spec in host.specs(kind):
        problem = problems.get(spec.key) or spec.problem
        if not problem and not check:
            problem = recorded.get(error_key(spec), "") if spec.package else _local_problem(spec, config)
            if not problem and spec.package and importlib.util.find_spec(spec.module.split(".")[0]) is None:
                problem = f"module {spec.module!r} not found"
        status = "ok" if not problem else "disabled" if problem.startswith("disabled") else f"error: {problem}"
        rows.append(
            {
                "kind": spec.kind,
                "name": spec.name,
                "version": spec.version,
                "package": spec.package or "(local)",
                "entry_point": spec.value,
                "summary": spec.summary,
                "default": bool(config and config.default(spec.kind) == spec.name),
                "status": status,
            }
        )
    return rows


def run(
    agent_ini: str | None = None,
    *,
    episodes: int = 10,
    seed: int | None = None,
    on_episode=None,
    from_run: str | None = None,
    checkpoint: str | None = None,
    force: bool = False,
    record: bool = True,
    fresh: bool = False,
    n_envs: int = 1,
    vector_mode: str = "sync",
) -> dict:
    """Build the agent of ``agent_ini`` and run it for ``episodes`` episodes; returns a summary.

    ``n_envs > 1`` runs that many environments at once (the environment's batched version when it
    names one in ``vector_entry_point``, else Gymnasium's sync or async vector env, ``vector_mode``),
    the policy deciding for all of them with ``decide_batch``.

    ``checkpoint`` loads a saved policy; ``from_run`` reuses a recorded run (see
    :func:`agentos._learning.run`). Every run is recorded under ``<agent dir>/runs/`` unless
    ``record`` is false or agent.ini says ``[agentos] runs = none``.
    """
    from ._learning import run as _run

    return _run(
        agent_ini,
        episodes=episodes,
        seed=seed,
        on_episode=on_episode,
        from_run=from_run,
        checkpoint=checkpoint,
        force=force,
        record=record,
        fresh=fresh,
        n_envs=n_envs,
        vector_mode=vector_mode,
    )


def train(
    agent_ini: str | None = None,
    *,
    episodes: int | None = None,
    steps: int | None = None,
    seed: int | None = None,
    on_episode=None,
    on_interrupt=None,
    record: bool = True,
) -> dict:
    """Train the agent's policy with its trainer; records the run and its checkpoint."""
    from ._learning import train as _train

    return _train(
        agent_ini,
        episodes=episodes,
        steps=steps,
        seed=seed,
        on_episode=on_episode,
        on_interrupt=on_interrupt,
        record=record,
    )


def list_runs(agent_ini: str | None = None) -> list[dict]:
    """Past runs of an agent (``agentos runs``)."""
    from ._learning import list_runs as _list_runs

    return _list_runs(agent_ini)


def show_run(ref: str, agent_ini: str | None = None) -> dict:
    """One past run (``agentos runs show RUN``)."""
    from ._learning import show_run as _show_run

    return _show_run(ref, agent_ini)


def new(kind: str, name: str, **options) -> dict:
    """Create a component package or an agent directory (``agentos new``); see :func:`agentos._authoring.new`."""
    from ._authoring import new as _new

    return _new(kind, name, **options)


# -- the registry (agentos.registry): search, install, uninstall, publish, yank ----------------------
def search(kind: str | None = None, query: str | None = None, index_url: str | None = None) -> list[dict]:
    """Components of the registry matching ``kind`` and ``query`` (``agentos search``)."""
    from .registry import search as _search

    return _search(kind, query, index_url)


def install(kind: str, name: str, **options) -> dict:
    """Install a component from the registry into an agent (``agentos install``)."""
    from .registry import install as _install

    return _install(kind, name, **options)


def uninstall(kind: str, name: str, **options) -> dict:
    """Remove a component from an agent (``agentos uninstall``)."""
    from .registry import uninstall as _uninstall

    return _uninstall(kind, name, **options)


def publish(paths: list[str], index: str | None = None, **options) -> list[dict]:
    """Publish plugin folders, wheels or sdists into an index folder (``agentos publish``)."""
    from .registry import publish as _publish

    return _publish(paths, index, **options)


def yank(package: str, version: str, reason: str = "", index: str | None = None, **options) -> list[str]:
    """Yank a published version (``agentos yank``)."""
    from .registry import yank as _yank

    return _yank(package, version, reason, index, **options)
