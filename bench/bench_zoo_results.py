"""Trained results on standard tasks with rl-baselines3-zoo's settings, each made as a new user would.

For each target (an ``agentos-preset-zoo`` preset and the zoo's budget in steps), in a folder of its own
under ``DIR``: ``agentos init --no-install``, ``agentos install preset PRESET --default`` (the zoo's
settings and the task become the agent's), ``agentos train agent.ini STEPS --steps --seed SEED --quiet``
(``--seed``, default 0)
(its wall time and steps/s), then ``agentos evaluate`` of the trained run on ``--episodes`` episodes seeded
1000, 1001, ... (deterministic actions, as rl-zoo's benchmark plays): mean, std and IQM, beside rl-zoo's
published score for the pair (``benchmark.md`` of DLR-RM/rl-baselines3-zoo, mean and std over its
evaluation episodes). ``--scale`` multiplies every budget (a smoke run: ``--scale 0.002``).

``agentos`` is the one next to this Python (``--agentos`` names another); the presets' packages are
installed into that environment by ``agentos install`` from ``$AGENTOS_INDEX_URL`` (or the checkout's
``index/``). Figures go to ``--json``, rewritten after each target. The runs can then be published with
``agentos publish --run RUN --name NAME`` in their folders (``docs/results.md``).

    python bench/bench_zoo_results.py DIR [--only cartpole acrobot ...] [--seed 0] [--episodes 100] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

#: name: (preset, the zoo's budget in steps, rl-zoo's benchmark mean and std for the pair)
TARGETS = {
    "cartpole": ("zoo_ppo_cartpole_v1", 100_000, (500.0, 0.0)),
    "acrobot": ("zoo_dqn_acrobot_v1", 100_000, (-76.639, 11.752)),
    "mountaincar": ("zoo_dqn_mountaincar_v0", 120_000, (-100.849, 9.925)),
    "mountaincar_ppo": ("zoo_ppo_mountaincar_v0", 1_000_000, (-110.423, 19.473)),
    "pendulum": ("zoo_sac_pendulum_v1", 20_000, (-156.995, 88.714)),
    "lunarlander": ("zoo_ppo_lunarlander_v3", 1_000_000, (242.119, 31.823)),  # the zoo's figure is LunarLander-v2's
}
ZOO_SOURCE = "DLR-RM/rl-baselines3-zoo benchmark.md (commit 22e3ff2, 2026-04-23)"


def _run(command: list[str], folder: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed in {folder}: {(done.stderr or done.stdout).strip()[-2000:]}")
    return done


def _iqm(values: list[float]) -> float:
    ordered = sorted(values)
    cut = len(ordered) // 4
    middle = ordered[cut:len(ordered) - cut] or ordered
    return statistics.fmean(middle)


def train_and_evaluate(agentos: str, directory: str, name: str, scale: float, episodes: int, seed: int = 0) -> dict:
    """One target: a new agent folder, the preset, ``agentos train`` and ``agentos evaluate``."""
    preset, budget, (zoo_mean, zoo_std) = TARGETS[name]
    steps = max(1, int(budget * scale))
    folder = os.path.join(directory, name if seed == 0 else f"{name}-seed{seed}")
    os.makedirs(folder, exist_ok=True)
    if not os.path.exists(os.path.join(folder, "agent.ini")):
        _run([agentos, "init", "--no-install", "."], folder)
    _run([agentos, "install", "preset", preset, "--default"], folder)
    before = set(os.listdir(os.path.join(folder, "runs"))) if os.path.isdir(os.path.join(folder, "runs")) else set()
    train = [agentos, "train", "agent.ini", str(steps), "--steps", "--seed", str(seed), "--quiet"]
    started = time.perf_counter()
    _run(train, folder)
    seconds = time.perf_counter() - started
    runs = sorted(set(os.listdir(os.path.join(folder, "runs"))) - before)
    if len(runs) != 1:
        raise SystemExit(f"expected one new run in {folder}/runs, found {runs}")
    run = runs[0]
    evaluate = [agentos, "evaluate", "--run", run, "--episodes", str(episodes), "--seed", "1000", "--json"]
    returns = json.loads(_run(evaluate, folder).stdout)["returns"]
    mean, std = statistics.fmean(returns), statistics.pstdev(returns)
    return {
        "name": name, "preset": preset, "seed": seed, "steps": steps, "zoo_budget": budget, "folder": folder,
        "run": run,
        "train_command": " ".join(["agentos", *train[1:]]), "train_seconds": round(seconds, 1),
        "steps_per_second": round(steps / seconds, 1),
        "evaluate_command": " ".join(["agentos", *evaluate[1:]]), "episodes": len(returns),
        "mean": round(mean, 2), "std": round(std, 2), "iqm": round(_iqm(returns), 2),
        "zoo": {"mean": zoo_mean, "std": zoo_std, "source": ZOO_SOURCE},
        "within_zoo": mean >= zoo_mean - zoo_std,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--only", nargs="+", choices=sorted(TARGETS), 
                        default=[t for t in TARGETS if t != "mountaincar_ppo"])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="the training seed")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every budget (smoke: 0.002)")
    parser.add_argument("--agentos", default=os.path.join(os.path.dirname(sys.executable), "agentos"))
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    os.makedirs(args.directory, exist_ok=True)
    out = {"script": "bench/bench_zoo_results.py", "command": " ".join(sys.argv), "machine": platform.node(),
           "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "threads": os.environ.get("OMP_NUM_THREADS", "agentos default (1)"), "targets": []}
    for name in args.only:
        result = train_and_evaluate(args.agentos, os.path.abspath(args.directory), name, args.scale, args.episodes,
                                    args.seed)
        out["targets"].append(result)
        print(json.dumps(result), flush=True)
        if args.json:
            tmp = f"{args.json}.tmp{os.getpid()}"
            with open(tmp, "w") as handle:
                json.dump(out, handle, indent=2)
            os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
