"""The public 2048 kernels: the board, moves, tiles and whole games that learners build on.

This module is a stable API of ``agentos-env-2048`` (its names change only with a major version);
the n-tuple policy and the TD trainer use only these names, and so can any third-party learner.
Importing it imports numpy and numba (``import agentos_env_2048`` alone imports neither).

Board encoding
    A board is a ``numpy.uint64`` of 16 nibbles, one tile *exponent* each (0 = empty, 1 = a 2,
    11 = a 2048, at most :data:`MAX_EXPONENT` = 15). Cell ``(row, col)``, row 0 at the top, sits at
    bits ``16 * row + 4 * col``, so a row is the 16-bit int ``(board >> 16 * row) & ROW_MASK`` whose
    lowest nibble is its leftmost cell. :func:`board_from_cells` and :func:`cells_from_board`
    convert from and to a 4x4 array of exponents (the environment's observation).
Actions
    0 up, 1 right, 2 down, 3 left (as ``Game2048Env``).
Randomness
    A ``uint64`` array of xorshift64 states, one slot per game (:func:`seed_states`); every random
    kernel takes ``(state, slot)`` and advances ``state[slot]``, so results never depend on numba.
Tables
    :func:`move_tables` (for moves) and :func:`row_tables` (for observations and largest tiles) are
    read-only arrays built once per process; pass them to the kernels that take ``tables``/``rows``.

Kernels compiled by ``numba.njit(cache=True)`` (callable from your own :func:`njit` functions, and
from plain Python): :func:`move` → ``(afterstate, points)``; :func:`transpose`, :func:`mirror`, :func:`rotate180` → a
board; :func:`symmetries` → the 8 symmetric boards in the n-tuple kernels' order (``rotate180`` and
``symmetries`` added in 1.6); :func:`empty_cells` → a mask with bit 0 of every empty nibble set;
:func:`count_bits` → int; :func:`popcount` → the same as a uint64 (one instruction) and :func:`nth_bit` → the
``k``-th lowest set bit of a mask alone (BMI2's ``pdep`` where ``FAST_BMI2``, the processor's ``pext``/``pdep`` being
fast: Intel since Haswell, AMD since Zen 3; both added in 1.7); :func:`has_legal_move` → bool;
:func:`max_exponent` → int; :func:`max_tile` →
the largest tile's value (e.g. 2048); :func:`next_random` → the next uint64 of a slot; :func:`spawn` → the board with a
new 2 (p = 0.9) or 4 in a uniform empty cell; :func:`new_board` → a starting board (two tiles);
:func:`env_step` → ``(board, points, legal, terminated, top exponent)`` of one ``Game2048Env.step``;
:func:`step_boards` → how many of N batched games ended (same-step autoreset); :func:`max_tiles`
fills ``out`` with each board's largest tile; :func:`unpack` writes a board's exponents into an
observation row; :func:`random_games` → the number of moves of one uniformly random game per slot.

Plain Python (not compiled): :func:`seed_states`, :func:`board_from_cells`, :func:`cells_from_board`,
:func:`move_tables`, :func:`row_tables`, :func:`get_tables` (the per-row tables as Python lists, for
plain-Python code) and :func:`njit` (numba's compiler with an on-disk cache, or the function itself
when ``AGENTOS_2048_PURE=1``: every kernel then runs as plain Python with identical results;
``@njit(inline=True)``, added in 1.5, inlines a kernel into its compiled callers, as the small kernels
above are: a call that passes arrays between compiled functions counts their references with atomic
instructions, which keep the memory reads of one call from overlapping the next).
"""

from __future__ import annotations

from agentos_env_2048._bits import FAST_BMI2, nth_bit, popcount
from agentos_env_2048._jit import njit
from agentos_env_2048._kernels import (
    board_from_cells,
    cells_from_board,
    count_bits,
    empty_cells,
    env_step,
    has_legal_move,
    max_exponent,
    max_tile,
    max_tiles,
    mirror,
    move,
    move_tables,
    new_board,
    next_random,
    random_games,
    rotate180,
    row_tables,
    seed_states,
    spawn,
    step_boards,
    symmetries,
    transpose,
    unpack,
)
from agentos_env_2048._tables import MAX_EXPONENT, ROW_MASK, Tables, get_tables

__all__ = [
    "FAST_BMI2",
    "MAX_EXPONENT",
    "ROW_MASK",
    "Tables",
    "board_from_cells",
    "cells_from_board",
    "count_bits",
    "empty_cells",
    "env_step",
    "get_tables",
    "has_legal_move",
    "max_exponent",
    "max_tile",
    "max_tiles",
    "mirror",
    "move",
    "move_tables",
    "new_board",
    "next_random",
    "njit",
    "nth_bit",
    "popcount",
    "random_games",
    "rotate180",
    "row_tables",
    "seed_states",
    "spawn",
    "step_boards",
    "symmetries",
    "transpose",
    "unpack",
]
