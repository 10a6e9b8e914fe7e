"""2048 speed, side by side: single env, batched env, the compiled core, and TD training moves/s.

Rounds alternate the measurements so that load from other jobs hits all of them alike; each
figure is the median over ``--rounds`` rounds of ``--seconds`` each.

* ``single``: ``gymnasium.make`` of agentos-env-2048 vs gymnasium-2048, uniform random moves.
* ``batched``: ``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")`` with
  ``--num-envs`` boards, random actions from ``numpy`` (their cost included).
* ``core``: whole random games inside the compiled core (``random_games``), one core.
* ``td``: TD(0) training moves/s of the default 4x6-tuple network, one core, from scratch
  (moves/s changes as play improves; ``bench_ntuple_learning.py`` reports the whole-hour rate).

    python bench/bench_ntuple_speed.py [--rounds 3] [--seconds 3] [--num-envs 16384] [--json out.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import random
import statistics
import time

import numpy as np

NO_BUDGET = 2**62  # train_games' move budget: none (every chunk is a number of games)

OURS_ID = "agentos_env_2048:agentos/Game2048-v0"
THEIRS_ID = "gymnasium_2048:gymnasium_2048/TwentyFortyEight-v0"


def single(env_id: str, seconds: float) -> float:
    import gymnasium

    env = gymnasium.make(env_id)
    env.reset(seed=0)
    choose, step, reset = random.Random(0).randrange, env.step, env.reset
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(1000):
            _, _, terminated, truncated, _ = step(choose(4))
            if terminated or truncated:
                reset()
        steps += 1000
    env.close()
    return steps / (time.perf_counter() - start)


def batched(num_envs: int, seconds: float) -> float:
    import gymnasium

    env = gymnasium.make_vec(OURS_ID, num_envs=num_envs, vectorization_mode="vector_entry_point")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    env.step(rng.integers(0, 4, num_envs))  # compile or load the cache outside the clock
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.step(rng.integers(0, 4, num_envs))
        steps += num_envs
    return steps / (time.perf_counter() - start)


def core(seconds: float) -> float:
    from agentos_env_2048.kernels import move_tables, random_games, seed_states

    tables, games = move_tables(), 2000
    out = [np.zeros(games, np.int64) for _ in range(3)]
    random_games(seed_states(0, 1), tables, *(o[:1] for o in out))
    steps, start, seed = 0, time.perf_counter(), 1
    while time.perf_counter() - start < seconds:
        steps += random_games(seed_states(seed, games), tables, *out)
        seed += 1
    return steps / (time.perf_counter() - start)


class TD:
    """One 4x6-tuple network trained a little more in every round."""

    def __init__(self):
        from agentos_env_2048.kernels import move_tables, seed_states
        from agentos_policy_ntuple.network import DEFAULT_TUPLES, make_layout, network
        from agentos_trainer_td.kernels import train_games

        layout = make_layout(DEFAULT_TUPLES)
        self.weights = np.zeros(layout.size, np.float32)
        self.net, self.tables, self.train = network(self.weights, layout), move_tables(), train_games
        self.states, self.unused = seed_states(0, 1), np.zeros(1, np.float32)
        self.out = [np.zeros(1, np.int64) for _ in range(3)]
        self.games = 0
        self.run_games(1)

    def run_games(self, games: int) -> int:
        """Train ``games`` more games; the moves made."""
        self.games += games
        return self.train(self.states, games, NO_BUDGET, 0.1, False, self.net, self.unused, self.unused, self.tables,
                          *self.out)[0]

    def __call__(self, seconds: float) -> float:
        moves, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            moves += self.run_games(1)
        return moves / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--num-envs", type=int, default=16384)
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

    load_before = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    td = TD()
    # gymnasium-2048 (and pygame) is installed by `nox -s bench`; without it its figures are null, as in bench_2048
    have_theirs = importlib.util.find_spec("gymnasium_2048") is not None
    runs: dict[str, list[float]] = {"single": [], "gymnasium_2048": [], "batched": [], "core": [], "td": []}
    for _ in range(args.rounds):
        runs["single"].append(single(OURS_ID, args.seconds))
        if have_theirs:
            runs["gymnasium_2048"].append(single(THEIRS_ID, args.seconds))
        runs["batched"].append(batched(args.num_envs, args.seconds))
        runs["core"].append(core(args.seconds))
        runs["td"].append(td(args.seconds))
    median = {name: statistics.median(values) if values else None for name, values in runs.items()}
    theirs = median["gymnasium_2048"]

    def speedup(name: str) -> float | None:
        return median[name] / theirs if theirs else None

    result = {
        "machine": f"{os.cpu_count()}-core VM, load average before the run {load_before}",
        "rounds": args.rounds, "seconds": args.seconds, "num_envs": args.num_envs,
        "steps_per_second": median, "runs": runs,
        "speedup_single": speedup("single"), "speedup_batched": speedup("batched"),
        "speedup_core": speedup("core"), "td_games_trained": td.games,
    }
    times = (lambda name: f"{speedup(name):6.1f}x") if theirs else (lambda name: "")
    print(f"gymnasium-2048 (make):         {theirs or math.nan:>13,.0f} steps/s")
    print(f"agentos-env-2048 (make):       {median['single']:>13,.0f} steps/s  {times('single')}")
    print(f"batched, {args.num_envs} envs (make_vec): {median['batched']:>10,.0f} steps/s  {times('batched')}")
    print(f"compiled core, whole games:    {median['core']:>13,.0f} steps/s  {times('core')}")
    print(f"TD(0) 4x6-tuple training:      {median['td']:>13,.0f} moves/s ({td.games} games)")
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as handle:
            json.dump(result, handle, indent=2)
        os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
