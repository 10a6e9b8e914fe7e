"""decide() through agentos-academy handles, side by side with a plain academy-py action.

    python bench/bench_academy.py [--calls 500] [--seconds 10] [--in-flight 4]

Latency: the median round trip of one call at a time, on the local exchange and on a redis-server
started here on 127.0.0.1 (ephemeral port); both agents run at once and are called in alternating
blocks. Throughput: actions per second with 2 agents, each in its own process on the Redis exchange
(2 agents on 2 cores), ``--in-flight`` calls outstanding per agent; on the local exchange both agents
share this process's event loop. The machine may be shared:
compare the ratios, not the absolute figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from academy.agent import Agent, action
from academy.exchange.client import exchange_context
from academy.manager import Manager

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "agentos-academy" / "tests"))
from agentos_academy import exchange_factory, launch  # noqa: E402
from conftest import free_port, make_agent, stop, wait_port  # noqa: E402


class Plain(Agent):
    @action
    async def decide(self, observation):
        return 0


async def _times(call, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return times


async def measure(exchange: str, root: Path, calls: int, block: int = 50) -> tuple[float, float]:
    """Median round trips (ms) of our decide and of a plain action, both agents alive at once on the
    same kind of executor, measured in alternating blocks of ``block`` calls so that load cancels."""
    local = exchange == "local"
    pool = None if local else ThreadPoolExecutor(1)
    async with launch([make_agent(root, f"bench-{len(list(root.iterdir()))}")], exchange=exchange,
                      executor="event_loop" if local else "thread") as (ours,):
        same_exchange = exchange_context.get().factory()  # launch's exchange (a local one is per factory)
        async with await Manager.from_exchange_factory(same_exchange, executors=pool) as manager:
            plain = await manager.launch(Plain)
            await plain.ping(timeout=60)
            ours_times, plain_times = [], []
            await _times(lambda: ours.decide(3), 20)
            await _times(lambda: plain.decide(3), 20)
            while len(ours_times) < calls:
                ours_times += await _times(lambda: ours.decide(3), block)
                plain_times += await _times(lambda: plain.decide(3), block)
    return statistics.median(ours_times) * 1000, statistics.median(plain_times) * 1000


async def _rate(calls, seconds: float, in_flight: int) -> float:
    """Completed calls per second, ``in_flight`` callers per entry of ``calls`` for ``seconds``."""
    for call in calls:
        for _ in range(20):
            await call()
    done = 0
    deadline = time.perf_counter() + seconds

    async def caller(call):
        nonlocal done
        while time.perf_counter() < deadline:
            await call()
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(caller(call) for call in calls for _ in range(in_flight)))
    return done / (time.perf_counter() - start)


async def throughput(exchange: str, root: Path, seconds: float, in_flight: int) -> tuple[float, float]:
    """Actions per second of 2 agent services and of 2 plain academy-py agents (same executor)."""
    local = exchange == "local"
    folders = [make_agent(root, f"rate-{len(list(root.iterdir()))}-{i}") for i in range(2)]
    async with launch(folders, exchange=exchange, executor="event_loop" if local else "process",
                      start_timeout=120) as agents:
        ours_calls = [lambda a=a: a.decide(3) for a in agents]
        ours = await _rate(ours_calls, seconds, in_flight)
    pool = None if local else ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
    async with await Manager.from_exchange_factory(exchange_factory(exchange), executors=pool) as manager:
        plains = [await manager.launch(Plain) for _ in range(2)]
        for plain in plains:
            await plain.ping(timeout=120)
        plain_rate = await _rate([lambda p=p: p.decide(3) for p in plains], seconds, in_flight)
    return ours, plain_rate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=10.0, help="of each throughput measurement")
    parser.add_argument("--in-flight", type=int, default=4, help="outstanding calls per agent (throughput)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    result: dict[str, dict] = {"calls": args.calls, "seconds": args.seconds, "in_flight": args.in_flight}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        port = free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                  "--dir", tmp, "--requirepass", "bench"], stdout=subprocess.DEVNULL)
        try:
            wait_port(port, redis)
            for exchange in ("local", f"redis://:bench@127.0.0.1:{port}"):
                ours, plain = asyncio.run(measure(exchange, root, args.calls))
                result[f"latency_ms {exchange.split(':')[0]}"] = {"decide": ours, "plain_action": plain}
                print(f"{exchange:28s} decide median {ours:.3f} ms  plain academy action {plain:.3f} ms  "
                      f"ratio {ours / plain:.2f}", flush=True)
            for exchange in ("local", f"redis://:bench@127.0.0.1:{port}"):
                ours, plain = asyncio.run(throughput(exchange, root, args.seconds, args.in_flight))
                result[f"per_second {exchange.split(':')[0]}"] = {"decide": ours, "plain_action": plain}
                print(f"{exchange:28s} 2 agents: {ours:.0f} decide/s  plain academy action {plain:.0f}/s  "
                      f"ratio {ours / plain:.2f}", flush=True)
        finally:
            stop(redis)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
