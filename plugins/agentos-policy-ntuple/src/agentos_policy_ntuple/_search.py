"""Play-time expectimax of any depth with a transposition table and tile-downgrading (numba).

Depth counts move layers: depth 1 is greedy afterstate play, depth ``d`` averages over every
spawn (a 2 with p = 0.9, a 4 with p = 0.1, in each empty cell, cells equally likely) and plays the
best of ``d - 1`` further moves, valuing the last afterstates with the (multi-stage) network.
A stuck board is worth 0.

Transposition table (``Table``): ``2 ** bits`` slots of (afterstate, depth, generation, value),
slot = the afterstate folded by xor-shifts, masked.  An entry answers only the same afterstate at the
same depth in the same generation; :func:`new_generation` empties the table in O(1).  Values are a
function of the board and the weights, so a table is valid while the weights stay fixed.

Tile-downgrading (Guei, Chen & Wu 2022, TDL2048+ ``-h``): once a board holds a tile of at least
``2 ** downgrade`` it is searched as the board where every tile above its highest missing
exponent is halved, so a network that never saw a 32768 still values a board that has one.  Equal
tiles stay equal and empty cells stay empty, so the downgraded board has the same legal moves and
the move chosen on it is played on the real board.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from agentos_env_2048.kernels import empty_cells, has_legal_move, max_exponent, move, new_board, njit, spawn

from agentos_policy_ntuple._stages import staged_value

_U = np.uint64


class Table(NamedTuple):
    """A transposition table: parallel arrays, one entry per slot."""

    keys: np.ndarray  # uint64 afterstates
    depths: np.ndarray  # int8
    generations: np.ndarray  # int64
    values: np.ndarray  # float64
    generation: np.ndarray  # (2,) int64: the current generation, the slot mask (2 ** bits - 1)


def new_table(bits: int) -> Table:
    """An empty table of ``2 ** bits`` slots, ``bits`` 1-30 (25 bytes a slot)."""
    bits = int(bits)
    if not 1 <= bits <= 30:
        raise ValueError(f"a transposition table has 2**1 to 2**30 slots, got bits = {bits}")
    size = 1 << bits
    return Table(np.zeros(size, np.uint64), np.zeros(size, np.int8), np.full(size, -1, np.int64),
                 np.zeros(size, np.float64), np.array([0, size - 1], np.int64))


def new_generation(table: Table) -> None:
    """Forget every entry (new weights, or a new game)."""
    table.generation[0] += 1


@njit(inline=True)
def downgrade(board, threshold):
    """``board`` with the tiles above its highest missing exponent halved, once its largest tile
    has exponent ``threshold`` or more (0: never); the board itself when nothing is missing."""
    board = _U(board)
    top = max_exponent(board)
    if threshold <= 0 or top < threshold:
        return board
    present = 0
    for cell in range(16):
        present |= 1 << int((board >> _U(4 * cell)) & _U(15))
    hole = 0
    for exponent in range(top - 1, 0, -1):
        if not present & (1 << exponent):
            hole = exponent
            break
    if hole == 0:
        return board
    out = _U(0)
    for cell in range(16):
        exponent = (board >> _U(4 * cell)) & _U(15)
        if exponent > _U(hole):
            exponent -= _U(1)
        out |= exponent << _U(4 * cell)
    return out


@njit
def _expect(after, depth, net, size, bounds, tables, table):
    """Expected value of afterstate ``after`` searched ``depth`` move layers deep."""
    if depth <= 1:
        return staged_value(after, net, size, bounds)
    keys, depths, generations, values, generation = table
    mixed = after ^ (after >> _U(29))  # xor-shift folding: no overflowing products in plain Python
    mixed ^= mixed >> _U(17)
    slot = int(mixed & _U(generation[1]))
    if keys[slot] == after and depths[slot] == depth and generations[slot] == generation[0]:
        return values[slot]
    empty = empty_cells(after)
    cells = 0
    total = 0.0
    while empty:
        cell = empty & (~empty + _U(1))
        empty &= empty - _U(1)
        cells += 1
        for tile, probability in ((cell, 0.9), (cell << _U(1), 0.1)):
            board = after | tile
            best = -np.inf
            for action in range(4):
                moved, points = move(board, action, tables)
                if moved != board:
                    if depth == 2:  # the leaves, valued here: a call each cost a third of the search's speed
                        v = staged_value(moved, net, size, bounds)
                    else:
                        v = _expect(moved, depth - 1, net, size, bounds, tables, table)
                    best = max(best, points + v)
            total += probability * (best if best > -np.inf else 0.0)  # stuck: worth 0
    result = total / cells if cells else 0.0
    keys[slot], depths[slot], generations[slot], values[slot] = after, depth, generation[0], result
    return result


@njit(inline=True)
def search_action(board, depth, net, size, bounds, tables, table, threshold):
    """The move maximising points plus the searched afterstate value; -1 when none is legal."""
    searched = downgrade(board, threshold)
    best, best_value = -1, -np.inf
    for action in range(4):
        after, points = move(searched, action, tables)
        if after == searched:
            continue
        if depth <= 1:  # greedy: valued here (a call that passes the network's arrays counts them atomically)
            v = points + staged_value(after, net, size, bounds)
        else:
            v = points + _expect(after, depth, net, size, bounds, tables, table)
        if v > best_value:
            best, best_value = action, v
    return best


@njit
def search_actions(boards, depth, net, size, bounds, tables, table, threshold):
    """:func:`search_action` for each board (0 where no move is legal)."""
    actions = np.zeros(boards.shape[0], dtype=np.int64)
    for i in range(boards.shape[0]):
        actions[i] = max(search_action(boards[i], depth, net, size, bounds, tables, table, threshold), 0)
    return actions


@njit
def _one_slot():
    """A transposition table of one slot, for searches that keep no table (a valid, tiny cache)."""
    return (np.zeros(1, np.uint64), np.zeros(1, np.int8), np.full(1, -1, np.int64), np.zeros(1, np.float64),
            np.zeros(2, np.int64))


@njit
def best_action(board, depth, net, tables):
    """The move maximising points plus the afterstate value searched ``depth`` move layers deep (1:
    greedy) by one network of one stage, with no table to keep; -1 when no move is legal."""
    return search_action(board, depth, net, 0, np.zeros(0, np.int64), tables, _one_slot(), 0)


@njit
def best_actions(boards, depth, net, tables):
    """:func:`best_action` for each board (0 where no move is legal)."""
    return search_actions(boards, depth, net, 0, np.zeros(0, np.int64), tables, _one_slot(), 0)


@njit
def play_games(states, depth, net, tables, scores, max_exponents):
    """Play one game per slot of ``states`` with :func:`best_action`; fill ``scores`` and
    ``max_exponents``; the number of moves made."""
    table, bounds = _one_slot(), np.zeros(0, np.int64)
    moves = 0
    for game in range(states.shape[0]):
        board = new_board(states, game)
        score = 0
        while has_legal_move(board):
            action = search_action(board, depth, net, 0, bounds, tables, table, 0)
            board, points = move(board, action, tables)
            score += points
            board = spawn(board, states, game)
            moves += 1
        scores[game] = score
        max_exponents[game] = max_exponent(board)
    return moves
