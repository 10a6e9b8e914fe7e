"""agentos train with the sb3 trainer: SB3's metrics in the run's trackers, evaluation and the best model."""

from __future__ import annotations

import csv
import json

PPO_CARTPOLE = """\
[environment]
default = gymnasium
[policy]
default = sb3
[trainer]
default = sb3
[environment.gymnasium]
package = agentos-env-gymnasium
id = CartPole-v1
[policy.sb3]
package = agentos-policy-sb3
device = cpu
net_arch = [16]
[trainer.sb3]
package = agentos-trainer-sb3
algorithm = PPO
n_steps = 64
batch_size = 32
n_epochs = 1
[train]
eval_every_steps = 128
eval_episodes = 2
"""


def test_sb3_losses_entropy_learning_rate_and_fps_reach_metrics_csv_and_tensorboard(tmp_path):
    from agentos.api import train
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    (tmp_path / "agent.ini").write_text(PPO_CARTPOLE)
    summary = train(str(tmp_path / "agent.ini"), steps=256, seed=0)
    run = tmp_path / "runs" / summary["run"]
    with open(run / "metrics.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    names = {r["name"] for r in rows}
    assert {"train/loss", "train/entropy_loss", "train/learning_rate", "train/value_loss", "time/fps",
            "eval/mean_return"} <= names
    assert "train/n_updates" not in names  # what SB3 keeps out of TensorBoard (counters) stays out
    fps_steps = [int(r["step"]) for r in rows if r["name"] == "time/fps"]
    assert fps_steps == [64, 128, 192]  # a dump per rollout, at the run's step (the 4th ended the budget)
    assert all(float(r["value"]) == 0.0003 for r in rows if r["name"] == "train/learning_rate")
    events = EventAccumulator(str(run / "tensorboard"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"train/loss", "train/entropy_loss", "train/learning_rate", "time/fps", "eval/mean_return",
            "returns/episode", "returns/by_episode"} <= tags
    assert [e.step for e in events.Scalars("time/fps")] == fps_steps
    assert len(events.Scalars("returns/by_episode")) == summary["episodes"]
    meta = json.loads((run / "run.json").read_text())
    assert meta["evaluation"]["evaluations"] >= 1 and (run / meta["best_checkpoint"]).is_file()


def test_evaluation_mid_training_uses_the_current_normalization_statistics(tmp_path):
    import gymnasium
    from agentos.api import train
    from agentos_policy_sb3 import SB3Policy

    ini = PPO_CARTPOLE.replace("algorithm = PPO", "algorithm = PPO\nnormalize = true")
    (tmp_path / "agent.ini").write_text(ini.replace("eval_every_steps = 128", "eval_every_steps = 40"))
    summary = train(str(tmp_path / "agent.ini"), steps=80, seed=0)
    run = tmp_path / "runs" / summary["run"]
    best = json.loads((run / "run.json").read_text())["best_checkpoint"]
    env = gymnasium.make("CartPole-v1")
    loaded = SB3Policy(env.observation_space, env.action_space, device="cpu")
    loaded.load(str(run / best))
    # without the trainer's sync_policy the policy has no statistics until training ends: none would be saved
    assert loaded.normalization is not None and loaded.normalization.arrays
