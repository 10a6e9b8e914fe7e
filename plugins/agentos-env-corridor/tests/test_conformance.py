"""The AgentOS conformance kit on the corridor, through its installed entry point."""

from agentos.testing import EnvironmentConformance


class TestCorridorConformance(EnvironmentConformance):
    name = "corridor"


class TestShortCorridorConformance(EnvironmentConformance):
    name = "corridor"
    settings = {"length": 2, "max_steps": 3}
