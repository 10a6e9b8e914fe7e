"""{{ cookiecutter.description }}."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = ["{{ cookiecutter.class_name }}"]

LEFT, RIGHT = 0, 1


class {{ cookiecutter.class_name }}(gym.Env):
    """Walk along a line of ``size`` cells to a goal cell; both start at random cells.

    - observation: ``Box(0, 1, (2,), float32)``, the agent's and the goal's cell scaled to [0, 1]
    - actions: ``Discrete(2)``, 0 = left, 1 = right (walking into a wall stays put)
    - reward: +1 on reaching the goal (the episode terminates), -0.01 for every other step
    - truncation: after ``max_steps`` steps

    All randomness comes from ``self.np_random``, so ``reset(seed=s)`` makes episodes repeatable.
    Replace the dynamics with your task; keep the Gymnasium API so the conformance tests pass.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, size: int = 8, max_steps: int = 50, render_mode: str | None = None) -> None:
        if size < 2:
            raise ValueError(f"size must be at least 2, got {size}")
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.size = size
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self._agent = 0
        self._goal = 1
        self._steps = 0

    def _observation(self) -> np.ndarray:
        return np.array([self._agent, self._goal], dtype=np.float32) / np.float32(self.size - 1)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._agent, self._goal = (
            int(c) for c in self.np_random.choice(self.size, 2, replace=False)
        )
        self._steps = 0
        return self._observation(), {"distance": abs(self._goal - self._agent)}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self.action_space.contains(action):
            raise ValueError(f"invalid action {action!r}: use {LEFT} (left) or {RIGHT} (right)")
        move = 1 if int(action) == RIGHT else -1
        self._agent = min(self.size - 1, max(0, self._agent + move))
        self._steps += 1
        terminated = self._agent == self._goal
        truncated = self._steps >= self.max_steps and not terminated
        reward = 1.0 if terminated else -0.01
        return (
            self._observation(),
            reward,
            terminated,
            truncated,
            {"distance": abs(self._goal - self._agent)},
        )

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        cells = ["."] * self.size
        cells[self._goal] = "G"
        cells[self._agent] = "A"
        return "".join(cells)
