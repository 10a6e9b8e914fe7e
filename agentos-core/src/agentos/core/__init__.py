"""Core abstractions: Agent, Policy, Trainer, the episode runner, the agent context and ``acr``."""
