"""Precomputed lookup tables for 16-bit board rows.

A board is a 64-bit int of 16 nibbles, one tile exponent per nibble: cell
``(row, col)`` sits at bits ``16 * row + 4 * col``.  A row is therefore a
16-bit int whose lowest nibble is its leftmost cell.  Every table is a plain
Python list indexed by such a row, the fastest lookup CPython offers.  The
tables are built with numpy in a few milliseconds, once, on first use.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

ROW_MASK = 0xFFFF
MAX_EXPONENT = 15  # a nibble holds 15 at most: two 32768 tiles do not merge


class Tables(NamedTuple):
    """Per-row lookup tables, each a list of 65536 entries."""

    row_left: list[int]  # the row slid left (towards column 0)
    row_right: list[int]  # the row slid right
    score_left: list[int]  # points scored by sliding left
    score_right: list[int]  # points scored by sliding right
    column_up: list[int]  # a column (top cell first) slid up, spread as column 0
    column_down: list[int]  # a column slid down, spread as column 0
    row_max: list[int]  # largest exponent in the row
    row_bytes: list[bytes]  # the row's four exponents as bytes, left first


def _compact_left(cells: list[np.ndarray]) -> None:
    """Move non-zero cells to the left in place, keeping their order."""
    for _ in range(3):
        for col in range(3):
            empty = cells[col] == 0
            cells[col] = np.where(empty, cells[col + 1], cells[col])
            cells[col + 1] = np.where(empty, 0, cells[col + 1])


def _slide_left(cells: list[np.ndarray]) -> np.ndarray:
    """Slide and merge every row left, in place; return the points scored."""
    _compact_left(cells)
    score = np.zeros(len(cells[0]), dtype=np.int64)
    for col in range(3):
        here, there = cells[col], cells[col + 1]
        merge = (here != 0) & (here == there) & (here < MAX_EXPONENT)
        cells[col] = here + merge
        cells[col + 1] = np.where(merge, 0, there)
        score += np.where(merge, np.left_shift(1, cells[col]), 0)
    _compact_left(cells)
    return score


def _pack(cells: list[np.ndarray], stride: int) -> np.ndarray:
    """Pack four exponents into one int, ``stride`` bits apart."""
    packed = np.zeros(len(cells[0]), dtype=np.int64)
    for col, cell in enumerate(cells):
        packed |= cell << (stride * col)
    return packed


@functools.cache
def get_tables() -> Tables:
    """Build (once) and return the lookup tables."""
    rows = np.arange(1 << 16, dtype=np.int64)
    cells = [(rows >> (4 * col)) & 0xF for col in range(4)]
    reversed_rows = _pack(cells[::-1], 4)
    left = list(cells)
    score_left = _slide_left(left)
    row_left = _pack(left, 4)
    # Sliding right is sliding the mirrored row left, then mirroring back.
    right = [cell[reversed_rows] for cell in left[::-1]]
    row_bytes = np.stack(cells, axis=1).astype(np.uint8).view("V4").ravel()
    return Tables(
        row_left=row_left.tolist(),
        row_right=_pack(right, 4).tolist(),
        score_left=score_left.tolist(),
        score_right=score_left[reversed_rows].tolist(),
        column_up=_pack(left, 16).tolist(),
        column_down=_pack(right, 16).tolist(),
        row_max=np.maximum.reduce(cells).tolist(),
        row_bytes=row_bytes.tolist(),
    )


def transpose(board: int) -> int:
    """Swap the rows and columns of a packed board."""
    board = (
        (board & 0xF0F00F0FF0F00F0F)
        | ((board & 0x0000F0F00000F0F0) << 12)
        | ((board & 0x0F0F00000F0F0000) >> 12)
    )
    return (
        (board & 0xFF00FF0000FF00FF)
        | ((board & 0x00FF00FF00000000) >> 24)
        | ((board & 0x00000000FF00FF00) << 24)
    )
