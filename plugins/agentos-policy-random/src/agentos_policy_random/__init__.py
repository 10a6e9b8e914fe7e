"""A policy that acts uniformly at random: the baseline every learner must beat."""

from __future__ import annotations

import random

from agentos import Policy

__all__ = ["RandomPolicy"]


class RandomPolicy(Policy):
    """Uniformly random actions from ``action_space``."""

    def __init__(self, observation_space=None, action_space=None, seed: int | None = None):
        super().__init__(observation_space, action_space)
        if action_space is None:
            raise ValueError("the random policy needs the environment's action space")
        self._rng = random.Random(seed)
        self._discrete = None
        if type(action_space).__name__ == "Discrete":
            start, n = int(action_space.start), int(action_space.n)
            self._discrete = (start, n)
            randrange = self._rng.randrange
            self.decide = lambda observation: start + randrange(n)  # the hot path: no space.sample()
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        self._rng.seed(seed)
        if seed is not None and self._discrete is None:
            self.action_space.seed(seed)

    def decide(self, observation):
        return self.action_space.sample()
