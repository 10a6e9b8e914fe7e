"""AgentOS agents as Academy agents: ``launch`` agent folders, ``connect`` to running ones.

Also public (since 0.4.2): :func:`exchange_factory`, the Academy exchange factory for an ``AGENTOS_EXCHANGE``
address (``local``, ``redis://``, ``hybrid+redis://``, ``http(s)://``), and :func:`connect_players`, a
context manager yielding ``{name: Player}`` for agents served (``agentos serve``) on an exchange, as the
arena plays them.
"""

from ._errors import AgentActionError, AgentStartError
from ._exchange import exchange_factory
from ._launch import connect, launch
from ._pbt import population_based_training
from ._players import connect_players

__all__ = [
    "AgentActionError",
    "AgentStartError",
    "connect",
    "connect_players",
    "exchange_factory",
    "launch",
    "population_based_training",
]
