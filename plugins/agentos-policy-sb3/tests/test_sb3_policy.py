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
        SB3Policy(space, space, algorithm="HER")
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


def test_safetensors_round_trip_rebuilds_the_network_and_gives_the_same_actions(tmp_path):
    """Trained-policy packages ship safetensors (no pickle): the settings ride along as metadata."""
    from safetensors import safe_open

    env = gymnasium.make("CartPole-v1")
    policy = SB3Policy(env.observation_space, env.action_space, algorithm="PPO", net_arch=[16, 8], activation="relu",
                       seed=3)
    path = str(tmp_path / "w.safetensors")
    policy.save_safetensors(path)
    with open(path, "rb") as f:
        assert not f.read(2).startswith(b"\x80")  # not a pickle
    with safe_open(path, framework="pt") as f:
        assert f.metadata()["algorithm"] == '"PPO"' and f.metadata()["net_arch"] == "[16, 8]"
    fresh = SB3Policy(env.observation_space, env.action_space, seed=99)  # algorithm auto, default net: rebuilt
    fresh.load_safetensors(path)
    assert (fresh.algorithm, fresh.net_arch, fresh.activation) == ("PPO", [16, 8], "relu")
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        assert fresh.decide(obs) == policy.decide(obs)
    for name, tensor in policy.net.state_dict().items():
        assert torch.equal(tensor, fresh.net.state_dict()[name])


def test_safetensors_that_do_not_fit_are_refused_beside_a_valid_twin(tmp_path):
    from safetensors.torch import load_file, save_file

    env = gymnasium.make("CartPole-v1")
    policy = SB3Policy(env.observation_space, env.action_space, algorithm="A2C", net_arch=[8])
    good = str(tmp_path / "good.safetensors")
    policy.save_safetensors(good)
    SB3Policy(env.observation_space, env.action_space, algorithm="A2C").load_safetensors(good)  # the valid twin
    with pytest.raises(ValueError, match="holds a A2C network"):
        SB3Policy(env.observation_space, env.action_space, algorithm="PPO").load_safetensors(good)
    with pytest.raises(ValueError, match="net_arch"):
        SB3Policy(env.observation_space, env.action_space, net_arch=[4]).load_safetensors(good)
    state = load_file(good)

    def variant(name, tensors, meta):
        path = str(tmp_path / name)
        save_file(tensors, path, metadata=meta)
        return path

    meta = {"format": '"agentos-sb3/1"', "algorithm": '"A2C"', "net_arch": "[8]", "activation": "null"}
    nan = {k: (v * float("nan") if v.is_floating_point() else v) for k, v in state.items()}
    cases = [
        (variant("nometa.safetensors", state, {}), "lacks the settings"),
        (variant("alg.safetensors", state, {**meta, "algorithm": '"HER"'}), "not an sb3 policy checkpoint"),
        (variant("sac.safetensors", state, {**meta, "algorithm": '"SAC"'}), "SAC acts in Box"),
        (variant("kw.safetensors", state, {**meta, "policy_kwargs": '{"activation_fn": "os.system"}'}),
         "activation_fn"),
        (variant("arch.safetensors", state, {**meta, "net_arch": "[99999999]"}), "short list of layer sizes"),
        (variant("act.safetensors", state, {**meta, "activation": '"os.system"'}), "activation"),
        (variant("nan.safetensors", nan, meta), "non-finite"),
        (variant("missing.safetensors", dict(list(state.items())[1:]), meta), "not this network's"),
    ]
    for path, message in cases:
        with pytest.raises(ValueError, match=message):
            SB3Policy(env.observation_space, env.action_space).load_safetensors(path)


def test_safetensors_written_before_1_3_still_load(tmp_path):
    """policy-sb3 up to 1.2 wrote algorithm, net_arch and activation only (published packages hold such files)."""
    from safetensors.torch import load_file, save_file

    env = gymnasium.make("CartPole-v1")
    policy = SB3Policy(env.observation_space, env.action_space, algorithm="PPO", net_arch=[8], activation="relu")
    path = str(tmp_path / "old.safetensors")
    meta = {"format": '"agentos-sb3/1"', "algorithm": '"PPO"', "net_arch": "[8]", "activation": '"relu"'}
    save_file(load_file_of(policy, tmp_path), path, metadata=meta)
    fresh = SB3Policy(env.observation_space, env.action_space)
    fresh.load_safetensors(path)
    assert (fresh.algorithm, fresh.network) == ("PPO", "MlpPolicy")
    assert fresh.kwargs == {"net_arch": [8], "activation_fn": "relu"}
    for seed in range(10):
        obs, _ = env.reset(seed=seed)
        assert fresh.decide(obs) == policy.decide(obs)
    assert load_file(path).keys() == fresh.net.state_dict().keys()


def load_file_of(policy, tmp_path):
    from safetensors.torch import load_file

    policy.save_safetensors(str(tmp_path / "new.safetensors"))
    return load_file(str(tmp_path / "new.safetensors"))
