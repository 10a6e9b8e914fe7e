"""``agentos serve`` end to end: a real process on a real redis-server; losing Redis gives one line."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from agentos_academy import connect
from conftest import make_agent, start_redis, stop


def test_serve_prints_id_answers_handles_and_exits_with_one_line_when_redis_is_lost(tmp_path):
    redis, port = start_redis(tmp_path)
    url = f"redis://127.0.0.1:{port}"
    agent = make_agent(tmp_path, "served")
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
        stop(redis)
    _, err = serve.communicate(timeout=60)
    assert serve.returncode == 1
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("agentos: error: agent served stopped: ConnectionError")
