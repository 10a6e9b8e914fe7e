"""TD training moves/s of the learner options side by side, and expectimax moves/s per depth.

Rounds alternate the trainers so that load from other jobs hits all of them alike; each figure is
the median over ``--rounds`` rounds of ``--seconds`` each, as wall-clock moves/s and as moves per
CPU-second of this process (``time.process_time``: all its threads), which is the fairer figure
on a shared machine.  Every trainer keeps training its own copy of one 4x6-tuple network that TD(0)
trained for `--pretrain` seconds first (games of realistic length; from scratch the first games are
short and cache-friendly), except `otd_tc`, which starts from its optimistic values.

* ``td``: online TD(0) (``_td.train_games``), one core.
* ``td_lambda``: episode-end TD(λ = 0.5) with restarts (``_episodes.train_episodes``), one core.
* ``otd_tc``: ``td_lambda`` + TC from an optimistic start (initial value 320,000), one core.
* ``tc``: ``td_lambda`` + TC at alpha 1.0 (ziap/2048-tdl's recipe, the preset's learner), one core:
  rows ``[w, E, A, 0]``.
* ``parallel``, ``parallel_tc``: ``td`` and ``tc`` on ``--threads`` threads with shared weights (and
  sums), through the trainer's own free-running threads (``_parallel.free_running``, chunks of 200,000
  moves), to be read against ``td`` and ``tc``;
  ``parallel_1``, ``parallel_tc_1``: the same machinery with one thread.
* ``search d``: moves/s of whole games played with expectimax depth d (transposition table of
  2**20 slots) by the ``td`` network, as it stands after training.

    python bench/bench_ntuple_options.py [--rounds 3] [--seconds 3] [--threads 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import numpy as np

CHUNK = 200_000  # moves a thread plays per chunk, as the trainer


class Trainer:
    """One network, trained a little more every round by one of the kernels."""

    def __init__(self, kind: str, threads: int, start: np.ndarray | None = None):
        from agentos_env_2048.kernels import move_tables, seed_states
        from agentos_policy_ntuple import NTuplePolicy
        from agentos_trainer_td.kernels import pack, thread_rng

        self.kind = kind
        self.policy = NTuplePolicy(initial_value=320000 if kind == "otd_tc" else 0.0)
        if start is not None and kind != "otd_tc":  # OTD starts from its optimistic values
            self.policy.weights[:] = start
        self.tables, self.net = move_tables(), self.policy.network
        self.threads = 1 if kind.endswith("_1") or not kind.startswith("parallel") else threads
        self.rngs = [thread_rng(seed_states(0, self.threads), t) for t in range(self.threads)]
        self.coherent = "tc" in kind
        size = self.policy.weights.size if self.coherent else 1
        signed, absolute = np.zeros(size, np.float32), np.zeros(size, np.float32)
        self.signed, self.absolute = signed, absolute
        self.rows = None if kind in ("td", "parallel", "parallel_1") else pack(self.policy.weights, signed, absolute)
        self.outs = [[np.zeros(4096, np.int64) for _ in range(3)] for _ in range(self.threads)]
        self.bounds = np.zeros(0, np.int64)
        self.chunk(0, 1, 1)  # compile or load the cache outside the clock

    def chunk(self, thread: int, games: int, budget: int) -> tuple[int, int]:
        from agentos_trainer_td.kernels import train_episodes, train_games

        rng, out = self.rngs[thread], self.outs[thread]
        if self.rows is None:
            return train_games(rng, games, budget, 0.1, False, self.net, self.signed, self.absolute, self.tables,
                               *out)
        alpha = 1.0 if self.coherent else 0.1
        return train_episodes(rng, games, budget, alpha, 0.5, True, self.coherent, self.rows, 0, 32,
                              self.policy.layout.size, self.bounds, self.tables, *out)

    def __call__(self, seconds: float) -> tuple[float, float]:
        from agentos_trainer_td.kernels import free_running

        moves, wall, cpu = 0, time.perf_counter(), time.process_time()
        if self.kind.startswith("parallel"):
            def keep_going():
                return time.perf_counter() - wall < seconds

            for _, (made, _) in free_running(self.threads, lambda t: self.chunk(t, 4096, CHUNK), keep_going):
                moves += made
        else:
            while time.perf_counter() - wall < seconds:
                moves += self.chunk(0, 8, 1 << 62)[0]
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        return moves / wall, moves / cpu


def search_speed(policy, depth: int, seconds: float) -> float:
    """Moves/s of games played with expectimax (until ``seconds`` pass; the last game cut short)."""
    from agentos_env_2048.kernels import has_legal_move, move, move_tables, new_board, seed_states, spawn
    from agentos_policy_ntuple.network import bounds_array, new_generation, new_table, search_action

    tables, table, states = move_tables(), new_table(20), seed_states(1, 1)
    net, size, bounds = policy.network, policy.layout.size, bounds_array(())
    search_action(new_board(states, 0), depth, net, size, bounds, tables, table, 0)  # compile
    moves, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        board = np.uint64(new_board(states, 0))
        new_generation(table)
        while has_legal_move(board) and time.perf_counter() - start < seconds:
            after, _ = move(board, search_action(board, depth, net, size, bounds, tables, table, 0), tables)
            board, moves = np.uint64(spawn(np.uint64(after), states, 0)), moves + 1
    return moves / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--search-seconds", type=float, default=10.0)
    parser.add_argument("--pretrain", type=float, default=15.0,
                        help="seconds of TD(0) training of the network every trainer starts from (0: from scratch)")
    parser.add_argument("--depths", default="1 2 3 4", help="expectimax depths to time ('' for none)")
    parser.add_argument("--json")
    args = parser.parse_args()
    kinds = ("td", "parallel_1", "parallel", "td_lambda", "otd_tc", "tc", "parallel_tc_1", "parallel_tc")
    start = None
    if args.pretrain > 0:  # games of realistic length: a network that already plays (TD(0), one core)
        warm = Trainer("td", 1)
        began = time.perf_counter()
        while time.perf_counter() - began < args.pretrain:
            warm.chunk(0, 8, 1 << 62)
        start = warm.policy.weights
    trainers = {kind: Trainer(kind, args.threads, start) for kind in kinds}
    runs: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    for _ in range(args.rounds):
        for kind in kinds:
            runs[kind].append(trainers[kind](args.seconds))
    result = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": platform.processor() or
              platform.machine(), "rounds": args.rounds, "seconds": args.seconds, "threads": args.threads,
              "pretrain_seconds": args.pretrain, "threads_by": "python threads, kernels without the GIL"}
    for kind in kinds:
        wall = statistics.median(r[0] for r in runs[kind])
        cpu = statistics.median(r[1] for r in runs[kind])
        result[kind] = {"moves_per_s": wall, "moves_per_cpu_s": cpu}
        print(f"{kind:>10}: {wall:>12,.0f} moves/s wall {cpu:>12,.0f} moves per CPU-second")
    for depth in (int(d) for d in args.depths.split()):
        speed = search_speed(trainers["td"].policy, depth, args.search_seconds)
        result[f"search_depth_{depth}"] = {"moves_per_s": speed}
        print(f"expectimax depth {depth}: {speed:>12,.1f} moves/s")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
