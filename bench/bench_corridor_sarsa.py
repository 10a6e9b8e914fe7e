"""Corridor: q_table + SARSA reaches the optimal return (-9 on the 10-cell corridor) within 200 episodes.

For each seed, train one episode at a time through the components AgentOS builds from agent.ini
and, after each, play one greedy episode; report the first episode after which the greedy return
is optimal and stays optimal to episode ``--episodes``.

    python bench/bench_corridor_sarsa.py [--seeds 0 1 2 3 4 5 6 7 8 9] [--episodes 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile

AGENT_INI = """\
[environment]
default = corridor

[policy]
default = q_table

[trainer]
default = sarsa

[environment.corridor]
package = agentos-env-corridor
length = 10

[policy.q_table]
package = agentos-policy-q-table

[trainer.sarsa]
package = agentos-trainer-sarsa
alpha = 0.5
gamma = 0.99
epsilon = 0.1
"""


def greedy_return(policy, env) -> float:
    obs, _ = env.reset()
    policy.reset()
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, _ = env.step(policy.decide(obs))
        total += reward
        done = terminated or truncated
    return total


def one_seed(path: str, seed: int, episodes: int) -> dict:
    import agentos

    context = agentos.AgentContext.from_path(path)
    env, policy, trainer = (context.create(k, context.default_name(k)) for k in ("environment", "policy", "trainer"))
    eval_env = context.create("environment", "corridor")
    eval_env.reset(seed=seed)
    optimal = -(env.length - 1)
    greedy = []
    for episode in range(episodes):
        trainer.train(policy, env, episodes=1, seed=seed if episode == 0 else None)
        greedy.append(greedy_return(policy, eval_env))
    first = next((i + 1 for i in range(episodes) if all(g == optimal for g in greedy[i:])), None)
    return {"seed": seed, "optimal_return": optimal, "first_optimal_episode": first, "final_greedy": greedy[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "agent.ini")
        with open(path, "w") as f:
            f.write(AGENT_INI)
        runs = [one_seed(path, s, args.episodes) for s in args.seeds]
    firsts = [r["first_optimal_episode"] for r in runs]
    report = {
        "episodes": args.episodes,
        "runs": runs,
        "all_seeds_optimal": all(f is not None for f in firsts),
        "worst_first_optimal_episode": None if None in firsts else max(firsts),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for r in runs:
            print(f"seed {r['seed']}: optimal ({r['optimal_return']}) from episode {r['first_optimal_episode']}")
        print(f"every seed optimal within {args.episodes} episodes: {report['all_seeds_optimal']}")


if __name__ == "__main__":
    main()
