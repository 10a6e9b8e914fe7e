"""Where things are: the active agent.ini."""

from __future__ import annotations

import os

AGENT_INI_ENV = "AGENTOS_AGENT_INI"


def find_agent_ini(start: str | None = None) -> str | None:
    """``$AGENTOS_AGENT_INI``, else ``agent.ini`` in the current folder."""
    path = os.environ.get(AGENT_INI_ENV)
    if path:
        return path
    candidate = os.path.join(start or os.getcwd(), "agent.ini")
    return candidate if os.path.isfile(candidate) else None
