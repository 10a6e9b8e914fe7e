"""The episode learner of :mod:`agentos_trainer_td._episodes` over packed weights, for the default tuples.

Each weight is kept with its two TC sums in one row of a ``(weights, 4)`` float32 array
``[w, E, A, 0]``: 16 bytes, so reading and updating a weight and its sums touches one cache line
instead of three.  The kernels are written out for :data:`DEFAULT_TUPLES` (the 4x6-tuples) and do the
very same float arithmetic, in the same order, as ``_episodes`` (a test compares the two bit for
bit); the trainer packs the policy's weights and TC's sums at the start of a ``train`` call and
unpacks them at its end.  On this machine the preset's learner ran 1.8x faster so (docs/benchmarks.md).
"""

from __future__ import annotations

import numpy as np
from agentos_env_2048.kernels import max_exponent, mirror, move, new_board, njit, spawn, transpose
from agentos_policy_ntuple.network import stage_base

from agentos_trainer_td._episodes import _RESTART_ABOVE

_U = np.uint64
_I1, _I2, _I3 = _U(1 << 24), _U(2 << 24), _U(3 << 24)
_M24, _M12, _HIGH12 = _U(0xFFFFFF), _U(0xFFF), _U(0xFFF000)
_S4, _S16, _S20 = _U(4), _U(16), _U(20)


def pack(weights: np.ndarray, signed: np.ndarray, absolute: np.ndarray) -> np.ndarray:
    """``[w, E, A, 0]`` rows (E and A zero when TC keeps no sums: ``signed`` of another length)."""
    packed = np.zeros((weights.shape[0], 4), np.float32)
    packed[:, 0] = weights
    if signed.shape == weights.shape:
        packed[:, 1] = signed
        packed[:, 2] = absolute
    return packed


def unpack(packed: np.ndarray, weights: np.ndarray, signed: np.ndarray, absolute: np.ndarray) -> None:
    """Copy the rows back into the policy's weights (and TC's sums, when they are kept)."""
    weights[:] = packed[:, 0]
    if signed.shape == weights.shape:
        signed[:] = packed[:, 1]
        absolute[:] = packed[:, 2]


@njit
def _indices(board, base, out):
    """The 32 rows ``board`` reads (the written-out default tuples, all 8 symmetries)."""
    base = _U(base)
    symmetric = _U(board)
    for symmetry in range(8):
        out[4 * symmetry] = base + (symmetric & _M24)
        out[4 * symmetry + 1] = base + _I1 + ((symmetric >> _S16) & _M24)
        out[4 * symmetry + 2] = base + _I2 + ((symmetric & _M12) | ((symmetric >> _S4) & _HIGH12))
        out[4 * symmetry + 3] = base + _I3 + (((symmetric >> _S16) & _M12) | ((symmetric >> _S20) & _HIGH12))
        symmetric = mirror(symmetric) if symmetry % 2 == 0 else transpose(symmetric)


@njit
def _value(board, packed, base, scratch):
    """``value_at``'s sum, grouped as it groups it (four reads a symmetry, then the total)."""
    _indices(board, base, scratch)
    total = 0.0
    for symmetry in range(8):
        k = 4 * symmetry
        total += (float(packed[scratch[k], 0]) + float(packed[scratch[k + 1], 0])
                  + float(packed[scratch[k + 2], 0]) + float(packed[scratch[k + 3], 0]))
    return total


@njit
def _greedy(board, packed, size, bounds, tables, scratch):
    best, best_value, best_after, best_points = -1, -np.inf, board, np.uint64(0)
    for action in range(4):
        after, points = move(board, action, tables)
        if after == board:
            continue
        v = points + _value(after, packed, stage_base(after, bounds, size), scratch)
        if v > best_value:
            best, best_value, best_after, best_points = action, v, after, points
    return best, best_after, best_points


@njit
def learn(path, points, n, lam, step, coherent, packed, size, bounds, indices):
    """``learn_backwards`` on packed rows; False when a TD error is not a finite number."""
    exact = 0.0
    for t in range(n - 1, -1, -1):
        board = path[t]
        _indices(board, stage_base(board, bounds, size), indices)
        total = 0.0
        for i in indices:
            total += float(packed[i, 0])
        error = exact - total
        if not np.isfinite(error):
            return False
        if coherent:
            for i in indices:
                sums = float(packed[i, 2])
                rate = min(abs(float(packed[i, 1])) / sums, 1.0) if sums > 0.0 else 1.0
                packed[i, 0] = float(packed[i, 0]) + step * rate * error
                packed[i, 1] = float(packed[i, 1]) + error
                packed[i, 2] = sums + abs(error)
        else:
            delta = step * error
            for i in indices:
                packed[i, 0] = float(packed[i, 0]) + delta
        total = 0.0
        for i in indices:
            total += float(packed[i, 0])
        exact = points[t] + lam * exact + (1.0 - lam) * total
    return True


@njit
def play_episode(states, slot, step, lam, restarts, coherent, packed, size, bounds, tables, path, points,
                 indices):
    """:func:`agentos_trainer_td._episodes.play_episode` on packed rows (same returns)."""
    scratch = np.empty(32, dtype=np.uint64)
    board = new_board(states, slot)
    moves = 0
    first_score, first_top, first_length = 0, 0, 0
    first = True
    while True:
        n = 0
        score = 0
        while True:
            best, after, gained = _greedy(board, packed, size, bounds, tables, scratch)
            if best < 0:
                break
            if n == path.shape[0]:
                path = np.concatenate((path, np.empty(n, dtype=np.uint64)))
                points = np.concatenate((points, np.empty(n, dtype=np.float64)))
            path[n], points[n] = after, float(gained)
            n += 1
            score += gained
            board = spawn(after, states, slot)
        moves += n
        if first:
            first_score, first_top, first_length = score, max_exponent(board), n
            first = False
        if not learn(path, points, n, lam, step, coherent, packed, size, bounds, indices):
            return -1, first_score, first_top, first_length, path, points
        if not restarts or n <= _RESTART_ABOVE:
            break
        board = spawn(path[n // 2], states, slot)
    return moves, first_score, first_top, first_length, path, points


@njit
def train_episodes(states, games, alpha, lam, restarts, coherent, packed, size, bounds, tables, scores,
                   max_exponents, lengths):
    """:func:`agentos_trainer_td._episodes.train_episodes` on packed rows."""
    indices = np.empty(32, dtype=np.uint64)
    step = alpha / 32
    path = np.empty(1 << 15, dtype=np.uint64)
    points = np.empty(1 << 15, dtype=np.float64)
    moves = 0
    for game in range(games):
        made, score, top, length, path, points = play_episode(
            states, 0, step, lam, restarts, coherent, packed, size, bounds, tables, path, points, indices)
        if made < 0:
            return -1
        scores[game], max_exponents[game], lengths[game] = score, top, length
        moves += made
    return moves
