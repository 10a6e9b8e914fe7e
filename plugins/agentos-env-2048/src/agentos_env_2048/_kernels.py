"""2048 on 64-bit boards: moves, afterstates, spawns and legality as numba kernels.

A board is a ``numpy.uint64`` of 16 nibbles, one tile exponent each; cell ``(row, col)`` sits at
bits ``16 * row + 4 * col`` (the layout of :mod:`agentos_env_2048._tables`).  Moves read the row
lookup tables of :func:`move_tables`; up and down work on the transposed board.  Randomness is
xorshift64 over a ``uint64`` state array, one slot per game, so results do not depend on numba:
with ``AGENTOS_2048_PURE=1`` the same functions run as plain Python and agree bit for bit.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from agentos_env_2048._bits import nth_bit, popcount
from agentos_env_2048._jit import njit
from agentos_env_2048._tables import get_tables

_U = np.uint64
_S1, _S4, _S7, _S8, _S12, _S13, _S16 = _U(1), _U(4), _U(7), _U(8), _U(12), _U(13), _U(16)
_S17, _S24, _S32, _S48 = _U(17), _U(24), _U(32), _U(48)
_ZERO = _U(0)
_NIBBLE = _U(0xF)
_ROW = _U(0xFFFF)
_LOW32 = _U(0xFFFFFFFF)
_LOW_BITS = _U(0x1111111111111111)
_HAS_RIGHT_NEIGHBOUR = _U(0x0111011101110111)
_HAS_LOWER_NEIGHBOUR = _U(0x0000111111111111)
_CELLS_12_APART, _BYTES_24_APART = _U(0x0000F0F00000F0F0), _U(0x00000000FF00FF00)  # transpose's two swaps
_BYTE_PAIRS, _LOW_NIBBLES = _U(0x00FF00FF00FF00FF), _U(0x0F0F0F0F0F0F0F0F)
_FOUR_BELOW = _U(429496730)  # 10% of 2**32: a spawned tile is a 4 when the low word is below


@functools.cache
def move_tables() -> np.ndarray:
    """Rows ``row_left, row_right, column_up, column_down, score_left, score_right`` as uint64."""
    t = get_tables()
    rows = (t.row_left, t.row_right, t.column_up, t.column_down, t.score_left, t.score_right)
    tables = np.array(rows, dtype=np.uint64)
    tables.flags.writeable = False
    return tables


@njit(inline=True)
def _delta_swap(board, shift, mask):
    """Exchange the bits of ``mask`` with those ``shift`` bits above them (one mask: fits a register in hot loops)."""
    swap = (board ^ (board >> shift)) & mask
    return board ^ swap ^ (swap << shift)


@njit(inline=True)
def _swap_nibbles(board):
    """Each byte's two cells change places."""
    return ((board >> _S4) & _LOW_NIBBLES) | ((board & _LOW_NIBBLES) << _S4)


@njit(inline=True)
def transpose(board):
    """Swap rows and columns (two delta swaps)."""
    board = _U(board)  # a Python int compiles as an int64, whose right shifts copy the sign bit
    return _delta_swap(_delta_swap(board, _S12, _CELLS_12_APART), _S24, _BYTES_24_APART)


@njit(inline=True)
def mirror(board):
    """Reverse every row (left-right flip)."""
    board = _U(board)
    return _swap_nibbles(_delta_swap(board, _S8, _BYTE_PAIRS))  # each row's two bytes, then each byte's cells


def _plain_byteswap(board):
    return _U(int.from_bytes(int(board).to_bytes(8, "little"), "big"))


def _compiled_byteswap():
    if os.environ.get("AGENTOS_2048_PURE"):
        return _plain_byteswap
    try:
        from numba import types
        from numba.extending import intrinsic
    except ImportError:  # pragma: no cover - numba is a dependency
        return _plain_byteswap

    @intrinsic
    def byteswap(typingctx, board):
        if board != types.uint64:
            return None
        return types.uint64(types.uint64), lambda context, builder, signature, args: builder.bswap(args[0])

    return byteswap


_byteswap = _compiled_byteswap()


@njit(inline=True)
def rotate180(board):
    """Turn the board half a turn: its 16 cells in reverse order (a byte swap, then each byte's two cells)."""
    return _swap_nibbles(_byteswap(_U(board)))


@njit(inline=True)
def symmetries(board):
    """The 8 symmetric boards in the order the n-tuple kernels sum them: ``board``, then mirror and transpose in
    turn (``m(b)``, ``t(m(b))``, ``m(t(m(b)))``, ...); the last four are the first four turned half a turn
    (a half turn commutes with every symmetry of the square), which costs fewer operations."""
    board = _U(board)
    s1 = mirror(board)
    s2 = transpose(s1)
    s3 = mirror(s2)
    return board, s1, s2, s3, rotate180(board), rotate180(s1), rotate180(s2), rotate180(s3)


