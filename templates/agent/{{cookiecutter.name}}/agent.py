"""{{ cookiecutter.name }}: {{ cookiecutter.description }}.

``agentos run`` and ``agentos train`` build ``{{ cookiecutter.class_name }}`` with the defaults of
agent.ini, so ``self.environment``, ``self.policy`` and ``self.trainer`` are the same objects as
``acr.environment.<default>``, ``acr.policy.<default>`` and ``acr.trainer.<default>``.
"""

from __future__ import annotations

from agentos import Agent


class {{ cookiecutter.class_name }}(Agent):
    """The reference loop: the policy decides, the environment steps; ``train()`` uses the trainer.

    Override ``advance()`` to change a step (return True when the episode is over), for instance
    to learn while acting.
    """
