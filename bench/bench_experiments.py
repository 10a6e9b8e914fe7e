"""Experiments: worker scaling, Dask against the process pool, overhead per trial, and an example grid.

    python bench/bench_experiments.py scaling        # 20 corridor trials: 1 vs 2 workers vs local Dask
    python bench/bench_experiments.py overhead       # run_experiment vs the same trials called directly
    python bench/bench_experiments.py grid OUT_DIR   # corridor, 2048 × random, sarsa_table, dqn_2048 × 5 seeds

Configurations alternate (side by side), so load from other processes on a shared machine
affects them alike; ratios are reported, with medians over repetitions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

from agentos.experiments import run_experiment

TRIAL = {"agents": ["sarsa_table"], "environments": ["corridor"], "test_episodes": 5}


def timed(**kwargs) -> float:
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        result = run_experiment(**TRIAL, folder=folder, **kwargs)
        seconds = time.perf_counter() - started
    assert all(t["status"] == "finished" for t in result.trials), result.failed()
    return seconds


def scaling(trials: int, episodes: int, repeats: int) -> dict:
    configs = {"1 worker": {"workers": 1}, "2 workers": {"workers": 2},
               "local Dask (2 workers)": {"workers": 2, "scheduler": "local"}}
    rates: dict[str, list[float]] = {name: [] for name in configs}
    for _ in range(repeats):
        for name, extra in configs.items():
            rates[name].append(trials / timed(seeds=trials, episodes=episodes, **extra))
    med = {name: statistics.median(v) for name, v in rates.items()}
    return {"trials_per_second": med, "2 workers / 1 worker": med["2 workers"] / med["1 worker"],
            "Dask / process pool": med["local Dask (2 workers)"] / med["2 workers"], "runs": rates}


def overhead(trials: int, episodes: int, repeats: int) -> dict:
    """Per-trial cost of run_experiment (1 worker) over training+testing the same agents in-process."""
    from agentos import api
    from agentos.experiments import plan

    def direct() -> float:
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            for trial in plan(**TRIAL, seeds=trials, episodes=episodes):
                path = os.path.join(folder, trial.id + ".ini")
                with open(path, "w") as f:
                    f.write(trial.agent_ini.replace("runs = runs", "runs = none"))
                api.train(path, episodes=episodes, seed=trial.seed, record=False)
                api.run(path, episodes=trial.test_episodes, seed=trial.seed, record=False, fresh=True)
            return time.perf_counter() - started

    pairs = [(timed(seeds=trials, episodes=episodes, workers=1), direct()) for _ in range(repeats)]
    exp, bare = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
    per_trial = (exp - bare) / trials
    return {"experiment_s": exp, "direct_s": bare, "trial_s": bare / trials, "overhead_per_trial_s": per_trial,
            "share_of_10s_trial": per_trial / 10.0}


def grid(folder: str, seeds: int, episodes: int, workers: int) -> dict:
    started = time.perf_counter()
    result = run_experiment(["random", "sarsa_table", "dqn_2048"], ["corridor", "2048"], seeds=seeds,
                            episodes=episodes, test_episodes=20, folder=folder, workers=workers)
    png = result.plot(os.path.join(folder, "returns100.png"))
    return {"seconds": time.perf_counter() - started, "table": result.table(), "plot": png,
            "failed": result.failed()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["scaling", "overhead", "grid"])
    parser.add_argument("folder", nargs="?", default="bench/experiment_grid")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if args.what == "scaling":
        out = scaling(args.trials, args.episodes, args.repeats)
    elif args.what == "overhead":
        out = overhead(min(args.trials, 5), args.episodes, args.repeats)
    else:
        out = grid(args.folder, 5, args.episodes, args.workers)
    json.dump(out, sys.stdout, indent=1, default=str)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
