"""2048 mastered by an n-tuple network: TD(0) afterstate learning, then greedy and expectimax tests.

Trains the default 4x6-tuple network (8 symmetries) with ``agentos_trainer_td``'s numba kernel on
one core for ``--minutes`` (chunks of 1,000 games; ``alpha`` drops to ``--fine-alpha`` for the last
``--fine-fraction`` of the time), then plays ``--test-games`` greedy 1-ply games and as many
expectimax depth-2 games as ``--expectimax-minutes`` allow (at most ``--test-games``), on seeds
unseen in training.  Writes ``--json`` (figures and the learning curve) and ``--plot`` (mean score
and 2048-rate per 1,000 training games).

    python bench/bench_ntuple_learning.py --minutes 45 --json bench/ntuple_learning.json \
        --plot bench/ntuple_learning.png [--weights /tmp/ntuple.safetensors]
    python bench/bench_ntuple_learning.py --load /tmp/ntuple.safetensors --json /tmp/test.json  # tests only
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

NO_BUDGET = 2**62  # train_games' move budget: none (every chunk is a number of games)


def _rates(max_exponents: np.ndarray) -> dict[str, float]:
    return {f"rate_{1 << e}": float((max_exponents >= e).mean()) for e in (11, 12, 13, 14)}


def _test(net, tables, seed: int, games: int, depth: int, budget: float, chunk: int) -> dict:
    from agentos_env_2048.kernels import seed_states
    from agentos_policy_ntuple.network import play_games

    one = np.zeros(1, np.int64)
    play_games(seed_states(seed + 1, 1), depth, net, tables, one, one.copy())  # compile outside the clock
    scores, tops, moves, started = [], [], 0, time.perf_counter()
    states = seed_states(seed, games)
    for first in range(0, games, chunk):
        part = states[first:first + chunk].copy()
        score = np.zeros(len(part), np.int64)
        top = np.zeros(len(part), np.int64)
        moves += play_games(part, depth, net, tables, score, top)
        scores.extend(score.tolist())
        tops.extend(top.tolist())
        if time.perf_counter() - started > budget:
            break
    elapsed = time.perf_counter() - started
    tops_array = np.array(tops)
    return {
        "depth": depth, "games": len(scores), "mean_score": float(np.mean(scores)),
        "median_score": float(np.median(scores)), "max_score": int(max(scores)),
        **_rates(tops_array), "moves_per_second": moves / elapsed, "seconds": elapsed,
    }


def _plot(curve: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = [point["games"] for point in curve]
    fig, score_axis = plt.subplots(figsize=(8, 4.5))
    score_axis.plot(games, [p["mean_score"] for p in curve], color="tab:blue", label="mean score")
    score_axis.set_xlabel("training games")
    score_axis.set_ylabel("mean score per 1,000 games", color="tab:blue")
    rate_axis = score_axis.twinx()
    rate_axis.plot(games, [100 * p["rate_2048"] for p in curve], color="tab:red", label="2048 rate")
    rate_axis.set_ylabel("games reaching 2048 (%)", color="tab:red")
    rate_axis.set_ylim(0, 100)
    score_axis.set_title("2048: TD(0) n-tuple network (4x6-tuples), training games (epsilon = 0)")
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    os.replace(tmp, path)


def _write_json(result: dict, path: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(result, handle, indent=2)
    os.replace(tmp, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=45.0)
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--fine-alpha", type=float, default=0.01)
    parser.add_argument("--fine-fraction", type=float, default=0.2)
    parser.add_argument("--coherent", action="store_true", help="temporal coherence learning rates")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--test-seed", type=int, default=20260)
    parser.add_argument("--test-games", type=int, default=1000)
    parser.add_argument("--expectimax-minutes", type=float, default=7.0)
    parser.add_argument("--json", default="bench/ntuple_learning.json")
    parser.add_argument("--plot", default="bench/ntuple_learning.png")
    parser.add_argument("--weights", default=None, help="save the trained weights (safetensors)")
    parser.add_argument("--load", default=None, help="test these saved weights; no training")
    args = parser.parse_args()

    from agentos_env_2048.kernels import move_tables, seed_states
    from agentos_policy_ntuple.network import DEFAULT_TUPLES, make_layout, network
    from agentos_trainer_td.kernels import train_games

    tables = move_tables()
    layout = make_layout(DEFAULT_TUPLES)
    weights = np.zeros(layout.size, np.float32)
    net = network(weights, layout)
    accumulators = (np.zeros(layout.size if args.coherent else 1, np.float32),) * 1
    signed = accumulators[0]
    absolute = np.zeros_like(signed)
    states = seed_states(args.seed, 1)
    chunk = 1000
    scores = np.zeros(chunk, np.int64)
    tops = np.zeros(chunk, np.int64)
    lengths = np.zeros(chunk, np.int64)
    compile_started = time.perf_counter()
    train_games(seed_states(0, 1), 1, NO_BUDGET, args.alpha, args.coherent, network(np.zeros_like(weights), layout),
                signed, absolute, tables, scores, tops, lengths)
    compile_seconds = time.perf_counter() - compile_started

    budget = 0.0 if args.load else args.minutes * 60.0
    if args.load:
        from safetensors.numpy import load_file

        weights[:] = load_file(args.load)["weights"]
    curve, games, moves, training_seconds = [], 0, 0, 0.0
    alpha = args.alpha
    while training_seconds < budget:
        if training_seconds >= (1.0 - args.fine_fraction) * budget:
            alpha = args.fine_alpha
        started = time.perf_counter()
        chunk_moves, _ = train_games(states, chunk, NO_BUDGET, alpha, args.coherent, net, signed, absolute,
                                     tables, scores, tops, lengths)
        elapsed = time.perf_counter() - started
        training_seconds += elapsed
        games += chunk
        moves += chunk_moves
        point = {"games": games, "moves": moves, "seconds": round(training_seconds, 1),
                 "alpha": alpha, "mean_score": float(scores.mean()), **_rates(tops),
                 "moves_per_second": chunk_moves / elapsed}
        curve.append(point)
        print(json.dumps(point), flush=True)

    result = {
        "machine": "2-core AMD EPYC VM shared with other jobs; one core used",
        "tuples": [list(t) for t in DEFAULT_TUPLES], "symmetries": 8, "alpha": args.alpha,
        "fine_alpha": args.fine_alpha, "fine_fraction": args.fine_fraction,
        "coherent": args.coherent, "seed": args.seed, "compile_seconds": compile_seconds,
        "training": {"games": games, "moves": moves, "seconds": training_seconds,
                     "moves_per_second": moves / training_seconds if training_seconds else None},
        "curve": curve,
    }
    if curve:
        _plot(curve, args.plot)
    else:
        result["training"]["weights"] = args.load
    _write_json(result, args.json)
    if args.weights:
        from safetensors.numpy import save_file

        save_file({"weights": weights}, args.weights)
    result["greedy"] = _test(net, tables, args.test_seed, args.test_games, 1, float("inf"), 100)
    print(json.dumps(result["greedy"]), flush=True)
    _write_json(result, args.json)
    result["expectimax"] = _test(net, tables, args.test_seed, args.test_games, 2,
                                 args.expectimax_minutes * 60.0, 10)
    print(json.dumps(result["expectimax"]), flush=True)
    _write_json(result, args.json)


if __name__ == "__main__":
    main()
