"""Wall time of ``agentos train`` against the same learning loop written directly.

Direct: the env, q_table policy and sarsa trainer classes, ``trainer.train(policy, env,
episodes=N, seed=s)``. AgentOS: ``agentos.api.train(agent.ini, episodes=N, seed=s)``, which also
builds the components from agent.ini, writes the run record (agent.ini, lock, returns.csv,
returns100.csv, PNG, TensorBoard events, checkpoint) and calls the tracker hooks every episode.
Alternated ``--repeats`` times; the fastest of each is compared (the least disturbed by other
processes on a shared machine; the medians are reported too), and so are the total CPU times
of this process (all threads), which other processes disturb much less.

    python bench/bench_train_overhead.py [--episodes 3000] [--repeats 5] [--json]
    python bench/bench_train_overhead.py --instructions [--json]

Wall time on a shared virtual machine swings by 10-25% between identical runs, more than the effect
measured. ``--instructions`` counts instructions instead (valgrind's callgrind: the same count for the
same work, whatever else the machine does): each mode runs 50 and 150 episodes in its own process
with the same imports, OpenBLAS on one thread and the TensorBoard tracker off (its writer thread is
not deterministic); the difference of the two counts is the per-episode cost, the rest the fixed cost.
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


def _inner(mode: str, episodes: int) -> None:
    """One measured process: the same imports for both modes, then only the work differs."""
    import agentos.api  # noqa: F401
    import agentos.trackers  # noqa: F401
    import agentos_env_2048  # noqa: F401
    import agentos_policy_q_table  # noqa: F401
    import agentos_trainer_sarsa  # noqa: F401
    import matplotlib.pyplot  # noqa: F401  (imported by agentos' plot tracker)
    import safetensors.numpy  # noqa: F401

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "agent.ini")
        with open(path, "w") as f:
            f.write(AGENT_INI.format(runs=os.path.join(tmp, "runs")))
        (direct if mode == "direct" else through_agentos)(*((episodes, 0) if mode == "direct" else (path, episodes, 0)))


def instructions() -> dict:
    import re
    import subprocess
    import sys

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "AGENTOS_DISABLE_PLUGINS": "tensorboard"}
    from concurrent.futures import ThreadPoolExecutor

    def count(job: tuple[str, int]) -> int:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/cg",
                sys.executable,
                __file__,
                "--inner",
                job[0],
                str(job[1]),
            ]
            out = subprocess.run(cmd, capture_output=True, text=True, env=env).stderr
        return int(re.search(r"Collected : (\d+)", out).group(1))

    jobs = [(m, n) for m in ("direct", "agentos") for n in (50, 150)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = dict(zip(jobs, pool.map(count, jobs), strict=True))
    per_episode = {m: (counts[(m, 150)] - counts[(m, 50)]) / 100 for m in ("direct", "agentos")}
    fixed = {m: counts[(m, 50)] - 50 * per_episode[m] for m in ("direct", "agentos")}
    at_3000 = {m: fixed[m] + 3000 * per_episode[m] for m in ("direct", "agentos")}
    return {
        "instructions": {f"{m} {n}": c for (m, n), c in counts.items()},
        "per_episode": per_episode,
        "fixed_extra": fixed["agentos"] - fixed["direct"],
        "per_episode_extra": per_episode["agentos"] / per_episode["direct"] - 1.0,
        "overhead_at_3000_episodes": at_3000["agentos"] / at_3000["direct"] - 1.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--instructions", action="store_true", help="count instructions with callgrind")
    parser.add_argument("--inner", nargs=2, metavar=("MODE", "EPISODES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        return _inner(args.inner[0], int(args.inner[1]))
    if args.instructions:
        report = instructions()
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            print(
                f"instructions per episode: agentos {report['per_episode']['agentos'] / 1e6:.2f} M, direct "
                f"{report['per_episode']['direct'] / 1e6:.2f} M ({report['per_episode_extra']:+.1%}); fixed extra "
                f"{report['fixed_extra'] / 1e6:,.0f} M; overhead for 3,000 episodes "
                f"{report['overhead_at_3000_episodes']:+.1%}"
            )
        return None
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
