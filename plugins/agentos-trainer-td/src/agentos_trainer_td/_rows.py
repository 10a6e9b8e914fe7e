"""The weights as rows: weight ``i`` in ``rows[i, 0]``, with TC its sums E and A beside it.

With TC each weight is kept with its two sums in one row ``[w, E, A, 0]`` of a ``(weights, 4)`` float32
array: 16 bytes, so reading and updating a weight and its sums touches one cache line instead of
three (the preset's learner ran about 1.5x faster so; docs/benchmarks.md).  Without TC the rows are
the policy's own weights seen as one column (no copy).  The trainer packs at the start of a ``train``
call and unpacks at its end.
"""

from __future__ import annotations

import os

import numpy as np
from agentos_env_2048.kernels import njit, symmetries
from agentos_policy_ntuple.network import default_indices, weight_indices, weight_indices_row


def pack(weights: np.ndarray, signed: np.ndarray, absolute: np.ndarray) -> np.ndarray:
    """``[w, E, A, 0]`` rows when TC keeps sums (``signed`` as long as ``weights``), else ``weights``
    itself as one column."""
    if signed.shape != weights.shape:
        return weights.reshape(-1, 1)
    rows = np.zeros((weights.shape[0], 4), np.float32)
    rows[:, 0] = weights
    rows[:, 1] = signed
    rows[:, 2] = absolute
    return rows


def unpack(rows: np.ndarray, weights: np.ndarray, signed: np.ndarray, absolute: np.ndarray) -> None:
    """Copy the rows back into the policy's weights and TC's sums (nothing to do for one column)."""
    if rows.shape[1] == 1:
        return
    weights[:] = rows[:, 0]
    signed[:] = rows[:, 1]
    absolute[:] = rows[:, 2]


_U = np.uint64

# ``layout``, below, is 0 for the default tuples and the policy's ``network`` for any other: the kernels
# are compiled once for each, and the default one, written out, never carries the network along
# (passing it into the learner's inner functions cost the preset's learner 30% of its speed).


def learner_layout(policy):
    """What the learner's kernels take as ``layout`` for ``policy``'s tuples."""
    return 0 if policy.layout.default else policy.network


@njit(inline=True)
def _default_indices(board, base, out):
    base = _U(base)
    boards = symmetries(_U(board))
    for symmetry in range(8):
        i0, i1, i2, i3 = default_indices(boards[symmetry])
        out[4 * symmetry], out[4 * symmetry + 1] = base + i0, base + i1
        out[4 * symmetry + 2], out[4 * symmetry + 3] = base + i2, base + i3


@njit(inline=True)
def _any_indices(board, net, base, out):
    weight_indices(board, net, out)
    if base:
        for k in range(out.shape[0]):
            out[k] += _U(base)


@njit(inline=True)
def rows_total(rows, indices):
    """The sum of the weights at ``indices``, one read after another (``value_at``'s order for any tuples)."""
    total = 0.0
    for k in range(indices.shape[0]):
        i = indices[k]
        total += float(rows[i, 0])
    return total


def row_indices(board, layout, base, out):
    """``out`` (uint64) = the rows ``board`` reads in the stage whose weights start at ``base``."""
    if isinstance(layout, int | np.integer):
        _default_indices(board, base, out)
    else:
        _any_indices(board, layout, base, out)


@njit(inline=True)
def _default_found(board, base, found, a):
    base = _U(base)
    boards = symmetries(_U(board))
    for symmetry in range(8):
        i0, i1, i2, i3 = default_indices(boards[symmetry])
        found[a, 4 * symmetry], found[a, 4 * symmetry + 1] = base + i0, base + i1
        found[a, 4 * symmetry + 2], found[a, 4 * symmetry + 3] = base + i2, base + i3


@njit(inline=True)
def _any_found(board, net, base, found, a):
    weight_indices_row(board, net, found, a)
    if base:
        for k in range(found.shape[1] - 3):
            found[a, k] += _U(base)


def find_rows(board, layout, base, found, a):
    """:func:`row_indices` into ``found[a, :features]`` (by two indices, no view: see
    :func:`agentos_policy_ntuple.network.weight_indices_row`)."""
    if isinstance(layout, int | np.integer):
        _default_found(board, base, found, a)
    else:
        _any_found(board, layout, base, found, a)


