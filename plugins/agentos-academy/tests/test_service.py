"""Agent services through handles: local exchange in process, Redis and HTTP exchanges across processes."""

from __future__ import annotations

import asyncio

import pytest
from agentos.errors import UsageError
from agentos_academy import AgentActionError, AgentStartError, launch


def test_local_exchange_round_trips_observations_weights_and_records(agent_factory, tmp_path):
    agent = agent_factory("alice")

    async def scenario():
        async with launch([agent], exchange="local") as (a,):
            trained = await a.train(episodes=30)
            stats = await a.stats()
            weights = await a.get_weights()
            action = await a.decide(3)
            record = await a.checkpoint()
            return trained, stats, weights, action, record

    trained, stats, weights, action, record = asyncio.run(scenario())
    assert trained["episodes"] == 30 and stats["episodes_trained"] == 30 and stats["steps_trained"] > 0
    assert isinstance(weights, bytes) and len(weights) > 100
    assert isinstance(action, int)
    assert (agent / "runs" / record["run"] / "meta.json").is_file() or (agent / "runs" / record["run"]).is_dir()
    assert record["checkpoint"] and (agent / "runs" / record["run"]).exists()


def test_action_error_names_agent_and_action(agent_factory, tmp_path):
    agent = agent_factory("bob")

    async def scenario():
        async with launch([agent], exchange="local") as (b,):
            await b.set_settings({"no_such_setting": 1.0})

    expected = r"agent bob: action 'set_settings' failed: ValueError: .*no_such_setting"
    with pytest.raises(AgentActionError, match=expected):
        asyncio.run(scenario())


def test_agent_that_fails_to_start_gives_one_clear_error(agent_factory, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "agent.ini").write_text("[environment]\ndefault = no_such_environment\n")

    async def scenario():
        async with launch([broken], exchange="local", start_timeout=30):
            pass

    with pytest.raises(AgentStartError, match="agent broken"):
        asyncio.run(asyncio.wait_for(scenario(), 60))


def test_redis_exchange_agents_in_separate_processes_copy_weights(agent_factory, tmp_path, redis_url):
    a_dir, b_dir = agent_factory("a"), agent_factory("b", alpha=0.1)

    async def scenario():
        async with launch([a_dir, b_dir], exchange=redis_url, executor="process") as (a, b):
            await a.train(episodes=40)
            weights = await a.get_weights()
            before = [await b.decide(s) for s in range(8)]
            await b.set_weights(weights)
            return [await a.decide(s) for s in range(8)], before, [await b.decide(s) for s in range(8)]

    of_a, b_before, b_after = asyncio.run(scenario())
    assert b_after == of_a != b_before  # b now acts as a does: the weights went through the exchange


def test_http_exchange_only_when_called_insecure(agent_factory, tmp_path, http_exchange):
    agent = agent_factory("h")

    async def scenario(**insecure):
        async with launch([agent], exchange=http_exchange, executor="thread", **insecure) as (h,):
            await h.train(episodes=5)
            return await h.stats()

    with pytest.raises(UsageError, match="is not authenticated"):
        asyncio.run(scenario())
    assert asyncio.run(scenario(insecure_exchange=True))["episodes_trained"] == 5


def test_bad_exchange_address_is_one_line(agent_factory, tmp_path):
    agent = agent_factory("x")

    async def scenario():
        async with launch([agent], exchange="ftp://nowhere"):
            pass

    with pytest.raises(Exception, match="bad exchange 'ftp://nowhere'"):
        asyncio.run(scenario())
