"""The Trainer abstraction: improves a policy from experience in an environment."""

from __future__ import annotations


class Trainer:
    """Learning algorithms live in trainers; ``train`` changes ``policy`` in place.

    ``callback(episode_return, length)`` is called at the end of every episode so that the host can
    report progress and record the run; a trainer stops early when it returns False. A trainer that
    has the episode's final ``info`` passes it too when the callback accepts it (the host's does),
    ``callback(episode_return, length, info=info)``: the environment's declared episode metrics
    (``metadata["episode_metrics"]``) are read from it.
    """

    def train(self, policy, environment, *, episodes=None, steps=None, seed=None, callback=None):
        """Train for ``episodes`` episodes or ``steps`` steps (whichever is given)."""
        raise NotImplementedError(f"{type(self).__name__}.train()")

    def save(self, path: str) -> None:
        """Write the trainer's own state (optimiser moments, step counts...) to ``path``, so that
        ``agentos train --from-run`` continues where it stopped; no pickles of live objects."""
        raise NotImplementedError(f"{type(self).__name__} keeps no state between runs")

    def load(self, path: str) -> None:
        """Read state written by :meth:`save`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no state between runs")
