"""AgentOS agents as Academy agents: ``launch`` agent folders, ``connect`` to running ones."""

from ._errors import AgentActionError, AgentStartError
from ._launch import connect, launch
from ._pbt import population_based_training

__all__ = ["AgentActionError", "AgentStartError", "connect", "launch", "population_based_training"]
