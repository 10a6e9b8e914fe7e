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
from agentos_env_2048.kernels import mirror, njit, transpose
from agentos_policy_ntuple.network import default_indices, weight_indices


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


@njit
def _default_indices(board, base, out):
    base = _U(base)
    symmetric = _U(board)
    for symmetry in range(8):
        i0, i1, i2, i3 = default_indices(symmetric)
        out[4 * symmetry], out[4 * symmetry + 1] = base + i0, base + i1
        out[4 * symmetry + 2], out[4 * symmetry + 3] = base + i2, base + i3
        symmetric = mirror(symmetric) if symmetry % 2 == 0 else transpose(symmetric)


@njit
def _default_value(board, rows, base, scratch):
    _default_indices(board, base, scratch)
    total = 0.0
    for symmetry in range(8):  # four reads a symmetry, then the total: value_at's grouping
        k = 4 * symmetry
        total += (float(rows[scratch[k], 0]) + float(rows[scratch[k + 1], 0])
                  + float(rows[scratch[k + 2], 0]) + float(rows[scratch[k + 3], 0]))
    return total


@njit
def _any_indices(board, net, base, out):
    weight_indices(board, net, out)
    if base:
        for k in range(out.shape[0]):
            out[k] += _U(base)


@njit
def rows_total(rows, indices):
    """The sum of the weights at ``indices``, one read after another (``value_at``'s order for any tuples)."""
    total = 0.0
    for i in indices:
        total += float(rows[i, 0])
    return total


@njit
def _any_value(board, rows, net, base, scratch):
    _any_indices(board, net, base, scratch)
    return rows_total(rows, scratch)


def row_indices(board, layout, base, out):
    """``out`` (uint64) = the rows ``board`` reads in the stage whose weights start at ``base``."""
    if isinstance(layout, int | np.integer):
        _default_indices(board, base, out)
    else:
        _any_indices(board, layout, base, out)


def row_value(board, rows, layout, base, scratch):
    """``board``'s value in the stage at ``base``, summed in the order ``value_at`` sums it."""
    if isinstance(layout, int | np.integer):
        return _default_value(board, rows, base, scratch)
    return _any_value(board, rows, layout, base, scratch)


def _typed() -> None:
    """Inside compiled code the two functions above are chosen by the type of ``layout``."""
    if os.environ.get("AGENTOS_2048_PURE"):
        return
    from numba import types
    from numba.extending import overload

    @overload(row_indices)
    def _row_indices(board, layout, base, out):
        if isinstance(layout, types.Integer):
            return lambda board, layout, base, out: _default_indices(board, base, out)
        return lambda board, layout, base, out: _any_indices(board, layout, base, out)

    @overload(row_value)
    def _row_value(board, rows, layout, base, scratch):
        if isinstance(layout, types.Integer):
            return lambda board, rows, layout, base, scratch: _default_value(board, rows, base, scratch)
        return lambda board, rows, layout, base, scratch: _any_value(board, rows, layout, base, scratch)


_typed()


# Multi-stage weight promotion (Jaśkowski 2018): a weight of stage s > 0 that has never been learned
# (its TC sum A is 0) stands for the same weight of stage s - 1, recursively, so that a game entering a
# new stage goes on with what the stages below learned.  It is copied into its own row when first learned.


@njit
def promoted_row(rows, i, size, base):
    """The row that row ``i`` (of the stage whose weights start at ``base``) reads: itself once learned
    (``A > 0``), else the same weight of the stage below, recursively."""
    while base > 0 and rows[i, 2] == 0.0:
        i -= _U(size)
        base -= size
    return i


@njit
def promoted_total(rows, indices, size, base):
    """The sum of the weights at ``indices`` (rows of the stage at ``base``), each read through
    :func:`promoted_row`."""
    total = 0.0
    for i in indices:
        total += float(rows[promoted_row(rows, i, size, base), 0])
    return total


@njit
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
