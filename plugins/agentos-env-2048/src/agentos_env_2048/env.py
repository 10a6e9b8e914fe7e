"""The 2048 game as a Gymnasium environment, driven by row lookup tables."""

from __future__ import annotations

import random
import sys
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agentos_env_2048._tables import MAX_EXPONENT, ROW_MASK, get_tables, transpose

UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3
ACTION_NAMES = ("up", "right", "down", "left")

_LOW_BITS = 0x1111111111111111  # bit 0 of every nibble
_HAS_RIGHT_NEIGHBOUR = 0x0111011101110111  # nibbles in columns 0-2
_HAS_LOWER_NEIGHBOUR = 0x0000111111111111  # nibbles in rows 0-2
_SPAWN_TWO_PROBABILITY = 0.9
_UINT8 = np.dtype(np.uint8)


def _zero_nibbles(board: int) -> int:
    """Return a mask with bit 0 set in every nibble of ``board`` that is zero."""
    occupied = board | (board >> 1)
    occupied |= occupied >> 2
    return ~occupied & _LOW_BITS


def _has_equal_neighbours(board: int) -> bool:
    """Whether two adjacent cells hold the same exponent."""
    horizontal = _zero_nibbles(board ^ (board >> 4)) & _HAS_RIGHT_NEIGHBOUR
    vertical = _zero_nibbles(board ^ (board >> 16)) & _HAS_LOWER_NEIGHBOUR
    return bool(horizontal or vertical)


def _has_legal_move(board: int) -> bool:
    """Whether any move would change the board."""
    return bool(_zero_nibbles(board)) or _has_equal_neighbours(board)


