"""The sb3 trainer: conformance, vectorised environments, hyperparameters from settings."""

from __future__ import annotations

import gymnasium
import pytest
from agentos import testing
from agentos_policy_sb3 import SB3Policy
from agentos_trainer_sb3 import SB3Trainer, linear_schedule

SMALL = {"n_steps": 32, "batch_size": 32, "n_epochs": 1}


class TestConformancePPO(testing.TrainerConformance):
    name = "sb3"
    settings = {"algorithm": "PPO", "n_envs": 2, **SMALL}
    policy = "sb3"
    policy_settings = {"device": "cpu", "seed": 0}
    environment = "gymnasium"
    episodes = 3
    steps = 120


class TestConformanceDQN(testing.TrainerConformance):
    name = "sb3"
    settings = {"algorithm": "DQN", "learning_starts": 10, "train_freq": 1, "batch_size": 8}
    policy = "sb3"
    policy_settings = {"device": "cpu", "net_arch": [16]}
    environment = "gymnasium"
    episodes = 3
    steps = 120


def test_vectorised_training_reports_episodes_and_stops_on_budget():
    env = gymnasium.make("CartPole-v1")
    policy = SB3Policy(env.observation_space, env.action_space, device="cpu")
    trainer = SB3Trainer(algorithm="A2C", n_envs=4, learning_rate="lin_0.0007", n_steps=5)
    assert isinstance(trainer.hyperparameters["learning_rate"], linear_schedule)
    episodes = []
    model = trainer.train(policy, env, episodes=6, seed=0, callback=lambda r, n: episodes.append((r, n)))
    assert len(episodes) == 6 and all(n >= 1 and r == n for r, n in episodes)
    assert model.n_envs == 4 and policy.net is model.policy and policy.algorithm == "A2C"
    before = model.num_timesteps
    trainer.train(policy, env, steps=42, seed=0)  # continues the same model
    assert trainer.model is model and model.num_timesteps == before + 44  # 42 rounded up to 4 environments
    assert trainer.steps_taken == 44


@pytest.mark.parametrize(("algorithm", "settings"), [("PPO", {"n_steps": 64, "batch_size": 32}),
                                                     ("DQN", {"learning_starts": 10, "train_freq": 8})])
def test_a_step_budget_is_exact_not_whole_rollouts(algorithm, settings):
    env = gymnasium.make("CartPole-v1")
    policy = SB3Policy(env.observation_space, env.action_space, algorithm=algorithm, device="cpu")
    trainer = SB3Trainer(algorithm=algorithm, **settings)
    lengths = []
    model = trainer.train(policy, env, steps=100, seed=0, callback=lambda r, n: lengths.append(n))
    assert model.num_timesteps == trainer.steps_taken == 100  # not 128 (two 64-step rollouts)
    assert sum(lengths) <= 100


def test_bad_settings_are_clear():
    with pytest.raises(ValueError, match="PPO has no hyperparameter 'n_step'"):
        SB3Trainer(n_step=32)
    with pytest.raises(ValueError, match="algorithm must be"):
        SB3Trainer(algorithm="HER")
    env = gymnasium.make("CartPole-v1")
    policy = SB3Policy(env.observation_space, env.action_space, algorithm="DQN", device="cpu")
    with pytest.raises(ValueError, match="set to DQN but the trainer runs PPO"):
        SB3Trainer().train(policy, env, steps=10)
