"""Tests of {{ cookiecutter.class_name }}: the AgentOS conformance kit, then its own behaviour."""

from __future__ import annotations

from agentos.testing import AgentConformance, ReferenceEnv, ReferencePolicy

from {{ cookiecutter.module_name }} import {{ cookiecutter.class_name }}


class TestConformance(AgentConformance):
    """reset() and advance() run episodes to completion, through the installed entry point."""

    name = {{ cookiecutter.name|jsonify }}


def test_max_episode_steps_ends_an_episode() -> None:
    env = ReferenceEnv(length=50, max_steps=1000)
    agent = {{ cookiecutter.class_name }}(
        env, ReferencePolicy(env.observation_space, env.action_space), max_episode_steps=3
    )
    agent.reset(seed=0)
    assert [agent.advance() for _ in range(3)][-1] is True
    assert agent.episode_length == 3
