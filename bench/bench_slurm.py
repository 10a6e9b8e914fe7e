"""Experiments on Slurm: two Slurm jobs (Dask workers) against two local process-pool workers.

    python bench/bench_slurm.py                 # 8 trials of about 2 s, 3 rounds, on the Slurm of SLURM_CONF
    python bench/bench_slurm.py --start-slurm   # starts a single-node Slurm first (tests/slurm_cluster.py, root)
    python bench/bench_slurm.py --smoke         # 4 short trials, 1 round (what the tests run)

Each round times the same grid of corridor SARSA trials on a ``ProcessPool(2)`` and on a
``JobQueueExecutor("slurm", {"max-jobs": 2})``, in alternating order. ``job_start_s`` is the time from
creating the Slurm executor (scheduler started, two jobs submitted) until both workers have joined;
``slurm / pool`` compares the grids' wall times once the workers run, ``slurm / pool with start``
adds the job start to the Slurm side (and the pool's own start to the pool side).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from agentos import api
from agentos.experiments import JobQueueExecutor, ProcessPool, plan, run_experiment

TRIAL = {"agents": ["sarsa_table"], "environments": ["corridor"], "test_episodes": 2}


def steps_for(seconds: float) -> int:
    """The steps budget that makes a corridor SARSA trial last about ``seconds`` here and now."""
    (trial,) = plan(**TRIAL, seeds=1, steps=50_000)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "agent.ini")
        with open(path, "w") as f:
            f.write(trial.agent_ini)
        summary = api.train(path, steps=50_000, seed=0, record=False)
    return int(seconds * summary["steps"] / summary["seconds"])


def grid_seconds(executor, trials: int, steps: int, first_seed: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        result = run_experiment(**TRIAL, seeds=range(first_seed, first_seed + trials), steps=steps, folder=folder,
                                executor=executor)
        seconds = time.perf_counter() - started
    assert all(t["status"] == "finished" for t in result.trials), result.failed()
    return seconds


def start(kind: str, folder: str, interface: str | None):
    started = time.perf_counter()
    if kind == "pool":
        executor = ProcessPool(2)
    else:
        executor = JobQueueExecutor("slurm", {"max-jobs": 2, "memory": "1GB", "walltime": "00:30:00",
                                              **({"interface": interface} if interface else {})}, folder=folder)
        executor.client.wait_for_workers(2, timeout=300)
    return executor, time.perf_counter() - started


def bench(trials: int, seconds: float, rounds: int, interface: str | None) -> dict:
    steps = steps_for(seconds)
    walls: dict[str, list[float]] = {"pool": [], "slurm": []}
    starts: dict[str, list[float]] = {"pool": [], "slurm": []}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(rounds):
            for kind in (["pool", "slurm"] if round_ % 2 == 0 else ["slurm", "pool"]):
                executor, start_s = start(kind, folder, interface)
                try:
                    walls[kind].append(grid_seconds(executor, trials, steps, 1000 * round_))
                finally:
                    executor.shutdown()
                starts[kind].append(start_s)
                print(f"round {round_}: {kind}: start {start_s:.2f}s, grid {walls[kind][-1]:.2f}s",
                      file=sys.stderr, flush=True)
    ratios = [s / p for s, p in zip(walls["slurm"], walls["pool"], strict=True)]
    with_start = [(s + js) / (p + ps) for s, js, p, ps in zip(walls["slurm"], starts["slurm"], walls["pool"],
                                                              starts["pool"], strict=True)]
    return {"trials": trials, "trial_seconds": seconds, "steps_per_trial": steps, "rounds": rounds,
            "workers": 2, "grid_seconds": walls, "start_seconds": starts,
            "job_start_s": statistics.median(starts["slurm"]), "pool_start_s": statistics.median(starts["pool"]),
            "slurm / pool": statistics.median(ratios), "slurm / pool with start": statistics.median(with_start),
            "load_average": os.getloadavg(), "cpus": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of a trial")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--interface", default="lo", help="the network interface of scheduler and workers")
    parser.add_argument("--smoke", action="store_true", help="4 trials of 0.3 s, 1 round")
    parser.add_argument("--start-slurm", action="store_true", help="start a single-node Slurm first (as root)")
    parser.add_argument("--output", "-o", help="also write the JSON here")
    args = parser.parse_args()
    if args.smoke:
        args.trials, args.seconds, args.rounds = 4, 0.3, 1
    slurm = None
    if args.start_slurm:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
        from slurm_cluster import SingleNodeSlurm

        slurm = SingleNodeSlurm(tempfile.mkdtemp(prefix="agentos-slurm-")).start()
        os.environ.update(slurm.env)
    try:
        out = bench(args.trials, args.seconds, args.rounds, args.interface)
    finally:
        if slurm is not None:
            slurm.stop()
            shutil.rmtree(slurm.folder, ignore_errors=True)
    text = json.dumps(out, indent=1)
    print(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
