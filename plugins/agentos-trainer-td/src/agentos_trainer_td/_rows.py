"""The weights as rows: weight ``i`` in ``rows[i, 0]``, with TC its sums E and A beside it.

With TC each weight is kept with its two sums in one row ``[w, E, A, 0]`` of a ``(weights, 4)`` float32
array: 16 bytes, so reading and updating a weight and its sums touches one cache line instead of
three (the preset's learner ran about 1.5x faster so; docs/benchmarks.md).  Without TC the rows are
the policy's own weights seen as one column (no copy).  The trainer packs at the start of a ``train``
call and unpacks at its end.
"""

from __future__ import annotations

import numpy as np
from agentos_env_2048.kernels import njit
from agentos_policy_ntuple.network import weight_indices


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


@njit
def row_indices(board, net, base, out):
    """``out`` = the rows ``board`` reads in the stage whose weights start at ``base``."""
    weight_indices(board, net, out)
    if base:
        for k in range(out.shape[0]):
            out[k] += base


@njit
def row_value(board, rows, net, base, scratch):
    """``board``'s value, summed as ``value_at`` sums it: for the default tuples four reads a
    symmetry, then the total; for other tuples one read after another."""
    row_indices(board, net, base, scratch)
    total = 0.0
    if net[0]:
        for symmetry in range(8):
            k = 4 * symmetry
            total += (float(rows[scratch[k], 0]) + float(rows[scratch[k + 1], 0])
                      + float(rows[scratch[k + 2], 0]) + float(rows[scratch[k + 3], 0]))
    else:
        for i in scratch:
            total += float(rows[i, 0])
    return total
