"""The AgentOS conformance kit on the random policy, through its installed entry point."""

from agentos.testing import PolicyConformance


class TestRandomPolicyConformance(PolicyConformance):
    name = "random"


class TestRandomPolicyOn2048(PolicyConformance):
    name = "random"
    environment = "2048"
