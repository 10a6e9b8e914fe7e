"""Learning recipes of the n-tuple 2048 learner at equal time budgets, one after the other, one core.

Each recipe trains a fresh 4x6-tuple network with ``TDTrainer(seed=0)`` in slices of 200,000 moves
until ``--seconds`` pass (so ``coherent_after`` counts games within a slice), then plays ``--games``
greedy 1-ply test games on unseen seeds (``play_games``, rng seed 1,000,000).

    python bench/bench_ntuple_recipes.py [--seconds 170] [--games 500] [--recipes td0 preset ...]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

RECIPES = {
    "td0": ({}, {"alpha": 0.1}),
    "lambda_restarts": ({}, {"alpha": 0.1, "td_lambda": 0.5, "restarts": True}),
    "otd_td0": ({"initial_value": 320000}, {"alpha": 0.1}),
    "preset": None,  # ntuple_2048_master's settings on 2048
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=170.0)
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--recipes", nargs="+", default=["td0", "preset"], choices=sorted(RECIPES))
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    result: dict[str, dict] = {}
    from agentos_env_2048.kernels import move_tables, seed_states
    from agentos_policy_ntuple import NTuplePolicy
    from agentos_policy_ntuple.network import play_games
    from agentos_trainer_td import TDTrainer

    for name in args.recipes:
        if RECIPES[name] is None:
            from agentos.experiments import load_preset

            settings = load_preset("ntuple_2048_master").settings_for("2048")
            policy_settings, trainer_settings = settings["policy"], settings["trainer"]
        else:
            policy_settings, trainer_settings = RECIPES[name]
        policy, trainer = NTuplePolicy(**policy_settings), TDTrainer(seed=0, **trainer_settings)
        games, start = 0, time.time()
        while time.time() - start < args.seconds:
            games += trainer.train(policy, None, steps=200_000)
        scores, tops = np.zeros(args.games, np.int64), np.zeros(args.games, np.int64)
        play_games(seed_states(10**6, args.games), 1, policy.network, move_tables(), scores, tops)
        result[name] = {"games": games, "seconds": time.time() - start, "test_games": args.games,
                        "mean_score": float(scores.mean()),
                        "reached": {str(1 << e): float(np.mean(tops >= e)) for e in (11, 12, 13, 14)}}
        rates = ", ".join(f"{1 << e}: {np.mean(tops >= e):.1%}" for e in (11, 12, 13, 14))
        print(f"{name}: {games:,} games in {time.time() - start:.0f} s; test mean {scores.mean():,.0f} ({rates})",
              flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
