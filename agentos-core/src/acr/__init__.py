"""acr: the AgentOS component registry, in code.

import acr
acr.environment["2048"]      # the 2048 environment, built with agent.ini's settings
acr.policy.random            # names that are identifiers work as attributes
list(acr.policy), "dqn" in acr.policy, len(acr.trainer)
acr.register("policy", "mine", MyPolicy)
"""

from agentos.core._acr import KindNamespace, register
from agentos.core._context import active_context, reset_active, use

environment = KindNamespace("environment")
policy = KindNamespace("policy")
trainer = KindNamespace("trainer")
agent = KindNamespace("agent")

__all__ = ["active_context", "agent", "environment", "policy", "register", "reset_active", "trainer", "use"]