class Game2048Env(gym.Env[np.ndarray, int]):
    """The 2048 sliding-tile game on a 4x4 board.

    Observation: ``uint8`` array of shape (4, 4) holding tile exponents, 0 for
    an empty cell, 1 for a 2, 2 for a 4, ... (row 0 is the top row).
    Actions: 0 = up, 1 = right, 2 = down, 3 = left.
    Reward: the sum of the tiles created by merges in the move (the game score).
    An illegal move (one that changes nothing) leaves the board as it is,
    spawns no tile, earns ``illegal_move_reward`` and sets
    ``info["illegal_move"]``; the episode goes on.  The episode terminates
    when no legal move remains and is truncated after ``max_steps`` steps
    (``None`` or 0 means no limit).  ``info`` holds ``score`` (cumulative),
    ``max_tile`` (the largest tile value, e.g. 128) and ``illegal_move``.

    After each legal move a tile appears in a uniformly chosen empty cell: a 2
    with probability 0.9, else a 4.  Two tiles start the game.  For speed these
    draws come from a ``random.Random`` seeded from ``self.np_random`` at every
    reset, so ``reset(seed=...)`` makes episodes reproducible.  Tiles stop at
    32768: two of them do not merge.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}
    #: The batched twin (``agentos run --n-envs N`` and ``gymnasium.make_vec`` build it).
    vector_entry_point: ClassVar[str] = "agentos_env_2048.vector:Game2048VectorEnv"

    def __init__(
        self,
        render_mode: str | None = None,
        max_steps: int | None = None,
        illegal_move_reward: float = 0.0,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unsupported render_mode {render_mode!r}")
        self.render_mode = render_mode
        self.max_steps = max_steps or None
        self.illegal_move_reward = float(illegal_move_reward)
        self.observation_space = spaces.Box(0, 17, shape=(4, 4), dtype=np.uint8)
        self.action_space = spaces.Discrete(4)

        tables = get_tables()
        self._row_max = tables.row_max
        self._row_bytes = tables.row_bytes
        # Per action: moved-line table, score table, shifts placing lines 1-3,
        # and whether the lines are columns (read from the transposed board).
        self._moves = (
            (tables.column_up, tables.score_left, 4, 8, 12, True),
            (tables.row_right, tables.score_right, 16, 32, 48, False),
            (tables.column_down, tables.score_right, 4, 8, 12, True),
            (tables.row_left, tables.score_left, 16, 32, 48, False),
        )
        self._step_limit = self.max_steps or sys.maxsize
        self._rng = random.Random(0)
        self._board = 0
        self._score = 0
        self._max_exponent = 0
        self._steps = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new game with two random tiles."""
        super().reset(seed=seed)
        self._rng = random.Random(int(self.np_random.integers(2**63)))
        board, _ = self._spawn_tile(0)
        self._board, _ = self._spawn_tile(board)
        self._score = 0
        self._steps = 0
        self._max_exponent = self._largest_exponent(self._board)
        return self._observation(), self._info(False)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Slide the tiles; see the class docstring for the rules."""
        if not 0 <= action <= 3:
            raise ValueError(f"invalid action {action!r}, expected 0-3")
        moved_lines, scores, shift1, shift2, shift3, columns = self._moves[action]
        board = self._board
        lines = transpose(board) if columns else board
        line0 = lines & ROW_MASK
        line1 = (lines >> 16) & ROW_MASK
        line2 = (lines >> 32) & ROW_MASK
        line3 = lines >> 48
        moved = (
            moved_lines[line0]
            | moved_lines[line1] << shift1
            | moved_lines[line2] << shift2
            | moved_lines[line3] << shift3
        )
        self._steps += 1
        truncated = self._steps >= self._step_limit
        if moved == board:
            terminated = not _has_legal_move(board)  # only if the board was set stuck
            return (
                self._observation(),
                self.illegal_move_reward,
                terminated,
                truncated,
                self._info(True),
            )

        gain = scores[line0] + scores[line1] + scores[line2] + scores[line3]
        board, empty_cells = self._spawn_tile(moved)
        self._board = board
        self._score += gain
        # The largest tile only grows by a merge or by a 4 landing among 2s.
        if gain or self._max_exponent < 2:
            self._max_exponent = self._largest_exponent(board)
        # A legal move always frees a cell; if the new tile filled the last
        # one, the game ends unless two neighbours can still merge.
        terminated = empty_cells == 1 and not _has_equal_neighbours(board)
        return (
            self._observation(),
            float(gain),
            terminated,
            truncated,
            self._info(False),
        )

    def render(self) -> str | None:
        """Return the board as text when ``render_mode == "ansi"``."""
        if self.render_mode != "ansi":
            return None
        exponents = self._observation()
        border = "+" + "------+" * 4
        lines = [f"score: {self._score}", border]
        for row in exponents:
            cells = (f"{1 << int(e):>5} " if e else "      " for e in row)
            lines.append("|" + "|".join(cells) + "|")
            lines.append(border)
        return "\n".join(lines)

    def set_board(self, exponents: Any) -> None:
        """Replace the board with a 4x4 array-like of exponents (0-15).

        Meant for tests and analysis; call it after ``reset``.  The score and
        step count are kept.
        """
        cells = np.asarray(exponents, dtype=np.int64)
        if cells.shape != (4, 4) or cells.min() < 0 or cells.max() > MAX_EXPONENT:
            raise ValueError(
                f"expected 4x4 exponents in 0..{MAX_EXPONENT}, got {exponents!r}"
            )
        board = 0
        for index, exponent in enumerate(cells.ravel().tolist()):
            board |= exponent << (4 * index)
        self._board = board
        self._max_exponent = self._largest_exponent(board)

    @property
    def board(self) -> np.ndarray:
        """The current board as a 4x4 array of exponents."""
        return self._observation()

    @property
    def score(self) -> int:
        """Points scored so far in this episode."""
        return self._score

    def _spawn_tile(self, board: int) -> tuple[int, int]:
        """Put a 2 (p=0.9) or a 4 in a random empty cell.

        Return the new board and the number of empty cells before the spawn.
        """
        rng = self._rng
        empty = _zero_nibbles(board)
        empty_cells = empty.bit_count()
        for _ in range(int(rng.random() * empty_cells)):
            empty &= empty - 1  # drop the lowest empty cell
        cell = empty & -empty  # bit 0 of the chosen nibble, i.e. exponent 1
        if rng.random() < _SPAWN_TWO_PROBABILITY:
            return board | cell, empty_cells
        return board | (cell << 1), empty_cells

    def _largest_exponent(self, board: int) -> int:
        row_max = self._row_max
        return max(
            row_max[board & ROW_MASK],
            row_max[(board >> 16) & ROW_MASK],
            row_max[(board >> 32) & ROW_MASK],
            row_max[board >> 48],
        )

    def _observation(self) -> np.ndarray:
        board, row_bytes = self._board, self._row_bytes
        cells = (
            row_bytes[board & ROW_MASK]
            + row_bytes[(board >> 16) & ROW_MASK]
            + row_bytes[(board >> 32) & ROW_MASK]
            + row_bytes[board >> 48]
        )
        return np.ndarray((4, 4), _UINT8, bytearray(cells))

    def _info(self, illegal_move: bool) -> dict[str, Any]:
        return {
            "score": self._score,
            "max_tile": 1 << self._max_exponent,
            "illegal_move": illegal_move,
        }