@njit(inline=True)
def grouped_total(rows, found, a):
    """The default tuples' value from the rows at ``found[a, :32]``, four reads a symmetry (``value_at``'s grouping)."""
    total = 0.0
    for symmetry in range(8):
        k = 4 * symmetry
        total += (float(rows[found[a, k], 0]) + float(rows[found[a, k + 1], 0])
                  + float(rows[found[a, k + 2], 0]) + float(rows[found[a, k + 3], 0]))
    return total


@njit(inline=True)
def sequential_total(rows, found, a, features):
    """Any tuples' value from the rows at ``found[a, :features]``, one read after another."""
    total = 0.0
    for k in range(features):
        total += float(rows[found[a, k], 0])
    return total


def found_value(rows, found, a, layout):
    """The value of the board whose rows ``row_indices`` wrote into ``found[a, :features]`` (features:
    ``found.shape[1] - 3``), summed as ``value_at`` sums it; read by two indices, never through a view."""
    if isinstance(layout, int | np.integer):
        return grouped_total(rows, found, a)
    return sequential_total(rows, found, a, found.shape[1] - 3)


@njit(inline=True)
def default_rows_value(rows, board, base):
    """The default tuples' value of ``board`` from the rows of the stage at ``base``, each index read as it is
    computed (no rows found first); summed as :func:`grouped_total` sums them."""
    base = _U(base)
    boards = symmetries(_U(board))
    total = 0.0
    for symmetry in range(8):
        i0, i1, i2, i3 = default_indices(boards[symmetry])
        total += (float(rows[base + i0, 0]) + float(rows[base + i1, 0])
                  + float(rows[base + i2, 0]) + float(rows[base + i3, 0]))
    return total


def default_layout(layout) -> bool:
    """Whether ``layout`` is the default tuples' (known when compiling: the other branch is dropped)."""
    return isinstance(layout, int | np.integer)


def _typed() -> None:
    """Inside compiled code the functions above are chosen by the type of ``layout``."""
    if os.environ.get("AGENTOS_2048_PURE"):
        return
    from numba import types
    from numba.extending import overload

    @overload(row_indices)
    def _row_indices(board, layout, base, out):
        if isinstance(layout, types.Integer):
            return lambda board, layout, base, out: _default_indices(board, base, out)
        return lambda board, layout, base, out: _any_indices(board, layout, base, out)

    @overload(find_rows)
    def _find_rows(board, layout, base, found, a):
        if isinstance(layout, types.Integer):
            return lambda board, layout, base, found, a: _default_found(board, base, found, a)
        return lambda board, layout, base, found, a: _any_found(board, layout, base, found, a)

    @overload(default_layout)
    def _default_layout(layout):
        default = isinstance(layout, types.Integer)
        return lambda layout: default

    @overload(found_value)
    def _found_value(rows, found, a, layout):
        if isinstance(layout, types.Integer):
            return lambda rows, found, a, layout: grouped_total(rows, found, a)
        return lambda rows, found, a, layout: sequential_total(rows, found, a, found.shape[1] - 3)


_typed()


# Multi-stage weight promotion (Jaśkowski 2018): a weight of stage s > 0 that has never been learned
# (its TC sum A is 0) stands for the same weight of stage s - 1, recursively, so that a game entering a
# new stage goes on with what the stages below learned.  It is copied into its own row when first learned.


@njit(inline=True)
def promoted_row(rows, i, size, base):
    """The row that row ``i`` (of the stage whose weights start at ``base``) reads: itself once learned
    (``A > 0``), else the same weight of the stage below, recursively."""
    while base > 0 and rows[i, 2] == 0.0:
        i -= _U(size)
        base -= size
    return i


@njit(inline=True)
def promoted_total(rows, indices, size, base):
    """The sum of the weights at ``indices`` (rows of the stage at ``base``), each read through
    :func:`promoted_row`."""
    total = 0.0
    for k in range(indices.shape[0]):
        i = indices[k]
        total += float(rows[promoted_row(rows, i, size, base), 0])
    return total


@njit(inline=True)
def promoted_value(board, rows, layout, base, size, scratch):
    """``board``'s value in the stage at ``base``, each weight read through :func:`promoted_row`."""
    row_indices(board, layout, base, scratch)
    return promoted_total(rows, scratch, size, base)


def materialize_promotions(rows: np.ndarray, size: int, stages: int) -> None:
    """Write into every never-learned weight of stages 1.. the weight it stands for, stage by stage
    (so that the policy plays, outside the trainer, with the values the trainer read)."""
    for stage in range(1, stages):
        here = rows[stage * size : (stage + 1) * size]
        fresh = here[:, 2] == 0.0
        here[fresh, 0] = rows[(stage - 1) * size : stage * size][fresh, 0]
