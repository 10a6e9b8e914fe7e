"""decide() round trip through an agentos-academy handle, side by side with a plain academy-py action.

    python bench/bench_academy.py [--calls 500]

Measures the median latency on the local exchange and on a redis-server started here on 127.0.0.1
(ephemeral port). The machine may be shared: compare the ratio, not the absolute figures.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from academy.agent import Agent, action
from academy.manager import Manager

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "agentos-academy" / "tests"))
from agentos_academy import launch  # noqa: E402
from agentos_academy._exchange import exchange_factory  # noqa: E402
from conftest import free_port, make_agent, stop, wait_port  # noqa: E402


class Plain(Agent):
    @action
    async def decide(self, observation):
        return 0


async def _median(call, calls: int) -> float:
    for _ in range(20):
        await call()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def measure(exchange: str, root: Path, calls: int) -> tuple[float, float]:
    executor = "event_loop" if exchange == "local" else "thread"
    async with launch([make_agent(root, f"bench-{len(list(root.iterdir()))}")], exchange=exchange,
                      executor=executor) as (ours,):
        ours_ms = await _median(lambda: ours.decide(3), calls)
    async with await Manager.from_exchange_factory(exchange_factory(exchange)) as manager:
        plain = await manager.launch(Plain)
        plain_ms = await _median(lambda: plain.decide(3), calls)
    return ours_ms, plain_ms


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        port = free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                  "--dir", tmp], stdout=subprocess.DEVNULL)
        try:
            wait_port(port, redis)
            for exchange in ("local", f"redis://127.0.0.1:{port}"):
                ours, plain = asyncio.run(measure(exchange, root, args.calls))
                print(f"{exchange:28s} decide median {ours:.3f} ms  plain academy action {plain:.3f} ms  "
                      f"ratio {ours / plain:.2f}")
        finally:
            stop(redis)


if __name__ == "__main__":
    main()
