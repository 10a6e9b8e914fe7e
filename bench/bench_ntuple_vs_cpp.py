"""AgentOS's 2048 kernels beside the C++ of ziap/2048-tdl and TDL2048+, on this machine, in one run.

* ``value``: nanoseconds to value one afterstate (4x6 tuples, 8 symmetries, float32 weights in huge
  pages) over ``--boards`` afterstates met in the greedy play of a network that ziap's recipe trained
  for ``--train-games`` games. With ``--ziap DIR`` (a checkout of ziap/2048-tdl), its own ``estimate``
  values the same boards (``bench/ziap_value.cpp``, built here with g++ against its headers; the boards
  are handed over with their cells in ziap's order). Rounds alternate the two.
* ``td0``: plain TD(0) moves/s, alpha 0.1, ``--blocks`` blocks of ``--block-games`` games from an empty
  network. With ``--tdl2048 DIR`` (a checkout of moporgic/TDL2048), its ``./2048 -n 4x6patt -t BxG
  -a 0.1`` (built here with its makefile) trains the same blocks, and its ``ops`` are read. Both start
  with every page of their weights written: TDL2048+ zeroes its tables (``new[]()``) before its clock, and
  AgentOS's zeroed weights are written once before the first block (NumPy's zeros are mapped lazily, and
  the first block would otherwise pay the page faults, 0.4-0.6 s of it).
* ``recipe``: moves/s of ziap's recipe (TD(lambda = 0.5), TC, restarts, alpha 1.0; restart segments
  counted), one thread, ``--seconds`` after the training above; ziap's own figure (0.55-0.59 M on this
  machine, docs/benchmarks.md) is not rerun: its trainer reports first segments only.

Without ``--ziap``/``--tdl2048`` their figures are null. Public names only.

    python bench/bench_ntuple_vs_cpp.py [--ziap DIR] [--tdl2048 DIR] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
NO_BUDGET = 2**62


def kernels():
    """The compiled helpers of this bench (built on first use; numba is imported here, not at import)."""
    from agentos_env_2048.kernels import move, new_board, njit, spawn
    from agentos_policy_ntuple.network import value

    @njit
    def greedy_afterstates(states, count, net, tables, out):
        """Every legal afterstate of greedy games on rng slot 0, until ``count`` were written to ``out``."""
        n = 0
        while n < count:
            board = new_board(states, 0)
            while n < count:
                best, best_value, best_after = -1, -np.inf, board
                for action in range(4):
                    after, points = move(board, action, tables)
                    if after == board:
                        continue
                    out[n] = after
                    n += 1
                    v = points + value(after, net)
                    if v > best_value:
                        best, best_value, best_after = action, v, after
                    if n == count:
                        break
                if best < 0:
                    break
                board = spawn(best_after, states, 0)
        return n

    @njit
    def value_all(boards, net):
        total = 0.0
        for k in range(boards.shape[0]):
            total += value(boards[k], net)
        return total

    @njit
    def ziap_order(boards):
        """Each board with its 16 cells reversed: ziap keeps cell 0 in the highest nibble."""
        out = np.empty_like(boards)
        for k in range(boards.shape[0]):
            board, reversed_board = boards[k], np.uint64(0)
            for cell in range(16):
                reversed_board |= ((board >> np.uint64(4 * cell)) & np.uint64(15)) << np.uint64(4 * (15 - cell))
            out[k] = reversed_board
        return out

    return greedy_afterstates, value_all, ziap_order


def build_ziap(checkout: str, folder: str) -> str:
    binary = os.path.join(folder, "ziap_value")
    subprocess.run(["g++", "-O3", "-march=native", "-std=c++17", "-mbmi", "-mbmi2", "-I", checkout, "-o", binary,
                    os.path.join(HERE, "ziap_value.cpp")], check=True, capture_output=True, timeout=600)
    return binary


def ziap_value(binary: str, boards_file: str) -> float:
    """ziap's ns per board on ``boards_file`` (the best of its 3 passes, as ours)."""
    out = subprocess.run([binary, boards_file, "3"], check=True, capture_output=True, text=True, timeout=600).stdout
    return min(float(x) for x in re.findall(r"([\d.]+) ns/board", out))


def build_tdl2048(checkout: str, folder: str) -> str:
    copy = os.path.join(folder, "tdl2048")
    shutil.copytree(checkout, copy, ignore=shutil.ignore_patterns(".git"))
    subprocess.run(["make"], cwd=copy, check=True, capture_output=True, timeout=900)
    return os.path.join(copy, "2048")


def tdl2048_td0(binary: str, blocks: int, games: int) -> dict:
    out = subprocess.run([binary, "-n", "4x6patt", "-t", f"{blocks}x{games}", "-a", "0.1", "-s"], check=True,
                         capture_output=True, text=True, timeout=3600, cwd=os.path.dirname(binary)).stdout
    rates = [float(x) for x in re.findall(r"ms ([\d.]+)ops", out)]
    times = [float(x) / 1000 for x in re.findall(r" (\d+)ms ", out)]
    means = [float(x) for x in re.findall(r"local:\s+avg=(\d+)", out)]
    return {"moves_per_second": sum(r * t for r, t in zip(rates, times, strict=True)) / sum(times), "blocks": rates,
            "mean_scores": means}


