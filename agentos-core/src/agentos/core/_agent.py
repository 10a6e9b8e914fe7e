"""The Agent: holds an environment, a policy and a trainer; ``advance()`` takes one step."""

from __future__ import annotations


class Agent:
    """A reference agent: the policy decides, the environment steps, the agent keeps the state.

    Subclass it and override :meth:`advance` (and :meth:`reset`) to add memory, learning while
    acting, or anything else; the runner only needs ``reset()`` and ``advance()``.
    """

    def __init__(self, environment=None, policy=None, trainer=None):
        self.environment = environment
        self.policy = policy
        self.trainer = trainer
        self.observation = None
        self.info: dict = {}
        self.last_reward = 0.0
        self.episode_return = 0.0
        self.episode_length = 0

    def reset(self, seed: int | None = None):
        """Start a new episode; returns the first observation."""
        self.observation, self.info = self.environment.reset(seed=seed)
        self.policy.reset()
        self.last_reward = 0.0
        self.episode_return = 0.0
        self.episode_length = 0
        return self.observation

    def advance(self) -> bool:
        """Take one step of the loop; True when the episode is over."""
        self.observation, reward, terminated, truncated, self.info = self.environment.step(
            self.policy.decide(self.observation)
        )
        self.last_reward = reward
        self.episode_return += reward
        self.episode_length += 1
        return terminated or truncated

    def train(self, *, episodes=None, steps=None, seed=None, callback=None):
        """Improve the policy with the agent's trainer."""
        if self.trainer is None:
            from ..errors import UsageError

            raise UsageError("this agent has no trainer: install one (agentos install trainer NAME)")
        return self.trainer.train(
            self.policy, self.environment, episodes=episodes, steps=steps, seed=seed, callback=callback
        )

    def close(self) -> None:
        close = getattr(self.environment, "close", None)
        if close:
            close()
