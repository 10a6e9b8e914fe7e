"""The AgentOS conformance kit on the random policy, through its installed entry point."""

from agentos.testing import PolicyConformance


class TestRandomPolicyConformance(PolicyConformance):
    name = "random"
    saves = False  # no learned state


class TestRandomPolicyOn2048(PolicyConformance):
    name = "random"
    saves = False  # no learned state
    environment = "2048"
