"""2048: uniform random play vs q_table + SARSA vs DQN, trained through ``agentos.api.train``.

* random: ``--eval-games`` games of uniform random moves: mean score, median best tile.
* sarsa: q_table (key = 2048) + sarsa for ``--sarsa-episodes`` episodes per seed.
* dqn: dqn (board network) + dqn_sgd for ``--dqn-steps`` steps per seed.

Each trained policy is loaded from its run's checkpoint and plays ``--eval-games`` greedy games
(with ``avoid_repeats``) on fresh seeds. The learning curves (mean score of the last 100 training
episodes against steps, from the runs' returns.csv) and the random baseline go to ``--plot``.

    python bench/bench_2048_learning.py [--seeds 0 1] [--dqn-seeds 0] [--json] [--plot bench/2048_learning.png]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import statistics
import tempfile

COMMON = """\
[agentos]
runs = {runs}

[environment]
default = 2048

[environment.2048]
package = agentos-env-2048
"""

SARSA = (
    COMMON
    + """
[policy]
default = q_table

[trainer]
default = sarsa

[policy.q_table]
package = agentos-policy-q-table
key = 2048

[trainer.sarsa]
package = agentos-trainer-sarsa
alpha = 0.05
gamma = 0.95
epsilon = 0.2
epsilon_decay = 0.999
epsilon_min = 0.01
"""
)

DQN = (
    COMMON
    + """
[policy]
default = dqn

[trainer]
default = dqn_sgd

[policy.dqn]
package = agentos-policy-dqn
network = board
channels = 64
hidden = [256]
device = cpu

[trainer.dqn_sgd]
package = agentos-trainer-dqn-sgd
learning_rate = 0.0005
gamma = 0.99
buffer_size = 50000
batch_size = 64
learning_starts = 5000
train_freq = 8
target_update = 2000
epsilon_start = 1.0
epsilon_end = 0.02
epsilon_steps = 60000
max_grad_norm = 10.0
reward_scale = 0.01
threads = 1
"""
)


def play(decide, reset, games: int, seed: int) -> dict:
    from agentos_env_2048 import Game2048Env

    env = Game2048Env()
    scores, tiles = [], []
    for g in range(games):
        obs, info = env.reset(seed=seed + g)
        reset()
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(decide(obs))
            done = terminated or truncated
        scores.append(info["score"])
        tiles.append(info["max_tile"])
    return {"mean_score": statistics.fmean(scores), "median_max_tile": statistics.median(tiles), "games": games}


def random_baseline(games: int, seed: int) -> dict:
    rng = random.Random(seed)
    return play(lambda obs: rng.randrange(4), lambda: None, games, seed=1_000_000 + seed)


def train_and_eval(tmp: str, text: str, kind: str, name: str, seed: int, games: int, **budget) -> dict:
    import agentos
    from agentos import api

    folder = os.path.join(tmp, f"{kind}-{seed}")
    os.makedirs(folder)
    path = os.path.join(folder, "agent.ini")
    with open(path, "w") as f:
        f.write(text.format(runs=os.path.join(folder, "runs")))
    summary = api.train(path, seed=seed, **budget)
    policy = agentos.use(path).create("policy", name)
    policy.load(summary["checkpoint"])
    result = play(policy.decide, policy.reset, games, seed=2_000_000 + 1000 * seed)
    frames, returns = [], []
    with open(os.path.join(summary["run_dir"], "returns.csv")) as f:
        for row in csv.DictReader(f):
            frames.append(int(row["frame"]))
            returns.append(float(row["return"]))
    result.update(
        seed=seed,
        train_steps=summary["steps"],
        train_episodes=summary["episodes"],
        train_seconds=summary["seconds"],
        curve=_curve(frames, returns),
    )
    return result


def _curve(frames, returns, points: int = 200) -> list[tuple[int, float]]:
    out, window = [], []
    every = max(1, len(returns) // points)
    for i, (f, r) in enumerate(zip(frames, returns, strict=True)):
        window.append(r)
        if len(window) > 100:
            window.pop(0)
        if i % every == 0 or i == len(returns) - 1:
            out.append((f, sum(window) / len(window)))
    return out


def plot(report: dict, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), dpi=110)
    for ax, kind, label in ((axes[0], "sarsa", "q_table + SARSA (key = 2048)"), (axes[1], "dqn", "DQN (board net)")):
        for run in report[kind]:
            xs, ys = zip(*run["curve"], strict=True)
            ax.plot(xs, ys, label=f"{label}, seed {run['seed']}")
        ax.axhline(report["random"]["mean_score"], color="gray", linestyle="--", label="uniform random")
        ax.set_xlabel("training steps")
        ax.set_ylabel("score (mean of last 100 training games)")
        ax.set_title(label, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("2048 with AgentOS components: training curves against random play", fontsize=11)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="seeds of the SARSA runs")
    parser.add_argument("--dqn-seeds", type=int, nargs="*", default=[0, 1])
    parser.add_argument("--sarsa-episodes", type=int, default=3000)
    parser.add_argument("--dqn-steps", type=int, default=200_000)
    parser.add_argument("--eval-games", type=int, default=200)
    parser.add_argument("--plot", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "2048_learning.png"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = {"random": random_baseline(args.eval_games * 5, 0), "sarsa": [], "dqn": []}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            report["sarsa"].append(
                train_and_eval(tmp, SARSA, "sarsa", "q_table", seed, args.eval_games, episodes=args.sarsa_episodes)
            )
        for seed in args.dqn_seeds:
            report["dqn"].append(train_and_eval(tmp, DQN, "dqn", "dqn", seed, args.eval_games, steps=args.dqn_steps))
    base = report["random"]["mean_score"]
    for kind in ("sarsa", "dqn"):
        for run in report[kind]:
            run["vs_random"] = run["mean_score"] / base
    report["sarsa_beats_random_every_seed"] = all(r["vs_random"] > 1.0 for r in report["sarsa"])
    report["dqn_1_5x_random_every_seed"] = all(r["vs_random"] >= 1.5 for r in report["dqn"])
    if args.plot:
        plot(report, args.plot)
        report["plot"] = args.plot
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"random: mean score {base:.0f}, median best tile {report['random']['median_max_tile']:.0f}")
        for kind in ("sarsa", "dqn"):
            for r in report[kind]:
                print(
                    f"{kind} seed {r['seed']}: mean score {r['mean_score']:.0f} ({r['vs_random']:.2f}x random), "
                    f"median best tile {r['median_max_tile']:.0f}, trained {r['train_steps']:,} steps "
                    f"in {r['train_seconds']:.0f} s"
                )


if __name__ == "__main__":
    main()
