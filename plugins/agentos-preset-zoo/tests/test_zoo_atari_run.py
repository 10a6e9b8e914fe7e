"""An Atari zoo preset trains as published, at a tiny budget: rl-zoo's PPO settings, SB3's AtariWrapper and four
stacked frames as the environment's settings, a CNN over the (4, 84, 84) frames; agent.ini picks the game."""

from __future__ import annotations

from agentos.api import train


def test_zoo_ppo_atari_trains_a_cnn_on_the_game_agent_ini_names(tmp_path):
    import torch

    (tmp_path / "agent.ini").write_text(
        "[environment]\ndefault = gymnasium\n\n[environment.gymnasium]\nid = ALE/Breakout-v5\n\n"
        "[preset]\ndefault = zoo_ppo_atari\n\n"
        "[preset.zoo_ppo_atari]\ntrainer.n_envs = 2\ntrainer.n_steps = 32\ntrainer.batch_size = 32\n")
    summary = train(str(tmp_path / "agent.ini"), steps=64, seed=0, threads=1)
    assert summary["status"] == "finished" and summary["steps_taken"] == 64
    checkpoint = torch.load(summary["checkpoint"], weights_only=True)
    assert checkpoint["algorithm"] == "PPO" and checkpoint["network"] == "CnnPolicy"
    first = next(v for k, v in checkpoint["state_dict"].items() if k.endswith("cnn.0.weight"))
    assert tuple(first.shape[1:]) == (4, 8, 8)  # NatureCNN's first layer over 4 stacked frames
