"""Agents on a real Dask cluster: a scheduler and two worker processes started here on 127.0.0.1."""

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


def test_serve_on_a_scheduler_and_two_workers_copy_weights_until_sigterm(agent_factory, redis_url, dask_cluster):
    a_dir, b_dir, c_dir = agent_factory("a"), agent_factory("b", alpha=0.1), agent_factory("c")

    async def too_many():
        async with launch([a_dir, b_dir, c_dir], exchange=redis_url, scheduler=dask_cluster):
            pass

    with pytest.raises(AgentStartError, match="2 worker threads for 3 agents"):
        asyncio.run(asyncio.wait_for(too_many(), 60))

    async def on_local_exchange():
        async with launch([a_dir], exchange="local", scheduler=dask_cluster):
            pass

    with pytest.raises(AgentStartError, match="Dask workers cannot reach the local exchange"):
        asyncio.run(on_local_exchange())

    serve = subprocess.Popen([sys.executable, "-m", "agentos", "serve", str(a_dir), str(b_dir), "--exchange", redis_url,
                              "--scheduler", dask_cluster], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ids = [serve.stdout.readline().strip() for _ in range(2)]

        async def use():
            async with connect(ids[0], exchange=redis_url, action_timeout=60) as a, \
                    connect(ids[1], exchange=redis_url, action_timeout=60) as b:
                await a.train(episodes=40)
                await b.set_weights(await a.get_weights())
                stats = await asyncio.gather(a.stats(), b.stats())
                return [await a.decide(s) for s in range(8)], [await b.decide(s) for s in range(8)], stats

        of_a, of_b, stats = asyncio.run(asyncio.wait_for(use(), 120))
    finally:
        serve.send_signal(signal.SIGTERM)
        _, err = serve.communicate(timeout=60)
    assert of_b == of_a  # the weights went from one worker to the other through the exchange
    assert [s["name"] for s in stats] == ["a", "b"] and stats[0]["episodes_trained"] == 40
    assert len({s["pid"] for s in stats} | {serve.pid, os.getpid()}) == 4  # each agent in its own worker
    assert serve.returncode == 0 and err.strip().splitlines()[-1] == "2 agents shut down"
