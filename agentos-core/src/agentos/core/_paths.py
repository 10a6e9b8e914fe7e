"""Where things are: the active agent.ini."""

from __future__ import annotations

import os

from ..errors import UsageError

AGENT_INI_ENV = "AGENTOS_AGENT_INI"


def find_agent_ini(start: str | None = None) -> str | None:
    """``$AGENTOS_AGENT_INI``, else ``agent.ini`` in the current folder."""
    path = os.environ.get(AGENT_INI_ENV)
    if path:
        return path
    candidate = os.path.join(start or os.getcwd(), "agent.ini")
    return candidate if os.path.isfile(candidate) else None


def agent_ini_path(agent: str | None, usage: str) -> str:
    """The agent.ini that ``agent`` names (the file, or its folder), else the active one.

    ``usage`` says how to name one (``"agentos train PATH"``); no agent.ini is a UsageError.
    """
    path = agent or find_agent_ini()
    if path is None:
        raise UsageError(f"no agent.ini here; create one with 'agentos init' or name it: {usage}")
    if os.path.isdir(path):
        path = os.path.join(path, "agent.ini")
    if not os.path.isfile(path):
        raise UsageError(f"no such agent.ini: {path}")
    return path


def runs_dir(config) -> str | None:
    """Where an agent keeps its runs: ``[agentos] runs`` (``none``/``false`` disables), else ``runs/``."""
    value = config.meta_value("runs", "runs") if config is not None else "runs"
    if value is None or value is False or value == "":
        return None
    return config.resolve_path(str(value)) if config is not None else os.path.abspath(str(value))
