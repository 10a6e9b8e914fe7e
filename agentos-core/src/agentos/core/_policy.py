"""The Policy abstraction: ``decide(observation) -> action``."""

from __future__ import annotations


class Policy:
    """Chooses actions. May hold a model and state, and may learn (see ``Trainer``).

    The host passes ``observation_space`` and ``action_space`` of the agent's environment to the
    constructor when it accepts them; other constructor arguments come from ``agent.ini``.
    """

    #: True when the policy keeps learning during ``agentos run`` (most freeze).
    learns_while_running = False

    def __init__(self, observation_space=None, action_space=None):
        self.observation_space = observation_space
        self.action_space = action_space

    def decide(self, observation):
        """Return the action to take after seeing ``observation``."""
        raise NotImplementedError(f"{type(self).__name__}.decide()")

    def decide_batch(self, observations):
        """Actions for a batch of observations (batched runs, ``n_envs > 1``); override to go faster."""
        return [self.decide(observation) for observation in observations]

    def reset(self) -> None:
        """Called at the start of each episode (for policies with memory)."""

    def seed(self, seed: int | None) -> None:
        """Seed the policy's own randomness, if it has any."""

    def save(self, path: str) -> None:
        """Write the policy's learned state to ``path`` (no pickles of live objects)."""
        raise NotImplementedError(f"{type(self).__name__} has no state to save")

    def load(self, path: str) -> None:
        """Read state written by :meth:`save`."""
        raise NotImplementedError(f"{type(self).__name__} has no state to load")
