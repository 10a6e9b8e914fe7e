"""A normalized zoo preset end to end, at a tiny budget: `agentos train` with it, the run's checkpoint, a
published trained-policy wheel and that wheel installed by pip all carry the same VecNormalize statistics."""

from __future__ import annotations

import importlib
import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from agentos.api import publish_run, train
from agentos.experiments import load_preset
from agentos_policy_sb3 import SB3Policy

PRESET = "zoo_a2c_pendulum_v1"  # rl-zoo's A2C on Pendulum-v1: normalize, n_envs 8, a lin_ schedule, gSDE


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("zoo-agent")
    (folder / "agent.ini").write_text(f"[environment]\ndefault = gymnasium\n\n[preset]\ndefault = {PRESET}\n")
    summary = train(str(folder / "agent.ini"), steps=320, seed=0, threads=1)
    return folder, summary


def _stats(policy):
    return policy.normalization.options, policy.normalization.counts, policy.normalization.arrays


def _same(a, b):
    assert a.normalization.options == b.normalization.options and a.normalization.counts == b.normalization.counts
    for key, array in a.normalization.arrays.items():
        assert np.array_equal(array, b.normalization.arrays[key]), key


def test_the_checkpoint_holds_the_statistics(run):
    _, summary = run
    env = gymnasium.make("Pendulum-v1")
    policy = SB3Policy(env.observation_space, env.action_space, device="cpu")
    policy.load(summary["checkpoint"])
    options, counts, arrays = _stats(policy)
    assert options["gamma"] == 0.9 and options["norm_obs"] and options["norm_reward"]  # rl-zoo: the algorithm's gamma
    assert 320 <= counts["obs_count"] <= 340 and arrays["obs_mean"].shape == (3,) and arrays["obs_var"].min() > 0


def test_they_survive_publish_and_install(run, tmp_path):
    folder, summary = run
    env = gymnasium.make("Pendulum-v1")
    trained = SB3Policy(env.observation_space, env.action_space, device="cpu")
    trained.load(summary["checkpoint"])
    result = publish_run(summary["run"], "zoo_pendulum_check", index=str(tmp_path / "index"),
                         agent_ini=str(folder / "agent.ini"), episodes=2, record_replay=False,
                         keep=str(tmp_path / "kept"))
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site),
                    str(tmp_path / "kept" / result["wheel"])], check=True, timeout=120)
    sys.path.insert(0, str(site))
    try:
        module = importlib.import_module("agentos_policy_zoo_pendulum_check")
        installed = module.policy(env.observation_space, env.action_space)
    finally:
        sys.path.remove(str(site))
    _same(installed, trained)
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        assert np.allclose(installed.decide(obs), trained.decide(obs))


@pytest.mark.parametrize("name", [
    "zoo_dqn_cartpole_v1",  # train_freq, exploration, net_arch
    "zoo_ppo_lstm_acrobot_v1",  # RecurrentPPO, normalize, 16 environments
    "zoo_ddpg_pendulum_v1",  # action noise
    "zoo_trpo_mountaincarcontinuous_v0",  # gSDE, normalize
])
def test_presets_of_other_algorithms_train_a_few_hundred_steps(name, tmp_path):
    (tmp_path / "agent.ini").write_text(f"[environment]\ndefault = gymnasium\n\n[preset]\ndefault = {name}\n")
    summary = train(str(tmp_path / "agent.ini"), steps=200, seed=0, threads=1)
    env = gymnasium.make(load_preset(name).environments["gymnasium"]["environment"]["id"])
    SB3Policy(env.observation_space, env.action_space, device="cpu").load(summary["checkpoint"])
