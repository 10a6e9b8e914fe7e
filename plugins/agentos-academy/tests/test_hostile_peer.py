"""What an authenticated but hostile peer on the Redis exchange can ask of a served agent, each beside
a valid twin: huge runs (bounded per call, off the event loop), bad settings and weights, error text."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest
import redis
from agentos_academy import AgentActionError, connect


def _serve(agent, *extra, env=None):
    proc = subprocess.Popen([sys.executable, "-m", "agentos", "serve", str(agent), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    return proc, proc.stdout.readline().strip()


def _stop(proc):
    if proc.poll() is None:
        proc.terminate()
    return proc.communicate(timeout=30)


def test_a_huge_run_is_refused_and_a_long_run_leaves_decide_answering_and_sigint_stops_it(
        agent_factory, redis_server):
    proc, agent_id = _serve(agent_factory("busy"), "--exchange", redis_server.url,
                            "--max-episodes-per-call", "40000")
    try:
        async def use():
            async with connect(agent_id, exchange=redis_server.url, action_timeout=15) as handle:
                for episodes in (10**12, 40001):  # over the bound: one line at once, nothing runs
                    with pytest.raises(AgentActionError, match="more than this agent allows in one call"):
                        await handle.run(episodes=episodes)
                with pytest.raises(AgentActionError, match="more than this agent allows"):
                    await handle.train(steps=10**13)
                twin = await handle.run(episodes=3)  # the valid twin: a summary, not every episode
                assert twin["episodes"] == 3 and "mean_return" in twin and len(json.dumps(twin)) < 2000
                long_run = asyncio.ensure_future(handle.run(episodes=40000))  # bounded, yet seconds long
                await asyncio.sleep(0.5)
                waits = []
                for observation in range(5):
                    start = time.monotonic()
                    assert isinstance(await handle.decide(observation), int)
                    assert (await handle.stats())["name"] == "busy"
                    waits.append(time.monotonic() - start)
                assert not long_run.done(), "the run ended before decide was measured: make it longer"
                long_run.cancel()
                return waits

        waits = asyncio.run(use())
        assert max(waits) < 1.0, waits  # decide and stats answer while the run goes on
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)  # the run is still going: Ctrl-C stops the server promptly
        _, err = proc.communicate(timeout=30)
        assert time.monotonic() - start < 10
        assert proc.returncode == 130 and err.strip().splitlines()[-1] == "agentos: interrupted", err
        assert "KeyboardInterrupt" not in err and "refused" not in err  # one line for Ctrl-C (the rest: refusals)
    finally:
        _stop(proc)


def test_settings_and_weights_are_checked_as_the_constructor_and_load_check_them(agent_factory, redis_server,
                                                                              tmp_path):
    agent = agent_factory("tuned")
    proc, agent_id = _serve(agent, "--exchange", redis_server.url)
    try:
        async def use():
            async with connect(agent_id, exchange=redis_server.url, action_timeout=30) as handle:
                before = await handle.get_settings()
                for hostile in ({"alpha": float("nan")}, {"epsilon": -1e308}, {"alpha": 0.2, "gamma": 7.0},
                                {"alpha": True}):
                    with pytest.raises(AgentActionError, match="set_settings"):
                        await handle.set_settings(hostile)
                    assert await handle.get_settings() == before  # all or nothing
                assert (await handle.set_settings({"alpha": 0.3, "epsilon": 0.2}))["alpha"] == 0.3  # the twin

                await handle.train(episodes=20)
                good = await handle.get_weights()
                from agentos_policy_q_table import QTablePolicy
                from gymnasium import spaces

                poisoned = QTablePolicy(spaces.Discrete(10), spaces.Discrete(2))
                for cell in range(10):
                    poisoned.row(cell)[:] = [float("nan"), float("nan")]
                poisoned.save(str(tmp_path / "nan.safetensors"))
                nan_weights = (tmp_path / "nan.safetensors").read_bytes()
                with pytest.raises(AgentActionError, match="non-finite"):
                    await handle.set_weights(nan_weights)
                await handle.set_weights(good)  # the valid twin
                return await handle.checkpoint()

        record = asyncio.run(use())
        assert record["run"]
    finally:
        _stop(proc)
    owner = subprocess.run([sys.executable, "-m", "agentos", "run", str(agent), "--episodes", "2"],
                           capture_output=True, text=True, timeout=120)
    assert owner.returncode == 0, owner.stderr  # the owner's next run uses the checkpoint the agent made
    given = subprocess.run([sys.executable, "-m", "agentos", "run", str(agent), "--episodes", "2", "--checkpoint",
                            str(tmp_path / "nan.safetensors")], capture_output=True, text=True, timeout=120)
    assert given.returncode != 0 and "non-finite" in given.stderr and given.stderr.count("\n") == 1, given.stderr


def _raw_call(r: redis.Redis, agent_id: str, action: str, *args) -> dict:
    """Call ``action`` as a plain Academy client would, and read the raw answer from Redis."""
    from academy.identifier import AgentId, UserId
    from academy.message import ActionRequest, Message
    from academy.serialize import SerializationStrategy

    peer = UserId.new(name="peer")
    r.set(f"active:{peer.uid}", "ACTIVE")
    body = ActionRequest(action=action, pargs=args, serialization=SerializationStrategy.JSON)
    r.rpush(f"queue:{agent_id}", Message.create(src=peer, dest=AgentId(uid=uuid.UUID(agent_id)),
                                                body=body).model_serialize())
    item = r.blpop([f"queue:{peer.uid}"], timeout=30)
    assert item is not None, "the agent did not answer"
    return json.loads(item[1])["body"]


def test_a_failed_action_answers_a_peer_with_one_line_and_logs_the_traceback_locally(agent_factory, redis_server):
    proc, agent_id = _serve(agent_factory("private"), "--exchange", redis_server.url)
    r = redis.Redis("127.0.0.1", redis_server.port, username=redis_server.user, password=redis_server.password)
    try:
        failed = _raw_call(r, agent_id, "set_settings", {"no_such_setting": 1.0})
        answered = _raw_call(r, agent_id, "decide", 2)  # the valid twin
    finally:
        r.close()
        _, err = _stop(proc)
    text = json.dumps(failed)
    assert failed["kind"] != "action-response"
    assert "no tunable setting" in text and "ValueError" in text
    assert "Traceback" not in text and ".py" not in text and os.sep + "agentos" not in text, text
    assert answered["kind"] == "action-response" and isinstance(json.loads(answered["result"][1]), int)
    assert "Traceback" in err and "no tunable setting" in err  # where the agent runs, its owner sees it all


def test_the_exchange_url_can_come_from_the_environment_out_of_the_process_list(agent_factory, redis_server):
    env = {**os.environ, "AGENTOS_EXCHANGE": redis_server.url}
    proc, agent_id = _serve(agent_factory("hidden"), env=env)
    try:
        with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
            argv = f.read()
        assert redis_server.password.encode() not in argv and b"hidden" in argv

        async def use():
            async with connect(agent_id, exchange=redis_server.url, action_timeout=30) as handle:
                return await handle.stats()

        assert asyncio.run(use())["name"] == "hidden"
    finally:
        _stop(proc)
    # the valid twin: --exchange still wins over the environment
    proc, agent_id = _serve(agent_factory("given"), "--exchange", redis_server.url,
                            env={**os.environ, "AGENTOS_EXCHANGE": "local"})
    try:
        async def given():
            async with connect(agent_id, exchange=redis_server.url, action_timeout=30) as handle:
                return await handle.stats()

        assert asyncio.run(given())["name"] == "given"
    finally:
        _stop(proc)


def test_a_run_ends_with_one_line_once_it_has_taken_the_steps_one_call_may_take(agent_factory):
    from agentos_academy._learner import Learner

    learner = Learner(str(agent_factory("steps")), max_episodes=1000, max_steps=500)
    try:
        assert learner.run(2)["episodes"] == 2  # the valid twin: within the bound (an episode here: < 500 steps)
        with pytest.raises(ValueError, match="more than this agent allows in one call"):
            learner.run(1000)  # an untrained corridor agent takes tens of steps an episode
        with pytest.raises(ValueError, match="more than this agent allows"):
            learner.train(steps=501)
        assert learner.train(steps=500)["episodes"] >= 1
    finally:
        learner.close()
