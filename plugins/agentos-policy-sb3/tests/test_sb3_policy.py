"""The sb3 policy: conformance on CartPole, weights-only checkpoints, settings."""

from __future__ import annotations

import gymnasium
import pytest
import torch
from agentos import testing
from agentos_policy_sb3 import SB3Policy


class TestConformancePPO(testing.PolicyConformance):
    name = "sb3"
    environment = "gymnasium"
    settings = {"algorithm": "PPO", "device": "cpu", "seed": 0}
    steps = 50


class TestConformanceDQN(testing.PolicyConformance):
    name = "sb3"
    environment = "gymnasium"
    settings = {"algorithm": "DQN", "net_arch": [16], "device": "cpu", "seed": 0}
    steps = 50


def test_checkpoint_is_weights_only_and_restores_the_algorithm(tmp_path):
    env = gymnasium.make("CartPole-v1")
    policy = SB3Policy(env.observation_space, env.action_space, algorithm="A2C", net_arch=[8, 8], activation="relu")
    path = tmp_path / "p.pt"
    policy.save(str(path))
    data = torch.load(path, weights_only=True)
    assert data["algorithm"] == "A2C" and data["net_arch"] == [8, 8] and data["activation"] == "relu"
    fresh = SB3Policy(env.observation_space, env.action_space)  # algorithm = auto
    fresh.load(str(path))
    assert fresh.algorithm == "A2C"
    obs, _ = env.reset(seed=0)
    assert fresh.decide(obs) == policy.decide(obs)
    with pytest.raises(ValueError, match="holds a A2C network"):
        SB3Policy(env.observation_space, env.action_space, algorithm="PPO").load(str(path))


def test_settings_are_checked():
    space = gymnasium.spaces.Discrete(2)
    with pytest.raises(ValueError, match="algorithm must be"):
        SB3Policy(space, space, algorithm="SAC")
    with pytest.raises(ValueError, match="device must be"):
        SB3Policy(space, space, device="gpu")
    with pytest.raises(ValueError, match="net_arch"):
        SB3Policy(space, space, net_arch=[0])
    assert SB3Policy(space, space, device="auto").device.type in ("cpu", "cuda")


def test_a_checkpoint_with_pickled_objects_is_refused_without_advice_to_unpickle_it(tmp_path):
    import fractions

    env = gymnasium.make("CartPole-v1")
    policy = SB3Policy(env.observation_space, env.action_space, algorithm="A2C", net_arch=[8])
    good = str(tmp_path / "good.pt")
    policy.save(good)
    hostile = str(tmp_path / "hostile.pt")
    torch.save({**torch.load(good, weights_only=True), "extra": fractions.Fraction(1, 3)}, hostile)
    with pytest.raises(ValueError, match="refused unread") as refused:
        policy.load(hostile)
    assert "weights_only" not in str(refused.value) and "trust" not in str(refused.value)
    policy.load(good)  # the valid twin
