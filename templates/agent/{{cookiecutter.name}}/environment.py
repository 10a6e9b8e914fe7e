"""The Gymnasium environment of this agent, made by id (``[environment.*]`` in agent.ini)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym


def make_environment(id: str = "{{ cookiecutter.environment }}", **kwargs: Any) -> gym.Env:
    """``gymnasium.make(id, **kwargs)``: every other setting of the section is a keyword."""
    return gym.make(id, **kwargs)
