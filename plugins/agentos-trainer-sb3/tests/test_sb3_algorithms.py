"""Every SB3 and sb3-contrib algorithm trains a few hundred steps and its policy plays, saved and reloaded
as safetensors; networks follow the observation space (CnnPolicy for images, MultiInputPolicy for Dict);
policy_kwargs are checked plain data; MaskablePPO obeys action masks; RecurrentPPO carries its LSTM state."""

from __future__ import annotations

import json

import gymnasium
import numpy as np
import pytest
import torch
from agentos_policy_sb3 import SB3Policy
from agentos_trainer_sb3 import SB3Trainer

OFF_POLICY = {"learning_starts": 50, "batch_size": 16, "train_freq": 8, "buffer_size": 1000}
SMALL_NET = {"net_arch": [16]}
CASES = [  # algorithm, task, trainer settings, policy_kwargs
    ("PPO", "CartPole-v1", {"n_steps": 64, "batch_size": 32, "n_epochs": 1}, SMALL_NET),
    ("PPO", "Pendulum-v1", {"n_steps": 64, "batch_size": 32, "n_epochs": 1, "use_sde": True}, SMALL_NET),
    ("A2C", "CartPole-v1", {"n_steps": 8}, SMALL_NET),
    ("DQN", "CartPole-v1", {**OFF_POLICY, "target_update_interval": 50}, SMALL_NET),
    ("SAC", "Pendulum-v1", OFF_POLICY, SMALL_NET),
    ("TD3", "Pendulum-v1", {**OFF_POLICY, "action_noise": "normal_0.1"}, SMALL_NET),
    ("DDPG", "Pendulum-v1", {**OFF_POLICY, "action_noise": "ornstein_uhlenbeck_0.2"}, SMALL_NET),
    ("QRDQN", "CartPole-v1", {**OFF_POLICY, "target_update_interval": 50}, {**SMALL_NET, "n_quantiles": 5}),
    ("TQC", "Pendulum-v1", OFF_POLICY, {**SMALL_NET, "n_quantiles": 5, "n_critics": 2}),
    ("TRPO", "Pendulum-v1", {"n_steps": 64, "batch_size": 32, "n_critic_updates": 1}, SMALL_NET),
    ("RecurrentPPO", "CartPole-v1", {"n_steps": 64, "batch_size": 32, "n_epochs": 1},
     {**SMALL_NET, "lstm_hidden_size": 8}),
    ("ARS", "Pendulum-v1", {"n_delta": 2, "n_eval_episodes": 1}, SMALL_NET),
    ("CrossQ", "Pendulum-v1", OFF_POLICY, SMALL_NET),
]


def play(policy, env, seed, steps=30):
    policy.reset()
    obs, _ = env.reset(seed=seed)
    actions = []
    for _ in range(steps):
        action = policy.decide(obs)
        assert env.action_space.contains(np.asarray(action, dtype=env.action_space.dtype)
                                         if not isinstance(action, int) else action)
        actions.append(np.asarray(action).tolist())
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    return actions


