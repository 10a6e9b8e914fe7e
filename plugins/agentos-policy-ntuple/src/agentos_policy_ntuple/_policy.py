"""``NTuplePolicy``: the n-tuple network as an AgentOS policy, saved as safetensors."""

from __future__ import annotations

import os

import numpy as np
from agentos import Policy

from agentos_policy_ntuple._network import DEFAULT_TUPLES, make_layout, parse_tuples, validate_tuples

MAX_DEPTH = 3
_SPARSE_BELOW = 1 / 3  # save (index, value) pairs when fewer weights than this are non-zero


class NTuplePolicy(Policy):
    """Plays 2048 by ``argmax_a points(a) + V(afterstate(a))`` under an n-tuple network ``V``.

    Settings (``agent.ini``): ``tuples`` -- cells of each tuple, ``"0 1 2 3 4 5; 4 5 6 7 8 9"``
    (default: the 4x6-tuples of Szubert & Jaskowski / Yeh et al.; every tuple is read in the 8
    symmetries of the board); ``depth`` -- 1 for greedy play, 2 or 3 for expectimax over the
    spawned tile and further moves.  Observations are 4x4 tile exponents (``agentos-env-2048``).
    """

    checkpoint_suffix = ".safetensors"

    def __init__(self, observation_space=None, action_space=None, tuples=None, depth: int = 1):
        super().__init__(observation_space, action_space)
        if observation_space is not None and tuple(getattr(observation_space, "shape", ()) or ()) != (4, 4):
            raise ValueError(f"the ntuple policy plays 2048 boards (4x4 exponents), not {observation_space}")
        if isinstance(tuples, str):
            self.tuples = parse_tuples(tuples)
        else:
            self.tuples = validate_tuples(tuples if tuples is not None else DEFAULT_TUPLES)
        depth = int(depth)
        if not 1 <= depth <= MAX_DEPTH:
            raise ValueError(f"depth must be 1-{MAX_DEPTH}, got {depth}")
        self.depth = depth
        self.layout = make_layout(self.tuples)
        self.weights = np.zeros(self.layout.size, dtype=np.float32)

    @property
    def network(self) -> tuple:
        """What the numba kernels take (see :func:`agentos_policy_ntuple.network.network`)."""
        from agentos_policy_ntuple._network import network

        return network(self.weights, self.layout)

    def decide(self, observation) -> int:
        """The best move on ``observation`` (0 when no move is legal)."""
        from agentos_env_2048.kernels import board_from_cells, move_tables

        from agentos_policy_ntuple._network import best_action

        board = board_from_cells(observation)
        action = best_action(board, self.depth, self.network, move_tables())
        return max(int(action), 0)

    def decide_batch(self, observations) -> np.ndarray:
        """Best moves for a batch of boards, shape (N, 4, 4) -> (N,) int64."""
        from agentos_env_2048.kernels import move_tables

        from agentos_policy_ntuple._network import best_actions

        cells = np.asarray(observations, dtype=np.uint64).reshape(-1, 16)
        boards = np.bitwise_or.reduce(cells << (np.arange(16, dtype=np.uint64) * np.uint64(4)), axis=1)
        return best_actions(boards, self.depth, self.network, move_tables())

    def save(self, path: str) -> None:
        """Write tuples and weights as safetensors (only the non-zero weights when few are)."""
        from safetensors.numpy import save_file

        tuples = np.full((len(self.tuples), 8), -1, dtype=np.int8)
        for row, cells in enumerate(self.tuples):
            tuples[row, : len(cells)] = cells
        tensors = {"tuples": tuples}
        nonzero = np.flatnonzero(self.weights)
        if len(nonzero) < _SPARSE_BELOW * len(self.weights):
            tensors.update(indices=nonzero.astype(np.int64), values=self.weights[nonzero])
        else:
            tensors["weights"] = self.weights
        tmp = f"{path}.tmp{os.getpid()}"
        save_file(tensors, tmp, metadata={"format": "agentos-ntuple-1"})
        os.replace(tmp, path)

    def load(self, path: str) -> None:
        """Read a checkpoint written by :meth:`save`; its tuples must match this policy's."""
        from safetensors.numpy import load_file

        tensors = load_file(path)
        if "tuples" not in tensors:
            raise ValueError(f"{path} is not an ntuple checkpoint (no tuples)")
        table = tensors["tuples"]
        if table.ndim != 2 or table.dtype.kind not in "iu":
            raise ValueError(
                f"checkpoint tuples must be a 2-D integer table (one row of cells per tuple), "
                f"got shape {table.shape} dtype {table.dtype}"
            )
        tuples = tuple(tuple(int(c) for c in row if c >= 0) for row in table.tolist())
        if tuples != self.tuples:
            raise ValueError(f"checkpoint tuples {tuples} differ from this policy's {self.tuples}")
        weights = np.zeros(self.layout.size, dtype=np.float32)
        if "weights" in tensors:
            dense = tensors["weights"]
            if dense.dtype != np.float32:
                raise ValueError(f"checkpoint weights have dtype {dense.dtype}, expected float32")
            if dense.shape != weights.shape:
                raise ValueError(f"checkpoint weights have shape {dense.shape}, expected {weights.shape}")
            weights[:] = dense
        else:
            indices, values = tensors.get("indices"), tensors.get("values")
            if indices is None or values is None or indices.shape != values.shape or indices.ndim != 1:
                raise ValueError(f"{path} holds no valid weights")
            if indices.dtype.kind not in "iu" or values.dtype != np.float32:
                raise ValueError(
                    f"checkpoint indices/values have dtypes {indices.dtype}/{values.dtype}, expected int64/float32"
                )
            if len(indices) and (indices.min() < 0 or indices.max() >= len(weights)):
                raise ValueError(f"{path} has weight indices out of range")
            weights[indices] = values
        bad = int(np.count_nonzero(~np.isfinite(weights)))
        if bad:
            raise ValueError(f"checkpoint weights are not all finite numbers ({bad:,} NaN or Inf)")
        self.weights = weights
