"""CartPole-v1 with SB3 PPO (rl-baselines3-zoo hyperparameters): through AgentOS vs SB3 directly.

For each seed, the same PPO configuration trains for ``--steps`` steps twice, one after the other
in this process: once with ``agentos.api.train`` (gymnasium env + sb3 policy + sb3 trainer
components, run record, trackers) and once with stable-baselines3 directly (``make_vec_env`` +
``PPO``). Reported: steps/s of each (wall time of the whole training call) and their ratio, and the
mean return of ``--eval-episodes`` deterministic evaluation episodes of each trained policy.

    python bench/bench_cartpole_sb3.py [--steps 100000] [--seeds 0 1] [--threads 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

AGENT_INI = """\
[agentos]
runs = {runs}

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

[trainer.sb3]
package = agentos-trainer-sb3
algorithm = PPO
n_envs = 8
n_steps = 32
batch_size = 256
gae_lambda = 0.8
gamma = 0.98
n_epochs = 20
ent_coef = 0.0
learning_rate = lin_0.001
clip_range = lin_0.2
"""

ZOO = dict(n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0)


def evaluate(decide, episodes: int, seed: int) -> float:
    import gymnasium

    env = gymnasium.make("CartPole-v1")
    returns = []
    for i in range(episodes):
        obs, _ = env.reset(seed=10_000 + seed * 100 + i)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(decide(obs))
            total += reward
            done = terminated or truncated
        returns.append(total)
    return statistics.fmean(returns)


def run_agentos(steps: int, seed: int, eval_episodes: int, folder: str) -> dict:
    import agentos
    from agentos import api

    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "agent.ini")
    with open(path, "w") as f:
        f.write(AGENT_INI.format(runs=os.path.join(folder, "runs")))
    start = time.perf_counter()
    summary = api.train(path, steps=steps, seed=seed)
    seconds = time.perf_counter() - start
    policy = agentos.use(path).create("policy", "sb3")
    policy.load(summary["checkpoint"])
    return {
        "seconds": seconds,
        "steps_per_second": steps / seconds,
        "eval_mean_return": evaluate(policy.decide, eval_episodes, seed),
        "run": summary["run_dir"],
    }


def run_direct(steps: int, seed: int, eval_episodes: int) -> dict:
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    start = time.perf_counter()
    env = make_vec_env("CartPole-v1", n_envs=8, seed=seed)
    model = PPO(
        "MlpPolicy",
        env,
        learning_rate=lambda p: p * 0.001,
        clip_range=lambda p: p * 0.2,
        seed=seed,
        device="cpu",
        verbose=0,
        **ZOO,
    )
    model.learn(total_timesteps=steps)
    seconds = time.perf_counter() - start

    def decide(obs):
        return int(model.predict(obs, deterministic=True)[0])

    return {
        "seconds": seconds,
        "steps_per_second": steps / seconds,
        "eval_mean_return": evaluate(decide, eval_episodes, seed),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--eval-episodes", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the same for both)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            direct = run_direct(args.steps, seed, args.eval_episodes)
            ours = run_agentos(args.steps, seed, args.eval_episodes, os.path.join(tmp, f"seed{seed}"))
            ours.pop("run")
            results.append(
                {
                    "seed": seed,
                    "agentos": ours,
                    "direct": direct,
                    "speed_ratio": ours["steps_per_second"] / direct["steps_per_second"],
                }
            )
            if not args.json:
                print(
                    f"seed {seed}: agentos {ours['steps_per_second']:.0f} steps/s, "
                    f"eval {ours['eval_mean_return']:.1f}; "
                    f"direct {direct['steps_per_second']:.0f} steps/s, eval {direct['eval_mean_return']:.1f}; "
                    f"ratio {results[-1]['speed_ratio']:.3f}",
                    flush=True,
                )
    total_ours = sum(r["agentos"]["seconds"] for r in results)
    total_direct = sum(r["direct"]["seconds"] for r in results)
    report = {
        "steps": args.steps,
        "seeds": args.seeds,
        "runs": results,
        "speed_ratio": total_direct / total_ours,
        "agentos_eval_min": min(r["agentos"]["eval_mean_return"] for r in results),
        "agentos_eval_mean": statistics.fmean(r["agentos"]["eval_mean_return"] for r in results),
        "passes_475_every_seed": all(r["agentos"]["eval_mean_return"] >= 475 for r in results),
        "passes_speed_0_95": total_direct / total_ours >= 0.95,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"overall steps/s ratio agentos/direct: {report['speed_ratio']:.3f}; "
            f"agentos eval mean returns: {[round(r['agentos']['eval_mean_return'], 1) for r in results]}"
        )


if __name__ == "__main__":
    main()
