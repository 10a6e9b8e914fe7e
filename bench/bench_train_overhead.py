"""Wall time of ``agentos train`` against the same learning loop written directly.

Direct: the env, q_table policy and sarsa trainer classes, ``trainer.train(policy, env,
episodes=N, seed=s)``. AgentOS: ``agentos.api.train(agent.ini, episodes=N, seed=s)``, which also
builds the components from agent.ini, writes the run record (agent.ini, lock, returns.csv,
returns100.csv, PNG, TensorBoard events, checkpoint) and calls the tracker hooks every episode.
Alternated ``--repeats`` times; the fastest of each is compared (the least disturbed by other
processes on a shared machine; the medians are reported too), and so are the total CPU times
of this process (all threads), which other processes disturb much less.

    python bench/bench_train_overhead.py [--episodes 3000] [--repeats 5] [--json]
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
default = 2048

[policy]
default = q_table

[trainer]
default = sarsa

[environment.2048]
package = agentos-env-2048

[policy.q_table]
package = agentos-policy-q-table
key = 2048

[trainer.sarsa]
package = agentos-trainer-sarsa
"""


def direct(episodes: int, seed: int) -> float:
    from agentos_env_2048 import Game2048Env
    from agentos_policy_q_table import QTablePolicy
    from agentos_trainer_sarsa import SarsaTrainer

    start, cpu = time.perf_counter(), time.process_time()
    env = Game2048Env()
    policy = QTablePolicy(env.observation_space, env.action_space, key="2048")
    SarsaTrainer().train(policy, env, episodes=episodes, seed=seed)
    return time.perf_counter() - start, time.process_time() - cpu


def through_agentos(path: str, episodes: int, seed: int) -> float:
    from agentos import api

    start, cpu = time.perf_counter(), time.process_time()
    api.train(path, episodes=episodes, seed=seed)
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    ours, theirs, ours_cpu, theirs_cpu = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "agent.ini")
        with open(path, "w") as f:
            f.write(AGENT_INI.format(runs=os.path.join(tmp, "runs")))
        direct(50, 0), through_agentos(path, 50, 0)  # warm imports and caches for both
        for i in range(args.repeats):
            wall, cpu = direct(args.episodes, i)
            theirs.append(wall)
            theirs_cpu.append(cpu)
            wall, cpu = through_agentos(path, args.episodes, i)
            ours.append(wall)
            ours_cpu.append(cpu)
    report = {
        "episodes": args.episodes,
        "agentos_seconds": ours,
        "direct_seconds": theirs,
        "overhead": min(ours) / min(theirs) - 1.0,
        "overhead_of_medians": statistics.median(ours) / statistics.median(theirs) - 1.0,
        "agentos_cpu_seconds": ours_cpu,
        "direct_cpu_seconds": theirs_cpu,
        "cpu_overhead": sum(ours_cpu) / sum(theirs_cpu) - 1.0,
    }
    report["passes_5_percent"] = report["overhead"] <= 0.05
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"agentos train {min(ours):.2f} s, direct {min(theirs):.2f} s (fastest of {args.repeats}): "
            f"overhead {report['overhead']:+.1%} (of medians {report['overhead_of_medians']:+.1%}); "
            f"CPU time overhead {report['cpu_overhead']:+.1%}"
        )


if __name__ == "__main__":
    main()
