"""Test a trained 2048 n-tuple run: greedy and expectimax play on unseen seeds, and its curve.

Reads a run folder of ``agentos train`` (its ``run.json`` names the policy checkpoint; the
policy settings come from its ``agent.ini``), then plays

* ``--greedy-games`` games 1-ply (greedy on afterstates), with and without tile-downgrading;
* ``--search-games`` games with expectimax of ``--search-depth`` move layers (depth 2 = 3-ply:
  move, spawn, move), a transposition table of ``2 ** 22`` slots and tile-downgrading from 32768,

each game on its own rng slot of ``seed_states(1_000_000, games)`` (training used seed 0 and its
threads' slots), spread over ``--processes`` processes.  It prints and writes (``--json``) the mean
score, the rates of 2048 ... 32768, the moves per second of each player and, with ``--plot``, the
training curve (mean score and 8192/16384 rates per 2,000 games against training minutes).

    python bench/bench_ntuple_hour.py --run RUN [--greedy-games 1000] [--search-games 200]
        [--search-depth 2] [--processes 2] [--json bench/ntuple_hour.json] [--plot bench/ntuple_hour.png]
"""

from __future__ import annotations

import argparse
import configparser
import csv
import json
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

TILES = (11, 12, 13, 14, 15)  # 2048 ... 32768
SEED = 1_000_000
_POLICY = None


def load_policy(run: Path, quantize: str = ""):
    """The run's ntuple policy with its checkpoint's weights (``quantize="int8"``: as a trained package
    ships them, block-wise int8 through ``agentos publish --quantize``'s own code, then read back)."""
    from agentos_policy_ntuple import NTuplePolicy

    record = json.loads((run / "run.json").read_text())
    ini = configparser.ConfigParser()
    ini.read(run / "agent.ini")
    settings = {k: v for k, v in ini["policy.ntuple"].items() if k != "package"} if ini.has_section(
        "policy.ntuple") else {}
    if ini.has_option("preset", "default"):  # a folder holding a preset: its settings, [preset.NAME]'s applied
        from agentos.config import AgentConfig
        from agentos.experiments import agent_ini_text, load_preset

        name = ini["preset"]["default"].strip()
        section = f"preset.{name}"
        overrides = {k: v for k, v in ini[section].items() if k != "package"} if ini.has_section(section) else {}
        environment = ini.get("environment", "default", fallback="2048").strip()
        expanded = AgentConfig.from_text(agent_ini_text(load_preset(name), environment, overrides))
        component = expanded.component("policy", "ntuple")
        settings = {**(component.kwargs() if component else {}), **settings}  # agent.ini's own section wins
    keep = {"tuples", "stage_tiles", "initial_value"}
    policy = NTuplePolicy(**{k: v for k, v in settings.items() if k in keep})
    checkpoint = record.get("checkpoint") or ""
    path = Path(checkpoint) if Path(checkpoint).is_absolute() else run / checkpoint
    if quantize:
        import tempfile

        from agentos.results import check_weights, dequantized
        from agentos.results import quantize as write_quantized

        with tempfile.TemporaryDirectory() as workdir:
            small = os.path.join(workdir, "weights.safetensors")
            write_quantized(str(path), small, quantize)
            policy.load(dequantized(small, check_weights(small, max_bytes=1 << 40), workdir))
        return policy
    policy.load(str(path))
    return policy


def _init(run: str, quantize: str) -> None:
    global _POLICY
    _POLICY = load_policy(Path(run), quantize)
    _play((0, 1, 1, 1, 0, 4))  # compile (or load numba's cache) before any clock runs


def _play(job: tuple[int, int, int, int, int, int]) -> tuple[list[int], list[int], int, float]:
    """Games ``first .. first + count - 1`` of ``total``: (scores, largest exponents, moves, seconds)."""
    from agentos_env_2048.kernels import move_tables, seed_states
    from agentos_policy_ntuple.network import bounds_array, new_table

    first, count, total, depth, threshold, bits = job
    policy = _POLICY
    states = seed_states(SEED, total)[first: first + count].copy()
    scores, tops = np.zeros(count, np.int64), np.zeros(count, np.int64)
    start = time.perf_counter()
    moves = _kernel()(states, depth, policy.network, policy.layout.size, bounds_array(policy.stage_bounds),
                      move_tables(), new_table(bits), threshold, scores, tops)
    return scores.tolist(), tops.tolist(), int(moves), time.perf_counter() - start


def _kernel():
    from agentos_env_2048.kernels import has_legal_move, max_exponent, move, new_board, njit, spawn
    from agentos_policy_ntuple.network import search_action

    @njit
    def play_searched(states, depth, net, size, bounds, tables, table, threshold, scores, tops):
        moves = 0
        for slot in range(states.shape[0]):
            table.generation[0] += 1  # a new game: forget the table
            board = new_board(states, slot)
            score = 0
            while has_legal_move(board):
                action = search_action(board, depth, net, size, bounds, tables, table, threshold)
                board, points = move(board, action, tables)
                score += points
                board = spawn(board, states, slot)
                moves += 1
            scores[slot], tops[slot] = score, max_exponent(board)
        return moves

    return play_searched


