"""A 1-D corridor environment: the smallest task with something to learn."""

from __future__ import annotations

import gymnasium as gym
from gymnasium import spaces

__all__ = ["CorridorEnv"]


class CorridorEnv(gym.Env):
    """Walk from cell 0 to cell ``length - 1``; each step costs -1.

    Actions: 0 = left, 1 = right. Observations are the cell index (a plain ``int``).
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, length: int = 10, max_steps: int = 100, render_mode: str | None = None):
        if length < 2:
            raise ValueError(f"length must be at least 2, got {length}")
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.length = length
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.observation_space = spaces.Discrete(length)
        self.action_space = spaces.Discrete(2)
        self._position = 0
        self._steps = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._position = 0
        self._steps = 0
        return 0, {}

    def step(self, action):
        if action == 1:
            self._position += 1
        elif action == 0:
            if self._position > 0:
                self._position -= 1
        else:
            raise ValueError(f"invalid action {action!r}: use 0 (left) or 1 (right)")
        self._steps += 1
        terminated = self._position == self.length - 1
        return self._position, -1.0, terminated, self._steps >= self.max_steps and not terminated, {}

    def render(self):
        if self.render_mode == "ansi":
            cells = ["."] * self.length
            cells[-1] = "E"
            cells[self._position] = "A"
            return "".join(cells)
        return None