@pytest.mark.parametrize(("algorithm", "task", "settings", "kwargs"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_every_algorithm_trains_and_its_saved_policy_plays(algorithm, task, settings, kwargs, tmp_path):
    env = gymnasium.make(task)
    policy = SB3Policy(env.observation_space, env.action_space, device="cpu", seed=0)  # algorithm auto
    trainer = SB3Trainer(algorithm=algorithm.lower(), policy_kwargs=kwargs, **settings)
    model = trainer.train(policy, env, steps=200, seed=0)
    # ARS scores whole episodes of its 2 * n_delta candidates (4 x 200 Pendulum steps) before it stops
    assert trainer.steps_taken == model.num_timesteps == (800 if algorithm == "ARS" else 200)
    assert type(model).__name__ == algorithm and policy.net is model.policy
    sde = {"use_sde": True} if settings.get("use_sde") else {}  # PPO gives it to its network itself
    assert policy.algorithm == algorithm and policy.network.startswith("Mlp") and policy.kwargs == {**kwargs, **sde}
    if "action_noise" in settings:
        assert type(model.action_noise).__name__ in ("NormalActionNoise", "OrnsteinUhlenbeckActionNoise")
    path = str(tmp_path / "w.safetensors")
    policy.save_safetensors(path)
    fresh = SB3Policy(env.observation_space, env.action_space, device="cpu")
    fresh.load_safetensors(path)
    assert (fresh.algorithm, fresh.network, fresh.kwargs) == (algorithm, policy.network, policy.kwargs)
    for name, tensor in policy.net.state_dict().items():
        assert torch.equal(tensor.cpu(), fresh.net.state_dict()[name])
    assert play(fresh, env, seed=1) == play(policy, env, seed=1)
    loaded = fresh.net
    fresh.adopt_algorithm(algorithm, None, kwargs)  # training on from the checkpoint (train --from-run) keeps it
    assert fresh.net is loaded


def test_ars_heeds_an_episode_count_at_the_end_of_its_update():
    env = gymnasium.make("Pendulum-v1")
    policy = SB3Policy(env.observation_space, env.action_space, device="cpu", seed=0)
    trainer = SB3Trainer(algorithm="ARS", n_delta=2, n_eval_episodes=1, policy_kwargs=SMALL_NET)
    seen = []
    model = trainer.train(policy, env, episodes=1, seed=0, callback=lambda r, n: seen.append(n))
    assert seen == [200] and model.num_timesteps == trainer.steps_taken == 800  # one update: 4 candidate episodes
    trainer.train(policy, env, episodes=1, seed=0, callback=lambda r, n: seen.append(n))  # continues, stops again
    assert seen == [200, 200] and model.num_timesteps == 1600


def test_recurrent_ppo_carries_its_lstm_state_across_an_episode():
    env = gymnasium.make("CartPole-v1")
    policy = SB3Policy(env.observation_space, env.action_space, algorithm="RecurrentPPO", device="cpu", seed=0,
                       policy_kwargs={"lstm_hidden_size": 8})
    assert policy.network == "MlpLstmPolicy"
    obs, _ = env.reset(seed=0)
    policy.decide(obs)
    first = [s.copy() for s in policy._state]
    policy.decide(obs)  # the same observation, a different memory
    assert not all(np.array_equal(a, b) for a, b in zip(first, policy._state, strict=True))
    policy.reset()
    assert policy._state is None
    policy.decide(obs)
    assert all(np.array_equal(a, b) for a, b in zip(first, policy._state, strict=True))  # a new episode starts afresh
    with pytest.raises(ValueError, match="one environment at a time"):
        policy.decide_batch([obs, obs])


class PickTheLit(gymnasium.Env):
    """Images: a 36x36 uint8 frame lit on the left or the right half; reward 1 for the lit side's action."""

    observation_space = gymnasium.spaces.Box(0, 255, (36, 36, 1), np.uint8)
    action_space = gymnasium.spaces.Discrete(2)

    def _frame(self):
        self.side = int(self.np_random.integers(2))
        frame = np.zeros((36, 36, 1), np.uint8)
        frame[:, 18 * self.side:18 * (self.side + 1)] = 255
        return frame

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._frame(), {}

    def step(self, action):
        reward, self.t = float(action == self.side), self.t + 1
        return self._frame(), reward, False, self.t >= 8, {}


def test_image_observations_get_a_cnn_policy(tmp_path):
    from stable_baselines3.common.torch_layers import NatureCNN

    env = PickTheLit()
    policy = SB3Policy(env.observation_space, env.action_space, device="cpu", seed=0,
                       policy_kwargs='{"features_extractor_kwargs": {"features_dim": 16}, "net_arch": [8]}')
    model = SB3Trainer(algorithm="PPO", n_steps=64, batch_size=32, n_epochs=1).train(policy, env, steps=128, seed=0)
    assert policy.network == "CnnPolicy" and isinstance(model.policy.features_extractor, NatureCNN)
    path = str(tmp_path / "cnn.safetensors")
    policy.save_safetensors(path)
    fresh = SB3Policy(env.observation_space, env.action_space, device="cpu")
    fresh.load_safetensors(path)
    assert fresh.network == "CnnPolicy" and play(fresh, env, seed=2) == play(policy, env, seed=2)
    mlp = SB3Policy(env.observation_space, env.action_space, algorithm="PPO", network="MlpPolicy", device="cpu")
    assert mlp.network == "MlpPolicy"  # set in agent.ini: kept
    with pytest.raises(ValueError, match="network must be one of"):
        SB3Policy(env.observation_space, env.action_space, algorithm="PPO", network="LstmPolicy")


class PickALegal(gymnasium.Env):
    """Dict observations with an ``action_mask``: two of four actions legal; an illegal one ends the episode."""

    observation_space = gymnasium.spaces.Dict({"observation": gymnasium.spaces.Box(0, 1, (4,), np.float32),
                                               "action_mask": gymnasium.spaces.MultiBinary(4)})
    action_space = gymnasium.spaces.Discrete(4)

    def _obs(self):
        mask = np.zeros(4, np.int8)
        mask[self.np_random.choice(4, 2, replace=False)] = 1
        return {"observation": mask.astype(np.float32), "action_mask": mask}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.obs = 0, self._obs()
        return self.obs, {}

    def step(self, action):
        legal = bool(self.obs["action_mask"][action])
        self.t, self.obs = self.t + 1, self._obs()
        return self.obs, float(legal), not legal, self.t >= 20, {}


def test_maskable_ppo_takes_masks_from_the_observation_and_plays_legal_moves():
    env = PickALegal()
    policy = SB3Policy(env.observation_space, env.action_space, device="cpu", seed=0)
    SB3Trainer(algorithm="MaskablePPO", n_steps=64, batch_size=32, n_epochs=1).train(policy, env, steps=128, seed=0)
    assert policy.network == "MultiInputPolicy"
    lengths = [len(play(policy, env, seed=seed, steps=20)) for seed in range(10)]
    assert lengths == [20] * 10  # never an illegal move
    cartpole = gymnasium.make("CartPole-v1")
    with pytest.raises(ValueError, match="MaskablePPO needs action masks"):
        SB3Trainer(algorithm="MaskablePPO", n_steps=16).train(
            SB3Policy(cartpole.observation_space, cartpole.action_space, device="cpu"), cartpole, steps=16)


def test_policy_kwargs_are_allowlisted_plain_data_beside_a_valid_twin():
    env = gymnasium.make("Pendulum-v1")
    valid = '{"net_arch": {"pi": [16], "vf": [8]}, "activation_fn": "relu", "ortho_init": false, "log_std_init": -0.5}'
    policy = SB3Policy(env.observation_space, env.action_space, device="cpu")
    model = SB3Trainer(algorithm="PPO", policy_kwargs=valid, n_steps=16, batch_size=16).train(policy, env, steps=16)
    assert isinstance(model.policy.mlp_extractor.policy_net[1], torch.nn.ReLU)
    assert model.policy.mlp_extractor.value_net[0].out_features == 8
    hostile = {
        '{"activation_fn": "torch.nn.ReLU"}': "activation_fn must be one of tanh",
        '{"activation_fn": "os.system"}': "activation_fn must be one of tanh",
        '{"activation_fn": "mish"}': "activation_fn must be one of tanh",
        '{"features_extractor_class": "builtins.eval"}': "no key 'features_extractor_class'",
        '{"log_std_init": NaN}': "log_std_init must be a finite number",
        '{"net_arch": [64, [64]]}': "net_arch must be a list",
        '{"net_arch": {"pi": [16], "__class__": [1]}}': "net_arch must be a list",
        '{"ortho_init": "yes"}': "ortho_init must be true or false",
        "[1, 2]": "must be a JSON object",
        "__import__('os')": "must be a JSON object",
    }
    for text, message in hostile.items():
        for make in (lambda t: SB3Trainer(algorithm="PPO", policy_kwargs=t),
                     lambda t: SB3Policy(env.observation_space, env.action_space, policy_kwargs=t)):
            with pytest.raises(ValueError, match=message) as refused:
                make(text)
            assert "\n" not in str(refused.value)
    with pytest.raises(ValueError, match="'n_quantiles' does not fit PPO's MlpPolicy"):
        SB3Trainer(algorithm="PPO", policy_kwargs={"n_quantiles": 5}).train(policy, env, steps=16)


def test_unknown_keywords_and_unfit_spaces_are_one_line():
    with pytest.raises(ValueError, match=r"SAC has no hyperparameter 'n_epochs' \(accepted: learning_rate, buffer"):
        SB3Trainer(algorithm="SAC", n_epochs=32)
    with pytest.raises(ValueError, match="TD3 has no hyperparameter 'replay_buffer_class'"):
        SB3Trainer(algorithm="TD3", replay_buffer_class="builtins.eval")  # keywords that take live objects
    with pytest.raises(ValueError, match="action_noise must be normal_SIGMA"):
        SB3Trainer(algorithm="TD3", action_noise="numpy.random.normal")
    assert SB3Trainer(algorithm="TD3", action_noise="normal_0.3").hyperparameters["action_noise"] == "normal_0.3"
    with pytest.raises(ValueError, match="HER is not offered"):
        SB3Trainer(algorithm="HER")
    cartpole = gymnasium.make("CartPole-v1")
    with pytest.raises(ValueError, match="SAC acts in Box action spaces, not this environment's Discrete"):
        policy = SB3Policy(cartpole.observation_space, cartpole.action_space)
        SB3Trainer(algorithm="SAC").train(policy, cartpole, steps=8)


SAC_PENDULUM = """\
[environment]
default = gymnasium
[policy]
default = sb3
[trainer]
default = sb3
[environment.gymnasium]
package = agentos-env-gymnasium
id = Pendulum-v1
[policy.sb3]
package = agentos-policy-sb3
device = cpu
[trainer.sb3]
package = agentos-trainer-sb3
algorithm = SAC
learning_starts = 50
batch_size = 16
train_freq = 4
policy_kwargs = '{"net_arch": {"pi": [16], "qf": [16]}, "activation_fn": "ACTIVATION"}'
"""


def test_agentos_train_sac_from_agent_ini_then_run_the_checkpoint(tmp_path, monkeypatch, capsys):
    """Through the CLI: policy_kwargs as JSON in agent.ini; the run's checkpoint plays; a dotted activation is
    one line and a non-zero exit beside it."""
    from agentos.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.ini").write_text(SAC_PENDULUM.replace("ACTIVATION", "relu"))
    assert main(["train", "250", "--steps", "--seed", "0", "--quiet"]) == 0
    (run,) = (tmp_path / "runs").iterdir()
    assert json.loads((run / "run.json").read_text())["summary"]["steps_taken"] == 250
    assert main(["run", "--from-run", run.name, "--episodes", "1", "--seed", "1"]) == 0
    assert "cannot load" not in capsys.readouterr().err
    (tmp_path / "agent.ini").write_text(SAC_PENDULUM.replace("ACTIVATION", "torch.nn.ReLU"))
    assert main(["train", "50", "--steps", "--quiet"]) != 0
    err = capsys.readouterr().err.strip()
    assert "activation_fn must be one of tanh" in err and len(err.splitlines()) == 1 and "Traceback" not in err
