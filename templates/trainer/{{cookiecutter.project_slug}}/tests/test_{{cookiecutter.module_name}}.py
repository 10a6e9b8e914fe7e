"""Tests of {{ cookiecutter.class_name }}: the AgentOS conformance kit, then its own behaviour."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
import torch
from agentos import Policy
from agentos.testing import ReferenceEnv, TrainerConformance
from gymnasium import spaces

from {{ cookiecutter.module_name }} import {{ cookiecutter.class_name }}, Trainable


class SoftmaxPolicy(Policy):
    """A linear softmax policy: the smallest policy that the trainer can train."""

    def __init__(self, observation_space: spaces.Space[Any], action_space: spaces.Discrete) -> None:
        super().__init__(observation_space, action_space)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)  # the same initial weights in every run
            self.layer = torch.nn.Linear(spaces.flatdim(observation_space), int(action_space.n))
        self.generator = torch.Generator().manual_seed(0)

    def _logits(self, observations: Sequence[Any]) -> torch.Tensor:
        rows = [
            torch.as_tensor(spaces.flatten(self.observation_space, o), dtype=torch.float32)
            for o in observations
        ]
        return self.layer(torch.stack(rows))

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        return self.layer.parameters()

    def log_probabilities(
        self, observations: Sequence[Any], actions: Sequence[Any]
    ) -> torch.Tensor:
        distribution = torch.distributions.Categorical(logits=self._logits(observations))
        return distribution.log_prob(torch.as_tensor([int(a) for a in actions]))

    @torch.no_grad()
    def decide(self, observation: Any) -> int:
        probabilities = torch.softmax(self._logits([observation])[0], dim=-1)
        return int(torch.multinomial(probabilities, 1, generator=self.generator))

    def seed(self, seed: int | None) -> None:
        self.generator.manual_seed(0 if seed is None else seed)


class TestConformance(TrainerConformance):
    """A short run changes the policy, crosses episode boundaries, honours the callback."""

    name = {{ cookiecutter.name|jsonify }}

    def make_policy(
        self, observation_space: spaces.Space[Any], action_space: spaces.Space[Any]
    ) -> SoftmaxPolicy:
        assert isinstance(action_space, spaces.Discrete)
        return SoftmaxPolicy(observation_space, action_space)


def test_learns_to_walk_right() -> None:
    env = ReferenceEnv(length=4, max_steps=10)
    policy = SoftmaxPolicy(env.observation_space, env.action_space)
    returns: list[float] = []
    {{ cookiecutter.class_name }}(learning_rate=0.05).train(
        policy, env, episodes=150, seed=0, callback=lambda r, n: returns.append(r)
    )
    assert sum(returns[-20:]) / 20 > sum(returns[:20]) / 20


def test_rejects_policies_it_cannot_train() -> None:
    env = ReferenceEnv()
    assert not isinstance(object(), Trainable)
    with pytest.raises(TypeError, match="log_probabilities"):
        {{ cookiecutter.class_name }}().train(Policy(), env, episodes=1)
