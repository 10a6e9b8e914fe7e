"""Tests of {{ cookiecutter.class_name }}: the AgentOS conformance kit, then its own behaviour."""

from __future__ import annotations

import pytest
import torch
from agentos.testing import PolicyConformance, ReferenceEnv

from {{ cookiecutter.module_name }} import {{ cookiecutter.class_name }}, resolve_device


class TestConformance(PolicyConformance):
    """Actions in the action space, seeding, save/load, through the installed entry point."""

    name = {{ cookiecutter.name|jsonify }}
    settings = {"device": "cpu"}


class TestConformanceDiscreteObservations(TestConformance):
    environment_settings = {"observation": "discrete"}


def test_greedy_is_deterministic() -> None:
    env = ReferenceEnv()
    policy = {{ cookiecutter.class_name }}(env.observation_space, env.action_space, greedy=True, seed=1)
    observation, _ = env.reset(seed=0)
    assert len({policy.decide(observation) for _ in range(20)}) == 1


def test_log_probabilities_are_differentiable() -> None:
    env = ReferenceEnv()
    policy = {{ cookiecutter.class_name }}(env.observation_space, env.action_space, device="cpu")
    observation, _ = env.reset(seed=0)
    log_probabilities = policy.log_probabilities([observation, observation], [0, 1])
    assert log_probabilities.shape == (2,)
    log_probabilities.sum().backward()
    assert all(p.grad is not None for p in policy.parameters())


def test_device_setting() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="device must be"):
        resolve_device("gpu")