@njit(inline=True)
def move(board, action, tables):
    """Slide ``board`` by ``action`` (0 up, 1 right, 2 down, 3 left): (afterstate, points)."""
    # rows of ``tables`` are read by two indices, never taken as views: a view counts its array's
    # references with atomic instructions, four moves a turn
    board = _U(board)  # as transpose's: both branches give ``lines`` one type when a Python int comes in
    if action == 0 or action == 2:
        lines = transpose(board)
        moved = 2 if action == 0 else 3
        scores = 4 if action == 0 else 5
        s1, s2, s3 = _S4, _S8, _S12
    else:
        lines = board
        moved = 1 if action == 1 else 0
        scores = 5 if action == 1 else 4
        s1, s2, s3 = _S16, _S32, _S48
    l0 = lines & _ROW
    l1 = (lines >> _S16) & _ROW
    l2 = (lines >> _S32) & _ROW
    l3 = lines >> _S48
    after = (tables[moved, l0] | (tables[moved, l1] << s1) | (tables[moved, l2] << s2)
             | (tables[moved, l3] << s3))
    return after, tables[scores, l0] + tables[scores, l1] + tables[scores, l2] + tables[scores, l3]


@njit(inline=True)
def empty_cells(board):
    """A mask with bit 0 set in every empty nibble."""
    occupied = board | (board >> _S1)
    occupied |= occupied >> _U(2)
    return ~occupied & _LOW_BITS


@njit(inline=True)
def count_bits(mask):
    """Number of set bits."""
    return int(popcount(mask))


@njit(inline=True)
def has_legal_move(board):
    """Whether any move changes the board."""
    if empty_cells(board):
        return True
    horizontal = empty_cells(board ^ (board >> _S4)) & _HAS_RIGHT_NEIGHBOUR
    vertical = empty_cells(board ^ (board >> _S16)) & _HAS_LOWER_NEIGHBOUR
    return bool(horizontal | vertical)


@njit(inline=True)
def max_exponent(board):
    """The largest exponent on the board."""
    best = _ZERO
    while board:
        best = max(best, board & _NIBBLE)
        board >>= _S4
    return best


@njit(inline=True)
def next_random(state, slot):
    """Advance xorshift64 in ``state[slot]`` and return the new value."""
    x = state[slot]
    x ^= x << _S13
    x ^= x >> _S7
    x ^= x << _S17
    state[slot] = x
    return x


@njit(inline=True)
def spawn(board, state, slot):
    """Put a 2 (p=0.9) or a 4 into a uniformly chosen empty cell of ``board``."""
    empty = empty_cells(board)
    draw = next_random(state, slot)
    cell = nth_bit(empty, ((draw >> _S32) * popcount(empty)) >> _S32)
    if (draw & _LOW32) < _FOUR_BELOW:
        cell <<= _S1
    return board | cell


@njit
def env_step(board, action, cell_draw, tile_draw, tables, rows, observations, slot):
    """One :meth:`Game2048Env.step` given its next two uniform draws in [0, 1).

    Returns ``(board, points, legal, terminated, top exponent)`` and writes the board's exponents
    into ``observations[slot]`` (an (N, 4) uint32 view of (N, 4, 4) uint8 observations).  An
    illegal move leaves the board and uses no draw.  A legal one puts the new tile, as
    ``Game2048Env`` always has, in the ``int(cell_draw * empty)``-th empty cell (lowest first):
    a 2 when ``tile_draw < 0.9``, else a 4.
    """
    board = _U(board)
    after, points = move(board, action, tables)
    legal = after != board
    if legal:
        empty = empty_cells(after)
        for _ in range(int(cell_draw * count_bits(empty))):
            empty &= empty - _S1
        cell = empty & (~empty + _S1)
        if tile_draw >= 0.9:
            cell <<= _S1
        board = after | cell
    unpack(board, observations, slot, rows)
    return board, points, legal, not has_legal_move(board), max_exponent(board)


@njit(inline=True)
def new_board(state, slot):
    """A starting board: two spawned tiles."""
    return spawn(spawn(_ZERO, state, slot), state, slot)


def seed_states(seed: int, count: int) -> np.ndarray:
    """``count`` xorshift64 states from ``seed`` by splitmix64 (never zero)."""
    mask = (1 << 64) - 1
    x = int(seed) & mask
    states = np.empty(count, dtype=np.uint64)
    for slot in range(count):
        x = (x + 0x9E3779B97F4A7C15) & mask
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        states[slot] = (z ^ (z >> 31)) or 1
    return states