def play(pool, games: int, depth: int, threshold: int, processes: int, bits: int = 22) -> dict:
    """Play ``games`` games over the pool; the summary of scores, tile rates and speed."""
    chunk = max(1, -(-games // (4 * processes)))
    jobs = [(first, min(chunk, games - first), games, depth, threshold, bits) for first in range(0, games, chunk)]
    start = time.perf_counter()
    scores, tops, moves, busy = [], [], 0, 0.0
    for s, t, m, b in pool.map(_play, jobs):
        scores += s
        tops += t
        moves += m
        busy += b
    wall = time.perf_counter() - start
    scores_a, tops_a = np.array(scores), np.array(tops)
    return {
        "games": games, "depth": depth, "downgrade_tile": (1 << threshold) if threshold else 0,
        "mean_score": float(scores_a.mean()), "max_score": int(scores_a.max()),
        "rates": {str(1 << e): float(np.mean(tops_a >= e)) for e in TILES},
        "moves_per_s_per_process": moves / busy, "wall_seconds": wall,
    }


def curve(run: Path, window: int = 2000) -> dict:
    """Mean score and 8192/16384 rates per ``window`` training games, against training minutes."""
    minutes, means, r8192, r16384 = [], [], [], []
    with open(run / "returns.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for start in range(0, len(rows) - window + 1, window):
        block = rows[start: start + window]
        minutes.append(float(block[-1]["seconds"]) / 60)
        means.append(float(np.mean([float(r["return"]) for r in block])))
        tiles = np.array([int(r["best_tile"]) for r in block])
        r8192.append(float(np.mean(tiles >= 8192)))
        r16384.append(float(np.mean(tiles >= 16384)))
    return {"window": window, "games": len(rows), "minutes": minutes, "mean_score": means,
            "rate_8192": r8192, "rate_16384": r16384,
            "training_minutes": float(rows[-1]["seconds"]) / 60 if rows else 0.0}


def plot(points: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, score_axis = plt.subplots(figsize=(7, 4))
    score_axis.plot(points["minutes"], points["mean_score"], color="tab:blue", label="mean score")
    score_axis.set_xlabel("training minutes (2 threads)")
    score_axis.set_ylabel(f"mean score per {points['window']:,} training games")
    rate_axis = score_axis.twinx()
    rate_axis.plot(points["minutes"], points["rate_8192"], color="tab:orange", label="8192 rate")
    rate_axis.plot(points["minutes"], points["rate_16384"], color="tab:red", label="16384 rate")
    rate_axis.set_ylim(0, 1)
    rate_axis.set_ylabel("rate")
    fig.legend(loc="upper left", bbox_to_anchor=(0.1, 0.9))
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True)
    parser.add_argument("--greedy-games", type=int, default=1000)
    parser.add_argument("--search-games", type=int, default=200)
    parser.add_argument("--search-depth", type=int, default=2)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--players", default="greedy,greedy_downgrade,search",
                        help="which of greedy, greedy_downgrade, search to play")
    parser.add_argument("--quantize", default="", choices=["", "int8", "float16"],
                        help="play the weights as a trained package would ship them")
    parser.add_argument("--json")
    parser.add_argument("--plot")
    args = parser.parse_args()
    run = Path(args.run)
    result = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": platform.machine(),
              "cpus": os.cpu_count(), "run": run.name, "seed": SEED, "weights": args.quantize or "float32"}
    result["curve"] = curve(run)
    if args.plot:
        plot(result["curve"], args.plot)
    chosen = set(args.players.split(","))
    players = [(name, depth, threshold, games) for key, name, depth, threshold, games in (
        ("greedy", "greedy", 1, 0, args.greedy_games),
        ("greedy_downgrade", "greedy_downgrade", 1, 15, args.greedy_games),
        ("search", f"expectimax_{args.search_depth}", args.search_depth, 15, args.search_games)) if key in chosen]
    with ProcessPoolExecutor(args.processes, initializer=_init, initargs=(str(run), args.quantize)) as pool:
        for name, depth, threshold, games in players:
            if games <= 0:
                continue
            summary = result[name] = play(pool, games, depth, threshold, args.processes)
            rates = " ".join(f"{tile}: {rate:.1%}" for tile, rate in summary["rates"].items())
            print(f"{name:>18}: {games} games, mean {summary['mean_score']:,.0f}, {rates}; "
                  f"{summary['moves_per_s_per_process']:,.0f} moves/s a process, {summary['wall_seconds']:.0f} s",
                  flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
