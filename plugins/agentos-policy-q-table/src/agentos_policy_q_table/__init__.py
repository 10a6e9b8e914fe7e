"""A table of action values, one row per observation key: greedy actions, saved with safetensors.

Observation keys (the ``key`` setting):

* ``auto`` (default): ``2048`` for a 2048 board (a 4x4 integer ``Box`` of tile exponents), else
  ``observation``.
* ``observation``: the observation itself. A ``Discrete`` observation is its integer (the
  corridor's cell index); an integer array (``Box``/``MultiDiscrete``/``MultiBinary``) is the bytes of
  the array in the space's dtype (2048's 4x4 board of tile exponents: 16 bytes, one per cell, row by
  row). Continuous (float) observations are refused: discretise them first.
* ``2048``: a compact summary of a 2048 board: which of the four moves are legal (4 bits) and the
  cell (0-15, row by row) holding the largest tile -- 256 keys, so that a table can learn to keep
  the largest tile in a corner and to avoid illegal moves in a few hundred games.

``avoid_repeats`` (default true): when an observation is seen again right after acting on it (an
illegal 2048 move leaves the board unchanged), actions already tried on it are skipped, so a
greedy policy never loops on a move that changes nothing.
"""

from __future__ import annotations

import json
import random

import numpy as np
from agentos import AgentOSError, Policy

__all__ = ["QTablePolicy", "board_2048_key", "legal_moves_2048"]

FORMAT = "agentos-q-table/1"
KEYS = ("auto", "observation", "2048")


def legal_moves_2048(board) -> tuple[bool, bool, bool, bool]:
    """Which of up, right, down, left change a 4x4 board of exponents (0 = empty)."""
    b = np.asarray(board).reshape(4, 4)
    nz = b != 0
    eq_h = (b[:, :-1] == b[:, 1:]) & nz[:, :-1]
    eq_v = (b[:-1] == b[1:]) & nz[:-1]
    up = bool(((~nz[:-1] & nz[1:]) | eq_v).any())
    down = bool(((nz[:-1] & ~nz[1:]) | eq_v).any())
    left = bool(((~nz[:, :-1] & nz[:, 1:]) | eq_h).any())
    right = bool(((nz[:, :-1] & ~nz[:, 1:]) | eq_h).any())
    return up, right, down, left


def board_2048_key(board) -> int:
    """The ``2048`` key: legal-move bits (up=1, right=2, down=4, left=8) * 16 + cell of the largest tile."""
    b = np.asarray(board).reshape(16)
    up, right, down, left = legal_moves_2048(b)
    mask = up | right << 1 | down << 2 | left << 3
    return mask * 16 + int(b.argmax())


def _auto_key(space) -> str:
    """``2048`` for a 4x4 integer board of tile exponents, else ``observation``."""
    shape, dtype = getattr(space, "shape", None), getattr(space, "dtype", None)
    if type(space).__name__ == "Box" and shape == (4, 4) and dtype is not None and np.dtype(dtype).kind in "iu":
        return "2048"
    return "observation"