def board_from_cells(cells) -> np.uint64:
    """Pack a 4x4 array-like of exponents into a board."""
    flat = np.asarray(cells, dtype=np.uint64).reshape(16)
    return _U(np.bitwise_or.reduce(flat << (np.arange(16, dtype=np.uint64) * _S4)))


def cells_from_board(board) -> np.ndarray:
    """Unpack a board into a 4x4 uint8 array of exponents."""
    shifts = np.arange(16, dtype=np.uint64) * _S4
    return ((_U(board) >> shifts) & _NIBBLE).astype(np.uint8).reshape(4, 4)


@functools.cache
def row_tables() -> np.ndarray:
    """Rows ``row_bytes`` (a row's 4 exponents as little-endian uint32 bytes) and ``row_max``."""
    t = get_tables()
    packed = np.frombuffer(b"".join(t.row_bytes), dtype="<u4").astype(np.uint64)
    tables = np.array([packed, np.array(t.row_max, dtype=np.uint64)])
    tables.flags.writeable = False
    return tables


@njit(inline=True)
def unpack(board, out, row, rows):
    """Write ``board``'s rows as exponent bytes into ``out[row]``, an (N, 4) uint32 view of (N, 4, 4) uint8."""
    out[row, 0] = np.uint32(rows[0, board & _ROW])
    out[row, 1] = np.uint32(rows[0, (board >> _S16) & _ROW])
    out[row, 2] = np.uint32(rows[0, (board >> _S32) & _ROW])
    out[row, 3] = np.uint32(rows[0, board >> _S48])


@njit(inline=True)
def max_tile(board, rows):
    """The largest tile value on ``board`` (e.g. 2048)."""
    top = max(max(rows[1, board & _ROW], rows[1, (board >> _S16) & _ROW]),
              max(rows[1, (board >> _S32) & _ROW], rows[1, board >> _S48]))
    return 1 << int(top)


@njit
def step_boards(boards, states, actions, scores, steps, step_limit, illegal_reward, tables, rows,
                observations, rewards, terminated, truncated, illegal, tiles, final_boards, final_scores,
                final_observations):
    """One step of every board, with same-step autoreset; return how many episodes ended.

    ``observations`` is the (N, 4) uint32 view of the (N, 4, 4) uint8 observations; ``tiles``
    receives each board's largest tile.  A board whose episode ends is copied to ``final_boards``
    (its score to ``final_scores``, its exponents to ``final_observations``, shaped like
    ``observations``) and replaced by a new game at once; ``observations`` then shows the new game.
    Rules as ``Game2048Env.step``: an illegal move changes nothing and earns ``illegal_reward``.
    """
    ended = 0
    for i in range(boards.shape[0]):
        board = boards[i]
        action = actions[i]
        if action < 0 or action > 3:
            raise ValueError("actions must be 0-3")
        after, points = move(board, action, tables)
        steps[i] += 1
        truncated[i] = step_limit > 0 and steps[i] >= step_limit
        if after == board:
            illegal[i] = True
            rewards[i] = illegal_reward
            terminated[i] = not has_legal_move(board)
        else:
            illegal[i] = False
            rewards[i] = float(points)
            board = spawn(after, states, i)
            scores[i] += points
            terminated[i] = not has_legal_move(board)
        if terminated[i] or truncated[i]:
            final_boards[i] = board
            final_scores[i] = scores[i]
            unpack(board, final_observations, i, rows)
            board = new_board(states, i)
            scores[i] = 0
            steps[i] = 0
            ended += 1
        boards[i] = board
        tiles[i] = max_tile(board, rows)
        unpack(board, observations, i, rows)
    return ended


@njit
def max_tiles(boards, rows, out):
    """``out[i]`` = the largest tile of ``boards[i]``."""
    for i in range(boards.shape[0]):
        out[i] = max_tile(boards[i], rows)


@njit
def random_games(states, tables, scores, max_exponents, lengths):
    """Play one game of uniformly random moves per rng slot; return the moves made.

    Illegal moves count as moves and change nothing, as in the environment.
    """
    total = 0
    for game in range(states.shape[0]):
        board = new_board(states, game)
        score = _ZERO
        length = 0
        while has_legal_move(board):
            action = int(next_random(states, game) >> _U(62))
            after, points = move(board, action, tables)
            length += 1
            if after != board:
                score += points
                board = spawn(after, states, game)
        scores[game] = score
        max_exponents[game] = max_exponent(board)
        lengths[game] = length
        total += length
    return total
