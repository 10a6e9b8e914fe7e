"""The n-tuple value network as numba kernels over 64-bit 2048 boards.

A tuple is a list of cells (0-15, row-major).  Its weight table has ``16 ** len(cells)`` entries;
the index of a board is its cells' exponents packed 4 bits apart, first cell lowest.  The value of
a board sums, over the 8 symmetries of the square and over all tuples, the weight at the index of
the transformed board.  Runs of consecutive cells are read in one shift and mask ("segments"),
so the default 6-tuples cost two or three operations each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from agentos_env_2048.kernels import njit, symmetries

from ._pext import FAST_PEXT, pext

#: Szubert & Jaśkowski / Yeh et al.: two straight and two rectangular 6-tuples.
DEFAULT_TUPLES = ((0, 1, 2, 3, 4, 5), (4, 5, 6, 7, 8, 9), (0, 1, 2, 4, 5, 6), (4, 5, 6, 8, 9, 10))
#: At most this many tuples (each read 8 times a board; papers use 4-17): 33 M one-cell tuples fit
#: the weight limit but their Python tuples and layout took about 14 GB and a minute to build.
MAX_TUPLES = 256
_U = np.uint64
_S4 = _U(4)


def network(weights: np.ndarray, layout: Layout) -> tuple:
    """The tuple the kernels take: (is default layout, weights, segments, counts, offsets)."""
    return (layout.default, weights, layout.segments, layout.segment_counts, layout.offsets)


class Layout(NamedTuple):
    """Where each tuple reads the board and where its weights live in the flat weight array."""

    segments: np.ndarray  # (tuples, max segments, 3) uint64: board shift, mask, index shift
    segment_counts: np.ndarray  # (tuples,) int64
    offsets: np.ndarray  # (tuples,) uint64: start of each tuple's table
    size: int  # total number of weights
    default: bool  # the tuples are DEFAULT_TUPLES (read by a written-out fast path)


def parse_tuples(text: str) -> tuple[tuple[int, ...], ...]:
    """Parse ``"0 1 2 3 4 5; 4 5 6 7 8 9"`` (tuples split by ``;``, cells by spaces or commas)."""
    if text.count(";") > 4 * MAX_TUPLES or len(text) > 64 * MAX_TUPLES:  # before splitting a huge text
        raise ValueError(f"tuples text is too long ({len(text):,} characters); at most {MAX_TUPLES} tuples")
    tuples = []
    for part in text.split(";"):
        cells = tuple(int(cell) for cell in part.replace(",", " ").split())
        if cells:
            tuples.append(cells)
    return validate_tuples(tuples)


def validate_tuples(tuples: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    """Check tuples: 1-8 distinct cells in 0-15 each, 1 to :data:`MAX_TUPLES` tuples."""
    if len(tuples) > MAX_TUPLES:
        raise ValueError(f"at most {MAX_TUPLES} tuples, got {len(tuples):,}")
    if any(isinstance(cells, (str, bytes)) or not hasattr(cells, "__iter__") for cells in tuples):
        raise ValueError(f"a tuple is a list of cells 0-15 (text: \"0 1 2; 4 5 6\"), got {list(tuples)[:4]!r}")
    checked = tuple(tuple(int(cell) for cell in cells) for cells in tuples)
    if not checked:
        raise ValueError("n-tuple network needs at least one tuple")
    for cells in checked:
        if not 1 <= len(cells) <= 8 or len(set(cells)) != len(cells):
            raise ValueError(f"a tuple needs 1-8 distinct cells, got {list(cells)}")
        if not all(0 <= cell <= 15 for cell in cells):
            raise ValueError(f"tuple cells are 0-15, got {list(cells)}")
    return checked


def make_layout(tuples: Sequence[Sequence[int]]) -> Layout:
    """Compile tuples into segments: runs of consecutive cells read at once."""
    tuples = validate_tuples(tuples)
    runs_per_tuple = []
    for cells in tuples:
        runs: list[list[int]] = []  # [first cell, length, position in tuple]
        for position, cell in enumerate(cells):
            if runs and cell == runs[-1][0] + runs[-1][1]:
                runs[-1][1] += 1
            else:
                runs.append([cell, 1, position])
        runs_per_tuple.append(runs)
    width = max(len(runs) for runs in runs_per_tuple)
    segments = np.zeros((len(tuples), width, 3), dtype=np.uint64)
    for t, runs in enumerate(runs_per_tuple):
        for s, (first, length, position) in enumerate(runs):
            segments[t, s] = (4 * first, (1 << (4 * length)) - 1, 4 * position)
    counts = np.array([len(runs) for runs in runs_per_tuple], dtype=np.int64)
    sizes = [16 ** len(cells) for cells in tuples]
    offsets = np.array(np.cumsum([0, *sizes[:-1]]), dtype=np.uint64)
    return Layout(segments, counts, offsets, int(sum(sizes)), tuples == DEFAULT_TUPLES)


@njit(inline=True)
def _index(board, segments, counts, t):
    index = _U(0)
    for s in range(counts[t]):
        index |= ((board >> segments[t, s, 0]) & segments[t, s, 1]) << segments[t, s, 2]
    return index


_M24, _M12, _HIGH12 = _U(0xFFFFFF), _U(0xFFF), _U(0xFFF000)
_S16, _S20 = _U(16), _U(20)
_TABLE = 1 << 24


@njit(inline=True)
def _shifted_indices(board):
    return (
        board & _M24,
        _TABLE + ((board >> _S16) & _M24),
        2 * _TABLE + ((board & _M12) | ((board >> _S4) & _HIGH12)),
        3 * _TABLE + (((board >> _S16) & _M12) | ((board >> _S20) & _HIGH12)),
    )


_SQUARE0, _SQUARE1 = _U(0x0FFF0FFF), _U(0x0FFF0FFF0000)  # the cells of the two rectangles (0 1 2 4 5 6, 4 5 6 8 9 10)

if FAST_PEXT:
    @njit(inline=True)
    def _gathered_indices(board):
        return (
            board & _M24,
            _TABLE + ((board >> _S16) & _M24),
            _U(2 * _TABLE) + pext(board, _SQUARE0),
            _U(3 * _TABLE) + pext(board, _SQUARE1),
        )

#: Indices of :data:`DEFAULT_TUPLES` (offsets included), written out: 2.5x the generic speed. The rectangles'
#: cells are gathered by one ``pext`` where it is fast (see ``_pext``), else by shifts and masks: the same indices.
default_indices = _gathered_indices if FAST_PEXT else _shifted_indices


@njit(inline=True)
def _default_value(board, weights, base):
    """:func:`value` for :data:`DEFAULT_TUPLES` over ``weights[base:]``, read directly (the hot path)."""
    total = 0.0
    boards = symmetries(board)
    for symmetry in range(8):
        i0, i1, i2, i3 = default_indices(boards[symmetry])
        i0, i1, i2, i3 = i0 + base, i1 + base, i2 + base, i3 + base
        # numba's float() keeps float32: a symmetry's four weights add in float32 there, in float64 in plain
        # Python (the two agree to float32 rounding); the symmetries' sums add in float64 in both
        total += float(weights[i0]) + float(weights[i1]) + float(weights[i2]) + float(weights[i3])
    return total


@njit(inline=True)
def _default_add(board, delta, weights, base):
    """:func:`add` for :data:`DEFAULT_TUPLES` over ``weights[base:]``."""
    boards = symmetries(board)
    for symmetry in range(8):
        i0, i1, i2, i3 = default_indices(boards[symmetry])
        i0, i1, i2, i3 = i0 + base, i1 + base, i2 + base, i3 + base
        weights[i0] = float(weights[i0]) + delta  # float64 sum, then rounded once
        weights[i1] = float(weights[i1]) + delta
        weights[i2] = float(weights[i2]) + delta
        weights[i3] = float(weights[i3]) + delta


@njit(inline=True)
def value(board, net):
    """The value of ``board`` (an afterstate) under ``net`` (see :func:`network`)."""
    return value_at(board, net, 0)


@njit(inline=True)
def value_at(board, net, base):
    """:func:`value` with every weight index shifted by ``base`` (a stage's slice, without slicing)."""
    default, weights, segments, counts, offsets = net
    base = _U(base)
    if default:
        return _default_value(_U(board), weights, base)
    total = 0.0
    boards = symmetries(_U(board))
    for symmetry in range(8):
        symmetric = boards[symmetry]
        for t in range(counts.shape[0]):
            total += float(weights[base + offsets[t] + _index(symmetric, segments, counts, t)])
    return total


@njit(inline=True)
def add(board, delta, net):
    """Add ``delta`` to every weight that ``board`` reads."""
    add_at(board, delta, net, 0)


@njit(inline=True)
def add_at(board, delta, net, base):
    """:func:`add` with every weight index shifted by ``base``."""
    default, weights, segments, counts, offsets = net
    base = _U(base)
    if default:
        _default_add(_U(board), delta, weights, base)
        return
    boards = symmetries(_U(board))
    for symmetry in range(8):
        symmetric = boards[symmetry]
        for t in range(counts.shape[0]):
            i = base + offsets[t] + _index(symmetric, segments, counts, t)
            weights[i] = float(weights[i]) + delta


@njit(inline=True)
def weight_indices(board, net, out):
    """Fill ``out`` (length ``8 * tuples``) with the weight indices ``board`` reads."""
    default, weights, segments, counts, offsets = net
    boards = symmetries(_U(board))
    n = counts.shape[0]
    if default:  # the same indices, by the written-out path
        for symmetry in range(8):
            out[4 * symmetry], out[4 * symmetry + 1], out[4 * symmetry + 2], out[4 * symmetry + 3] = (
                default_indices(boards[symmetry]))
        return
    for symmetry in range(8):
        symmetric = boards[symmetry]
        for t in range(n):
            out[symmetry * n + t] = offsets[t] + _index(symmetric, segments, counts, t)


@njit(inline=True)
def weight_indices_row(board, net, out, row):
    """:func:`weight_indices` into row ``row`` of a 2-D ``out`` (read and written by two indices: a 1-D
    view of the row would count the array's references with atomic instructions, in a hot loop)."""
    default, weights, segments, counts, offsets = net
    boards = symmetries(_U(board))
    n = counts.shape[0]
    for symmetry in range(8):
        symmetric = boards[symmetry]
        if default:
            i0, i1, i2, i3 = default_indices(symmetric)
            out[row, 4 * symmetry], out[row, 4 * symmetry + 1] = i0, i1
            out[row, 4 * symmetry + 2], out[row, 4 * symmetry + 3] = i2, i3
        else:
            for t in range(n):
                out[row, symmetry * n + t] = offsets[t] + _index(symmetric, segments, counts, t)
