"""``NTuplePolicy``: the n-tuple network as an AgentOS policy, saved as safetensors."""

from __future__ import annotations

import os

import numpy as np
from agentos import Policy

from agentos_policy_ntuple._network import DEFAULT_TUPLES, MAX_TUPLES, make_layout, parse_tuples, validate_tuples
from agentos_policy_ntuple._stages import parse_stage_tiles

MAX_DEPTH = 3
MAX_SEARCH_DEPTH = 5  # depth 6 took 42 s a move: a handed agent.ini could look like a hang
_SPARSE_BELOW = 1 / 3  # save (index, value) pairs when fewer weights than this are non-zero


#: At most this many weights (all stages): 2 GiB of float32, TC's accumulators twice that.
MAX_WEIGHTS = 1 << 29
#: At most ``2 ** MAX_CACHE_BITS`` transposition-table slots (25 bytes each).
MAX_CACHE_BITS = 26


def whole_number(name: str, value) -> int:
    """A whole-number setting: an int, a whole float (``20.0``) or its text; never a bool or ``2.5``
    (``int()`` would silently make ``2.5`` a 2 and ``true`` a 1)."""
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    elif isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    elif isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    raise ValueError(f"{name} must be a whole number, got {value!r}")


def real_number(name: str, value) -> float:
    """A number setting (an int, a float or its text); never a bool."""
    if not isinstance(value, (bool, np.bool_)):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    raise ValueError(f"{name} must be a number, got {value!r}")


