"""Tests of {{ cookiecutter.class_name }}: the AgentOS conformance kit, then its own behaviour."""

from __future__ import annotations

import numpy as np
from agentos.testing import EnvironmentConformance

from {{ cookiecutter.module_name }} import {{ cookiecutter.class_name }}


class TestConformance(EnvironmentConformance):
    """Gymnasium's checker, seeding, spaces and close(), through the installed entry point."""

    name = {{ cookiecutter.name|jsonify }}


def test_walking_to_the_goal_terminates_with_reward() -> None:
    env = {{ cookiecutter.class_name }}(size=5)
    observation, info = env.reset(seed=1)
    agent, goal = np.rint(observation * (env.size - 1)).astype(int)
    action = 1 if goal > agent else 0
    for _ in range(abs(int(goal) - int(agent))):
        observation, reward, terminated, truncated, info = env.step(action)
    assert terminated and not truncated and reward == 1.0 and info["distance"] == 0


def test_truncates_after_max_steps() -> None:
    env = {{ cookiecutter.class_name }}(size=50, max_steps=3)
    env.reset(seed=0)
    results = [env.step(0) for _ in range(3)]
    assert results[-1][3] or results[-1][2]
