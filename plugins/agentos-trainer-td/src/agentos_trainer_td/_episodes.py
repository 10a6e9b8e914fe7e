"""Episode-end TD(λ) over afterstates with restarts and multi-stage networks (numba).

The learner of ziap/2048-tdl, written for our boards: a game is played greedily with the weights
as they are, its afterstates ``s_0 .. s_{T-1}`` and the points ``r_t`` of the move that made each
``s_t`` are kept, and then the game is learned backwards:

    G_{T-1} = 0                       (after the last afterstate the game is over)
    V(s_t) += step * (G_t - V(s_t))   (each of the 8 * tuples weights read: alpha / (8 * tuples))
    G_{t-1} = r_t + λ G_t + (1 - λ) V(s_t)   with V(s_t) the value just updated

λ = 0 is backward TD(0); λ = 1 learns the Monte-Carlo return.  With TC every weight's step is
scaled by ``|E| / A`` (Jaśkowski 2018's temporal coherence, the backward variant of ziap).
Restarts (ziap): after a game longer than 10 moves, a new segment starts from its middle
afterstate plus a spawned tile, again and again while segments stay longer than 10 moves; only
the first segment of a game is reported.  With ``bounds`` each afterstate is valued and updated
in the weight set of its own stage (:mod:`agentos_policy_ntuple.network`), found by index
arithmetic (``stage_base``), with no array view made per board.

:func:`play_episode` is one game on one rng slot with its own path buffers, so that several
threads can each play their own (:mod:`agentos_trainer_td._parallel`).
"""

from __future__ import annotations

import numpy as np
from agentos_env_2048.kernels import max_exponent, move, new_board, njit, spawn
from agentos_policy_ntuple.network import stage_base, value_at, weight_indices

_RESTART_ABOVE = 10
PATH = 1 << 15  # afterstates kept per segment before the buffers grow


@njit
def _sum_at(weights, indices):
    total = 0.0
    for i in indices:
        total += float(weights[i])
    return total


@njit
def _stage_indices(board, net, size, bounds, out):
    """``out`` = the weight indices ``board`` reads in its own stage's weights."""
    weight_indices(board, net, out)
    base = stage_base(board, bounds, size)
    if base:
        for k in range(out.shape[0]):
            out[k] += base


@njit
def learn_backwards(path, points, n, lam, step, coherent, net, size, bounds, signed, absolute, indices):
    """Learn one segment's afterstates ``path[:n]`` backwards (see the module); False when a TD
    error is not a finite number.  Each afterstate's indices are computed once for its value, its
    update and its updated value."""
    weights = net[1]
    exact = 0.0
    for t in range(n - 1, -1, -1):
        _stage_indices(path[t], net, size, bounds, indices)
        error = exact - _sum_at(weights, indices)
        if not np.isfinite(error):
            return False
        if coherent:
            for i in indices:
                total = float(absolute[i])
                rate = min(abs(float(signed[i])) / total, 1.0) if total > 0.0 else 1.0  # 1: races (_parallel)
                weights[i] = float(weights[i]) + step * rate * error
                signed[i] = float(signed[i]) + error
                absolute[i] = total + abs(error)
        else:
            delta = step * error
            for i in indices:
                weights[i] = float(weights[i]) + delta
        exact = points[t] + lam * exact + (1.0 - lam) * _sum_at(weights, indices)
    return True


@njit
def _greedy(board, net, size, bounds, tables):
    best, best_value, best_after, best_points = -1, -np.inf, board, np.uint64(0)
    for action in range(4):
        after, points = move(board, action, tables)
        if after == board:
            continue
        v = points + value_at(after, net, stage_base(after, bounds, size))
        if v > best_value:
            best, best_value, best_after, best_points = action, v, after, points
    return best, best_after, best_points


@njit
def play_episode(states, slot, step, lam, restarts, coherent, net, size, bounds, signed, absolute, tables,
                 path, points, indices):
    """One game on rng ``slot``, learned segment by segment: (moves made with restarts, first
    segment's score, its largest exponent, its length, path, points); moves is -1 as soon as a TD
    error is not finite.  ``path``/``points`` are the caller's buffers, returned grown if a segment
    outran them."""
    board = new_board(states, slot)
    moves = 0
    first_score, first_top, first_length = 0, 0, 0
    first = True
    while True:
        n = 0
        score = 0
        while True:
            best, after, gained = _greedy(board, net, size, bounds, tables)
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
        if not learn_backwards(path, points, n, lam, step, coherent, net, size, bounds, signed,
                               absolute, indices):
            return -1, first_score, first_top, first_length, path, points
        if not restarts or n <= _RESTART_ABOVE:
            break
        board = spawn(path[n // 2], states, slot)
    return moves, first_score, first_top, first_length, path, points


@njit
def train_episodes(states, games, alpha, lam, restarts, coherent, net, size, bounds, signed, absolute,
                   tables, scores, max_exponents, lengths):
    """Play and learn ``games`` games on rng slot 0; the number of moves made (restarts included),
    or -1 as soon as a TD error is not finite.  ``scores``/``max_exponents``/``lengths`` get each
    game's first segment."""
    indices = np.empty(8 * net[3].shape[0], dtype=np.int64)
    step = alpha / indices.shape[0]
    path = np.empty(PATH, dtype=np.uint64)
    points = np.empty(PATH, dtype=np.float64)
    moves = 0
    for game in range(games):
        made, score, top, length, path, points = play_episode(
            states, 0, step, lam, restarts, coherent, net, size, bounds, signed, absolute, tables, path,
            points, indices)
        if made < 0:
            return -1
        scores[game], max_exponents[game], lengths[game] = score, top, length
        moves += made
    return moves
