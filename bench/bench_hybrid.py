"""``decide`` round trips across processes on the hybrid exchange, side by side with a plain academy-py
action, and the same on the Redis exchange for reference.

    python bench/bench_hybrid.py [--calls 1000] [--profile]

A redis-server with a password is started here on 127.0.0.1 (ephemeral port). For each exchange, two
agents run in processes of their own: ``agentos serve`` of a small agent folder (corridor, q-table), and
a plain academy-py ``Echo`` agent on academy-py's own exchange factory (``HybridExchangeFactory`` /
``RedisExchangeFactory``, its defaults: no AgentOS). This process calls both, one call at a time, in
alternating blocks of 50 so that the load of a shared machine falls on both alike; it reports the median
and 95th percentile of ``--calls`` round trips each: ``decide`` through an agentos-academy handle
(async), through the blocking player of ``agentos arena --exchange`` (``connect_players``), and the
plain action; then ``decide`` for a tic-tac-toe seat (PettingZoo's observation: a board and an action mask,
as arrays) through the player. ``--profile``: where this process spends a hybrid ``decide`` (cProfile, top 15).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "agentos-academy" / "tests"))
from conftest import free_port, make_agent, stop, wait_port  # noqa: E402

PASSWORD = "bench-password"
BLOCK = 50
WARM = 300


def academy_factory(scheme: str, port: int):
    """academy-py's own factory for the exchange (no AgentOS)."""
    if scheme == "hybrid":
        from academy.exchange.hybrid import HybridExchangeFactory

        return HybridExchangeFactory("127.0.0.1", port, redis_kwargs={"password": PASSWORD})
    from academy.exchange.redis import RedisExchangeFactory

    return RedisExchangeFactory("127.0.0.1", port, password=PASSWORD)


def serve_plain(scheme: str, port: int) -> None:
    """Run a plain academy-py echo agent until terminated; print its id first."""
    from academy.agent import Agent, action
    from academy.runtime import Runtime

    class Echo(Agent):
        @action
        async def decide(self, observation):
            return observation

    async def run():
        factory = academy_factory(scheme, port)
        client = await factory.create_user_client()
        registration = await client.register_agent(Echo)
        print(registration.agent_id.uid, flush=True)
        async with Runtime(Echo(), exchange_factory=factory, registration=registration) as runtime:
            await runtime.wait_shutdown()

    asyncio.run(run())


def start(command: list[str], env=None) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    agent_id = proc.stdout.readline().strip()
    if not agent_id:
        raise SystemExit(f"{command[:4]} did not start")
    return proc, agent_id


def summary(times: list[float]) -> tuple[float, float]:
    """(median, 95th percentile) in milliseconds."""
    return statistics.median(times) * 1000, statistics.quantiles(times, n=20)[-1] * 1000


async def _block(call, count: int, out: list[float]) -> None:
    for _ in range(count):
        begin = time.perf_counter()
        await call()
        out.append(time.perf_counter() - begin)


async def measure_async(url: str, scheme: str, port: int, ours_id: str, plain_id: str, calls: int):
    """Round trips of decide (agentos-academy handle) and of the plain action, in alternating blocks."""
    from academy.identifier import AgentId
    from academy.manager import Manager
    from agentos_academy import connect

    async with connect(ours_id, exchange=url, action_timeout=30) as ours:
        async with await Manager.from_exchange_factory(academy_factory(scheme, port)) as manager:
            plain = manager.get_handle(AgentId(uid=plain_id))
            ours_times, plain_times, warm = [], [], []
            await _block(lambda: ours.decide(3), WARM, warm)  # both processes done starting up
            await _block(lambda: plain.decide(3), WARM, warm)
            while len(ours_times) < calls:
                await _block(lambda: ours.decide(3), BLOCK, ours_times)
                await _block(lambda: plain.decide(3), BLOCK, plain_times)
    return summary(ours_times), summary(plain_times)


