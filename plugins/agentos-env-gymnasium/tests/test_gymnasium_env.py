"""The gymnasium environment component."""

from __future__ import annotations

import pytest
from agentos import testing
from agentos_env_gymnasium import make


class TestConformance(testing.EnvironmentConformance):
    name = "gymnasium"


class TestConformancePendulum(testing.EnvironmentConformance):
    name = "gymnasium"
    settings = {"id": "Pendulum-v1", "g": 9.81}


def test_default_is_cartpole_with_kwargs_and_time_limit():
    env = make()
    assert env.spec.id == "CartPole-v1" and env.spec.max_episode_steps == 500
    env = make("CartPole-v1", max_episode_steps=20, sutton_barto_reward=True)
    assert env.spec.max_episode_steps == 20 and env.spec.kwargs["sutton_barto_reward"] is True
    env.reset(seed=0)
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, _ = env.step(0)
        steps += 1
        done = terminated or truncated
    assert steps <= 20


def test_unknown_id_is_clear():
    with pytest.raises(ValueError, match="unknown Gymnasium environment 'CartPol-v1'"):
        make("CartPol-v1")
