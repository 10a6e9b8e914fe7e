"""``agentos serve`` end to end: a real process on a real redis-server; losing Redis gives one line."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from agentos_academy import connect


def test_serve_prints_id_answers_handles_and_exits_with_one_line_on_lost_redis(agent_factory, redis_server):
    url = redis_server.url
    agent = agent_factory("served")
    serve = subprocess.Popen([sys.executable, "-m", "agentos", "serve", str(agent), "--exchange", url],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        agent_id = serve.stdout.readline().strip()

        async def use():
            async with connect(agent_id, exchange=url, action_timeout=60) as handle:
                return await handle.decide(2), await handle.stats()

        action, stats = asyncio.run(use())
        assert isinstance(action, int) and stats["name"] == "served"
    finally:
        redis_server.stop()
    _, err = serve.communicate(timeout=60)
    assert serve.returncode == 1
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("agentos: error: agent served stopped: ConnectionError")


def test_serve_several_on_a_process_pool_exits_with_one_line_on_lost_redis(agent_factory, redis_server):
    url = redis_server.url
    agents = [agent_factory("one"), agent_factory("two")]
    serve = subprocess.Popen([sys.executable, "-m", "agentos", "serve", *map(str, agents), "--exchange", url],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ids = [serve.stdout.readline().strip() for _ in agents]

        async def use():
            async with connect(ids[1], exchange=url, action_timeout=60) as handle:
                return await handle.stats()

        stats = asyncio.run(use())
        assert stats["name"] == "two" and stats["pid"] != serve.pid
    finally:
        redis_server.stop()
    _, err = serve.communicate(timeout=90)
    assert serve.returncode == 1
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("agentos: error: agent") and "stopped: ConnectionError" in err