def measure_player(url: str, name: str, calls: int, observation=3) -> tuple[float, float]:
    """Round trips of the blocking player that ``agentos arena --exchange`` uses."""
    from agentos_academy import connect_players

    with connect_players(url, [name]) as players:
        player, times = players[name], []
        for _ in range(WARM):
            player.decide(observation)
        for _ in range(calls):
            begin = time.perf_counter()
            player.decide(observation)
            times.append(time.perf_counter() - begin)
    return summary(times)


def seat_observation():
    """What PettingZoo's tic-tac-toe gives the first seat: a 3x3x2 board and an action mask."""
    from pettingzoo.classic import tictactoe_v3

    env = tictactoe_v3.env()
    env.reset(seed=0)
    return env.last()[0]


def measure_seat(url: str, root: Path, calls: int) -> tuple[float, float]:
    """decide for a tic-tac-toe seat (dict of arrays) through the arena player, across processes."""
    from test_served_match import seat_agent

    agent = seat_agent(root, f"seat-{len(list(root.iterdir()))}", "FirstLegal")
    proc, _ = start([sys.executable, "-m", "agentos", "serve", str(agent)], env={**os.environ, "AGENTOS_EXCHANGE": url})
    try:
        return measure_player(url, agent.name, calls, seat_observation())
    finally:
        proc.terminate()
        proc.wait(30)


def profile(url: str, ours_id: str, calls: int) -> None:
    import cProfile
    import pstats

    from agentos_academy import connect

    async def run():
        async with connect(ours_id, exchange=url, action_timeout=30) as ours:
            for _ in range(WARM):
                await ours.decide(3)
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(calls):
                await ours.decide(3)
            profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)

    asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--profile", action="store_true", help="cProfile this side of hybrid decide calls")
    parser.add_argument("--serve-plain", nargs=2, metavar=("SCHEME", "PORT"), help=argparse.SUPPRESS)
    parser.add_argument("--json", help="also write the figures (milliseconds) to this file")
    args = parser.parse_args()
    result: dict[str, dict] = {}
    if args.serve_plain:
        serve_plain(args.serve_plain[0], int(args.serve_plain[1]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        port = free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                  "--dir", tmp, "--requirepass", PASSWORD], stdout=subprocess.DEVNULL)
        try:
            wait_port(port, redis)
            for scheme in ("hybrid", "redis"):
                url = f"{scheme}://:{PASSWORD}@127.0.0.1:{port}"
                agent = make_agent(root, f"bench-{scheme}")
                ours, ours_id = start([sys.executable, "-m", "agentos", "serve", str(agent)],
                                      env={**os.environ, "AGENTOS_EXCHANGE": url})
                plain, plain_id = start([sys.executable, __file__, "--serve-plain", scheme, str(port)])
                try:
                    (om, op), (pm, pp) = asyncio.run(measure_async(url, scheme, port, ours_id, plain_id, args.calls))
                    sm, sp = measure_player(url, agent.name, args.calls)
                    print(f"{scheme:7s} decide (handle) median {om:.3f} ms p95 {op:.3f} ms | "
                          f"decide (arena player) median {sm:.3f} ms p95 {sp:.3f} ms | "
                          f"plain academy-py action median {pm:.3f} ms p95 {pp:.3f} ms | "
                          f"ratio {om / pm:.2f} (player {sm / pm:.2f})", flush=True)
                    tm, tp = measure_seat(url, root, args.calls)
                    result[scheme] = {"handle": [om, op], "player": [sm, sp], "plain": [pm, pp], "seat": [tm, tp],
                                      "as": "median and p95 in ms", "calls": args.calls}
                    print(f"{scheme:7s} decide for a tic-tac-toe seat (arena player, board and mask as arrays) "
                          f"median {tm:.3f} ms p95 {tp:.3f} ms", flush=True)
                    if args.profile and scheme == "hybrid":
                        profile(url, ours_id, args.calls)
                finally:
                    for proc in (ours, plain):
                        proc.terminate()
                        proc.wait(30)
        finally:
            stop(redis)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
