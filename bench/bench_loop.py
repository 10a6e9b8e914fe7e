"""Agent-loop overhead: ``run_agent`` against a bare ``env.step`` loop with the same random policy.

For the corridor and 2048 environments (installed first-party plugins), both loops run the same
number of episodes from the same seed, alternating, and the best of several rounds is kept.
Target: run_agent reaches at least 0.9x the bare loop's steps/s.

    python bench/bench_loop.py [--episodes 2000] [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from agentos import Agent, run_agent
from agentos.host import ComponentHost


def make(env_name: str):
    host = ComponentHost()
    env = host.load("environment", env_name)()
    policy = host.load("policy", "random")(env.observation_space, env.action_space)
    return env, policy


def bare_loop(env, policy, episodes: int, seed: int) -> tuple[int, float]:
    """The loop a user would write by hand, with nothing else in it."""
    policy.seed(seed)
    decide, step, reset = policy.decide, env.step, env.reset
    steps = 0
    start = time.perf_counter()
    for episode in range(episodes):
        observation, info = reset(seed=seed if episode == 0 else None)
        done = False
        while not done:
            observation, reward, terminated, truncated, info = step(decide(observation))
            steps += 1
            done = terminated or truncated
    return steps, time.perf_counter() - start


def agent_loop(env, policy, episodes: int, seed: int) -> tuple[int, float]:
    agent = Agent(environment=env, policy=policy)
    start = time.perf_counter()
    summary = run_agent(agent, episodes, seed=seed)
    return summary["steps"], time.perf_counter() - start


def measure(env_name: str, episodes: int, rounds: int, seed: int) -> dict:
    env, policy = make(env_name)
    best = {"bare": 0.0, "run_agent": 0.0}
    for _ in range(rounds):
        for label, loop in (("bare", bare_loop), ("run_agent", agent_loop)):
            steps, seconds = loop(env, policy, episodes, seed)
            best[label] = max(best[label], steps / seconds)
    return {"environment": env_name, "steps_per_second": best, "ratio": best["run_agent"] / best["bare"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-targets", action="store_true",
                        help="exit 0 even when a ratio misses its target (smoke runs: one short round is noise)")
    args = parser.parse_args()
    results = [
        measure("corridor", args.episodes, args.rounds, args.seed),
        measure("2048", max(1, args.episodes // 10), args.rounds, args.seed),
    ]
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            sps = r["steps_per_second"]
            print(
                f"{r['environment']:<9} bare {sps['bare']:>11,.0f} steps/s   run_agent {sps['run_agent']:>11,.0f} "
                f"steps/s   ratio {r['ratio']:.3f}"
            )
    return 0 if args.no_targets or all(r["ratio"] >= 0.9 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