class NTuplePolicy(Policy):
    """Plays 2048 by ``argmax_a points(a) + V(afterstate(a))`` under an n-tuple network ``V``.

    Settings (``agent.ini``): ``tuples`` -- cells of each tuple, ``"0 1 2 3 4 5; 4 5 6 7 8 9"``
    (default: the 4x6-tuples of Szubert & Jaskowski / Yeh et al.; every tuple is read in the 8
    symmetries of the board); ``depth`` -- 1 for greedy play, 2 or 3 for expectimax over the
    spawned tile and further moves.  Observations are 4x4 tile exponents (``agentos-env-2048``).

    Options (defaults keep the plain network): ``initial_value`` -- optimistic start (OTD): every
    weight starts at ``initial_value / (8 * tuples)`` so every board is first worth that much;
    ``stage_tiles`` -- multi-stage network, e.g. ``"16384"``: a second weight set from the first
    afterstate holding a 16384 on (:mod:`agentos_policy_ntuple._stages`); ``search_depth`` -- 1-5
    move layers of expectimax with a transposition table of ``2 ** cache_bits`` slots (20);
    ``downgrade_tile`` -- tile-downgrading from that tile on (e.g. 32768; 0 = off).
    """

    checkpoint_suffix = ".safetensors"

    def __init__(self, observation_space=None, action_space=None, tuples=None, depth: int = 1,
                 initial_value: float = 0.0, stage_tiles: str = "", search_depth: int = 0,
                 downgrade_tile: int = 0, cache_bits: int = 20):
        super().__init__(observation_space, action_space)
        if observation_space is not None and tuple(getattr(observation_space, "shape", ()) or ()) != (4, 4):
            raise ValueError(f"the ntuple policy plays 2048 boards (4x4 exponents), not {observation_space}")
        if isinstance(tuples, str):
            self.tuples = parse_tuples(tuples)
        else:
            self.tuples = validate_tuples(tuples if tuples is not None else DEFAULT_TUPLES)
        depth = whole_number("depth", depth)
        if not 1 <= depth <= MAX_DEPTH:
            raise ValueError(f"depth must be 1-{MAX_DEPTH}, got {depth}")
        self.depth = depth
        self.layout = make_layout(self.tuples)
        self.initial_value = real_number("initial_value", initial_value)
        if not np.isfinite(self.initial_value) or abs(self.initial_value) > 1e7:
            raise ValueError(f"initial_value must be a finite number within 1e7, got {initial_value}")
        self.stage_bounds = parse_stage_tiles(stage_tiles)
        self.search_depth = whole_number("search_depth", search_depth)
        if not 0 <= self.search_depth <= MAX_SEARCH_DEPTH:
            raise ValueError(f"search_depth must be 0 (off) or 1-{MAX_SEARCH_DEPTH}, got {search_depth}")
        self.downgrade_tile = whole_number("downgrade_tile", downgrade_tile)
        if self.downgrade_tile and (self.downgrade_tile < 4 or self.downgrade_tile > 32768
                                    or self.downgrade_tile & (self.downgrade_tile - 1)):
            raise ValueError(f"downgrade_tile is 0 (off) or a power of 2 from 4 to 32768, got {downgrade_tile}")
        self.cache_bits = whole_number("cache_bits", cache_bits)
        if not 1 <= self.cache_bits <= MAX_CACHE_BITS:  # 2**26 slots: 1.6 GB
            raise ValueError(f"cache_bits must be 1-{MAX_CACHE_BITS}, got {cache_bits}")
        weights = self.stages * self.layout.size
        if weights > MAX_WEIGHTS:  # an agent.ini from someone else must not ask for 17 GB a tuple
            raise ValueError(f"tuples and stage_tiles make {weights:,} weights; at most {MAX_WEIGHTS:,} "
                             f"(2 GiB of float32; 8x6-tuples in two stages are 268,435,456)")
        self._table = None
        self._last_tile_sum = -1
        self.weights = np.zeros(self.stages * self.layout.size, dtype=np.float32)  # pages untouched until used
        if self.initial_weight != 0:
            self.weights.fill(self.initial_weight)

    @property
    def stages(self) -> int:
        """How many weight sets (1 + the number of stage tiles)."""
        return 1 + len(self.stage_bounds)

    @property
    def initial_weight(self) -> np.float32:
        """Every weight's start: ``initial_value`` spread over the ``8 * tuples`` weights a board reads."""
        return np.float32(self.initial_value / (8 * len(self.tuples)))

    @property
    def searches(self) -> bool:
        """Whether moves go through :mod:`agentos_policy_ntuple._search` (stages, search or downgrading)."""
        return bool(self.search_depth or self.downgrade_tile or self.stage_bounds)

    def _search_args(self) -> tuple:
        from agentos_env_2048.kernels import move_tables

        from agentos_policy_ntuple._search import new_table
        from agentos_policy_ntuple._stages import bounds_array

        if self._table is None:
            self._table = new_table(self.cache_bits)
        depth = self.search_depth or self.depth
        threshold = self.downgrade_tile.bit_length() - 1 if self.downgrade_tile else 0
        return (depth, self.network, self.layout.size, bounds_array(self.stage_bounds), move_tables(),
                self._table, threshold)

    def forget(self) -> None:
        """Empty the transposition table (call after changing ``weights`` in place)."""
        if self._table is not None:
            from agentos_policy_ntuple._search import new_generation

            new_generation(self._table)

    @property
    def network(self) -> tuple:
        """What the numba kernels take (see :func:`agentos_policy_ntuple.network.network`)."""
        from agentos_policy_ntuple._network import network

        return network(self.weights, self.layout)

    def decide(self, observation) -> int:
        """The best move on ``observation`` (0 when no move is legal)."""
        from agentos_env_2048.kernels import board_from_cells, move_tables

        from agentos_policy_ntuple._search import best_action

        board = board_from_cells(observation)
        if self.searches:
            from agentos_policy_ntuple._search import search_action

            tile_sum = int(sum(1 << int(e) for e in np.asarray(observation).ravel() if e))
            if tile_sum < self._last_tile_sum:  # a new game (tiles only add up within one)
                self.forget()
            self._last_tile_sum = tile_sum
            return max(int(search_action(board, *self._search_args())), 0)
        action = best_action(board, self.depth, self.network, move_tables())
        return max(int(action), 0)

    def decide_batch(self, observations) -> np.ndarray:
        """Best moves for a batch of boards, shape (N, 4, 4) -> (N,) int64."""
        from agentos_env_2048.kernels import move_tables

        from agentos_policy_ntuple._search import best_actions

        cells = np.asarray(observations, dtype=np.uint64).reshape(-1, 16)
        boards = np.bitwise_or.reduce(cells << (np.arange(16, dtype=np.uint64) * np.uint64(4)), axis=1)
        if self.searches:
            from agentos_policy_ntuple._search import search_actions

            self.forget()
            return search_actions(boards, *self._search_args())
        return best_actions(boards, self.depth, self.network, move_tables())

    def save(self, path: str) -> None:
        """Write tuples and weights as safetensors (only the weights that left their start value when
        few did); a multi-stage or optimistic network adds ``stage_exponents`` and ``base``."""
        from safetensors.numpy import save_file

        tuples = np.full((len(self.tuples), 8), -1, dtype=np.int8)
        for row, cells in enumerate(self.tuples):
            tuples[row, : len(cells)] = cells
        tensors = {"tuples": tuples}
        base = self.initial_weight
        if self.stage_bounds:
            tensors["stage_exponents"] = np.array(self.stage_bounds, dtype=np.int64)
        if base != 0:
            tensors["base"] = np.array([base], dtype=np.float32)
        nonzero = np.flatnonzero(self.weights != base) if base != 0 else np.flatnonzero(self.weights)
        if len(nonzero) < _SPARSE_BELOW * len(self.weights):
            tensors.update(indices=nonzero.astype(np.int64), values=self.weights[nonzero])
        else:
            tensors["weights"] = self.weights
        tmp = f"{path}.tmp{os.getpid()}"
        save_file(tensors, tmp, metadata={"format": "agentos-ntuple-1"})
        os.replace(tmp, path)

    def _read_checkpoint(self, path: str) -> dict:
        """The tensors :meth:`load` uses, each read only after its header shows it is no larger than this
        policy's (a run folder from someone else may hold any file); other tensors are not read."""
        from safetensors import safe_open

        size = self.stages * self.layout.size
        limits = {"tuples": 8 * MAX_TUPLES,  # tolist() of a million rows: GBs of lists
                  "stage_exponents": 8, "base": 1, "weights": size, "indices": size, "values": size}
        with safe_open(path, framework="numpy") as handle:
            names = [name for name in handle.keys() if name in limits]
            for name in names:
                count = int(np.prod(handle.get_slice(name).get_shape(), dtype=object))
                if count > limits[name]:
                    why = f"at most {MAX_TUPLES} tuples" if name == "tuples" else "its tuples or stages differ"
                    raise ValueError(f"checkpoint {name} holds {count:,} values, more than this policy's "
                                     f"{limits[name]:,} ({why})")
            return {name: handle.get_tensor(name) for name in names}

    def load(self, path: str) -> None:
        """Read a checkpoint written by :meth:`save`; its tuples must match this policy's."""
        tensors = self._read_checkpoint(path)
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
        stages = tensors.get("stage_exponents", np.zeros(0, np.int64))
        if stages.ndim != 1 or stages.dtype.kind not in "iu" or tuple(stages.tolist()) != self.stage_bounds:
            raise ValueError(f"checkpoint stage exponents {stages.tolist()} differ from this policy's "
                             f"{list(self.stage_bounds)} (stage_tiles)")
        base = tensors.get("base", np.zeros(1, np.float32))
        if base.shape != (1,) or base.dtype != np.float32 or not np.isfinite(base).all():
            raise ValueError("checkpoint base must be one finite float32")
        weights = np.zeros(self.stages * self.layout.size, dtype=np.float32)
        if base[0] != 0:
            weights.fill(base[0])
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
        self.forget()
