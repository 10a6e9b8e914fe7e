"""The AgentOS conformance kit on 2048, through its installed entry point."""

from agentos.testing import EnvironmentConformance


class Test2048Conformance(EnvironmentConformance):
    name = "2048"
    steps = 500
