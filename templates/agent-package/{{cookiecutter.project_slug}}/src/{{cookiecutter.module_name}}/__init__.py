"""{{ cookiecutter.description }}."""

from __future__ import annotations

from typing import Any

from agentos import Agent

__all__ = ["{{ cookiecutter.class_name }}"]


class {{ cookiecutter.class_name }}(Agent):
    """The AgentOS loop with an episode budget: the policy decides, the environment steps.

    ``agentos run`` builds it with the agent's default environment, policy and trainer. Settings
    (``agent.ini``): ``max_episode_steps`` ends (truncates) an episode after that many steps even
    when the environment would go on. Override :meth:`advance` to add memory, learning while
    acting, or anything else; return True when the episode is over.
    """

    def __init__(
        self,
        environment: Any = None,
        policy: Any = None,
        trainer: Any = None,
        max_episode_steps: int = 10_000,
    ) -> None:
        super().__init__(environment, policy, trainer)
        if max_episode_steps < 1:
            raise ValueError(f"max_episode_steps must be at least 1, got {max_episode_steps}")
        self.max_episode_steps = max_episode_steps

    def advance(self) -> bool:
        action = self.policy.decide(self.observation)
        self.observation, reward, terminated, truncated, self.info = self.environment.step(action)
        self.last_reward = reward
        self.episode_return += reward
        self.episode_length += 1
        return bool(terminated or truncated or self.episode_length >= self.max_episode_steps)
