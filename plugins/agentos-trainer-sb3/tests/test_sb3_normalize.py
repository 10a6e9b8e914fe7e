"""normalize: VecNormalize in training, its statistics saved with the policy and applied when it acts."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch
from agentos_policy_sb3 import SB3Policy
from agentos_trainer_sb3 import SB3Trainer


@pytest.fixture(scope="module")
def trained():
    env = gymnasium.make("Pendulum-v1")
    policy = SB3Policy(env.observation_space, env.action_space, device="cpu")
    trainer = SB3Trainer(algorithm="A2C", n_envs=2, normalize=True, gamma=0.9, n_steps=8)
    trainer.train(policy, env, steps=200, seed=0)
    return env, policy, trainer


def _fresh(env):
    return SB3Policy(env.observation_space, env.action_space, device="cpu")


def test_the_policy_gets_the_statistics_and_acts_on_normalized_observations(trained):
    env, policy, _ = trained
    stats = policy.normalization
    assert 200 < stats.counts["obs_count"] < 204  # every step and each first reset and stats.options["gamma"] == 0.9
    assert stats.options["norm_obs"] and stats.options["norm_reward"] and np.any(stats.arrays["obs_mean"] != 0)
    obs, _ = env.reset(seed=3)
    scaled = np.clip((obs - stats.arrays["obs_mean"]) / np.sqrt(stats.arrays["obs_var"] + 1e-8), -10, 10)
    expected, _ = policy.net.predict(scaled.astype(np.float32), deterministic=True)
    raw, _ = policy.net.predict(obs, deterministic=True)
    assert np.allclose(policy.decide(obs), expected) and not np.allclose(expected, raw)


def test_the_statistics_survive_checkpoint_and_safetensors(trained, tmp_path):
    env, policy, _ = trained
    obs, _ = env.reset(seed=4)
    policy.save(str(tmp_path / "p.pt"))
    policy.save_safetensors(str(tmp_path / "p.safetensors"))
    for loaded, how in ((_fresh(env), "load"), (_fresh(env), "load_safetensors")):
        getattr(loaded, how)(str(tmp_path / ("p.pt" if how == "load" else "p.safetensors")))
        for key, array in policy.normalization.arrays.items():
            assert np.array_equal(loaded.normalization.arrays[key], array), (how, key)
        assert loaded.normalization.options == policy.normalization.options
        assert loaded.normalization.counts == policy.normalization.counts
        assert np.allclose(loaded.decide(obs), policy.decide(obs))


def test_training_on_continues_from_the_statistics(trained, tmp_path):
    env, policy, _ = trained
    policy.save(str(tmp_path / "p.pt"))
    again = _fresh(env)
    again.load(str(tmp_path / "p.pt"))
    SB3Trainer(algorithm="A2C", n_envs=2, normalize=True, gamma=0.9, n_steps=8).train(again, env, steps=100, seed=1)
    assert 300 < again.normalization.counts["obs_count"] < 308
    with pytest.raises(ValueError, match="trained on normalized observations"):
        SB3Trainer(algorithm="A2C", n_steps=8).train(again, env, steps=10)


@pytest.mark.parametrize("change", [
    lambda n: n.update(obs_var=-n["obs_var"] - 1),
    lambda n: n.update(obs_mean=torch.zeros(5, dtype=torch.float64)),
    lambda n: n.update(obs_mean=torch.full((3,), float("nan"), dtype=torch.float64)),
    lambda n: n.update(clip_obs="10"),
    lambda n: n.update(extra=1),
    lambda n: n.pop("ret_var"),
])
def test_a_tampered_normalization_is_refused(trained, tmp_path, change):
    env, policy, _ = trained
    policy.save(str(tmp_path / "p.pt"))
    _fresh(env).load(str(tmp_path / "p.pt"))  # the valid twin loads
    data = torch.load(str(tmp_path / "p.pt"), weights_only=True)
    change(data["normalization"])
    torch.save(data, str(tmp_path / "bad.pt"))
    with pytest.raises(ValueError, match="normalization"):
        _fresh(env).load(str(tmp_path / "bad.pt"))


@pytest.mark.parametrize("value", ['{"norm_obs": 1}', '{"evil": true}', "[1]", '{"clip_obs": -1}', "maybe"])
def test_bad_normalize_settings_are_clear(value):
    SB3Trainer(algorithm="A2C", normalize='{"norm_obs": true, "norm_reward": false}')  # the valid twin
    with pytest.raises(ValueError, match="normalize"):
        SB3Trainer(algorithm="A2C", normalize=value)


@pytest.mark.parametrize("scheme", ["float16", "int8"])
def test_publish_quantize_keeps_the_statistics_exact(trained, tmp_path, scheme):
    from agentos.results import check_weights, dequantized, quantize

    env, policy, _ = trained
    policy.save_safetensors(str(tmp_path / "p.safetensors"))
    changed = quantize(str(tmp_path / "p.safetensors"), str(tmp_path / "q.safetensors"), scheme)
    assert changed and not [name for name in changed if name.startswith("vecnormalize.")]  # the network shrinks
    path = dequantized(str(tmp_path / "q.safetensors"), check_weights(str(tmp_path / "q.safetensors")), str(tmp_path))
    loaded = _fresh(env)
    loaded.load_safetensors(path)
    for key, array in policy.normalization.arrays.items():
        assert np.array_equal(loaded.normalization.arrays[key], array), key
