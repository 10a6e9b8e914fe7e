"""agentos run with --n-envs: batched environments (the env's own, or Gymnasium's sync/async)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from agentos import Policy, api
from agentos.learning._vector import make_vector_environment, run_vector_agent

CORRIDOR = """
[agentos]
runs = none

[environment]
default = corridor

[environment.corridor]
length = 4
max_steps = 30

[policy]
default = random
"""

GAME_2048 = """
[agentos]
runs = none

[environment]
default = 2048

[policy]
default = random
"""


@pytest.fixture
def agent(tmp_path, monkeypatch):
    def write(text: str) -> str:
        (tmp_path / "agent.ini").write_text(textwrap.dedent(text))
        monkeypatch.chdir(tmp_path)
        return "agent.ini"

    return write


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_any_environment_runs_batched_through_gymnasium_vector_envs(agent, mode):
    import agentos
    from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

    path = agent(CORRIDOR)
    env = make_vector_environment(agentos.use(path), 3, mode)
    assert isinstance(env, AsyncVectorEnv if mode == "async" else SyncVectorEnv) and env.num_envs == 3
    env.close()
    summary = api.run(path, episodes=7, seed=0, n_envs=3, vector_mode=mode)
    assert summary["episodes"] == 7 and summary["n_envs"] == 3 and summary["status"] == "finished"
    assert 7 <= summary["steps"] <= 7 * 30


def test_2048_runs_on_its_own_batched_env_with_the_same_episode_statistics(agent):
    import agentos
    from agentos_env_2048.vector import Game2048VectorEnv

    path = agent(GAME_2048)
    env = make_vector_environment(agentos.use(path), 4)
    assert isinstance(env, Game2048VectorEnv)
    env.close()
    seen = []
    batched = api.run(path, episodes=200, seed=1, n_envs=16, on_episode=lambda run, r: seen.append(r))
    single = api.run(path, episodes=200, seed=1)
    assert batched["episodes"] == len(seen) == 200 and batched["steps"] == sum(r.length for r in seen)
    # random play: same game, other draws; the mean lengths agree within a few standard errors
    assert abs(batched["steps"] - single["steps"]) / 200 < 25
    assert all(r.episode_return > 0 for r in seen)


class CountingPolicy(Policy):
    """Always moves right (action 1), counting batched calls."""

    def __init__(self):
        super().__init__()
        self.batches = []

    def decide(self, observation):
        return 1

    def decide_batch(self, observations):
        self.batches.append(len(observations))
        return np.ones(len(observations), dtype=np.int64)


def test_the_runner_calls_decide_batch_and_counts_episodes_exactly(agent):
    import agentos
    from agentos.core._agent import Agent

    path = agent(CORRIDOR)
    env = make_vector_environment(agentos.use(path), 5)
    policy = CountingPolicy()
    summary = run_vector_agent(Agent(policy=policy), env, 12, seed=0)
    assert set(policy.batches) == {5}
    # always right in a corridor of length 4: every episode is 3 steps with the same return
    assert summary["episodes"] == 12 and summary["steps"] == 12 * 3
    assert summary["min_return"] == summary["max_return"]


def test_bad_batch_settings_are_usage_errors(agent):
    from agentos.errors import UsageError

    path = agent(CORRIDOR)
    with pytest.raises(UsageError, match="n-envs"):
        api.run(path, episodes=1, n_envs=0)
    with pytest.raises(UsageError, match="vector mode"):
        api.run(path, episodes=1, n_envs=2, vector_mode="threads")


def test_the_cli_takes_n_envs_and_refuses_zero(agent, capsys):
    from agentos.cli import main

    agent(GAME_2048)
    assert main(["run", "-n", "3", "--n-envs", "4", "--seed", "2"]) == 0
    assert "finished: 3 episodes" in capsys.readouterr().out
    assert main(["run", "-n", "1", "--n-envs", "0"]) == 2
    assert "agentos: error: --n-envs must be at least 1" in capsys.readouterr().err