def agentos_td0(blocks: int, games: int) -> dict:
    from agentos_env_2048.kernels import move_tables, seed_states
    from agentos_policy_ntuple import NTuplePolicy
    from agentos_trainer_td.kernels import train_games

    tables, policy = move_tables(), NTuplePolicy()
    policy.weights.fill(0.0)  # fault every page in before the clock, as TDL2048+'s new[]() does
    unused, out = np.zeros(1, np.float32), [np.zeros(games, np.int64) for _ in range(3)]
    warm = NTuplePolicy(tuples="0 1 2 3")  # compile or load the cache outside the clock
    train_games(seed_states(1, 1), 1, NO_BUDGET, 0.1, False, warm.network, unused, unused, tables, *out)
    states, rates, seconds, means = seed_states(0, 1), [], [], []
    for _ in range(blocks):
        start = time.perf_counter()
        moves, played = train_games(states, games, NO_BUDGET, 0.1, False, policy.network, unused, unused, tables,
                                    *out)
        seconds.append(time.perf_counter() - start)
        rates.append(moves / seconds[-1])
        means.append(float(out[0][:played].mean()))
    return {"moves_per_second": sum(r * t for r, t in zip(rates, seconds, strict=True)) / sum(seconds), "blocks": rates,
            "mean_scores": means}


class Recipe:
    """One network trained by ziap's recipe through the public episode learner."""

    def __init__(self):
        from agentos_env_2048.kernels import move_tables, seed_states
        from agentos_policy_ntuple import NTuplePolicy
        from agentos_trainer_td.kernels import learner_layout, pack, train_episodes

        self.policy, self.tables, self.learn = NTuplePolicy(), move_tables(), train_episodes
        weights = self.policy.weights
        self.rows = pack(weights, np.zeros_like(weights), np.zeros_like(weights))
        self.layout, self.states = learner_layout(self.policy), seed_states(2, 1)
        self.out = [np.zeros(1024, np.int64) for _ in range(3)]
        self.bounds = np.zeros(0, np.int64)

    def train(self, games: int) -> int:
        moves = 0
        while games > 0:
            now = min(games, 1024)
            moves += self.learn(self.states, now, NO_BUDGET, 1.0, 0.5, True, True, self.rows, self.layout, 32,
                                self.policy.layout.size, self.bounds, self.tables, *self.out)[0]
            games -= now
        return moves

    def rate(self, seconds: float) -> float:
        moves, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            moves += self.train(10)
        return moves / (time.perf_counter() - start)

    def network(self):
        """The policy's network with the weights the rows hold now."""
        from agentos_policy_ntuple.network import network

        return network(np.ascontiguousarray(self.rows[:, 0]), self.policy.layout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ziap", metavar="DIR", help="a checkout of ziap/2048-tdl (its headers are compiled here)")
    parser.add_argument("--tdl2048", metavar="DIR", help="a checkout of moporgic/TDL2048 (built here with make)")
    parser.add_argument("--train-games", type=int, default=3000)
    parser.add_argument("--boards", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--block-games", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    load_before = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    greedy_afterstates, value_all, ziap_order = kernels()
    from agentos_env_2048.kernels import seed_states

    recipe = Recipe()
    recipe.train(args.train_games)
    net = recipe.network()
    boards = np.empty(args.boards, np.uint64)
    greedy_afterstates(seed_states(3, 1), args.boards, net, recipe.tables, boards)
    value_all(boards[:10], net)
    with tempfile.TemporaryDirectory() as folder:
        boards_file = os.path.join(folder, "boards.bin")
        ziap_order(boards).tofile(boards_file)
        ziap = build_ziap(args.ziap, folder) if args.ziap else None
        tdl = build_tdl2048(args.tdl2048, folder) if args.tdl2048 else None
        ours_ns, ziap_ns = [], []
        for _ in range(args.rounds):
            best = min(_timed(value_all, boards, net) for _ in range(3))
            ours_ns.append(best / args.boards * 1e9)
            if ziap:
                ziap_ns.append(ziap_value(ziap, boards_file))
        td0_ours = agentos_td0(args.blocks, args.block_games)
        td0_tdl = tdl2048_td0(tdl, args.blocks, args.block_games) if tdl else None
    recipe_rate = statistics.median(recipe.rate(args.seconds) for _ in range(args.rounds))
    value_ns = statistics.median(ours_ns)
    ziap_median = statistics.median(ziap_ns) if ziap_ns else None
    result = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; load average before "
                   f"the run {load_before}",
        "date": time.strftime("%Y-%m-%d"),
        "arguments": {k: v for k, v in vars(args).items() if k != "json"},
        "value_ns": {"agentos": value_ns, "ziap": ziap_median, "rounds_agentos": ours_ns, "rounds_ziap": ziap_ns,
                     "ratio": value_ns / ziap_median if ziap_median else None},
        "td0": {"agentos": td0_ours, "tdl2048": td0_tdl,
                "ratio": td0_ours["moves_per_second"] / td0_tdl["moves_per_second"] if td0_tdl else None},
        "recipe_moves_per_second": recipe_rate,
    }
    theirs_value = "-" if ziap_median is None else f"{ziap_median:.1f}"
    theirs_td0 = "-" if td0_tdl is None else f"{td0_tdl['moves_per_second']:,.0f}"
    print(f"value one afterstate: AgentOS {value_ns:.1f} ns, ziap {theirs_value} ns")
    print(f"TD(0) moves/s: AgentOS {td0_ours['moves_per_second']:,.0f}, TDL2048+ {theirs_td0}")
    print(f"ziap's recipe, one thread: AgentOS {recipe_rate:,.0f} moves/s")
    if args.json:
        with open(args.json + ".tmp", "w") as handle:
            json.dump(result, handle, indent=2)
        os.replace(args.json + ".tmp", args.json)


def _timed(function, *args) -> float:
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
