"""Benchmark the agentos-env-2048 environment against the gymnasium-2048 package.

Both environments are created with ``gymnasium.make`` and driven by the same
cheap uniform random policy (``random.Random(0).randrange(4)``), resetting
when an episode ends.  Then random-play statistics are gathered for ours.

    python bench/bench_2048.py [--seconds 3] [--episodes 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time

import gymnasium

OURS_ID = "agentos_env_2048:agentos/Game2048-v0"
THEIRS_ID = "gymnasium_2048:gymnasium_2048/TwentyFortyEight-v0"
CHECK_EVERY = 1000  # steps between clock reads


def steps_per_second(env_id: str, seconds: float) -> float:
    """Play random moves in one environment for ``seconds``; return steps/s."""
    env = gymnasium.make(env_id)
    env.reset(seed=0)
    choose = random.Random(0).randrange
    step, reset = env.step, env.reset
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(CHECK_EVERY):
            _, _, terminated, truncated, _ = step(choose(4))
            if terminated or truncated:
                reset()
        steps += CHECK_EVERY
    elapsed = time.perf_counter() - start
    env.close()
    return steps / elapsed


def random_play(episodes: int) -> dict[str, float]:
    """Play ``episodes`` random games with our environment; summarise them."""
    env = gymnasium.make(OURS_ID)
    choose = random.Random(0).randrange
    scores, max_tiles, lengths = [], [], []
    for episode in range(episodes):
        env.reset(seed=episode)
        length, done = 0, False
        while not done:
            _, _, terminated, truncated, info = env.step(choose(4))
            length += 1
            done = terminated or truncated
        scores.append(info["score"])
        max_tiles.append(info["max_tile"])
        lengths.append(length)
    env.close()
    return {
        "episodes": episodes,
        "mean_score": statistics.mean(scores),
        "median_max_tile": statistics.median(max_tiles),
        "best_max_tile": max(max_tiles),
        "mean_episode_length": statistics.mean(lengths),
    }


def table_build_ms() -> float:
    """Time one build of the lookup tables (normally done once, on first use)."""
    from agentos_env_2048.kernels import get_tables

    get_tables.cache_clear()
    start = time.perf_counter()
    get_tables()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per environment")
    parser.add_argument("--episodes", type=int, default=1000, help="random games")
    parser.add_argument("--json", action="store_true", help="print a JSON dict")
    args = parser.parse_args()

    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # gymnasium-2048
    results: dict[str, object] = {"table_build_ms": table_build_ms()}
    results["ours_steps_per_s"] = steps_per_second(OURS_ID, args.seconds)
    try:
        theirs = steps_per_second(THEIRS_ID, args.seconds)
    except ModuleNotFoundError as error:  # gymnasium-2048 (or pygame) missing
        theirs = None
        results["gymnasium_2048_error"] = str(error)
    results["gymnasium_2048_steps_per_s"] = theirs
    results["speedup"] = results["ours_steps_per_s"] / theirs if theirs else None
    results["random_play"] = random_play(args.episodes)

    if args.json:
        print(json.dumps(results, indent=2))
        return
    play = results["random_play"]
    print(f"table build:      {results['table_build_ms']:.1f} ms")
    print(f"agentos-env-2048: {results['ours_steps_per_s']:>10,.0f} steps/s")
    if theirs:
        print(f"gymnasium-2048:   {theirs:>10,.0f} steps/s")
        print(f"speedup:          {results['speedup']:>10.1f}x")
    else:
        print(f"gymnasium-2048:   unavailable ({results['gymnasium_2048_error']})")
    print(
        f"random play over {play['episodes']} episodes: "
        f"mean score {play['mean_score']:,.0f}, "
        f"median max tile {play['median_max_tile']:g}, "
        f"best tile {play['best_max_tile']}, "
        f"mean length {play['mean_episode_length']:.0f} steps"
    )


if __name__ == "__main__":
    main()
