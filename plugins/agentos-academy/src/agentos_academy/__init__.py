"""AgentOS agents as Academy agents: ``launch`` agent folders, ``connect`` to running ones."""

from ._errors import AgentActionError, AgentStartError
from ._launch import connect, launch

__all__ = ["AgentActionError", "AgentStartError", "connect", "launch"]
