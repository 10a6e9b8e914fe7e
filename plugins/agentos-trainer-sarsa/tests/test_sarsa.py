"""The sarsa trainer: conformance, and it solves the corridor with each method."""

from __future__ import annotations

import pytest
from agentos import testing
from agentos_env_corridor import CorridorEnv
from agentos_policy_q_table import QTablePolicy
from agentos_trainer_sarsa import SarsaTrainer


class TestConformance(testing.TrainerConformance):
    name = "sarsa"
    policy = "q_table"
    environment = "corridor"


class TestConformanceQLearning2048(testing.TrainerConformance):
    name = "sarsa"
    settings = {"method": "q_learning"}
    policy = "q_table"
    policy_settings = {"key": "2048"}
    environment = "2048"
    episodes = 2


def greedy_return(policy, env, seed=0) -> float:
    obs, _ = env.reset(seed=seed)
    policy.reset()
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, _ = env.step(policy.decide(obs))
        total += reward
        done = terminated or truncated
    return total


@pytest.mark.parametrize("method", ["sarsa", "expected_sarsa", "q_learning"])
def test_solves_the_corridor(method):
    env = CorridorEnv(length=10)
    policy = QTablePolicy(env.observation_space, env.action_space, seed=0)
    trainer = SarsaTrainer(alpha=0.5, method=method, seed=0)
    lengths = []
    trainer.train(policy, env, episodes=100, callback=lambda r, n: lengths.append(n))
    assert len(lengths) == 100
    assert greedy_return(policy, env) == -9.0


def test_steps_budget_and_epsilon_decay():
    env = CorridorEnv(length=5)
    policy = QTablePolicy(env.observation_space, env.action_space, seed=0)
    trainer = SarsaTrainer(epsilon=0.5, epsilon_decay=0.5, epsilon_min=0.01, seed=1)
    steps = []
    trainer.train(policy, env, steps=57, callback=lambda r, n: steps.append(n))
    assert sum(steps) <= 57
    assert trainer.epsilon == max(0.01, 0.5 * 0.5 ** len(steps))


def test_bad_settings_are_clear():
    with pytest.raises(ValueError, match="method must be one of"):
        SarsaTrainer(method="td")
    with pytest.raises(ValueError, match="alpha"):
        SarsaTrainer(alpha=0)
    with pytest.raises(TypeError, match="tabular policy"):
        SarsaTrainer().train(object(), CorridorEnv(), episodes=1)
