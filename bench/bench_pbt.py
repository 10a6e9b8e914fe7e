"""Population-based training against the same agents trained independently, on 2048.

    python bench/bench_pbt.py [--agents 8] [--rounds 40] [--games 500] [--eval-games 200]

K agent services (ntuple 4-tuple network + TD(0), learning rates ``alpha`` drawn log-uniformly)
run in their own processes on a redis-server started here on 127.0.0.1. Both populations get the same
K, the same ``alpha`` draws, the same training seeds (agent i, round r) and the same budget (rounds x
games per agent). The PBT population is ranked after every round by its mean score in the round;
the worst quarter copy the weights and settings of one of the best quarter through the handles and
multiply ``alpha`` by 0.8 or 1.2. The independent one trains the same rounds with no exploit step.
At the end every agent plays ``--eval-games`` greedy games on the same unseen seeds; the figure is
each population's best agent (and mean). Writes ``bench/pbt_2048.json`` and ``bench/pbt_2048.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "plugins" / "agentos-academy" / "tests"))
from agentos_academy import launch, population_based_training  # noqa: E402
from conftest import REDIS_PASSWORD, REDIS_USER, start_redis, stop  # noqa: E402

TUPLES = "0 1 2 3; 4 5 6 7; 0 1 4 5; 1 2 5 6; 5 6 9 10"  # straight and square 4-tuples: 1.3 MB of weights

AGENT_INI = """\
[environment]
default = 2048

[policy]
default = ntuple

[trainer]
default = td

[environment.2048]
max_steps = 20000

[policy.ntuple]
tuples = {tuples}

[trainer.td]
alpha = {alpha}
"""


def make_population(root: Path, alphas: list[float]) -> list[Path]:
    folders = []
    for i, alpha in enumerate(alphas):
        folder = root / f"agent{i}"
        folder.mkdir(parents=True)
        (folder / "agent.ini").write_text(AGENT_INI.format(tuples=TUPLES, alpha=repr(alpha)))
        folders.append(folder)
    return folders


async def train_population(folders, exchange: str, args, fraction: float) -> dict:
    curve: list[list[float]] = []
    settings: list[list[dict]] = []

    def on_round(round_, results):
        curve.append([r["mean_return"] for r in results])
        settings.append([r["settings"] for r in results])
        best = max(curve[-1])
        print(f"  round {round_ + 1:3d}/{args.rounds}: best {best:8.0f}  mean {sum(curve[-1]) / len(curve[-1]):8.0f}"
              f"  ({time.perf_counter() - start:.0f} s)", flush=True)

    start = time.perf_counter()
    async with launch(folders, exchange=exchange, executor="process", start_timeout=180) as handles:
        events = await population_based_training(
            handles, rounds=args.rounds, episodes_per_round=args.games, fraction=fraction, perturb=0.2,
            seed=args.seed, train_seed=args.seed * 1_000_000, on_round=on_round,
        )
        trained = time.perf_counter() - start
        evals = await asyncio.gather(*(h.evaluate(episodes=args.eval_games, seed=10_000_000 + args.seed)
                                       for h in handles))
    scores = [e["mean_return"] for e in evals]
    return {
        "fraction": fraction,
        "curve": curve,
        "settings": settings,
        "exploits": len(events),
        "events": events,
        "eval_mean_score": scores,
        "eval_max_score": [e["max_return"] for e in evals],
        "best_eval": max(scores),
        "mean_eval": sum(scores) / len(scores),
        "train_seconds": trained,
        "seconds": time.perf_counter() - start,
    }


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = result["games_per_round"]
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for key, label, color in (("pbt", "population-based training", "tab:red"),
                              ("independent", "trained independently", "tab:blue")):
        curve = result[key]["curve"]
        x = [games * (r + 1) for r in range(len(curve))]
        ax.plot(x, [max(c) for c in curve], color=color, label=f"{label}: best agent")
        ax.plot(x, [sum(c) / len(c) for c in curve], color=color, linestyle="--", alpha=0.6,
                label=f"{label}: population mean")
    ax.set_xlabel("training games per agent")
    ax.set_ylabel("mean score in the round")
    ax.set_title(f"2048, {result['agents']} agents (ntuple 4-tuples + TD(0)), same alpha draws, seeds and budget")
    ax.title.set_fontsize(9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--games", type=int, default=500, help="training games per agent per round")
    parser.add_argument("--eval-games", type=int, default=200)
    parser.add_argument("--alpha-range", type=float, nargs=2, default=(0.001, 1.5))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=HERE / "pbt_2048.json")
    parser.add_argument("--png", type=Path, default=HERE / "pbt_2048.png")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    low, high = (math.log(a) for a in args.alpha_range)
    alphas = [round(math.exp(rng.uniform(low, high)), 5) for _ in range(args.agents)]
    print("alphas:", alphas, flush=True)
    result = {
        "machine": f"{os.cpu_count()} cores, shared with other jobs",
        "agents": args.agents, "rounds": args.rounds, "games_per_round": args.games,
        "games_per_agent": args.rounds * args.games, "eval_games": args.eval_games, "tuples": TUPLES,
        "alphas": alphas, "seed": args.seed, "fraction": 0.25, "perturb": 0.2,
    }
    with tempfile.TemporaryDirectory() as tmp:
        redis, port = start_redis(Path(tmp))
        try:
            exchange = f"redis://{REDIS_USER}:{REDIS_PASSWORD}@127.0.0.1:{port}"
            for key, fraction in (("pbt", 0.25), ("independent", 0.0)):
                print(f"{key}:", flush=True)
                folders = make_population(Path(tmp) / key, alphas)
                result[key] = asyncio.run(train_population(folders, exchange, args, fraction))
                print(f"  evaluation ({args.eval_games} games each): best {result[key]['best_eval']:.0f}, "
                      f"mean {result[key]['mean_eval']:.0f}", flush=True)
        finally:
            stop(redis)
    result["best_ratio"] = result["pbt"]["best_eval"] / result["independent"]["best_eval"]
    print(f"PBT best / independent best: {result['best_ratio']:.3f}")
    tmp_json = args.json.with_suffix(".json.tmp")
    tmp_json.write_text(json.dumps(result, indent=1))
    os.replace(tmp_json, args.json)
    plot(result, args.png)


if __name__ == "__main__":
    main()
