"""The errors a caller sees: one exception naming the agent (and the action)."""

from __future__ import annotations

from agentos.errors import AgentOSError


class AgentActionError(AgentOSError):
    """An action raised in the agent, or did not answer in time."""


class AgentStartError(AgentOSError):
    """An agent did not start (its process failed, or it did not answer in time)."""
