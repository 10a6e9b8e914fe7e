"""Small components that the conformance tests run other components against."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..core._policy import Policy


class ReferenceEnv(gym.Env):
    """A short line: start in a random cell of the left half, walk right to the exit.

    Actions are ``Discrete(2)`` (0 = left, 1 = right). Observations are the position scaled to
    ``[0, 1]`` as a ``Box`` of shape ``(1,)`` (``observation="box"``, the default) or the cell
    index (``observation="discrete"``). Reward: +1 at the exit, -0.01 per other step. Episodes
    are truncated after ``max_steps`` steps, so training runs cross many episode boundaries.
    """

    metadata = {"render_modes": []}

    def __init__(self, length: int = 6, max_steps: int = 20, observation: str = "box"):
        if observation not in ("box", "discrete"):
            raise ValueError(f"observation must be 'box' or 'discrete', got {observation!r}")
        self.length = length
        self.max_steps = max_steps
        self.observation = observation
        self.action_space = spaces.Discrete(2)
        if observation == "box":
            self.observation_space = spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float32)
        else:
            self.observation_space = spaces.Discrete(length)
        self._position = 0
        self._steps = 0

    def _observation(self) -> Any:
        if self.observation == "box":
            return np.array([self._position / (self.length - 1)], dtype=np.float32)
        return self._position

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._position = int(self.np_random.integers(0, self.length // 2))
        self._steps = 0
        return self._observation(), {}

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"invalid action {action!r}")
        self._position = max(0, self._position + (1 if int(action) == 1 else -1))
        self._steps += 1
        terminated = self._position == self.length - 1
        truncated = self._steps >= self.max_steps and not terminated
        return self._observation(), 1.0 if terminated else -0.01, terminated, truncated, {}


class ReferencePolicy(Policy):
    """Uniformly random actions, seeded through :meth:`seed`."""

    def __init__(self, observation_space=None, action_space=None):
        super().__init__(observation_space, action_space)
        if action_space is None:
            raise ValueError("ReferencePolicy needs the action space")

    def seed(self, seed: int | None) -> None:
        self.action_space.seed(seed)

    def decide(self, observation):
        return self.action_space.sample()
