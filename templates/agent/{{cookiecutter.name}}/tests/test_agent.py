"""Tests of the agent {{ cookiecutter.name }}: the AgentOS conformance kit on its own components.

Small budgets keep them quick; agent.ini keeps the real hyperparameters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import agentos
import pytest
from agentos.testing import AgentConformance, PolicyConformance, TrainerConformance

AGENT_INI = str(Path(__file__).resolve().parents[1] / "agent.ini")
ENVIRONMENT = "{{ cookiecutter.environment_name }}"
POLICY = "{{ cookiecutter.policy_name }}"
TRAINER = "{{ cookiecutter.trainer_name }}"
#: Hyperparameters that make a few episodes enough to update the policy (tests only).
{%- if cookiecutter.flavour == 'torch' %}
FAST: dict[str, Any] = {"device": "cpu"}
{%- elif cookiecutter.algorithm == 'PPO' %}
FAST: dict[str, Any] = {"device": "cpu", "n_steps": 32, "batch_size": 32, "n_epochs": 2}
{%- elif cookiecutter.algorithm == 'A2C' %}
FAST: dict[str, Any] = {"device": "cpu", "n_steps": 5}
{%- else %}
FAST: dict[str, Any] = {
    "device": "cpu",
    "learning_starts": 10,
    "train_freq": 4,
    "gradient_steps": 1,
    "batch_size": 16,
    "buffer_size": 1000,
}
{%- endif %}


@pytest.fixture(autouse=True)
def _in_the_agent_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(AGENT_INI).parent)


def context() -> agentos.AgentContext:
    return agentos.use(AGENT_INI)


class _FromAgentIni:
    def make_environment(self) -> Any:
        return context().create("environment", ENVIRONMENT)

    def make_policy(self, observation_space: Any, action_space: Any) -> Any:
        return context().create(
            "policy", POLICY, observation_space=observation_space, action_space=action_space, **FAST
        )


class TestPolicy(_FromAgentIni, PolicyConformance):
    """Actions in the action space, seeding, save/load round trip."""


class TestTrainer(_FromAgentIni, TrainerConformance):
    """A short run changes the policy, crosses episodes, honours the callback."""

    def make_trainer(self, observation_space: Any, action_space: Any) -> Any:
        return context().create("trainer", TRAINER)


class TestAgent(_FromAgentIni, AgentConformance):
    """The agent that ``agentos run`` builds runs its episodes to completion."""

    def make_agent(self) -> Any:
        return context().build_agent()


def test_train_then_run(tmp_path: Path) -> None:
    agent = context().build_agent()
    agent.policy = context().create("policy", POLICY, **FAST)
    agent.train(episodes=3, seed=0)
    agent.policy.save(str(tmp_path / "policy.pt"))
    summary = agentos.run_agent(agent, 2, seed=1)
    assert summary["episodes"] == 2 and summary["status"] == "finished"
