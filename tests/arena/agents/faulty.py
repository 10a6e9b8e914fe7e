"""Players that fail: a decide that raises, an action outside the action space (cell 9 of tic-tac-toe),
a move the action mask forbids, and a legal but slow player (for stopping an arena while it plays)."""

import time

import numpy as np
from agentos import Policy


class Raises(Policy):
    def decide(self, observation):
        raise RuntimeError("this player is broken")


class OutOfRange(Policy):
    def decide(self, observation):
        return 9


class Illegal(Policy):
    """A legal first move, then the first cell the mask forbids (its own or its opponent's mark)."""

    def decide(self, observation):
        taken = np.flatnonzero(observation["action_mask"] == 0)
        return int(taken[0]) if taken.size else 0


class Slow(Policy):
    def decide(self, observation):
        time.sleep(0.05)
        return int(np.flatnonzero(observation["action_mask"])[0])
