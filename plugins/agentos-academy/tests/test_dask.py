"""Agents on real Dask clusters: a scheduler and two worker processes started here; agentos serve on a LocalCluster."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from agentos_academy import AgentStartError, connect, launch


def _dask(*args, cwd) -> subprocess.Popen:
    exe = shutil.which("dask", path=os.path.dirname(sys.executable)) or shutil.which("dask")
    return subprocess.Popen([exe, *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture
def dask_cluster(tmp_path):
    """A ``dask scheduler`` and two ``dask worker`` processes (one thread each) on 127.0.0.1."""
    file = tmp_path / "scheduler.json"
    procs = [_dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                   "--scheduler-file", str(file), cwd=tmp_path)]
    try:
        deadline = time.monotonic() + 60
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(file.read_text())["address"]
        procs += [_dask("worker", address, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1",
                        "--local-directory", str(tmp_path), cwd=tmp_path) for _ in range(2)]
        from dask.distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)


def test_agents_on_a_scheduler_and_two_workers_copy_weights(agent_factory, redis_url, dask_cluster):
    a_dir, b_dir, c_dir = agent_factory("a"), agent_factory("b", alpha=0.1), agent_factory("c")

    async def too_many():
        async with launch([a_dir, b_dir, c_dir], exchange=redis_url, scheduler=dask_cluster):
            pass

    with pytest.raises(AgentStartError, match="2 worker threads for 3 agents"):
        asyncio.run(asyncio.wait_for(too_many(), 60))

    async def scenario():
        async with launch([a_dir, b_dir], exchange=redis_url, scheduler=dask_cluster) as (a, b):
            await a.train(episodes=40)
            await b.set_weights(await a.get_weights())
            stats = await asyncio.gather(a.stats(), b.stats())
            return [await a.decide(s) for s in range(8)], [await b.decide(s) for s in range(8)], stats

    of_a, of_b, stats = asyncio.run(asyncio.wait_for(scenario(), 120))
    assert of_b == of_a  # the weights went from one worker to the other through the exchange
    pids = {s["pid"] for s in stats}
    assert len(pids) == 2 and os.getpid() not in pids  # one agent per worker process
    assert stats[0]["episodes_trained"] == 40


def test_serve_on_a_local_cluster_until_sigterm_and_the_local_exchange_refused(agent_factory, redis_url):
    agents = [agent_factory("left"), agent_factory("right")]

    async def on_local_exchange():
        async with launch(agents, exchange="local", scheduler="local"):
            pass

    with pytest.raises(AgentStartError, match="Dask workers cannot reach the local exchange"):
        asyncio.run(on_local_exchange())

    serve = subprocess.Popen([sys.executable, "-m", "agentos", "serve", *map(str, agents), "--exchange", redis_url,
                              "--scheduler", "local"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ids = [serve.stdout.readline().strip() for _ in agents]

        async def use():
            names = []
            for agent_id in ids:
                async with connect(agent_id, exchange=redis_url, action_timeout=60) as handle:
                    await handle.train(episodes=5)
                    names.append(await handle.stats())
            return names

        stats = asyncio.run(asyncio.wait_for(use(), 120))
    finally:
        serve.send_signal(signal.SIGTERM)
        _, err = serve.communicate(timeout=60)
    assert [s["name"] for s in stats] == ["left", "right"] and all(s["episodes_trained"] == 5 for s in stats)
    assert len({s["pid"] for s in stats} | {serve.pid}) == 3  # each agent in its own worker process
    assert serve.returncode == 0 and err.strip().splitlines()[-1] == "2 agents shut down"