class QTablePolicy(Policy):
    """Greedy with respect to a table of action values (ties broken at random, seeded).

    Settings: ``key`` (``auto``, ``observation`` or ``2048``), ``initial_value`` (0.0: with step costs, such
    as the corridor's -1, zero is optimistic and drives exploration), ``avoid_repeats`` (true),
    ``seed``. It does not learn while running: ``agentos train`` with the ``sarsa`` trainer fills it.
    """

    checkpoint_suffix = ".safetensors"
    learns_while_running = False

    def __init__(
        self,
        observation_space=None,
        action_space=None,
        key: str = "auto",
        initial_value: float = 0.0,
        avoid_repeats: bool = True,
        seed: int | None = None,
    ):
        super().__init__(observation_space, action_space)
        if action_space is None or type(action_space).__name__ != "Discrete":
            raise ValueError(f"q_table needs a Discrete action space, not {action_space!r}")
        key = str(key)  # "key = 2048" in agent.ini reads as an int
        if key not in KEYS:
            raise ValueError(f"key must be one of {', '.join(KEYS)}, not {key!r}")
        self.n_actions = int(action_space.n)
        self.action_start = int(action_space.start)
        self.key_name = _auto_key(observation_space) if key == "auto" else key
        self.initial_value = float(initial_value)
        self.avoid_repeats = bool(avoid_repeats)
        self.table: dict = {}
        self.rng = random.Random(seed)
        self._key_type = "int"
        self.key = self._make_key_function(observation_space)
        self._last_id = None
        self._tried: list[int] = []

    # -- keys -------------------------------------------------------------------------------------
    def _make_key_function(self, space):
        if self.key_name == "2048":
            return board_2048_key
        kind = type(space).__name__ if space is not None else ""
        if kind == "Discrete":
            return int
        if kind in ("Box", "MultiDiscrete", "MultiBinary"):
            dtype = np.dtype(space.dtype)
            if dtype.kind == "f":
                raise ValueError("q_table needs discrete observations; this Box holds floats (discretise it first)")
            self._key_type = "bytes"
            return lambda obs: np.asarray(obs, dtype=dtype).tobytes()
        raise ValueError(f"q_table cannot make keys from observations of {space!r}")

    @staticmethod
    def _identity(obs):
        return obs.tobytes() if isinstance(obs, np.ndarray) else obs

    # -- values -----------------------------------------------------------------------------------
    def row(self, key) -> list[float]:
        """The action values of a key (a new row of ``initial_value`` when unseen); mutable."""
        row = self.table.get(key)
        if row is None:
            row = self.table[key] = [self.initial_value] * self.n_actions
        return row

    def values(self, observation) -> list[float]:
        row = self.table.get(self.key(observation))
        return list(row) if row is not None else [self.initial_value] * self.n_actions

    def _best(self, row, allowed) -> int:
        best = max(row[a] for a in allowed)
        ties = [a for a in allowed if row[a] == best]
        if not ties:  # NaN compares unequal to itself: only a table that diverged has no best action
            raise AgentOSError(
                "q_table: the action values of an observation are not numbers (NaN): the table diverged "
                "while training (lower alpha, or start again with --fresh)"
            )
        return ties[0] if len(ties) == 1 else ties[self.rng.randrange(len(ties))]

    def act(self, observation, epsilon: float = 0.0, *, learn: bool = True):
        """(action index, key, row): epsilon-greedy, honouring ``avoid_repeats``. Used by trainers, whose
        updates go into ``row`` (an unseen key gets a row); with ``learn=False`` (playing) an unseen key
        adds nothing to the table, so observations alone never grow it."""
        key = self.key(observation)
        row = self.row(key) if learn else self.table.get(key, [self.initial_value] * self.n_actions)
        allowed = range(self.n_actions)
        if self.avoid_repeats:
            ident = self._identity(observation)
            if ident == self._last_id:
                if len(self._tried) < self.n_actions:
                    allowed = [a for a in allowed if a not in self._tried]
            else:
                self._last_id = ident
                self._tried = []
        if epsilon > 0.0 and self.rng.random() < epsilon:
            action = allowed[self.rng.randrange(len(allowed))]
        else:
            action = self._best(row, allowed)
        if self.avoid_repeats:
            self._tried.append(action)
        return action, key, row

    def decide(self, observation):
        return self.action_start + self.act(observation, learn=False)[0]

    def reset(self) -> None:
        self._last_id = None
        self._tried = []

    def seed(self, seed: int | None) -> None:
        self.rng.seed(seed)

    # -- checkpoints ------------------------------------------------------------------------------
    def save(self, path: str) -> None:
        from safetensors.numpy import save_file

        keys = list(self.table)
        values = np.array([self.table[k] for k in keys], dtype=np.float64).reshape(len(keys), self.n_actions)
        if self._key_type == "bytes":
            width = len(keys[0]) if keys else 0
            key_array = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), width)
        else:
            key_array = np.array(keys, dtype=np.int64)
        meta = {
            "format": FORMAT,
            "key": self.key_name,
            "key_type": self._key_type,
            "n_actions": str(self.n_actions),
            "settings": json.dumps({"initial_value": self.initial_value}),
        }
        save_file({"keys": key_array, "values": values}, path, metadata=meta)

    def load(self, path: str) -> None:
        from safetensors import safe_open

        with safe_open(path, framework="numpy") as f:
            meta = f.metadata() or {}
            if meta.get("format") != FORMAT:
                raise ValueError(f"{path} is not a q_table checkpoint")
            if meta.get("key") != self.key_name or int(meta.get("n_actions", -1)) != self.n_actions:
                raise ValueError(
                    f"{path} holds a table with key={meta.get('key')} and {meta.get('n_actions')} actions; "
                    f"this policy has key={self.key_name} and {self.n_actions} actions"
                )
            keys, values = f.get_tensor("keys"), f.get_tensor("values")
        if not np.isfinite(values).all():
            raise ValueError(f"{path} holds non-finite action values (NaN or infinity); refusing to load it")
        if meta.get("key_type") == "bytes":
            key_list = [bytes(k) for k in keys]
        else:
            key_list = [int(k) for k in keys]
        self.table = {k: [float(v) for v in row] for k, row in zip(key_list, values, strict=True)}
