"""The dqn_sgd trainer: conformance, schedule, buffer, and it learns CartPole a little."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from agentos import testing
from agentos_policy_dqn import DQNPolicy
from agentos_trainer_dqn_sgd import DQNTrainer, ReplayBuffer

FAST = {"learning_starts": 20, "batch_size": 16, "train_freq": 1, "target_update": 25, "buffer_size": 500, "threads": 1}


class TestConformance2048(testing.TrainerConformance):
    name = "dqn_sgd"
    settings = FAST
    policy = "dqn"
    policy_settings = {"device": "cpu", "channels": 8, "hidden": [16]}
    environment = "2048"
    episodes = 1
    steps = 300


class TestConformanceCartPole(testing.TrainerConformance):
    name = "dqn_sgd"
    settings = FAST
    policy = "dqn"
    policy_settings = {"device": "cpu", "hidden": [16]}
    environment = "gymnasium"


def test_epsilon_schedule_and_settings():
    trainer = DQNTrainer(epsilon_start=1.0, epsilon_end=0.1, epsilon_steps=100)
    assert trainer.epsilon(0) == 1.0 and trainer.epsilon(50) == pytest.approx(0.55) and trainer.epsilon(500) == 0.1
    assert DQNTrainer(reward_transform="log1p", reward_scale=0.5)._reward(-4.0) == pytest.approx(-np.log1p(2.0))
    with pytest.raises(ValueError, match="loss must be"):
        DQNTrainer(loss="l1")
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        DQNTrainer(batch_size=0)


def test_replay_buffer_wraps_around():
    buffer = ReplayBuffer(3, np.zeros((4, 4), np.uint8), seed=0)
    for i in range(5):
        buffer.add(np.full((4, 4), i, np.uint8), i % 4, float(i), np.full((4, 4), i + 1, np.uint8), i == 4)
    assert buffer.size == 3 and sorted(buffer.actions.tolist()) == [0, 2, 3]
    obs, actions, rewards, next_obs, dones = buffer.sample(8)
    assert obs.dtype == np.uint8 and set(rewards.tolist()) <= {2.0, 3.0, 4.0}


def test_learns_cartpole_beyond_random():
    env = gymnasium.make("CartPole-v1")
    policy = DQNPolicy(env.observation_space, env.action_space, device="cpu", hidden=[64], seed=0)
    trainer = DQNTrainer(
        learning_rate=1e-3,
        learning_starts=500,
        batch_size=32,
        train_freq=1,
        target_update=200,
        epsilon_steps=3000,
        buffer_size=10_000,
        threads=1,
        seed=0,
    )
    returns = []
    trainer.train(policy, env, steps=6000, callback=lambda r, n: returns.append(r))
    policy.reset()
    greedy = []
    for i in range(5):
        obs, _ = env.reset(seed=100 + i)
        total, done = 0.0, False
        while not done:
            obs, r, term, trunc, _ = env.step(policy.decide(obs))
            total += r
            done = term or trunc
        greedy.append(total)
    assert np.mean(greedy) > 60, greedy  # uniform random play averages about 22
